/**
 * Searching the output a stream kept, line by line, the way an agent wants it: the lines that
 * match an agent's pattern (see patterns.ts: RE2 syntax, linear time), each with its line
 * number (and its byte offset, where the tool pages by bytes), `contextLines` lines around
 * each (overlapping windows merged, `--` between groups, as grep prints them), a count of every
 * matching line, and a marker when more matched than the answer shows, saying where to search
 * on. Lines are cleaned as every read cleans them (unless raw), each matched as a whole:
 * `^` and `$` are its start and end.
 *
 * ```
 * 10006-288001-ok test_10006
 * 10007:288033:FAIL test_10007: expected 1 got 2
 * 10008-288068-ok test_10008
 * ```
 *
 * Bounded work, whatever the pattern and the output:
 * - the answer: at most {@link MAX_MATCHES_SHOWN} matching lines, within the budget (bytes as
 *   JSON, context included); a line longer than {@link LINE_BYTES} is shown cut around its
 *   match, with markers saying how much was left out;
 * - the time: the search is done in steps (see src/engine/slices.ts), and stops after
 *   {@link SEARCH_WORK_MS} of its own work, saying where it stopped and how to go on from there;
 * - each call into RE2: a line is matched whole if it is not too long for the pattern (see
 *   {@link CALL_WORK}: 174,762 characters for `FAIL`, at least 4096 for the largest), else in
 *   pieces that overlap by up to {@link MATCH_OVERLAP} characters: a match longer than the
 *   overlap, in a line that long, can be missed.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { grep } from "./grep.ts";
 * import { compilePattern, loadPatterns } from "./patterns.ts";
 * await loadPatterns();
 * const buffer = new OutputBuffer();
 * buffer.append(new TextEncoder().encode("ok 1\nFAIL 2\nok 3\n"));
 * const found = grep(buffer, {
 *   pattern: compilePattern("FAIL", "", "grep"),
 *   contextLines: 1,
 *   budget: 4096,
 *   final: true,
 *   lineBase: 1,
 *   offsets: true,
 *   resume: (offset) => `search on with offset=${offset}`,
 * });
 * found.text; // "1-0-ok 1\n2:5:FAIL 2\n3-12-ok 3\n"
 * found.matches; // 1
 * ```
 * @module
 */
import { EngineError } from "../errors.ts";
import { MAX_CONTEXT_LINES } from "../vocabulary.ts";
import type { OutputReader } from "./buffer.ts";
import { Cleaner, isLowAfterHigh } from "./clean.ts";
import { compilePattern, MATCH_OVERLAP, type Pattern } from "./patterns.ts";
import { cutHead, jsonSize, MARKER_ROOM } from "./shape.ts";
import { atOnce, type Steps } from "../slices.ts";

export { MAX_CONTEXT_LINES };
/** Matching lines one answer shows, at most (all are counted). */
export const MAX_MATCHES_SHOWN = 100;
/** A line shown longer than this (bytes as JSON) is cut around its match. */
export const LINE_BYTES = 1024;
/** The work (ms, its own slices counted) one search does at most before it stops. */
export const SEARCH_WORK_MS = 2000;
/** Raw bytes read and cleaned at a time. */
const CHUNK_BYTES = 64 * 1024;
/**
 * The work one call into RE2 may do, counted in program instructions (see {@link Pattern.size})
 * times characters: a line is matched whole if it is at most this divided by the pattern's
 * program size long (within {@link MIN_WHOLE} and {@link MAX_WHOLE}), a longer one in pieces a
 * sixteenth of that long (at least {@link MIN_PIECE}), where the match found is also looked for
 * ({@link Pattern.find}, slower). Measured here, a character cost at most about 50 ns an
 * instruction: about 50 ms a call.
 */
