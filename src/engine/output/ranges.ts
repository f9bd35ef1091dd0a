/**
 * Reads of a byte range of an {@link OutputBuffer}, cleaned (or raw) and fitted to a budget
 * (bytes in a JSON answer, see shape.ts), with offsets that always describe exactly what was
 * shown:
 *
 * - {@link readForward}: from an offset on, as much as fits (a command's `stdout_offset` read).
 *   It ends where the shown text ends, never inside an escape sequence of at most
 *   {@link HOLD_BACK} characters (the next read starts with that sequence, so no fragment of it
 *   leaks into either read as text); a read that would hold nothing but the start of such a
 *   sequence (or of a character) reads on past it, beyond its byte count if need be.
 * - {@link readBackward}: the newest part of a range that fits (ACP's output).
 * - {@link readShaped}: the whole range if it fits, else its head and its tail with a marker
 *   between saying exactly what was left out and how to read it (every default answer).
 *
 * Cleaned text is cut at line breaks: every line feed of the output is one line break of the
 * cleaned text, so a cut after k lines is the offset where line k starts. Work is bounded by the
 * budget, not by the buffer: at most a budget's worth of raw bytes is read and cleaned once; only
 * a single line too big for the budget is halved until it fits.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { readBackward, readForward } from "./ranges.ts";
 * const buffer = new OutputBuffer();
 * buffer.append(new TextEncoder().encode("one\n\x1b[1mtwo\x1b[0m\nthree\n"));
 * readForward(buffer, 0, 1000, { budget: 1000 }).text;  // "one\ntwo\nthree\n"
 * readBackward(buffer, 0, { budget: 8 }).text;          // "three\n" (the newest whole line)
 * ```
 * @module
 */
import type { OutputReader } from "./buffer.ts";
import { Cleaner } from "./clean.ts";
import { cutHeadSteps, cutTailSteps, jsonSizeSteps, MARKER_ROOM, omissionMarker } from "./shape.ts";
import { utf8LengthSteps } from "./utf8.ts";
import { atOnce, type Steps } from "../slices.ts";

/** An unfinished escape sequence at most this long ends a forward read before it. */
export const HOLD_BACK = 4096;

/** How a range is read. */
export interface RangeOptions {
  /** Keep escape sequences and carriage returns. */
  raw?: boolean;
  /** The stream has ended: nothing will follow the last byte. */
  final?: boolean;
  /** Most bytes the text may take in JSON. */
  budget: number;
  /**
   * The read ends before an unfinished escape sequence at the end of the buffer (it is read
   * next time). Default: true for forward reads, false for backward ones. A forward read
   * that stops inside the buffer always ends before a sequence it would cut.
   */
  holdBack?: boolean;
  /** The terminal's width, for cleaning (see clean.ts). */
  columns?: number;
}

/** Text read from a range. */
export interface RangeRead {
  text: string;
  /** Offset of the first byte shown. */
  start: number;
  /** Offset after the last byte shown: where a forward read goes on. */
  end: number;
  /** Bytes asked for that the buffer had already dropped. */
  dropped: number;
}

/** Cleaned text of the bytes [start, end), and the offset it covers up to. */
interface Cleaned {
  text: string;
  end: number;
  /** False when the cleaner stopped at its limit before the end. */
  complete: boolean;
}

/**
 * Cleans `text`, the bytes [start, end): at most about `limit` characters of result. With
 * `holdBack`, an unfinished sequence at the end is left for the next read.
 */
function* clean(
  buffer: OutputReader,
  text: string,
  start: number,
  end: number,
  options: RangeOptions,
  holdBack: boolean,
): Steps<Cleaned> {
  const cleaner = new Cleaner({ columns: options.columns });
  const limit = options.budget;
  const out = yield* cleaner.pushSteps(text, limit);
  if (cleaner.consumed < text.length) {
    const consumed = text.slice(0, cleaner.consumed);
    return {
      text: out + cleaner.end(),
      end: start + (yield* bytesOfText(buffer, start, consumed)),
      complete: false,
    };
  }
  const unfinished = cleaner.unfinishedSequenceLength;
  const rest = out + cleaner.end();
  if (holdBack && unfinished > 0 && unfinished <= HOLD_BACK) {
    return {
      text: rest,
      end: start + (yield* bytesOfText(buffer, start, text.slice(0, text.length - unfinished))),
      complete: true,
    };
  }
  return { text: rest, end, complete: true };
}

