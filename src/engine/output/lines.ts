/**
 * Reading an {@link OutputBuffer} by lines, the way an agent wants it: from a line number on
 * (`since`), whole (`full`, capped by `maxLines`), or just the start (`head`), the end (`tail`)
 * or both (`head-tail`, with a marker saying how much was left out). Line numbers never
 * repeat, so `nextReadFrom` stays meaningful after old lines are dropped.
 *
 * The newest line may still be growing (a prompt with no newline yet): it is shown, but
 * `nextReadFrom` points at it, so the next read shows it again, complete.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { readLines } from "./lines.ts";
 * const buffer = new OutputBuffer();
 * buffer.append(new TextEncoder().encode("a\nb\nc\nd\n"));
 * readLines(buffer, { mode: "head-tail", headLines: 1, tailLines: 1 }).output;
 * // "a\n... [2 lines omitted] ...\nd\n"
 * ```
 * @module
 */
import { cleanTerminalText } from "./clean.ts";
import type { OutputBuffer } from "./buffer.ts";

/** The read modes that work on lines. */
export const LINE_MODES = ["full", "head", "tail", "head-tail"] as const;
/** One of {@link LINE_MODES}. */
export type LineMode = typeof LINE_MODES[number];

/** What to read. */
export interface LineReadOptions {
  /** First line wanted (default: the oldest kept). */
  since?: number;
  mode?: LineMode;
  /** Lines from the start in `head` and `head-tail`. Default 50. */
  headLines?: number;
  /** Lines from the end in `tail` and `head-tail`. Default 50. */
  tailLines?: number;
  /** Most lines in `full` mode. Default 1000. */
  maxLines?: number;
  /** Keep escape sequences. */
  raw?: boolean;
  /** The stream has ended: its last line is complete even without a newline. */
  final?: boolean;
}

/** What was read. */
export interface LineRead {
  output: string;
  /** Lines ever written (the next line's number). */
  totalLines: number;
  /** Pass as `since` to continue. */
  nextReadFrom: number;
  /** `full` mode stopped at `maxLines` before the end. */
  hasMore: boolean;
  /** Some requested lines are not in `output` (dropped by the buffer, or left out by the mode). */
  truncated: boolean;
  linesShown: number;
  linesOmitted: number;
}

/**
 * The number of the first line not yet settled: every line ever started, unless the last one
 * is still growing (no newline yet, stream not ended), in which case it is read again next
 * time. What `nextReadFrom` answers.
 */
export function settledLines(buffer: OutputBuffer, final: boolean): number {
  return final || buffer.endsWithNewline ? buffer.lineCount : buffer.lineCount - 1;
}

/** The cleaned (or raw) text of lines [from, to). */
function linesText(
  buffer: OutputBuffer,
  from: number,
  to: number,
  raw: boolean,
  final: boolean,
): string {
  if (to <= from) return "";
  const text = buffer.readText(buffer.lineStart(from), buffer.lineStart(to), final).text;
  return raw ? text : cleanTerminalText(text);
}

/** See the module documentation. */
export function readLines(buffer: OutputBuffer, options: LineReadOptions = {}): LineRead {
  const mode = options.mode ?? "full";
  const raw = options.raw ?? false;
  const final = options.final ?? false;
  const total = buffer.lineCount;
  const first = Math.min(Math.max(options.since ?? buffer.firstLine, buffer.firstLine), total);
  // Lines asked for that the buffer has already dropped.
  const dropped = Math.max(
    0,
    Math.min(buffer.firstLine, total) - (options.since ?? buffer.firstLine),
  );
  const settled = settledLines(buffer, final);
  const available = total - first;
  const text = (from: number, to: number) => linesText(buffer, from, to, raw, final);
  const head = Math.max(0, options.headLines ?? 50);
  const tail = Math.max(0, options.tailLines ?? 50);
  let output: string;
  let shown: number;
  let next = Math.max(first, settled);
  let hasMore = false;
  switch (mode) {
    case "full": {
      const end = Math.min(total, first + Math.max(0, options.maxLines ?? 1000));
      output = text(first, end);
      shown = end - first;
      hasMore = end < total;
      next = Math.min(end, Math.max(first, settled));
      break;
    }
    case "head":
      shown = Math.min(head, available);
      output = text(first, first + shown);
      break;
    case "tail":
      shown = Math.min(tail, available);
      output = text(total - shown, total);
      break;
    default: {
      if (head + tail >= available) {
        shown = available;
        output = text(first, total);
      } else {
        shown = head + tail;
        const start = text(first, first + head);
        const omitted = available - shown;
        output = start + (start && !start.endsWith("\n") ? "\n" : "") +
          `... [${omitted} line${omitted === 1 ? "" : "s"} omitted] ...\n` +
          text(total - tail, total);
      }
    }
  }
  const omitted = available - shown;
  return {
    output,
    totalLines: total,
    nextReadFrom: next,
    hasMore,
    truncated: dropped > 0 || omitted > 0,
    linesShown: shown,
    linesOmitted: omitted + dropped,
  };
}
