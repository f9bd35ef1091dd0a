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
 * - {@link readBackward}: the newest part of a range that fits (a wait's output, ACP's output).
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
import type { OutputBuffer } from "./buffer.ts";
import { Cleaner } from "./clean.ts";
import { cutHead, cutTail, jsonSize } from "./shape.ts";
import { utf8Length } from "./utf8.ts";

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
  /** A forward read ends before an unfinished escape sequence at its end. Default true. */
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
function clean(
  text: string,
  start: number,
  end: number,
  options: RangeOptions,
  holdBack: boolean,
): Cleaned {
  const cleaner = new Cleaner({ columns: options.columns });
  const limit = options.budget;
  const out = cleaner.push(text, limit);
  if (cleaner.consumed < text.length) {
    const consumed = text.slice(0, cleaner.consumed);
    return { text: out + cleaner.end(), end: start + utf8Length(consumed), complete: false };
  }
  const unfinished = cleaner.unfinishedSequenceLength;
  const rest = out + cleaner.end();
  if (holdBack && unfinished > 0 && unfinished <= HOLD_BACK) {
    return {
      text: rest,
      end: end - utf8Length(text.slice(text.length - unfinished)),
      complete: true,
    };
  }
  return { text: rest, end, complete: true };
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
  buffer: OutputBuffer,
  from: number,
  maxBytes: number,
  options: RangeOptions,
): RangeRead {
  const final = options.final ?? false;
  const budget = options.budget;
  const start = Math.max(from, buffer.start);
  let end = Math.min(buffer.end, start + Math.max(1, maxBytes), start + budget);
  for (;;) {
    const range = buffer.readText(from, end, final);
    if (range.end <= range.start && end < buffer.end) {
      // Less than one character asked for: one character it is.
      end = Math.min(buffer.end, end + 4);
      continue;
    }
    const read = { text: range.text, start: range.start, end: range.end, dropped: range.dropped };
    if (options.raw) {
      const cut = cutHead(range.text, budget);
      if (cut < range.text.length) {
        read.text = range.text.slice(0, cut);
        read.end = range.start + utf8Length(read.text);
      }
      return read;
    }
    const more = (options.holdBack ?? true) && (range.end < buffer.end || !final);
    const cleaned = clean(range.text, range.start, range.end, options, more);
    if (cleaned.end <= range.start && end < buffer.end) {
      // Nothing but the start of a sequence: read on until it ends (it shows no text).
      end = Math.min(buffer.end, end + Math.max(end - start, 16));
      continue;
    }
    read.text = cleaned.text;
    read.end = cleaned.end;
    if (jsonSize(read.text) <= budget) return read;
    // Too big: keep the whole lines that fit.
    const lineEnd = read.text.lastIndexOf("\n", cutHead(read.text, budget) - 1);
    if (lineEnd >= 0) {
      read.text = read.text.slice(0, lineEnd + 1);
      read.end = buffer.lineStart(buffer.lineAt(range.start) + countLines(read.text, lineEnd + 1));
      return read;
    }
    // Not even one line fits: half as many bytes of it.
    if (cleaned.end - range.start <= 1) return read;
    end = range.start + Math.floor((cleaned.end - range.start) / 2);
  }
}

/** Reads the newest part of [from, to) (default: the end of the buffer) that fits the budget. */
export function readBackward(
  buffer: OutputBuffer,
  from: number,
  options: RangeOptions,
  to: number = buffer.end,
): RangeRead {
  const end = Math.min(to, buffer.end);
  const final = options.final ?? false;
  const budget = options.budget;
  const dropped = Math.max(0, Math.min(buffer.start, end) - from);
  const first = Math.max(from, buffer.start);
  let start = Math.max(first, end - budget);
  if (start > first && buffer.lineStart(buffer.lineAt(start)) !== start) {
    // Whole lines: from the next line start, if a line starts before the end.
    const next = buffer.lineStart(buffer.lineAt(start) + 1);
    if (next < end) start = next;
  }
  for (;;) {
    const range = buffer.readText(start, end, final);
    const read = { text: range.text, start: range.start, end: range.end, dropped };
    if (options.raw) {
      const cut = cutTail(range.text, budget);
      if (cut > 0) {
        read.text = range.text.slice(cut);
        read.start = range.end - utf8Length(read.text);
      }
      return read;
    }
    const cleaned = clean(range.text, range.start, range.end, options, false);
    read.text = cleaned.text;
    if (cleaned.complete && jsonSize(read.text) <= budget) return read;
    if (cleaned.complete) {
      // Too big: keep the newest whole lines that fit.
      const lineStart = read.text.indexOf("\n", cutTail(read.text, budget) - 1) + 1;
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