/** The buffer's {@link OutputReader.bytesOfText}, as steps (see src/engine/slices.ts). */
function* bytesOfText(buffer: OutputReader, start: number, text: string): Steps<number> {
  // Text with invalid bytes in it (decoded as U+FFFD) is counted in the bytes themselves.
  if (text.includes("\uFFFD")) return buffer.bytesOfText(start, text);
  return yield* utf8LengthSteps(text);
}

/**
 * Where a raw read of `text` ends within `budget`: never inside an escape sequence of at most
 * {@link HOLD_BACK} characters (the next read starts with it; at the end of `text` only if
 * `more` may follow), and never at 0 (a page always moves on): when not even the first
 * character or sequence fits, that one is shown whole, over the budget. -1 when `text` is
 * nothing but the start of a sequence that goes on past it.
 */
function* rawCut(text: string, budget: number, more: boolean): Steps<number> {
  let cut = yield* cutHeadSteps(text, budget);
  if (cut < text.length || more) {
    const cleaner = new Cleaner();
    yield* cleaner.pushSteps(text.slice(0, cut));
    const unfinished = cleaner.unfinishedSequenceLength;
    if (unfinished > 0 && unfinished <= HOLD_BACK) cut -= unfinished;
  }
  if (cut > 0 || text.length === 0) return cut;
  const cleaner = new Cleaner();
  cleaner.push(text[0]);
  if (!cleaner.inSequence) return isPaired(text, 0) ? 2 : 1;
  for (let i = 1; i < Math.min(text.length, HOLD_BACK); i++) {
    cleaner.push(text[i]);
    // A character that ends a sequence (a cleaner ends one at a non-ASCII character) stays whole.
    if (!cleaner.inSequence) return isPaired(text, i) ? i + 2 : i + 1;
  }
  // A sequence longer than HOLD_BACK may be cut; a shorter one waits for its end.
  return text.length >= HOLD_BACK ? 1 : -1;
}

