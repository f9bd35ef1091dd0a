/**
 * One output stream of a process (a terminal's output, a command's stdout or stderr) and every
 * way to read it: the one read API the services build their answers from, so that every front
 * end shows the same output the same way.
 *
 * Arriving bytes are converted to UTF-8 once ({@link StreamOutputOptions.decoder}), kept in an
 * {@link OutputBuffer} (numbered lines, arrival times, the server-wide budget), and read as:
 * - a forward range from an offset or a time ({@link StreamOutput.readFrom}, `readAfter`);
 * - the newest part of a range ({@link StreamOutput.readNewest});
 * - a range whole or as its head and tail with a marker ({@link StreamOutput.readShaped}): what
 *   every answer shows by default;
 * - lines ({@link StreamOutput.readLines}: full, head, tail, head-tail);
 * - the lines matching a pattern, with their numbers and context ({@link StreamView.grep});
 * - a screen ({@link StreamOutput.screen}), or a snapshot of it to draw it elsewhere;
 * - the bytes as kept ({@link StreamOutput.readBytes}), for a viewer following the stream;
 * - pattern matches as output arrives ({@link StreamOutput.scan}), after the echo of what was
 *   typed ({@link StreamOutput.echo}).
 * Each read is cleaned of escape sequences unless raw, and fits the byte budget it is given.
 * Reads that build large answers are done in slices of the event loop's time on a view of the
 * output frozen at their start ({@link StreamOutput.freeze}: the same reads, as steps).
 *
 * @example
 * ```ts
 * import { StreamOutput } from "./stream.ts";
 * const output = new StreamOutput({ maxBytes: 1 << 20 });
 * output.append(new TextEncoder().encode("\x1b[1mbuild ok\x1b[0m\n"));
 * output.readFrom(0, 1000, { budget: 1000 }).text;            // "build ok\n"
 * output.readLines({ mode: "tail", tailLines: 1, budget: 1000 }).output; // "build ok\n"
 * ```
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import type { OutputBudget } from "./budget.ts";
import type { StreamDecoder } from "./decode.ts";
import { type ByteRange, OutputBuffer, type OutputReader } from "./buffer.ts";
import { EchoSkip } from "./echo.ts";
import { type GrepOptions, type GrepRead, grepSteps } from "./grep.ts";
import { type LineRead, type LineReadOptions, readLinesSteps, settledLines } from "./lines.ts";
import type { MarkFilter, ShellMark } from "./marks.ts";
import { type Pattern, PatternScanner } from "./patterns.ts";
import {
  type RangeOptions,
  type RangeRead,
  readBackwardSteps,
  readForwardSteps,
  readShapedSteps,
  type ShapedRead,
  type ShapeOptions,
} from "./ranges.ts";
import { Screen } from "./screen.ts";
import { atOnce, type Steps } from "../slices.ts";

/** Limits and conversion of a {@link StreamOutput}. */
export interface StreamOutputOptions {
  /** Bytes kept. */
  maxBytes: number;
  /** Lines kept (0: no limit). */
  maxLines?: number;
  /** The server-wide budget the kept bytes count against. */
  budget?: OutputBudget;
  /** Converts arriving bytes to UTF-8 (see decode.ts); none: they are UTF-8. */
  decoder?: StreamDecoder;
  /** The terminal's width (cleaning edits lines as rows this wide); none: no terminal. */
  columns?: number;
  /**
   * Shell integration marks (see marks.ts): taken out of the output before it is kept, and
   * handed to `onMark` with the offset they stood at, once the output before them is kept.
   */
  marks?: { filter: MarkFilter; onMark(mark: ShellMark, offset: number): void };
}

/**
 * Where a stream stands: its offsets and line numbers, over its buffer as it is or a view of
 * it frozen at a moment. What {@link StreamOutput} and {@link StreamView} both answer.
 */
export class StreamPositions {
  readonly #reader: OutputReader;

  constructor(reader: OutputReader) {
    this.#reader = reader;
  }

  /** Bytes ever written: the offset the next byte gets. */
  get end(): number {
    return this.#reader.end;
  }

  /** Offset of the oldest byte kept. */
  get start(): number {
    return this.#reader.start;
  }

  /** Lines ever started (the next line's number). */
  get lineCount(): number {
    return this.#reader.lineCount;
  }

  /** The oldest line kept. */
  get firstLine(): number {
    return this.#reader.firstLine;
  }