export const CALL_WORK = 1 << 20;
const MIN_WHOLE = 4096, MAX_WHOLE = 1 << 20, MIN_PIECE = 1024;
/** Stands before a line whose start was dropped: neither a line's start nor a word character. */
const UNKNOWN_CONTEXT = "\ufffd";

/** What to search, and how an answer shows what it found. */
export interface GrepOptions {
  pattern: Pattern;
  /** Lines shown before and after each match (0 to {@link MAX_CONTEXT_LINES}). */
  contextLines: number;
  /**
   * Search from the line holding this byte offset, or from this line (by the buffer's numbers).
   * Default: the start of the output (what is no longer kept of it is said so).
   */
  from?: { offset: number } | { line: number };
  /** Search only the output before this offset (default: all). */
  to?: number;
  /** Match and show the lines as the program wrote them (escape sequences kept). */
  raw?: boolean;
  /** The stream has ended: its last line is complete even without a newline. */
  final?: boolean;
  /** The terminal's width, for cleaning (see clean.ts). */
  columns?: number;
  /** Most bytes the text may take in JSON. */
  budget: number;
  /** What number line `n` of the buffer (counted from 0) is given: `n + lineBase`. */
  lineBase: number;
  /** Show each line's byte offset after its number (where the tool pages by bytes). */
  offsets: boolean;
  /** How to search on from byte `offset` (line `line` of the buffer), in the caller's words. */
  resume(offset: number, line: number): string;
  /** The time the search may work: shared by searches that answer one call. Default: its own. */
  clock?: SearchClock;
}

/** What a search found. */
export interface GrepRead {
  /** The lines found, numbered, with their context, and the markers. */
  text: string;
  /** Where the search began. */
  start: number;
  /**
   * Where a search goes on that shows what this one did not: at the first match not shown,
   * where this one stopped, or after what it searched (at the start of a last line still
   * growing: it is searched again, complete).
   */
  end: number;
  /** The buffer's number of the line at `end`. */
  nextLine: number;
  /** Bytes asked for that were no longer kept (0 where not known). */
  dropped: number;
  /** Lines asked for that were no longer kept (0 where not known). */
  droppedLines: number;
  /** Matching lines found. */
  matches: number;
  /** Matching lines shown. */
  shown: number;
  /** Lines shown, matching or context. */
  linesShown: number;
  /** Everything asked for was searched and every match found is shown. */
  complete: boolean;
}

/** A line as the search reads it: its number in the buffer, its (cleaned) text. */
interface Line {
  number: number;
  text: string;
  /** Its start was dropped: what `text` follows is not known. */
  cut: boolean;
}

/** A line's match: where it starts in the line, if known; "stopped": time ran out in it. */
type Found = { at: number | undefined } | "none" | "stopped";

/** See the module documentation. */
export function grep(buffer: OutputReader, options: GrepOptions): GrepRead {
  return atOnce(grepSteps(buffer, options));
}

/** {@link grep} as steps (see src/engine/slices.ts). */
export function* grepSteps(buffer: OutputReader, options: GrepOptions): Steps<GrepRead> {
  const clock = options.clock ?? new SearchClock();
  clock.resume();
  try {
    return yield* searchSteps(buffer, options, clock);
  } finally {
    clock.pause();
  }
}

