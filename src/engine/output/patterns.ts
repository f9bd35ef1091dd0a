/**
 * Agent-supplied patterns, matched against a stream's cleaned output as it arrives, at a cost
 * no pattern and no output can make unbounded.
 *
 * Patterns are RE2 syntax, run by re2js (a port of RE2): matching time is linear in the text,
 * whatever the pattern, so `(a+)+$` cannot backtrack for minutes. What RE2 leaves out
 * (backreferences, lookahead and lookbehind, atomic groups, possessive quantifiers) is refused
 * with an error naming the construct and the field.
 *
 * A {@link PatternScanner} matches only output it has not seen, plus an overlap: the newest
 * {@link MATCH_OVERLAP} characters of cleaned output before the new text, and the unfinished
 * last line (a prompt). A match is found if it lies within that window; a match that would
 * start more than the overlap before the new output (a single match longer than the overlap,
 * spread over output that arrived in separate checks) can be missed. The text is matched in
 * slices, and the scanner yields to the event loop between them: slices are sized from the time
 * matching actually takes (about {@link SLICE_TARGET_MS} each), and for a pattern slow enough
 * the overlap shrinks with them, down to {@link MIN_OVERLAP} characters. Output that comes
 * faster than it can be matched is skipped past {@link MATCH_BACKLOG} bytes (the newest kept).
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { compilePattern, PatternScanner } from "./patterns.ts";
 * const buffer = new OutputBuffer();
 * const scanner = new PatternScanner(compilePattern("ready on (\\d+)", "", "pattern"), buffer, 0);
 * buffer.append(new TextEncoder().encode("\x1b[32mready on 8080\x1b[0m\n"));
 * (await scanner.scan())?.groups; // ["8080"]
 * ```
 * @module
 */
import { RE2JS } from "re2js";
import { EngineError } from "../errors.ts";
import type { OutputBuffer } from "./buffer.ts";
import { Cleaner } from "./clean.ts";
import { utf8Length } from "./utf8.ts";

/** Characters of already matched output kept in front of new output. */
export const MATCH_OVERLAP = 4096;
/** The overlap never shrinks below this, however slow the pattern. */
export const MIN_OVERLAP = 256;
/** Unmatched output beyond this many bytes is skipped (the newest is matched). */
export const MATCH_BACKLOG = 1024 * 1024;
/** The time one slice of matching aims at. */
export const SLICE_TARGET_MS = 8;
const MIN_SLICE = 256, FIRST_SLICE = 1024, MAX_SLICE = 256 * 1024;

/** A match: the text, where it starts (in cleaned characters since the scan began), groups. */
export interface PatternMatch {
  text: string;
  index: number;
  groups: (string | null)[];
}

/** A compiled pattern. */
export interface Pattern {
  readonly source: string;
  /** The first match in `text`, if any. */
  find(text: string): PatternMatch | undefined;
}

/** Constructs RE2 does not have, as [what the agent wrote, its name]. */
function unsupported(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && /[1-9]/.test(next)) return `a backreference (\\${next})`;
      if (!inClass && next === "k" && pattern[i + 2] === "<") {
        return "a named backreference (\\k<...>)";
      }
      i++;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    if (char === "[") {
      inClass = true;
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++; // a leading ] is literal
      continue;
    }
    const ahead = pattern.slice(i, i + 4);
    if (ahead.startsWith("(?=")) return "a lookahead (?=...)";
    if (ahead.startsWith("(?!")) return "a negative lookahead (?!...)";
    if (ahead.startsWith("(?<=")) return "a lookbehind (?<=...)";
    if (ahead.startsWith("(?<!")) return "a negative lookbehind (?<!...)";
    if (ahead.startsWith("(?>")) return "an atomic group (?>...)";
    if (/^[*+?}]\+/.test(ahead) && i > 0) return `a possessive quantifier (${ahead.slice(0, 2)})`;
  }
  return undefined;
}

const FLAGS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  u: 0, // RE2 always matches by code point
};

/**
 * Compiles an agent's pattern (RE2 syntax; flags from `imsu`). Throws an invalid-input
 * {@link EngineError} naming `field` and, for a construct RE2 lacks, the construct.
 */
export function compilePattern(source: string, flags: string, field: string): Pattern {
  const construct = unsupported(source);
  const syntax = "patterns use RE2 syntax, which matches in linear time " +
    "(https://github.com/google/re2/wiki/Syntax)";
  if (construct) {
    throw new EngineError("invalid_input", `${construct} is not supported: ${syntax}`, field);
  }
  let bits = 0;
  for (const flag of flags) {
    if (!(flag in FLAGS)) {
      throw new EngineError("invalid_input", `unknown flag '${flag}' (use i, m, s, u)`, "flags");
    }
    bits |= FLAGS[flag];
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(source, bits);
  } catch (error) {
    const message = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new EngineError(
      "invalid_input",
      `not a valid regular expression: ${message} (${syntax})`,
      field,
    );
  }
  return {
    source,
    find(text: string): PatternMatch | undefined {
      const matcher = regex.matcher(text);
      if (!matcher.find()) return undefined;
      const groups: (string | null)[] = [];
      for (let group = 1; group <= matcher.groupCount(); group++) groups.push(matcher.group(group));
      return { text: matcher.group() ?? "", index: matcher.start(), groups };
    },
  };
}