/** Whether a surrogate pair starts at `index` of `text`. */
function isPaired(text: string, index: number): boolean {
  return (text.charCodeAt(index) & 0xfc00) === 0xd800 &&
    (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
}

/** How many line feeds `text` holds before index `end`. */
function countLines(text: string, end: number): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

/**
 * Reads forward from `from`: at most `maxBytes` raw bytes, and no more than fits the budget.
 * `end` is where the next read goes on.
 */
export function readForward(
  buffer: OutputReader,
  from: number,
  maxBytes: number,
  options: RangeOptions,
): RangeRead {
  return atOnce(readForwardSteps(buffer, from, maxBytes, options));
}

/** {@link readForward} as steps (see src/engine/slices.ts). */
export function* readForwardSteps(
  buffer: OutputReader,
  from: number,
  maxBytes: number,
  options: RangeOptions,
): Steps<RangeRead> {
  const final = options.final ?? false;
  const budget = Math.max(1, options.budget);
  const start = Math.max(from, buffer.start);
  const firstEnd = Math.min(buffer.end, start + Math.max(1, maxBytes), start + budget);
  let end = firstEnd;
  /** The longest end read that showed nothing but the start of a sequence. */
  let barren = start;
  for (;;) {
    const range = buffer.readText(from, end, final);
    if (range.end <= range.start && end < buffer.end) {
      // Less than one character asked for: one character it is.
      barren = Math.max(barren, end);
      end = Math.min(buffer.end, end + 4);
      continue;
    }
    const read = { text: range.text, start: range.start, end: range.end, dropped: range.dropped };
    // A cut inside the buffer never splits a sequence (the next read would show its rest as
    // text); `holdBack` is about the buffer's end, where the rest has not arrived yet.
    const more = range.end < buffer.end || ((options.holdBack ?? true) && !final);
    if (options.raw) {
      // Read on past maxBytes for a sequence's sake: that sequence is all the page shows.
      const cut = yield* rawCut(range.text, end > firstEnd ? 0 : budget, more);
      if (cut < 0 && end < buffer.end) {
        // Nothing but the start of a sequence: read on until it ends.
        end = Math.min(buffer.end, end + Math.max(end - start, 16));
        continue;
      }
      // A sequence still unfinished at the buffer's end shows once it ends (or the stream does).
      if (cut < 0 && more) return { ...read, text: "", end: range.start };
      if (cut >= 0 && cut < range.text.length) {
        read.text = range.text.slice(0, cut);
        read.end = range.start + (yield* bytesOfText(buffer, range.start, read.text));
      }
      return read;
    }
    const cleaned = yield* clean(
      buffer,
      range.text,
      range.start,
      range.end,
      { ...options, budget },
      more,
    );
    if (cleaned.end <= range.start && end < buffer.end) {
      // Nothing but the start of a sequence: read on until it ends (it shows no text).
      barren = Math.max(barren, end);
      end = Math.min(buffer.end, end + Math.max(end - start, 16));
      continue;
    }
    read.text = cleaned.text;
    read.end = cleaned.end;
    if ((yield* jsonSizeSteps(read.text)) <= budget) return read;
    // Too big: keep the whole lines that fit.
    const lineEnd = read.text.lastIndexOf("\n", (yield* cutHeadSteps(read.text, budget)) - 1);
    if (lineEnd >= 0) {
      read.text = read.text.slice(0, lineEnd + 1);
      read.end = buffer.lineStart(buffer.lineAt(range.start) + countLines(read.text, lineEnd + 1));
      return read;
    }
    // Not even one line fits: half as many bytes of it. Halving back to where only a
    // sequence's start was read would loop: this is the smallest step that shows anything
    // (one sequence cleans to at most a row), shown whole though over a budget that small.
    const half = range.start + Math.floor((cleaned.end - range.start) / 2);
    if (cleaned.end - range.start <= 1 || half <= barren) return read;
    end = half;
  }
}

/** Reads the newest part of [from, to) (default: the end of the buffer) that fits the budget. */
export function readBackward(
  buffer: OutputReader,
  from: number,
  options: RangeOptions,
  to: number = buffer.end,
): RangeRead {
  return atOnce(readBackwardSteps(buffer, from, options, to));
}

/** {@link readBackward} as steps (see src/engine/slices.ts). */
export function* readBackwardSteps(
  buffer: OutputReader,
  from: number,
  options: RangeOptions,
  to: number = buffer.end,
): Steps<RangeRead> {
  const end = Math.min(to, buffer.end);
  const final = options.final ?? false;
  const budget = options.budget;
  const hold = (options.holdBack ?? false) && !final;
  const dropped = Math.max(0, Math.min(buffer.start, end) - from);
  const first = Math.max(from, buffer.start);
  let start = Math.max(first, end - budget);
  if (start > first && buffer.lineStart(buffer.lineAt(start)) !== start) {
    // Whole lines: from the next line start, if a line starts before the end.
    const next = buffer.lineStart(buffer.lineAt(start) + 1);
    if (next < end) start = next;
  }
  for (;;) {
    // A start inside the buffer never falls inside a sequence: its rest would show as text.
    if (start > first) start = Math.min(end, buffer.pastSequence(start));
    const range = buffer.readText(start, end, final);
    const read = { text: range.text, start: range.start, end: range.end, dropped };
    if (options.raw) {
      const cut = yield* cutTailSteps(range.text, budget);
      if (cut > 0) {
        read.text = range.text.slice(cut);
        read.start = range.start +
          (yield* bytesOfText(buffer, range.start, range.text.slice(0, cut)));
      }
      return read;
    }
    const cleaned = yield* clean(buffer, range.text, range.start, range.end, options, hold);
    read.text = cleaned.text;
    read.end = cleaned.end;
    if (cleaned.complete && (yield* jsonSizeSteps(read.text)) <= budget) return read;
    if (cleaned.complete) {
      // Too big: keep the newest whole lines that fit.
      const lineStart = read.text.indexOf("\n", (yield* cutTailSteps(read.text, budget)) - 1) + 1;
      if (lineStart > 0 && lineStart < read.text.length) {
        read.text = read.text.slice(lineStart);
        read.start = buffer.lineStart(
          buffer.lineAt(range.start) + countLines(cleaned.text, lineStart),
        );
        return read;
      }
    }
    // The newest line alone is too big (or cleans to too much): its newer half.
    if (end - range.start <= 1) return read;
    start = range.start + Math.ceil((end - range.start) / 2);
  }
}

/** A {@link readShaped} read: what it shows, and what it left out between head and tail. */
export interface ShapedRead extends RangeRead {
  /** The raw bytes [start, end) left out between the head and the tail, if any were. */
  omitted?: { start: number; end: number };
  /** A budget too small for head, marker and tail: a page, and the range goes on after `end`. */
  paged?: true;
}

/** How a {@link readShaped} read says where what it left out can be read. */
export interface ShapeOptions extends RangeOptions {
  /** The marker's advice, e.g. "read them with since=120": `start` is the first byte left out. */
  hint(start: number, line: number): string;
}

/**
 * The range from `from` to `to` (default: the end), whole if it fits the budget; otherwise its
 * first lines and its last lines, each about half the budget, and between them a marker saying
 * exactly how many lines and bytes were left out and how to read them
 * ({@link ShapeOptions.hint}). The head ends and the tail starts at line breaks; only a line too
 * big for half the budget is cut, and the marker then says so. `end` is where a forward read
 * goes on (after the tail). A budget too small for head, marker and tail gives the first page
 * (`end` is where it stops).
 */
export function readShaped(
  buffer: OutputReader,
  from: number,
  options: ShapeOptions,
  to: number = buffer.end,
): ShapedRead {
  return atOnce(readShapedSteps(buffer, from, options, to));
}

/** {@link readShaped} as steps (see src/engine/slices.ts). */
export function* readShapedSteps(
  buffer: OutputReader,
  from: number,
  options: ShapeOptions,
  to: number = buffer.end,
): Steps<ShapedRead> {
  const length = to >= buffer.end ? Infinity : Math.max(0, to - Math.max(from, buffer.start));
  const whole = yield* readForwardSteps(buffer, from, length, options);
  if (whole.end >= to || (to >= buffer.end && onlyHeldBack(buffer, whole.end, options))) {
    return whole;
  }
  // Too small a budget for a head, a marker and a tail: a page, going on from its end.
  if (options.budget < 4 * MARKER_ROOM) return { ...whole, paged: true };
  const half = Math.max(1, Math.floor((options.budget - MARKER_ROOM) / 2));
  const head = wholeLines(
    buffer,
    yield* readForwardSteps(buffer, from, length, { ...options, budget: half }),
    to,
  );
  const tail = yield* readBackwardSteps(buffer, head.end, {
    ...options,
    budget: Math.max(1, options.budget - MARKER_ROOM - (yield* jsonSizeSteps(head.text))),
    holdBack: options.holdBack ?? true,
  }, to);
  const joined = head.text + (head.text && !head.text.endsWith("\n") ? "\n" : "");
  if (tail.start <= head.end) {
    return { ...tail, text: head.text + tail.text, start: head.start, dropped: head.dropped };
  }
  const headLine = buffer.lineAt(head.end), tailLine = buffer.lineAt(tail.start);
  const headAtStart = buffer.lineStart(headLine) === head.end;
  const tailAtStart = buffer.lineStart(tailLine) === tail.start;
  const marker = omissionMarker({
    bytes: tail.start - head.end,
    lines: Math.max(0, tailLine - (headAtStart ? headLine : headLine + 1)),
    cut: !headAtStart || !tailAtStart,
    hint: options.hint(head.end, headLine),
  });
  return {
    text: joined + marker + tail.text,
    start: head.start,
    end: tail.end,
    dropped: head.dropped,
    omitted: { start: head.end, end: tail.start },
  };
}

/** Whether [offset, end of buffer) is nothing but an unfinished sequence held back. */
function onlyHeldBack(buffer: OutputReader, offset: number, options: RangeOptions): boolean {
  const rest = buffer.end - offset;
  if (options.raw || options.final || rest > HOLD_BACK) return false;
  return readForward(buffer, offset, rest, { ...options, budget: 6 * rest + 16 }).end === offset;
}

/** A forward read shortened to its whole lines, if it ends inside a line and holds a line break. */
function wholeLines(buffer: OutputReader, read: RangeRead, to: number): RangeRead {
  const line = buffer.lineAt(read.end);
  const lineEnd = read.text.lastIndexOf("\n");
  if (buffer.lineStart(line) === read.end || lineEnd < 0 || read.end >= to) return read;
  const text = read.text.slice(0, lineEnd + 1);
  return {
    ...read,
    text,
    end: buffer.lineStart(buffer.lineAt(read.start) + countLines(text, text.length)),
  };
}