/** {@link grepSteps}, its clock running. */
function* searchSteps(
  buffer: OutputReader,
  options: GrepOptions,
  clock: SearchClock,
): Steps<GrepRead> {
  const context = options.contextLines;
  if (!Number.isInteger(context) || context < 0 || context > MAX_CONTEXT_LINES) {
    throw new EngineError(
      "invalid_input",
      `must be an integer from 0 to ${MAX_CONTEXT_LINES} (got ${context})`,
      "contextLines",
    );
  }
  const to = Math.min(options.to ?? buffer.end, buffer.end);
  const lost = lostBefore(buffer, options.from, to);
  const first = firstLineOf(buffer, options.from, to, options.raw ?? false);
  const matcher = new LineMatcher(options.pattern, clock);
  const show = new Shown(buffer, options, first, matcher);
  if (lost.bytes > 0 || lost.lines > 0) show.notSearched(lost);
  const reader = new LineReader(buffer, first, to, options, clock);
  let stop: { line: number; partly: boolean } | undefined;
  scan: for (let lines = yield* reader.next(); lines; lines = yield* reader.next()) {
    const candidates = yield* matcher.candidates(lines);
    for (let i = 0; i < lines.texts.length; i++) {
      const line = { number: lines.first + i, text: lines.texts[i], cut: lines.cut && i === 0 };
      const found = candidates[i] ? yield* matcher.match(line) : "none";
      show.take(line, found);
      // The clock is read now and then: a read costs about as much as matching a short line.
      const look = found === "stopped" || (i & 63) === 63 || i + 1 === lines.texts.length;
      const more = i + 1 < lines.texts.length || !reader.exhausted;
      if (found === "stopped" || (look && more && clock.over)) {
        stop = { line: line.number, partly: found === "stopped" };
        break scan;
      }
    }
  }
  const next = stop ? stop.line + 1 : reader.number;
  // A last line still growing is searched again next time, complete.
  const growing = !stop && reader.growing;
  const nextLine = growing ? next - 1 : next;
  const searchedTo = stop || growing ? Math.max(first.start, buffer.lineStart(nextLine)) : to;
  show.finish(stop, searchedTo, nextLine);
  const hidden = show.firstHidden;
  return {
    text: show.text,
    start: first.start,
    end: hidden?.offset ?? Math.max(first.start, searchedTo),
    nextLine: hidden?.line ?? nextLine,
    dropped: lost.bytes,
    droppedLines: lost.lines,
    matches: show.matches,
    shown: show.shownMatches,
    linesShown: show.linesShown,
    complete: stop === undefined && hidden === undefined,
  };
}

/** What was asked for that is no longer kept: bytes and lines, each where it can be known. */
function lostBefore(
  buffer: OutputReader,
  from: GrepOptions["from"],
  to: number,
): { bytes: number; lines: number } {
  const kept = Math.min(to, buffer.start);
  if (from === undefined || ("offset" in from && from.offset === 0)) {
    return { bytes: kept, lines: kept > 0 ? buffer.firstLine : 0 };
  }
  if ("offset" in from) return { bytes: Math.max(0, kept - from.offset), lines: 0 };
  const lines = Math.max(0, Math.min(buffer.firstLine, buffer.lineCount) - from.line);
  return { bytes: from.line === 0 ? kept : 0, lines };
}

/** Where a search starts: its first line (whole, or as kept), and the offset of what it reads. */
interface First {
  line: number;
  start: number;
  /** The line's start was dropped. */
  cut: boolean;
}

function firstLineOf(
  buffer: OutputReader,
  from: GrepOptions["from"],
  to: number,
  raw: boolean,
): First {
  const line = from === undefined
    ? buffer.firstLine
    : "line" in from
    ? Math.max(from.line, buffer.firstLine)
    : buffer.lineAt(Math.max(from.offset, buffer.start));
  const beyond = from !== undefined &&
    ("line" in from ? from.line >= buffer.lineCount : from.offset >= to);
  if (beyond) {
    return { line: "line" in from ? from.line : buffer.lineAt(to), start: to, cut: false };
  }
  const lineStart = buffer.lineStart(line);
  const cut = line === buffer.firstLine && buffer.firstLineCut;
  // Cleaned, a line that starts inside an escape sequence is read from after it (as every read).
  return { line, start: Math.min(to, raw ? lineStart : buffer.pastSequence(lineStart)), cut };
}

/**
 * The time searches spend in their own steps (not while they wait for their slices, nor
 * between them), against a limit ({@link SEARCH_WORK_MS} unless told).
 */
export class SearchClock {
  #spent = 0;
  /** When the running step began (undefined while none runs). */
  #since: number | undefined;

