/**
 * Reading an {@link OutputBuffer} by lines, the way an agent wants it: from a line number on
 * (`since`), whole (`full`, capped by `maxLines`), or just the start (`head`), the end (`tail`)
 * or both (`head-tail`, with a marker saying exactly what was left out and how to read it).
 * Line numbers never repeat, so `nextReadFrom` stays meaningful after old lines are dropped.
 *
 * Every read fits a budget (bytes in a JSON answer, see shape.ts): `full` and `head` stop at
 * the last whole line that fits (`full` then has `hasMore`, and `nextReadFrom` goes on from
 * there), `tail` starts at the first whole line that fits, `head-tail` shares the budget. A
 * single line too big for the budget is shown cut, with a marker saying how much of it is not.
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
 * // "a\n... [2 lines, 4 bytes omitted; read them with since=1] ...\nd\n"
 * ```
 * @module
 */
import type { OutputReader } from "./buffer.ts";
import { readBackwardSteps, readForwardSteps } from "./ranges.ts";
import { jsonSizeSteps, MARKER_ROOM, omissionMarker } from "./shape.ts";
import type { LineMode } from "../vocabulary.ts";
import { atOnce, type Steps } from "../slices.ts";

export { LINE_MODES, type LineMode } from "../vocabulary.ts";

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
  /** Most bytes the output may take in JSON. Default: no limit. */
  budget?: number;
  /** The terminal's width, for cleaning (see clean.ts). */
  columns?: number;
  /**
   * The `head-tail` marker's advice for reading what it left out, from line `line` (byte
   * `offset`). Default: "read them with since=LINE".
   */
  hint?: (line: number, offset: number) => string;
}

/** What was read. */
export interface LineRead {
  output: string;
  /** Lines ever written (the next line's number). */
  totalLines: number;
  /** Pass as `since` to continue: the first line neither shown nor skipped by the mode. */
  nextReadFrom: number;
  /** Byte offset where reading on continues (after the last line shown, or the end). */
  end: number;
  /** `full` mode stopped (at `maxLines` or the budget) before the end. */
  hasMore: boolean;
  /**
   * Some requested lines are not in `output`, or not whole: dropped by the buffer (wholly, or the
   * beginning of the oldest), or left out by the mode.
   */
  truncated: boolean;
  /** Lines shown, whole or cut. */
  linesShown: number;
  /** Lines asked for and not shown at all. */
  linesOmitted: number;
}

/**
 * The number of the first line not yet settled: every line ever started, unless the last one
 * is still growing (no newline yet, stream not ended), in which case it is read again next
 * time. What `nextReadFrom` answers.
 */
export function settledLines(buffer: OutputReader, final: boolean): number {
  return final || buffer.endsWithNewline ? buffer.lineCount : buffer.lineCount - 1;
}

/** Lines read: the text of lines [from, to), the last (`head`) or first (`tail`) maybe cut. */
interface Piece {
  text: string;
  from: number;
  to: number;
  /** Byte offsets of what is shown. */
  start: number;
  end: number;
  /** A marker for the part of a cut line not shown ("" if no line was cut). */
  cut: string;
}

interface Context {
  buffer: OutputReader;
  raw: boolean;
  final: boolean;
  columns?: number;
}

/** The first lines of [from, to) that fit `budget`. */
function* head(context: Context, from: number, to: number, budget: number): Steps<Piece> {
  const { buffer } = context;
  const start = buffer.lineStart(from), stop = buffer.lineStart(to);
  if (to <= from) return { text: "", from, to: from, start, end: start, cut: "" };
  const read = yield* readForwardSteps(buffer, start, stop - start, {
    ...context,
    budget,
    holdBack: false,
  });
  const line = buffer.lineAt(read.end);
  if (read.end >= stop || buffer.lineStart(line) === read.end) {
    const last = read.end >= stop ? to : line;
    return { text: read.text, from, to: last, start, end: read.end, cut: "" };
  }
  // The line at read.end does not fit whole. After whole lines, the page stops before it (the
  // next page shows it: cut and passed over here, its rest was never shown to anyone); as the
  // page's first line, it is too big for any page and is shown in part.
  const lineStart = buffer.lineStart(line);
  if (lineStart > start) {
    const whole = yield* readForwardSteps(buffer, start, lineStart - start, {
      ...context,
      budget,
      holdBack: false,
    });
    return { text: whole.text, from, to: line, start, end: whole.end, cut: "" };
  }
  const lineEnd = buffer.lineStart(line + 1);
  const cut = omissionMarker({
    bytes: lineEnd - read.end,
    hint: `the rest of line ${line}, over the answer size limit`,
  });
  return {
    text: read.text + (read.text.endsWith("\n") ? "" : "\n"),
    from,
    to: line + 1,
    start,
    end: lineEnd,
    cut,
  };
}