  /** Where a line read goes on: every line, but a last one still growing (see lines.ts). */
  settledLines(final: boolean): number {
    return settledLines(this.#reader, final);
  }

  /** Where line `n` starts (clamped to what is kept). */
  lineStart(n: number): number {
    return this.#reader.lineStart(n);
  }

  /** The number of the line holding `offset`. */
  lineAt(offset: number): number {
    return this.#reader.lineAt(offset);
  }
}

/** See the module documentation. */
export class StreamOutput extends StreamPositions {
  readonly #buffer: OutputBuffer;
  readonly #decoder: StreamDecoder | undefined;
  readonly #marks: StreamOutputOptions["marks"];
  #screen: Screen | undefined;
  /** The terminal's width, for cleaning; it follows resizes. */
  columns: number | undefined;

  constructor(options: StreamOutputOptions) {
    const buffer = new OutputBuffer({
      maxBytes: options.maxBytes,
      maxLines: options.maxLines,
      budget: options.budget,
    });
    super(buffer);
    this.#buffer = buffer;
    this.#decoder = options.decoder;
    this.#marks = options.marks;
    this.columns = options.columns;
  }

  /**
   * Takes bytes as they arrive (at `time`); returns them as kept (UTF-8, possibly empty while
   * the decoder holds an incomplete character). `bytes` may be lent: nothing here keeps them,
   * and what is returned may be a view of them (to be copied by whoever keeps it).
   */
  append(bytes: Uint8Array, time: number = Date.now()): Uint8Array {
    return this.#keep(this.#decoder?.push(bytes) ?? bytes, time);
  }

  /** The stream has ended: what the decoder (and the mark filter) still held is kept too, and returned. */
  finish(time: number = Date.now()): Uint8Array {
    const data = this.#keep(this.#decoder?.end() ?? new Uint8Array(0), time);
    const held = this.#marks?.filter.end() ?? new Uint8Array(0);
    this.#buffer.append(held, time);
    return held.length === 0 ? data : concatBytes([data, held]);
  }

  #keep(decoded: Uint8Array, time: number): Uint8Array {
    if (!this.#marks) {
      this.#buffer.append(decoded, time);
      return decoded;
    }
    const start = this.#buffer.end;
    const { data, marks } = this.#marks.filter.push(decoded);
    this.#buffer.append(data, time);
    for (const { at, mark } of marks) this.#marks.onMark(mark, start + at);
    return data;
  }

  /** When the newest byte arrived (ms since the epoch), or undefined before any output. */
  newestTime(): number | undefined {
    return this.#buffer.end > 0 ? this.#buffer.timeAt(this.#buffer.end - 1) : undefined;
  }

  /** When the byte at `offset` arrived (ms since the epoch). */
  timeAt(offset: number): number {
    return this.#buffer.timeAt(offset);
  }

  /** The offset of the first byte that arrived after `time`. */
  offsetAfter(time: number): number {
    return this.#buffer.offsetAfter(time);
  }

  /** Makes the byte at `offset` the first of its millisecond (see OutputBuffer.splitTimeAt). */
  splitTimeAt(offset: number): void {
    this.#buffer.splitTimeAt(offset);
  }

  /** Arrival times up to `time` have been reported: later bytes are stamped later. */
  reserveUntil(time: number): void {
    this.#buffer.reserveUntil(time);
  }