  constructor(private readonly limitMs = SEARCH_WORK_MS) {}

  get over(): boolean {
    const running = this.#since === undefined ? 0 : performance.now() - this.#since;
    return this.#spent + running >= this.limitMs;
  }

  /** A search's work begins (again). */
  resume(): void {
    this.#since = performance.now();
  }

  /** It stops: the time since it began is counted. */
  pause(): void {
    if (this.#since !== undefined) this.#spent += performance.now() - this.#since;
    this.#since = undefined;
  }

  /** Yields (a place where the work may pause), counting its time apart from the wait. */
  *yield(): Steps<void> {
    this.pause();
    yield;
    this.resume();
  }

  /** `steps`, their pauses timed as {@link yield}'s. */
  *timed<T>(steps: Steps<T>): Steps<T> {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      yield* this.yield();
    }
  }
}

/** Lines read at once: their texts, and the same joined by line feeds. */
interface Lines {
  /** The number of the first. */
  first: number;
  texts: string[];
  joined: string;
  /** The first is the search's first line, whose start was dropped. */
  cut: boolean;
}

/** The lines of [first, to), cleaned unless raw, a chunk at a time, as steps. */
class LineReader {
  readonly #cleaner: Cleaner | undefined;
  /** Raw: the unfinished line so far. */
  #partial = "";
  #at: number;
  #ended: boolean;
  #finished = false;
  readonly #first: First;
  readonly #final: boolean;
  /** The range read ends inside a line (after its last line feed). */
  #endedInLine = false;
  /** The number of the next line. */
  number: number;

  constructor(
    private readonly buffer: OutputReader,
    first: First,
    private readonly to: number,
    options: GrepOptions,
    private readonly clock: SearchClock,
  ) {
    this.#cleaner = options.raw ? undefined : new Cleaner({ columns: options.columns });
    this.#first = first;
    this.#at = first.start;
    this.#ended = first.start >= to;
    this.number = first.line;
    this.#final = options.final === true && to === buffer.end;
  }

  /** Nothing is left to read. */
  get exhausted(): boolean {
    return this.#finished || (this.#ended && !this.#open);
  }

  /**
   * The last line read is still being written: the stream goes on, and it had no newline yet.
   * Meaningful once the lines are exhausted.
   */
  get growing(): boolean {
    return !this.#final && this.to === this.buffer.end && this.#endedInLine;
  }

  /** Whether a line started before where reading stopped has not been taken yet. */
  get #open(): boolean {
    const start = Math.max(this.#first.start, this.buffer.lineStart(this.number));
    return !this.#finished && start < this.#at;
  }

