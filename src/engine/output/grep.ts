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
 *   pieces that overlap by up to 4 KiB (see grep_lines.ts): a match longer than the overlap, in
 *   a line that long, can be missed.
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
import { isLowAfterHigh } from "./clean.ts";
import {
  CALL_WORK,
  type First,
  type Found,
  type Line,
  LineMatcher,
  LineReader,
  SEARCH_WORK_MS,
  SearchClock,
} from "./grep_lines.ts";
import type { Pattern } from "./patterns.ts";
import { cutHead, jsonSize, MARKER_ROOM } from "./shape.ts";
import { atOnce, type Steps } from "../slices.ts";

export { CALL_WORK, MAX_CONTEXT_LINES, SEARCH_WORK_MS, SearchClock };
/** Matching lines one answer shows, at most (all are counted). */
export const MAX_MATCHES_SHOWN = 100;
/** A line shown longer than this (bytes as JSON) is cut around its match. */
export const LINE_BYTES = 1024;
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
        ? `inside line ${stop.line + options.lineBase} (its rest was not searched, and a ` +
          "search that goes on starts after it: a line this long is not searched whole)"
        : `after line ${stop.line + options.lineBase}`;
      const next = this.firstHidden ? "" : `; ${options.resume(searchedTo, nextLine)}`;
      parts.push(`search stopped ${where}: it had worked ${SEARCH_WORK_MS / 1000} s${next}`);
    }
    if (parts.length > 0) this.#add(`... [${parts.join("; ")}] ...\n`);
  }
}
