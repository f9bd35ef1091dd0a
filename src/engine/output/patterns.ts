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
 * spread over output that arrived in separate checks) can be missed. Where the text matched
 * starts inside the output (the overlap, a long line's newest part, where matching goes on after
 * a skip), the character the output shows before it is matched too, as context only: `^` and `\b`
 * see it, and `^` without the `m` flag matches only where the scan began. The text is matched in
 * slices of at most {@link MAX_SLICE} new characters, and the scanners yield to the event loop
 * between them once they have spent about {@link SLICE_TARGET_MS} together. Slices are sized from what matching costs (about {@link SLICE_TARGET_MS} each):
 * the cost a character is measured when the pattern is compiled (on texts made to keep it busy)
 * and on every slice, the highest seen counting (it decays slowly); for a pattern slow enough the
 * overlap shrinks too, down to {@link MIN_OVERLAP} characters. So one step of matching holds
 * the server for at most about (overlap + slice + a row that one sequence, a repeat, can make:
 * {@link MAX_COLUMNS}) characters at the pattern's cost, twice: milliseconds for
 * ordinary patterns, and well under a second for the slowest re2js runs measured here (about
 * 80 µs a character) even when the text turns costly at once. Output that comes faster than it
 * can be matched is skipped past {@link MATCH_BACKLOG} bytes (the newest kept).
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { compilePattern, loadPatterns, PatternScanner } from "./patterns.ts";
 * await loadPatterns();
 * const buffer = new OutputBuffer();
 * const scanner = new PatternScanner(compilePattern("ready on (\\d+)", "", "pattern"), buffer, 0);
 * buffer.append(new TextEncoder().encode("\x1b[32mready on 8080\x1b[0m\n"));
 * (await scanner.scan())?.groups; // ["8080"]
 * ```
 * @module
 */
import type { RE2JS } from "re2js";
import { EngineError } from "../errors.ts";
import type { OutputBuffer } from "./buffer.ts";
import { Cleaner, isLowAfterHigh, MAX_COLUMNS } from "./clean.ts";

/** Characters of already matched output kept in front of new output. */
export const MATCH_OVERLAP = 4096;
/** The overlap never shrinks below this, however slow the pattern. */
export const MIN_OVERLAP = 256;
/** Unmatched output beyond this many bytes is skipped (the newest is matched). */
export const MATCH_BACKLOG = 1024 * 1024;
/** The time one slice of matching aims at. */
export const SLICE_TARGET_MS = 8;
/** New characters matched at once, at most. */
export const MAX_SLICE = 4096;
const MIN_SLICE = 256;
/** Characters of each calibration text. */
const CALIBRATION = 256;

/** A match: the text, where it starts (in cleaned characters since the scan began), groups. */
export interface PatternMatch {
  text: string;
  index: number;
  groups: (string | null)[];
}

/** A compiled pattern. */
export interface Pattern {
  readonly source: string;
  /** Milliseconds a character, measured at compile time on texts made to keep it busy. */
  readonly cost: number;
  /**
   * The first match in `text` that starts at `from` or later, if any (its index counts from the
   * start of `text`). What stands before `from` is context only: `^` and `\b` see it.
   */
  find(text: string, from?: number): PatternMatch | undefined;
  /**
   * Whether `text` holds a match anywhere: cheaper than {@link find} (no groups, so RE2's
   * DFA runs where it can).
   */
  test(text: string): boolean;
  /**
   * RE2's program size: roughly what matching costs a character, known without timing (the
   * most a character can cost grows with it).
   */
  readonly size: number;
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
      // \p{Greek}, \x{41}: the braces are the escape's own, not a repetition.
      const braced = "pPx".includes(next) && next !== "" && pattern[i + 2] === "{";
      const close = braced ? pattern.indexOf("}", i + 3) : -1;
      i = close >= 0 ? close : i + 1;
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

/** re2js, once {@link loadPatterns} has loaded it. */
let re2: typeof RE2JS | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads re2js (260 KB of code, the only npm package the engine would otherwise load with the
 * server), which a server never given a pattern need not hold: about 2 MiB of an idle server's
 * memory, measured. {@link compilePattern} needs it loaded first; later calls return at once.
 */
export function loadPatterns(): Promise<void> {
  return loading ??= import("re2js").then((module) => void (re2 = module.RE2JS));
}

/** The flag letters and their RE2 bits. */
function flagBits(RE2: typeof RE2JS): Record<string, number> {
  return {
    i: RE2.CASE_INSENSITIVE,
    m: RE2.MULTILINE,
    s: RE2.DOTALL,
    u: 0, // RE2 always matches by code point
  };
}

/**
 * Compiles an agent's pattern (RE2 syntax; flags from `imsu`). Throws an invalid-input
 * {@link EngineError} naming `field` and, for a construct RE2 lacks, the construct. Call
 * {@link loadPatterns} first: a use before it has finished is a bug in the caller.
 */
export function compilePattern(source: string, flags: string, field: string): Pattern {
  const RE2 = re2;
  if (!RE2) throw new Error("patterns compiled before loadPatterns() finished");
  const FLAGS = flagBits(RE2);
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
    regex = RE2.compile(source, bits);
  } catch (error) {
    const message = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new EngineError(
      "invalid_input",
      `not a valid regular expression: ${message} (${syntax})`,
      field,
    );
  }
  const find = (text: string, from = 0): PatternMatch | undefined => {
    const matcher = regex.matcher(text);
    if (!matcher.find(from)) return undefined;
    const groups: (string | null)[] = [];
    for (let group = 1; group <= matcher.groupCount(); group++) groups.push(matcher.group(group));
    return { text: matcher.group() ?? "", index: matcher.start(), groups };
  };
  return {
    source,
    cost: calibrate(source, find),
    find,
    test: (text) => regex.test(text),
    size: regex.programSize(),
  };
}

/**
 * What matching costs a character, measured on texts likely to keep the pattern busy: the
 * pattern's own characters, and runs of a few letters (what nested repetitions feed on).
 */
function calibrate(source: string, find: (text: string) => unknown): number {
  const own = [...new Set(source.replace(/[\\()[\]{}*+?|^$.]/g, ""))].join("") || "ab";
  let cost = 0;
  for (const unit of [own, "ab", "a"]) {
    const text = unit.repeat(Math.ceil(CALIBRATION / unit.length)).slice(0, CALIBRATION);
    find(text.slice(0, CALIBRATION / 4)); // warms the engine up: a first run is slow anyway
    const started = performance.now();
    find(text);
    cost = Math.max(cost, (performance.now() - started) / text.length);
  }
  return cost;
}

/**
 * Text to match from `from` on; what stands before `from` (at most one character) is context: the
 * character before a cut, so that `^` and `\b` see what the cut follows. Only the scan's own
 * start has none: there `^` matches without the `m` flag, and nowhere else (a line start inside
 * the output is preceded by its newline, which `^` matches after only with `m`).
 */
interface Cut {
  text: string;
  from: number;
}

/** Stands before a cut inside a line whose character there is not known (dropped, skipped). */
const UNKNOWN_CONTEXT = "\ufffd";
/**
 * What a skip's cut follows is learnt by cleaning the bytes before it: from its line's start when
 * that is at most CONTEXT_LINE_BYTES back (the cleaner then keeps the whole line, and knows its
 * rows and its cursor), else the last CONTEXT_BYTES.
 */
const CONTEXT_LINE_BYTES = 16 * 1024, CONTEXT_BYTES = 1024;

/** `text` from `at` (at least 1) on, with the character before it as context. */
function cutAt(text: string, at: number): Cut {
  // Never between a pair's halves: back to its first, unless nothing would stand before it then.
  if (isLowAfterHigh(text, at)) at += at > 1 ? -1 : 1;
  return { text: text.slice(at - 1), from: 1 };
}

/** The end of `lines`, at most `length` characters, from a line start when there is one. */
function overlapOf(lines: Cut, length: number): Cut {
  const { text } = lines;
  if (text.length - lines.from <= length) return lines;
  const at = text.length - length;
  const newline = text.indexOf("\n", at);
  return cutAt(text, newline >= 0 && newline + 1 < text.length ? newline + 1 : at);
}

/**
 * Matching time (ms) all scanners have spent since the event loop's last turn. They share one
 * budget of about {@link SLICE_TARGET_MS} between turns, and take the turns in order: with a
 * budget each, many waits at once held the server for all their slices in a row (32 waits with a
 * slow pattern: get_version's median 255 ms, its slowest 550; found by an attack helper).
 */
let spent = 0;
/** When the last slice ended: a pause longer than IDLE_MS since means the budget is whole again. */
let lastEnd = -Infinity;
const IDLE_MS = 1;
let turnScheduled = false;
/** Scanners waiting for a turn, first come first served. */
const waiting: (() => void)[] = [];

/** The event loop's next turn gives the first waiting scanner a whole budget. */
function scheduleTurn(): void {
  if (turnScheduled) return;
  turnScheduled = true;
  setTimeout(() => {
    turnScheduled = false;
    spent = 0;
    waiting.shift()?.();
  }, 0);
}

/**
 * Undefined if a slice may start now (the budget lasts and no scanner waits before this one);
 * else resolves at this scanner's turn.
 */
function turnToMatch(): Promise<void> | undefined {
  if (waiting.length === 0 && performance.now() - lastEnd > IDLE_MS) spent = 0;
  if (spent < SLICE_TARGET_MS && waiting.length === 0) return undefined;
  return new Promise((resolve) => {
    waiting.push(resolve);
    scheduleTurn();
  });
}

/** Counts a slice that began at `started` against the budget; what is left goes to the next. */
function spend(started: number): void {
  lastEnd = performance.now();
  spent += lastEnd - started;
  if (waiting.length === 0) return;
  if (spent < SLICE_TARGET_MS) waiting.shift()!();
  else scheduleTurn();
}

/** See the module documentation. */
export class PatternScanner {
  readonly #pattern: Pattern;
  readonly #buffer: OutputBuffer;
  #offset: number;
  readonly #columns: number | undefined;
  #cleaner: Cleaner;
  /** The unfinished line at the last check, and how much of its start the cleaner had forgotten. */
  #line = "";
  #lineForgotten = 0;
  /** Complete lines already matched, kept as the overlap (after a skip: what preceded it). */
  #window: Cut = { text: "", from: 0 };
  /** Cleaned characters of complete lines produced since the scan began. */
  #emitted = 0;
  #slice = MIN_SLICE;
  #overlap = MIN_OVERLAP;
  /** Milliseconds a character: the highest measured, decaying slowly. */
  #cost: number;
  #running: Promise<PatternMatch | undefined> | undefined;
  #again = false;
  #final = false;
  /** Output from this offset on is not matched (yet): see {@link scan}. */
  #until = Infinity;
  #cancelled = false;
  /** Bytes skipped because output came faster than it could be matched. */
  skipped = 0;

  /**
   * Scans `buffer` from offset `from` (at most its newest {@link MATCH_BACKLOG} bytes), cleaned
   * for a terminal `columns` wide.
   */
  constructor(pattern: Pattern, buffer: OutputBuffer, from: number, columns?: number) {
    this.#pattern = pattern;
    this.#buffer = buffer;
    this.#offset = from;
    this.#columns = columns;
    this.#cleaner = this.#newCleaner();
    this.#cost = pattern.cost;
    this.#size();
  }

  /** Stops scanning (a scan in progress ends at its next slice, matching nothing more). */
  cancel(): void {
    this.#cancelled = true;
  }

  /**
   * Matches the output that arrived since the last scan; resolves with the first match, if any.
   * `final`: the stream has ended. `until`: match only output before this offset (output that
   * arrives while the scan yields is left for a later scan). Calls made while a scan runs join
   * it (and rescan).
   */
  scan(final = false, until = Infinity): Promise<PatternMatch | undefined> {
    this.#final ||= final;
    this.#until = until;
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#scanLoop().finally(() => this.#running = undefined);
    return this.#running;
  }

  async #scanLoop(): Promise<PatternMatch | undefined> {
    let found: PatternMatch | undefined;
    do {
      this.#again = false;
      found = await this.#scanOnce();
    } while (!found && this.#again && !this.#cancelled);
    return found;
  }

  async #scanOnce(): Promise<PatternMatch | undefined> {
    for (;;) {
      const turn = turnToMatch();
      if (turn) await turn;
      const started = performance.now();
      // Every turn taken is given back, whatever ends it (a cancel while queued left every
      // scanner queued after this one asleep; found by an attack helper).
      try {
        if (this.#cancelled) return undefined;
        const step = this.#step();
        if (step !== "more") return step;
      } finally {
        spend(started);
      }
    }
  }

  /** One slice: the match it finds, undefined when there is nothing more now, or "more". */
  #step(): PatternMatch | undefined | "more" {
    const buffer = this.#buffer;
    const final = this.#final;
    this.#skipBacklog();
    const end = Math.min(buffer.end, this.#until);
    const sliceEnd = Math.min(end, this.#offset + this.#slice);
    const range = buffer.readText(this.#offset, sliceEnd, final && sliceEnd === buffer.end);
    // A line whose start the cleaner forgot (see #newCleaner) and which this push completes
    // comes back as its kept part, after what it forgot.
    const forgotten = this.#cleaner.forgotten, forgottenLast = this.#cleaner.forgottenLast;
    // At most a slice of cleaned text, however much the cleaner makes of these bytes.
    const fresh = this.#cleaner.push(range.text, this.#slice);
    const consumed = this.#cleaner.consumed;
    const offset = consumed === range.text.length
      ? range.end
      : range.start + buffer.bytesOfText(range.start, range.text.slice(0, consumed));
    const progressed = offset > this.#offset;
    this.#offset = Math.max(this.#offset, offset);
    const cutLine = fresh.length > 0 && forgotten > 0;
    this.#emitted += fresh.length + (cutLine ? forgotten : 0);
    const match = this.#match(fresh, cutLine ? forgottenLast : "");
    if (match) return match;
    return this.#offset >= end || !progressed ? undefined : "more";
  }

  /**
   * Matches the overlap and the lines this slice completed (only their newest part if a long
   * line completed), and the line still being written: whole, after them, when what changed in
   * it starts within the overlap of its start; else from the overlap before what changed (the
   * rest was matched on earlier slices). What changed is found by comparing the line with the
   * last check's: a slice's text lengthens it, a repeat (REP) by up to a row, and a carriage
   * return rewrites it from a row's start.
   */
  #match(fresh: string, forgottenLast: string): PatternMatch | undefined {
    // A push stops at about a slice of text, plus at most a row that one sequence made.
    const newest = this.#overlap + this.#slice + MAX_COLUMNS;
    // The first of the lines lost its start: the overlap no longer stands right before it.
    let lines: Cut = forgottenLast
      ? { text: forgottenLast + fresh, from: 1 }
      : { text: this.#window.text + fresh, from: this.#window.from };
    if (lines.text.length - lines.from > newest + this.#overlap) {
      lines = cutAt(lines.text, lines.text.length - newest);
    }
    const linesStart = this.#emitted - lines.text.length;
    const line = this.#cleaner.peek();
    const from = Math.max(0, this.#changedFrom(line, fresh.length > 0) - this.#overlap);
    const whole = from === 0 && this.#cleaner.forgotten === 0;
    const started = performance.now();
    let match = this.#pattern.find(whole ? lines.text + line : lines.text, lines.from);
    let index = match ? linesStart + match.index : 0;
    let scanned = lines.text.length - lines.from + (whole ? line.length : 0);
    if (!match && !whole) {
      // The cleaner keeps more of a line than that (see #newCleaner), but for a line it forgot
      // the start of while one slice changed all it kept.
      const tail = from > 0
        ? cutAt(line, from)
        : { text: this.#cleaner.forgottenLast + line, from: 1 };
      match = this.#pattern.find(tail.text, tail.from);
      index = this.#emitted + this.#cleaner.forgotten + line.length - tail.text.length +
        (match?.index ?? 0);
      scanned += tail.text.length - tail.from;
    }
    this.#measure(performance.now() - started, scanned);
    this.#window = overlapOf(lines, this.#overlap);
    return match ? { ...match, index } : undefined;
  }

  /**
   * Output beyond the backlog (or dropped from the buffer) is skipped: matching goes on from the
   * newest {@link MATCH_BACKLOG} bytes, inside a line if that is where they start (the rest of a
   * line longer than the backlog is matched, and its cut is not taken for a line start). Match
   * indexes count from there.
   */
  #skipBacklog(): void {
    const buffer = this.#buffer;
    const target = Math.max(this.#offset, buffer.start, buffer.end - MATCH_BACKLOG);
    if (target === this.#offset) return;
    // Past an escape sequence or a character the cut falls inside: both belong before it.
    const sequenceEnd = buffer.pastSequence(target);
    const offset = buffer.readText(sequenceEnd, Math.min(buffer.end, sequenceEnd + 4)).start;
    this.skipped += offset - this.#offset;
    this.#offset = offset;
    this.#cleaner = this.#newCleaner();
    [this.#line, this.#lineForgotten] = ["", 0];
    const context = this.#shownBefore(offset);
    this.#window = { text: context, from: context.length };
    this.#emitted = 0;
  }

  /**
   * What the output shows right before `offset`, where what follows it is written, cleaned as the
   * scan cleans: a newline at the start of a line, the character before the cursor, or
   * {@link UNKNOWN_CONTEXT} if the bytes looked at show nothing of a line that started before
   * them.
   */
  #shownBefore(offset: number): string {
    const buffer = this.#buffer;
    const line = buffer.lineStart(buffer.lineAt(offset));
    const lineKept = line > buffer.start || line === 0 || !buffer.firstLineCut;
    const whole = lineKept && offset - line <= CONTEXT_LINE_BYTES;
    const from = whole ? line : buffer.pastSequence(Math.max(buffer.start, offset - CONTEXT_BYTES));
    const cleaner = this.#newCleaner();
    const completed = cleaner.push(buffer.readText(from, offset).text);
    const shown = cleaner.beforeCursor();
    if (shown) return shown;
    return whole || completed ? "\n" : UNKNOWN_CONTEXT;
  }

  /**
   * Where the unfinished line first differs from the last check's (0: all of it is new), in its
   * text as the cleaner keeps it now. `completed`: lines ended since, so this line is new.
   */
  #changedFrom(line: string, completed: boolean): number {
    const forgotten = this.#cleaner.forgotten;
    const before = completed ? "" : this.#line.slice(Math.max(0, forgotten - this.#lineForgotten));
    this.#line = line;
    this.#lineForgotten = forgotten;
    if (line.startsWith(before)) return before.length;
    let same = 0;
    while (same < before.length && before.charCodeAt(same) === line.charCodeAt(same)) same++;
    return same;
  }

  /**
   * The unfinished line is only matched by what changed in it and the overlap before that: the
   * cleaner keeps no more than the most that can be (a slice and a row that one sequence made,
   * and the overlap), but for a character or two before it, its context (see {@link cutAt}).
   */
  #newCleaner(): Cleaner {
    const keepLine = MATCH_OVERLAP + MAX_SLICE + MAX_COLUMNS + 2;
    return new Cleaner({ keepLine, columns: this.#columns });
  }

  /** Takes in how long a slice took; sizes the next. */
  #measure(elapsedMs: number, characters: number): void {
    // A call costs something however short the text: short texts say little about a character.
    const cost = elapsedMs / Math.max(CALIBRATION * 4, characters);
    this.#cost = Math.max(this.#pattern.cost, cost, this.#cost * 0.9);
    this.#size();
  }

  /** Slice and overlap: together about the target time at the current cost. */
  #size(): void {
    const affordable = SLICE_TARGET_MS / Math.max(this.#cost, 1e-6);
    this.#overlap = Math.round(Math.min(MATCH_OVERLAP, Math.max(MIN_OVERLAP, affordable / 2)));
    const slice = Math.min(this.#slice * 2, affordable - this.#overlap);
    this.#slice = Math.round(Math.min(MAX_SLICE, Math.max(MIN_SLICE, slice)));
  }
}