  /** The next lines (none while a chunk completes none), or undefined after the last. */
  *next(): Steps<Lines | undefined> {
    while (!this.#ended) {
      const lines = yield* this.#read();
      if (lines.texts.length > 0) return lines;
    }
    if (this.#finished) return undefined;
    const open = this.#open;
    this.#finished = true;
    const rest = this.#cleaner ? this.#cleaner.end() : this.#partial;
    if (!open) return undefined;
    this.#endedInLine = true;
    return this.#lines([rest], rest);
  }

  /** Reads and cleans the next chunk: the lines it completes. */
  *#read(): Steps<Lines> {
    const end = Math.min(this.to, this.#at + CHUNK_BYTES);
    const range = this.buffer.readText(this.#at, end, this.#final && end === this.to);
    if (range.end <= this.#at) {
      // Less than a character is left (its rest has not arrived): reading ends here.
      this.#ended = true;
      return this.#lines([], "");
    }
    this.#at = range.end;
    this.#ended = this.#at >= this.to;
    let joined: string;
    if (this.#cleaner) {
      joined = yield* this.clock.timed(this.#cleaner.pushSteps(range.text));
    } else {
      // Only the new text is looked through: a line that never ends costs no more each time.
      const cut = range.text.lastIndexOf("\n") + 1;
      joined = cut === 0 ? "" : this.#partial + range.text.slice(0, cut);
      this.#partial = cut === 0 ? this.#partial + range.text : range.text.slice(cut);
    }
    const texts = joined.split("\n");
    texts.pop(); // each line ends in "\n"
    yield* this.clock.yield();
    return this.#lines(texts, joined);
  }

  #lines(texts: string[], joined: string): Lines {
    const lines = {
      first: this.number,
      texts,
      joined,
      cut: this.#first.cut && this.number === this.#first.line,
    };
    this.number += texts.length;
    return lines;
  }
}

/**
 * The same pattern with `^` and `$` at every line's start and end (the m flag), to match many
 * lines at once (see {@link LineMatcher.candidates}); none if it could match less than the
 * lines one by one: `\A` and `\z` (a text's own start and end), or the m flag turned off.
 */
const atOnceOf = new WeakMap<Pattern, Pattern | null>();

function manyLines(pattern: Pattern): Pattern | null {
  let found = atOnceOf.get(pattern);
  if (found === undefined) {
    const unsafe = /\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m/.test(pattern.source);
    try {
      found = unsafe ? null : compilePattern(pattern.source, "m", "grep");
    } catch {
      found = null; // it compiled without the flag, so it should with it; else line by line
    }
    atOnceOf.set(pattern, found);
  }
  return found;
}

/**
 * Matches lines: each whole if it is at most {@link LineMatcher.whole} characters long, else in
 * pieces (see the module documentation), yielding now and then.
 */
class LineMatcher {
  /** The longest text matched at once: a line, or a run of lines (see {@link candidates}). */
  readonly whole: number;
  /** The pieces of a longer line. */
  readonly #piece: number;
  readonly #manyLines: Pattern | null;
  /** Lines matched whole since the last yield: how many, how long. */
  readonly #batch = { lines: 0, characters: 0 };

  constructor(private readonly pattern: Pattern, private readonly clock: SearchClock) {
    const size = Math.max(1, pattern.size);
    this.whole = Math.round(Math.min(MAX_WHOLE, Math.max(MIN_WHOLE, CALL_WORK / size)));
    this.#piece = Math.round(Math.min(this.whole, Math.max(MIN_PIECE, CALL_WORK / 16 / size)));
    this.#manyLines = manyLines(pattern);
  }

  /**
   * Which of `lines` may match: those of runs of lines (at most {@link whole} characters
   * together) in which the pattern with the m flag finds a match (each matched alone then
   * says). A run holds a match for it whenever one of its lines does alone: none is missed.
   */
  *candidates(lines: Lines): Steps<boolean[]> {
    const { texts, joined } = lines;
    const may = new Array<boolean>(texts.length).fill(true);
    const many = this.#manyLines;
    if (many === null || lines.cut) return may;
    for (let i = 0, at = 0; i < texts.length;) {
      // A line as long as a run, or longer, is matched alone.
      if (texts[i].length >= this.whole) {
        at += texts[i++].length + 1;
        continue;
      }
      let end = i, to = at;
      while (end < texts.length && to - at + texts[end].length < this.whole) {
        to += texts[end++].length + 1;
      }
      if (!many.test(joined.slice(at, to - 1))) may.fill(false, i, end);
      [i, at] = [end, to];
      yield* this.clock.yield();
    }
    return may;
  }

  /** Matches a line. */
  *match(line: Line): Steps<Found> {
    const { text } = line;
    if (line.cut || text.length > this.whole) {
      return yield* this.#inPieces(text, line.cut ? UNKNOWN_CONTEXT : "");
    }
    const found = this.pattern.test(text);
    // Short lines are matched many to a step: a step costs about as much as a short line.
    this.#batch.lines++;
    this.#batch.characters += text.length;
    if (this.#batch.lines >= 64 || this.#batch.characters >= MIN_PIECE * 4) {
      [this.#batch.lines, this.#batch.characters] = [0, 0];
      yield* this.clock.yield();
    }
    return found ? { at: undefined } : "none";
  }

  /**
   * Where the first match in a line that matched starts, to show the line around it (the
   * line's start if its pieces do not see the match: one longer than their overlap).
   */
  locate(line: Line): number {
    const found = atOnce(this.#inPieces(line.text, line.cut ? UNKNOWN_CONTEXT : ""));
    return typeof found === "object" ? found.at ?? 0 : 0;
  }

  /**
   * Matches `text` in overlapping pieces, each with the character before it as context (`^`
   * and `\b` see it; the line's own start has `context`). A match a piece shows ending where
   * the piece is cut inside the line is not taken: `$` and `\b` would see an end that is not
   * there; the next piece, which overlaps it, sees it whole if it is shorter than the overlap.
   */
  *#inPieces(text: string, context: string): Steps<Found> {
    const piece = this.#piece, overlap = Math.min(MATCH_OVERLAP, Math.floor(piece / 2));
    for (let from = 0;;) {
      let to = Math.min(text.length, from + piece);
      if (isLowAfterHigh(text, to)) to++;
      const before = from === 0 ? context : text[from - 1];
      const slice = before + text.slice(from, to);
      const match = this.pattern.test(slice) ? this.pattern.find(slice, before.length) : undefined;
      if (match && (to === text.length || match.index + match.text.length < slice.length)) {
        return { at: from + match.index - before.length };
      }
      if (to === text.length) return "none";
      yield* this.clock.yield();
      if (this.clock.over) return "stopped";
      from = to - overlap;
      if (isLowAfterHigh(text, from)) from--;
    }
  }
}

/** The answer's text as the search builds it: lines shown, within the budget and the cap. */
class Shown {
  text = "";
  matches = 0;
  shownMatches = 0;
  linesShown = 0;
  /** The first match not shown: where a search goes on. */
  firstHidden: { line: number; offset: number } | undefined;
  #used = 0;
  readonly #budget: number;
  /** The last line shown, if any. */
  #last = -1;
  /** Context lines still to show after the last match. */
  #after = 0;
  /** The lines before the next match that its context may show. */
  #before: Line[] = [];

  constructor(
    private readonly buffer: OutputReader,
    private readonly options: GrepOptions,
    private readonly first: First,
    /** Finds where a long line's match is, to show it around it. */
    private readonly matcher: LineMatcher,
  ) {
    this.#budget = Math.max(MARKER_ROOM, options.budget - MARKER_ROOM);
  }

  /** Says what was asked for and no longer kept. */
  notSearched(lost: { bytes: number; lines: number }): void {
    const counts = [
      ...(lost.lines > 0 ? [`${lost.lines} line${lost.lines === 1 ? "" : "s"}`] : []),
      ...(lost.bytes > 0 ? [`${lost.bytes} bytes`] : []),
    ];
    this.#add(`... [${counts.join(", ")} no longer kept: not searched] ...\n`);
  }

  /** Takes the next line searched, and whether (and where) it matched. */
  take(line: Line, found: Found): void {
    if (typeof found === "object") {
      this.matches++;
      if (this.firstHidden === undefined && !this.#showMatch(line, found.at)) {
        this.firstHidden = { line: line.number, offset: this.#offsetOf(line.number) };
      }
      return;
    }
    if (this.firstHidden !== undefined) return;
    if (this.#after > 0) {
      this.#after--;
      const text = this.#format(line, "-");
      if (this.#used + jsonSize(text) > this.#budget) this.#after = 0;
      else this.#show(line, text);
      return;
    }
    if (this.options.contextLines === 0) return;
    this.#before.push(line);
    if (this.#before.length > this.options.contextLines) this.#before.shift();
  }

  /**
   * Shows a match with the context before it, if all of it fits; false if not. The first match
   * of an answer is shown whatever the budget (alone, if need be): an answer always moves on.
   */
  #showMatch(line: Line, at: number | undefined): boolean {
    if (this.shownMatches >= MAX_MATCHES_SHOWN) return false;
    const match = { line, text: this.#format(line, ":", at) };
    const before = this.#before.filter((held) => held.number > this.#last)
      .map((held) => ({ line: held, text: this.#format(held, "-") }));
    const fits = (shown: { line: Line }[], size: number) => {
      // As grep: "--" between groups of lines apart, when lines around matches are shown.
      const gap = this.options.contextLines > 0 && this.#last >= 0 &&
        shown[0].line.number > this.#last + 1;
      return { gap, fits: this.#used + size + (gap ? 3 : 0) <= this.#budget };
    };
    let shown = [...before, match];
    let place = fits(shown, shown.reduce((sum, { text }) => sum + jsonSize(text), 0));
    if (!place.fits) {
      if (this.shownMatches > 0) return false;
      shown = [match];
      place = fits(shown, 0);
    }
    if (place.gap) this.#add("--\n");
    for (const { line, text } of shown) this.#show(line, text);
    this.shownMatches++;
    this.#before = [];
    this.#after = this.options.contextLines;
    return true;
  }

  #show(line: Line, text: string): void {
    this.#add(text);
    this.linesShown++;
    this.#last = line.number;
  }

  #add(text: string): void {
    this.text += text;
    this.#used += jsonSize(text);
  }

  /** Where line `n` starts (the search's first line: where the search began). */
  #offsetOf(n: number): number {
    return n === this.first.line ? this.first.start : this.buffer.lineStart(n);
  }

  /**
   * A line as shown: `number:offset:text` for a match, `number-offset-text` for context (no
   * offset unless asked for); a long line cut around its match (`at`, found if not known; a
   * context line: its start), saying how many characters were left out on each side.
   */
  #format(line: Line, separator: string, at?: number): string {
    const { options } = this;
    const prefix = `${line.number + options.lineBase}${separator}` +
      (options.offsets ? `${this.#offsetOf(line.number)}${separator}` : "");
    const text = line.text;
    if (text.length <= LINE_BYTES && jsonSize(text) <= LINE_BYTES) return `${prefix}${text}\n`;
    const where = separator === ":" ? at ?? this.matcher.locate(line) : 0;
    let from = Math.max(0, where - LINE_BYTES / 4);
    if (isLowAfterHigh(text, from)) from--;
    const to = cutHead(text, LINE_BYTES, from);
    const left = from > 0 ? `[... ${from} characters ...]` : "";
    const right = to < text.length ? `[... ${text.length - to} characters ...]` : "";
    return `${prefix}${left}${text.slice(from, to)}${right}\n`;
  }

  /** The markers that end the answer: matches not shown, or a search stopped before the end. */
  finish(
    stop: { line: number; partly: boolean } | undefined,
    searchedTo: number,
    nextLine: number,
  ): void {
    const { options } = this;
    const hidden = this.matches - this.shownMatches;
    const parts: string[] = [];
    if (hidden > 0 && this.firstHidden) {
      parts.push(
        `${hidden} more matching line${hidden === 1 ? "" : "s"} not shown; ` +
          options.resume(this.firstHidden.offset, this.firstHidden.line),
      );
    }
    if (stop) {
      const where = stop.partly
        ? `inside line ${stop.line + options.lineBase} (its rest was not searched)`
        : `after line ${stop.line + options.lineBase}`;
      const next = this.firstHidden ? "" : `; ${options.resume(searchedTo, nextLine)}`;
      parts.push(`search stopped ${where}: it had worked ${SEARCH_WORK_MS / 1000} s${next}`);
    }
    if (parts.length > 0) this.#add(`... [${parts.join("; ")}] ...\n`);
  }
}