/** The last lines of [from, end of buffer) that fit `budget`. */
function* tail(context: Context, from: number, budget: number): Steps<Piece> {
  const { buffer } = context;
  const total = buffer.lineCount, first = buffer.lineStart(from);
  if (total <= from) return { text: "", from: total, to: total, start: first, end: first, cut: "" };
  const read = yield* readBackwardSteps(buffer, first, { ...context, budget });
  const line = buffer.lineAt(read.start);
  // Where text from `first` begins: past the rest of a character the byte limit cut, which is
  // that limit's drop (counted as such), not a cut for the answer's size.
  const textStart = buffer.readText(first, Math.min(buffer.end, first + 4)).start;
  if (read.start <= textStart || buffer.lineStart(line) === read.start) {
    return {
      text: read.text,
      from: Math.max(from, line),
      to: total,
      start: read.start,
      end: buffer.end,
      cut: "",
    };
  }
  const lineStart = buffer.lineStart(line);
  const cut = omissionMarker({
    bytes: read.start - lineStart,
    hint: `the start of line ${line}, over the answer size limit`,
  });
  return { text: read.text, from: line, to: total, start: lineStart, end: buffer.end, cut };
}

/** See the module documentation. */
export function readLines(buffer: OutputReader, options: LineReadOptions = {}): LineRead {
  return atOnce(readLinesSteps(buffer, options));
}

/** {@link readLines} as steps (see src/engine/slices.ts). */
export function* readLinesSteps(
  buffer: OutputReader,
  options: LineReadOptions = {},
): Steps<LineRead> {
  const mode = options.mode ?? "full";
  const context = {
    buffer,
    raw: options.raw ?? false,
    final: options.final ?? false,
    columns: options.columns,
  };
  const budget = Math.max(MARKER_ROOM * 2, (options.budget ?? Infinity) - MARKER_ROOM);
  const total = buffer.lineCount;
  const first = Math.min(Math.max(options.since ?? buffer.firstLine, buffer.firstLine), total);
  // Lines asked for that the buffer has already dropped.
  const dropped = Math.max(
    0,
    Math.min(buffer.firstLine, total) - (options.since ?? buffer.firstLine),
  );
  const settled = settledLines(buffer, context.final);
  const hint = options.hint ?? ((line: number) => `read them with since=${line}`);
  const available = total - first;
  const headCount = Math.max(0, options.headLines ?? 50);
  const tailCount = Math.max(0, options.tailLines ?? 50);
  let output: string;
  let shown: number;
  let cut: boolean;
  let next = Math.max(first, settled);
  let end = buffer.end;
  let hasMore = false;
  /** The first line shown, if any. */
  let from = first;
  switch (mode) {
    case "full":
    case "head": {
      // Both go on after the last line shown: nothing unread is skipped.
      const count = mode === "full" ? Math.max(0, options.maxLines ?? 1000) : headCount;
      const piece = yield* head(context, first, Math.min(total, first + count), budget);
      [output, shown, cut] = [piece.text + piece.cut, piece.to - first, piece.cut !== ""];
      hasMore = mode === "full" && piece.to < total;
      next = Math.min(piece.to, Math.max(first, settled));
      end = piece.to < total ? buffer.lineStart(piece.to) : buffer.end;
      break;
    }
    case "tail": {
      const piece = yield* tail(context, Math.max(first, total - tailCount), budget);
      [output, shown, cut] = [piece.cut + piece.text, total - piece.from, piece.cut !== ""];
      from = piece.from;
      break;
    }
    default:
      ({ output, shown, cut } = yield* headTail(
        context,
        first,
        headCount,
        tailCount,
        budget,
        hint,
      ));
  }
  const omitted = available - shown;
  // The oldest line kept may have lost its beginning to the byte limit: shown, it is not whole.
  const partial = shown > 0 && from === buffer.firstLine && buffer.firstLineCut;
  return {
    output,
    totalLines: total,
    nextReadFrom: next,
    end,
    hasMore,
    truncated: dropped > 0 || omitted > 0 || cut || partial,
    linesShown: shown,
    linesOmitted: omitted + dropped,
  };
}

/** `head-tail`: the first and last lines, the budget shared, a marker for what lies between. */
function* headTail(
  context: Context,
  first: number,
  headCount: number,
  tailCount: number,
  budget: number,
  hint: (line: number, offset: number) => string,
): Steps<{ output: string; shown: number; cut: boolean }> {
  const { buffer } = context;
  const total = buffer.lineCount;
  const start = yield* head(context, first, Math.min(total, first + headCount), budget / 2);
  const used = (yield* jsonSizeSteps(start.text)) + (yield* jsonSizeSteps(start.cut));
  const end = yield* tail(
    context,
    Math.max(start.to, total - tailCount),
    Math.max(budget - used, MARKER_ROOM),
  );
  const lines = end.from - start.to;
  const bytes = end.start - start.end;
  const between = lines > 0 || bytes > 0
    ? omissionMarker({ lines, bytes, hint: hint(start.to, start.end) })
    : "";
  const rest = start.cut + between + end.cut + end.text;
  const headText = start.text + (rest && start.text && !start.text.endsWith("\n") ? "\n" : "");
  return {
    output: headText + rest,
    shown: start.to - first + total - end.from,
    cut: start.cut !== "" || end.cut !== "",
  };
}