  /** See {@link StreamView.readFrom}. */
  readFrom(offset: number, maxBytes: number, options: RangeOptions): RangeRead {
    return atOnce(this.#now().readFrom(offset, maxBytes, options));
  }

  /** See {@link StreamView.readNewest}. */
  readNewest(offset: number, options: RangeOptions, to?: number): RangeRead {
    return atOnce(this.#now().readNewest(offset, options, to));
  }

  /** See {@link StreamView.readShaped}. */
  readShaped(offset: number, options: ShapeOptions, to?: number): ShapedRead {
    return atOnce(this.#now().readShaped(offset, options, to));
  }

  /** See {@link StreamView.readLines}. */
  readLines(options: LineReadOptions): LineRead {
    return atOnce(this.#now().readLines(options));
  }

  /** The reads of the output as it is now (for reads done at once). */
  #now(): StreamView {
    return new StreamView(this.#buffer, this.columns);
  }

  /**
   * The reads of the output as it is now, for a read done in slices: what arrives meanwhile is
   * not in it (see OutputBuffer.freeze). Release it when done.
   */
  freeze(): FrozenStream {
    const view = this.#buffer.freeze();
    return Object.assign(new StreamView(view, this.columns), { release: () => view.release() });
  }

  /** `read`'s steps on the output as it is now ({@link freeze}, released when they end). */
  *frozen<T>(read: (output: StreamView) => Steps<T>): Steps<T> {
    const view = this.freeze();
    try {
      return yield* read(view);
    } finally {
      view.release();
    }
  }

  /** The bytes of [from, to) as kept (UTF-8), unread by any cleaner. */
  readBytes(from: number, to: number = this.#buffer.end): ByteRange {
    return this.#buffer.read(from, to);
  }

  /** The screen view (created on first use at the given size; it follows resizes). */
  screen(cols: number, rows: number): Screen {
    this.#screen ??= new Screen(this.#buffer, cols, rows);
    return this.#screen;
  }

  /** The terminal was resized: cleaning and the screen view follow. */
  resize(cols: number, rows: number): void {
    this.columns = cols;
    this.#screen?.resize(cols, rows);
  }

  /** A scanner matching `pattern` against the output from `offset` on, as it arrives. */
  scan(pattern: Pattern, offset: number): PatternScanner {
    return new PatternScanner(pattern, this.#buffer, offset, this.columns);
  }

  /** Looks for the echo of `typed` in the output from `offset` on (see echo.ts). */
  echo(offset: number, typed: string): EchoSkip {
    return new EchoSkip(this.#buffer, offset, typed, this.columns);
  }

  /** Frees the screen and gives the kept bytes back to the budget. */
  release(): void {
    this.#screen?.dispose();
    this.#screen = undefined;
    this.#buffer.release();
  }
}

/** A {@link StreamView} of the output frozen at a moment ({@link StreamOutput.freeze}). */
export type FrozenStream = StreamView & {
  /** Done reading: the buffer may drop what it held back for this view. */
  release(): void;
};

/**
 * The reads of a stream's output (see the module documentation), as steps (see
 * src/engine/slices.ts), over its buffer as it is ({@link StreamOutput}'s own reads, at once)
 * or over a view of it frozen at a moment ({@link StreamOutput.freeze}, for reads in slices).
 */
export class StreamView extends StreamPositions {
  readonly #buffer: OutputReader;
  readonly #columns: number | undefined;

  /** The reads of `buffer`, cleaned for a terminal `columns` wide (none: no terminal). */
  constructor(buffer: OutputReader, columns: number | undefined) {
    super(buffer);
    this.#buffer = buffer;
    this.#columns = columns;
  }

  /**
   * Reads forward from `offset`: at most `maxBytes` raw bytes, fitted to the budget. Cleaned, a
   * page starts after the escape sequence or control string `offset` falls inside, if any (its
   * rest would read as text), and a page that stops inside a long control string
   * (control_strings.ts) ends after it, so that the next page does not start in its payload (it
   * shows no text either way). Raw, it starts at `offset`, as the program wrote the bytes.
   */
  *readFrom(offset: number, maxBytes: number, options: RangeOptions): Steps<RangeRead> {
    const buffer = this.#buffer;
    const from = options.raw ? offset : buffer.pastSequence(offset);
    const read = yield* readForwardSteps(buffer, from, maxBytes, {
      columns: this.#columns,
      ...options,
    });
    if (!options.raw) read.end = buffer.longStringEnd(read.end) ?? read.end;
    return read;
  }

  /** The newest part of the output from `offset` on (up to `to`) that fits the budget. */
  readNewest(offset: number, options: RangeOptions, to?: number): Steps<RangeRead> {
    return readBackwardSteps(this.#buffer, offset, { columns: this.#columns, ...options }, to);
  }

  /** The range from `offset` on, whole if it fits, else head + marker + tail (see ranges.ts). */
  readShaped(offset: number, options: ShapeOptions, to?: number): Steps<ShapedRead> {
    return readShapedSteps(this.#buffer, offset, { columns: this.#columns, ...options }, to);
  }

  /** Reads by lines (see lines.ts). */
  readLines(options: LineReadOptions): Steps<LineRead> {
    return readLinesSteps(this.#buffer, { columns: this.#columns, ...options });
  }

  /** The lines that match a pattern, numbered, with context (see grep.ts). */
  grep(options: GrepOptions): Steps<GrepRead> {
    return grepSteps(this.#buffer, { columns: this.#columns, ...options });
  }
}