/** The end of `text`, at most `length` characters, from a line start when there is one. */
function overlapOf(text: string, length: number): string {
  if (text.length <= length) return text;
  const tail = text.slice(text.length - length);
  const newline = tail.indexOf("\n");
  return newline >= 0 && newline + 1 < tail.length ? tail.slice(newline + 1) : tail;
}

/** Yields to the event loop (other requests are answered meanwhile). */
function yieldToOthers(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** See the module documentation. */
export class PatternScanner {
  readonly #pattern: Pattern;
  readonly #buffer: OutputBuffer;
  #offset: number;
  /** The unfinished line is only matched by its newest part: the cleaner keeps no more. */
  #cleaner = new Cleaner({ keepLine: MATCH_OVERLAP + MAX_SLICE });
  /** Cleaned text already matched, kept as the overlap. */
  #window = "";
  /** Cleaned characters produced before the window's first one. */
  #windowIndex = 0;
  #slice = FIRST_SLICE;
  #overlap = MIN_OVERLAP;
  /** Milliseconds per character, as measured. */
  #cost = 0;
  #running: Promise<PatternMatch | undefined> | undefined;
  #again = false;
  /** Bytes skipped because output came faster than it could be matched. */
  skipped = 0;

  /** Scans `buffer` from offset `from` (at most its newest {@link MATCH_BACKLOG} bytes). */
  constructor(pattern: Pattern, buffer: OutputBuffer, from: number) {
    this.#pattern = pattern;
    this.#buffer = buffer;
    this.#offset = from;
  }

  /**
   * Matches the output that arrived since the last scan; resolves with the first match, if any.
   * `final`: the stream has ended. Calls made while a scan runs join it (and rescan).
   */
  scan(final = false): Promise<PatternMatch | undefined> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#scanLoop(final).finally(() => this.#running = undefined);
    return this.#running;
  }

  async #scanLoop(final: boolean): Promise<PatternMatch | undefined> {
    let found: PatternMatch | undefined;
    do {
      this.#again = false;
      found = await this.#scanOnce(final);
    } while (!found && this.#again);
    return found;
  }

  async #scanOnce(final: boolean): Promise<PatternMatch | undefined> {
    const buffer = this.#buffer;
    let busySince = performance.now();
    for (;;) {
      this.#skipBacklog();
      const sliceEnd = Math.min(buffer.end, this.#offset + this.#slice);
      const range = buffer.readText(this.#offset, sliceEnd, final && sliceEnd === buffer.end);
      // At most a slice of cleaned text, however much the cleaner makes of these bytes.
      const fresh = this.#cleaner.push(range.text, this.#slice);
      const consumed = this.#cleaner.consumed;
      const offset = consumed === range.text.length
        ? range.end
        : range.start + utf8Length(range.text.slice(0, consumed));
      const progressed = offset > this.#offset;
      this.#offset = Math.max(this.#offset, offset);
      const atEnd = this.#offset >= buffer.end || !progressed;
      // The unfinished line is matched too (a prompt), but only its newest part is new.
      const partial = atEnd ? this.#cleaner.peek().slice(-(this.#overlap + consumed)) : "";
      const text = this.#window + fresh;
      const started = performance.now();
      const match = this.#pattern.find(text + partial);
      this.#measure(performance.now() - started, text.length + partial.length);
      if (match) return { ...match, index: this.#windowIndex + match.index };
      const kept = overlapOf(text, this.#overlap);
      this.#windowIndex += text.length - kept.length;
      this.#window = kept;
      if (atEnd) return undefined;
      if (performance.now() - busySince >= SLICE_TARGET_MS) {
        await yieldToOthers();
        busySince = performance.now();
      }
    }
  }

  /** Output beyond the backlog is skipped: matching goes on from a line start near the newest. */
  #skipBacklog(): void {
    const buffer = this.#buffer;
    let offset = Math.max(this.#offset, buffer.start);
    if (buffer.end - offset > MATCH_BACKLOG) {
      const line = buffer.lineStart(buffer.lineAt(buffer.end - MATCH_BACKLOG) + 1);
      offset = line < buffer.end ? line : buffer.end - MATCH_BACKLOG;
    }
    if (offset === this.#offset) return;
    this.skipped += offset - this.#offset;
    this.#offset = offset;
    this.#cleaner = new Cleaner({ keepLine: MATCH_OVERLAP + MAX_SLICE });
    this.#windowIndex += this.#window.length;
    this.#window = "";
  }

  /** Sizes the next slice (and the overlap) from how long this one took. */
  #measure(elapsedMs: number, characters: number): void {
    const cost = elapsedMs / Math.max(1, characters);
    this.#cost = this.#cost === 0 ? cost : (this.#cost + cost) / 2;
    const affordable = SLICE_TARGET_MS / Math.max(this.#cost, 1e-6);
    this.#overlap = Math.round(Math.min(MATCH_OVERLAP, Math.max(MIN_OVERLAP, affordable / 2)));
    const next = Math.min(this.#slice * 2, affordable - this.#overlap);
    this.#slice = Math.round(Math.min(MAX_SLICE, Math.max(MIN_SLICE, next)));
  }
}
