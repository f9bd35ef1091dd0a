/**
 * The output of one stream: raw bytes addressed by absolute offsets, with a line index and
 * arrival times. Old data is dropped past a byte limit (and optionally a line limit), but
 * offsets and line numbers are never reused, so a reader's position stays meaningful; a reader
 * asking for dropped bytes gets what is left and is told how much it missed.
 *
 * Appends copy the bytes into slabs of the buffer's own (see slabs.ts), so a caller may lend
 * them; reads copy out of them, so no slab is ever referenced from outside and a dropped one can
 * be filled again. Appends are O(1) amortised; reads are O(log n) to find the start plus the
 * bytes copied.
 * Everything runs on the one JS thread, so no locking is needed.
 *
 * A read that takes several tasks (an answer built in slices, see src/engine/slices.ts) reads
 * a view frozen at its start ({@link OutputBuffer.freeze}): bytes that arrive meanwhile are not
 * in it, and the buffer drops nothing while a view is out, unless it would then keep more than
 * {@link HOLD_SLACK} bytes beyond its limits, or the server-wide budget asks: then it drops,
 * and every use of the view throws {@link Overtaken} (the read starts again, at once).
 *
 * Arrival times have millisecond resolution. A time that has been reported to a reader (see
 * {@link OutputBuffer.reserveUntil}) is never given to bytes that arrive later: those get the
 * next millisecond, so "everything after the time I was told" never misses them.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * const buffer = new OutputBuffer({ maxBytes: 8 });
 * buffer.append(new TextEncoder().encode("hello\nworld\n"));
 * const { text, start, dropped } = buffer.readText(0);
 * // text "o\nworld\n", start 4, dropped 4: the first 4 bytes are gone
 * ```
 * @module
 */
import type { BudgetMember, OutputBudget } from "./budget.ts";
import { LongControlStrings } from "./control_strings.ts";
import { sequenceRemainder } from "./clean.ts";
import {
  boundaryAtOrAfter,
  bytesOfDecodedPrefix,
  completePrefixLength,
  isContinuation,
  startAfterCut,
  utf8Length,
} from "./utf8.ts";
import { LineIndex } from "./line_index.ts";
import { Queue } from "./queue.ts";
import { giveBack, nextSlab } from "./slabs.ts";
import { Overtaken } from "../slices.ts";

/** Limits of an {@link OutputBuffer}. */
export interface OutputBufferOptions {
  /** Bytes kept; older bytes are dropped. Default 10 MiB. */
  maxBytes?: number;
  /** Lines kept (0: no line limit). Default 0. */
  maxLines?: number;
  /** The server-wide budget the kept bytes count against. */
  budget?: OutputBudget;
}

/** Bytes read from a buffer. */
export interface ByteRange {
  bytes: Uint8Array;
  /** Absolute offset of the first byte returned. */
  start: number;
  /** Absolute offset after the last byte returned. */
  end: number;
  /** How many of the bytes asked for had already been dropped. */
  dropped: number;
}

/** Text read from a buffer; `start`/`end` are moved onto character boundaries. */
export interface TextRange {
  text: string;
  start: number;
  end: number;
  dropped: number;
}

/**
 * What reads of output use: a buffer as it is, or as it was when a view of it was frozen
 * ({@link OutputBuffer.freeze}). See {@link OutputBuffer} for each member.
 */
export interface OutputReader {
  readonly start: number;
  readonly end: number;
  readonly firstLine: number;
  readonly lineCount: number;
  readonly firstLineCut: boolean;
  readonly endsWithNewline: boolean;
  read(from?: number, to?: number): ByteRange;
  readText(from?: number, to?: number, final?: boolean): TextRange;
  bytesOfText(start: number, text: string): number;
  lineStart(n: number): number;
  lineAt(offset: number): number;
  pastSequence(at: number): number;
  longStringEnd(at: number): number | undefined;
}

/** The default byte limit: 10 MiB. */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/**
 * Bytes a buffer keeps beyond its limits, at most, rather than drop what a frozen view may
 * still read (see {@link OutputBuffer.freeze}): what arrives while an answer is built. Answers
 * are built one at a time (src/engine/answer_turns.ts), so this is about one buffer's (a
 * command's two).
 */
export const HOLD_SLACK = 8 * 1024 * 1024;
/**
 * How far before a cut the start of an escape sequence it may fall inside is looked for, and how
 * far after it the sequence's end (the bound within which a read holds back an unfinished one).
 * A sequence still unfinished at the newest byte is dropped as far as it goes; should the buffer
 * keep less than one sequence, its end arriving later is kept (and shown as text). Control
 * strings longer than this (a clipboard copy, an image) are found as they arrive instead
 * (control_strings.ts).
 */
const SEQUENCE_LOOK = 4096;
/**
 * Arrival times kept: a mark each millisecond that brought bytes, up to FREE_MARKS plus one per
 * BYTES_PER_MARK bytes kept. A mark costs about 48 bytes: a program printing a byte every
 * millisecond made a mark a byte, 48 times what the buffer kept.
 */
const FREE_MARKS = 1024, BYTES_PER_MARK = 256;

/** A slab (see slabs.ts) and the absolute offset of its first byte; the newest is filling. */
interface Block {
  start: number;
  bytes: Uint8Array<ArrayBuffer>;
}

interface Mark {
  offset: number;
  time: number;
}

const blockStart = (block: Block) => block.start;
const markOffset = (mark: Mark) => mark.offset;
const markTime = (mark: Mark) => mark.time;

/** See the module documentation. */
export class OutputBuffer implements BudgetMember, OutputReader {
  readonly maxBytes: number;
  readonly maxLines: number;
  #budget: OutputBudget | undefined;
  /** The latest arrival time reported to a reader. */
  #reported = -Infinity;
  #blocks = new Queue<Block>();
  #start = 0;
  #end = 0;
  #lines = new LineIndex((from, to) => this.#pieces(from, to));
  /**
   * Control strings too long for {@link pastSequence} to look back over, or than half what the
   * buffer keeps: the start of a longer one still arriving may be dropped before it ends, and
   * its rest must be known then (see #trim).
   */
  #longStrings: LongControlStrings;
  #firstLineCut = false;
  #marks = new Queue<Mark>();
  /** Frozen views not released (see {@link freeze}): drops wait, within HOLD_SLACK. */
  #holds = 0;
  /** Drops so far: a view frozen before the last one is out of date. */
  #drops = 0;

  constructor(options: OutputBufferOptions = {}) {
    this.maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_MAX_BYTES);
    this.#longStrings = new LongControlStrings(
      Math.max(1, Math.min(SEQUENCE_LOOK, this.maxBytes >> 1)),
    );
    this.maxLines = Math.max(0, options.maxLines ?? 0);
    this.#budget = options.budget;
    this.#budget?.join(this);
  }

  /** Bytes kept now. */
  get retained(): number {
    return this.#end - this.#start;
  }

  /** Absolute offset of the oldest byte still kept. */
  get start(): number {
    return this.#start;
  }

  /** Absolute offset after the newest byte: the number of bytes ever appended. */
  get end(): number {
    return this.#end;
  }

  /** Number of the oldest line still (at least partly) kept. */
  get firstLine(): number {
    return this.#lines.first;
  }

  /** Number of lines ever started; the next line will get this number. */
  get lineCount(): number {
    return this.#lines.count;
  }

  /** Whether the oldest line kept lost its beginning to a drop (its rest is all that is kept). */
  get firstLineCut(): boolean {
    return this.#firstLineCut;
  }

  /** Whether the newest line is terminated by a newline (or nothing was written yet). */
  get endsWithNewline(): boolean {
    return this.#lines.atLineStart;
  }

  /**
   * Appends bytes that arrived at `time`. They are copied: `data` may be lent (reused once this
   * returns).
   */
  append(data: Uint8Array, time: number = Date.now()): void {
    if (data.length === 0) return;
    const offset = this.#end;
    const retained = this.retained;
    const last = this.#marks.last();
    // A time already reported belongs to the bytes reported with it.
    if (time <= this.#reported) time = this.#reported + 1;
    // Times must ascend for the searches; a clock stepping back keeps the previous time.
    if (!last) this.#marks.push({ offset, time });
    else if (time > last.time) {
      const marks = this.#marks.next - this.#marks.first;
      if (marks < FREE_MARKS + retained / BYTES_PER_MARK || last.time <= this.#reported) {
        this.#marks.push({ offset, time });
      } else {
        // Out of room for marks, the newest one takes the later time: its bytes claim to have
        // come later than they did, never earlier, and no reader has been told its time.
        last.time = time;
      }
    }
    this.#lines.append(data, offset);
    this.#longStrings.scan(data, offset);
    this.#store(data);
    this.#end += data.length;
    this.#trim();
    this.#budget?.charge(this.retained - retained);
  }

  /**
   * Records that arrival times up to `time` have been reported to a reader: bytes appended from
   * now on are stamped later than `time`.
   */
  reserveUntil(time: number): void {
    this.#reported = Math.max(this.#reported, time);
  }

  /**
   * Makes the byte at `offset` the first of its millisecond: if it arrived in the same one as
   * the byte before it, it and the bytes after it in that millisecond are stamped one ms later
   * (merging with the next millisecond if that is the next arrival time). A reader whose page
   * stops at `offset`, inside a millisecond more than a page arrived in, is then told a time
   * after which exactly the rest follows, and so always moves on.
   */
  splitTimeAt(offset: number): void {
    const marks = this.#marks;
    const index = marks.lastAtOrBelow(offset, markOffset);
    if (index < marks.first || offset >= this.#end) return;
    const mark = marks.at(index);
    if (mark.offset === offset) return;
    const next = index + 1 < marks.next ? marks.at(index + 1) : undefined;
    if (next?.time === mark.time + 1) next.offset = offset;
    else marks.insert(index + 1, { offset, time: mark.time + 1 });
  }

  /** Drops the oldest `bytes` kept bytes (for the server-wide budget). */
  dropOldest(bytes: number): void {
    const retained = this.retained;
    this.#dropBefore(Math.min(this.#end, this.#start + Math.max(0, bytes)));
    this.#budget?.charge(this.retained - retained);
  }

  /** Gives the kept bytes back to the budget; the buffer must not be used afterwards. */
  release(): void {
    this.#budget?.leave(this);
    this.#budget = undefined;
  }

  /** Copies `data` into the newest slab, and slabs after it as each fills. */
  #store(data: Uint8Array): void {
    for (let copied = 0; copied < data.length;) {
      let block = this.#blocks.last();
      const at = this.#end + copied - (block?.start ?? 0);
      if (!block || at === block.bytes.length) {
        block = { start: this.#end + copied, bytes: nextSlab(block?.bytes) };
        this.#blocks.push(block);
        continue;
      }
      const part = data.subarray(copied, copied + block.bytes.length - at);
      block.bytes.set(part, at);
      copied += part.length;
    }
  }

  /**
   * A view of the buffer as it is now, for a read that takes several tasks (see the module
   * documentation). Release it when done (the drops it held back happen then).
   */
  freeze(): FrozenOutput {
    this.#holds++;
    const end = this.#end, drops = this.#drops, strings = this.#longStrings.snapshot();
    return new FrozenOutput(this, {
      end,
      lineCount: this.#lines.count,
      endsWithNewline: this.#lines.atLineStart,
      current: () => this.#drops === drops,
      readText: (from, to, final) => this.#readText(from, to, final, end),
      longStringEnd: (at) => this.#longStringEnd(at, end, strings),
      pastSequence: (at) => this.#pastSequence(at, end, strings),
      release: () => {
        if (--this.#holds > 0) return;
        const retained = this.retained;
        this.#trim();
        this.#budget?.charge(this.retained - retained);
      },
    });
  }

  #trim(): void {
    let newStart = Math.max(this.#start, this.#end - this.maxBytes);
    // What is kept starts inside a long control string whose start was dropped (a cut inside
    // one still open moves to the end of what is kept): its rest goes too, as it comes, up to
    // its end. Kept, it would read as text, and raw reads would begin inside it.
    const inString = this.longStringEnd(this.#start);
    if (inString !== undefined) newStart = Math.max(newStart, inString);
    const lines = this.#lines;
    if (this.maxLines > 0 && lines.count - lines.first > this.maxLines) {
      newStart = Math.max(newStart, lines.start(lines.count - this.maxLines));
    }
    // A frozen view may still read what would go: it waits, as long as it is not too much.
    if (this.#holds > 0 && newStart - this.#start <= HOLD_SLACK) return;
    this.#dropBefore(newStart);
  }

  #dropBefore(newStart: number): void {
    if (newStart <= this.#start) return;
    this.#drops++;
    // A cut inside an escape sequence drops the rest of it too: kept, its end would read as text.
    const asked = newStart;
    newStart = this.pastSequence(newStart);
    // The line index reads the bytes it drops up to, so it goes first.
    const afterLineFeed = (at: number) => this.read(at - 1, at).bytes[0] === 10;
    this.#lines.dropBefore(newStart, newStart === this.#end && afterLineFeed(newStart));
    // Cut from a line start, a line that lost only the rest of a sequence begun before it (an
    // OSC title over a line feed) shows whole. (One cut inside a colour at its start counts as
    // cut: said truncated, never whole when it is not.)
    this.#firstLineCut = !afterLineFeed(newStart) && !afterLineFeed(asked);
    this.#start = newStart;
    this.#longStrings.dropBefore(newStart);
    // Each queue keeps its entry covering the new start: a partly dropped block, the arrival
    // time of the oldest kept byte.
    const blocks = this.#blocks;
    const covering = blocks.lastAtOrBelow(newStart, blockStart);
    // Nothing else references a slab (reads copy): a dropped one may be filled again.
    for (let index = blocks.first; index < covering; index++) giveBack(blocks.at(index).bytes);
    blocks.dropBefore(covering);
    this.#marks.dropBefore(this.#marks.lastAtOrBelow(newStart, markOffset));
  }

  /**
   * The end of the long control string `at` falls inside (see control_strings.ts), at most the
   * end of what is kept; undefined if it falls inside none.
   */
  longStringEnd(at: number): number | undefined {
    return this.#longStringEnd(at, this.#end, this.#longStrings);
  }

  /** {@link longStringEnd} as it was when the buffer ended at `streamEnd` and held `strings`. */
  #longStringEnd(
    at: number,
    streamEnd: number,
    strings: { endOf(at: number): number | undefined },
  ): number | undefined {
    const end = strings.endOf(at);
    return end === undefined ? undefined : Math.min(end, streamEnd);
  }

  /**
   * `at`, or the end of the escape sequence `at` falls inside (see {@link SEQUENCE_LOOK}): where
   * a cut at `at` must move so that the rest of a sequence is not shown as text.
   */
  pastSequence(at: number): number {
    return this.#pastSequence(at, this.#end, this.#longStrings);
  }

  /** {@link pastSequence} as it was when the buffer ended at `streamEnd` and held `strings`. */
  #pastSequence(
    at: number,
    streamEnd: number,
    strings: { endOf(at: number): number | undefined },
  ): number {
    if (at >= streamEnd) return at;
    const longEnd = this.#longStringEnd(at, streamEnd, strings);
    if (longEnd !== undefined) return longEnd;
    const lookFrom = Math.max(this.#start, at - SEQUENCE_LOOK);
    if (!this.#holdsSequenceStart(lookFrom, at)) return at;
    const window = this.read(lookFrom, Math.min(streamEnd, at + SEQUENCE_LOOK)).bytes;
    // A character cut in two belongs before the cut (a C1 control may be one).
    const cut = boundaryAtOrAfter(window, at - lookFrom);
    const from = lastSequenceStart(window.subarray(0, cut));
    if (from < 0) return at;
    const decoder = new TextDecoder();
    const rest = decoder.decode(window.subarray(cut));
    const length = sequenceRemainder(decoder.decode(window.subarray(from, cut)), rest);
    if (length === 0) return at;
    if (length === rest.length) return lookFrom + window.length;
    // Counted in the bytes themselves: invalid ones decode to U+FFFD, three bytes re-encoded.
    return lookFrom + cut + bytesOfDecodedPrefix(window.subarray(cut), length);
  }

  /**
   * Whether [from, to) holds an ESC or a C2 byte (the first of a C1 control's two). A buffer in
   * a flood trims on every append; most output holds neither near the cut, which then costs
   * no copy of the window around it.
   */
  #holdsSequenceStart(from: number, to: number): boolean {
    for (const piece of this.#pieces(from, to)) {
      if (piece.includes(0x1b) || piece.includes(0xc2)) return true;
    }
    return false;
  }

  /** Reads bytes in [from, to) (defaults: everything kept). */
  read(from: number = this.#start, to: number = this.#end): ByteRange {
    const end = clamp(to, 0, this.#end);
    const dropped = Math.max(0, Math.min(end, this.#start) - Math.max(0, from));
    const start = Math.min(clamp(from, this.#start, this.#end), end);
    const bytes = new Uint8Array(end - start);
    let written = 0;
    for (const piece of this.#pieces(start, end)) {
      bytes.set(piece, written);
      written += piece.length;
    }
    return { bytes, start, end, dropped };
  }

  /** The stored bytes of [start, end) (within what is kept), as views of the slabs: for reads here only. */
  *#pieces(start: number, end: number): Generator<Uint8Array> {
    const blocks = this.#blocks;
    let at = start;
    for (
      let index = Math.max(blocks.first, blocks.lastAtOrBelow(start, blockStart));
      index < blocks.next && at < end;
      index++
    ) {
      const block = blocks.at(index);
      const piece = slice(block.bytes, block.start, at, end);
      if (piece.length) yield piece;
      at += piece.length;
    }
  }

  /**
   * Reads text in [from, to), moved onto character boundaries: a character cut at the start is
   * skipped (continuation bytes that no lead byte before them claims are not a cut character's:
   * they decode as U+FFFD, as in the whole text), one cut at the end is left for the next read.
   * With `final` (the stream has ended), an incomplete character at the very end is decoded as
   * U+FFFD instead of held back. The text is decoded from the stored bytes as they are (a big
   * read costs no copy of its bytes).
   */
  readText(from?: number, to?: number, final = false): TextRange {
    return this.#readText(from, to, final, this.#end);
  }

  /** {@link readText} as it was when the buffer ended at `streamEnd`. */
  #readText(from: number | undefined, to: number | undefined, final: boolean, streamEnd: number) {
    const end = clamp(to ?? streamEnd, 0, streamEnd);
    const first = from ?? this.#start;
    const dropped = Math.max(0, Math.min(end, this.#start) - Math.max(0, first));
    const start = Math.min(clamp(first, this.#start, this.#end), end);
    // Character boundaries need only the first and last few bytes. The three before the start
    // tell a cut character's rest from bytes on their own, unless some of them were dropped and
    // those kept are all continuation bytes (the lead may be among those dropped).
    const back = Math.min(3, start - this.#start);
    const head = this.read(start - back, Math.min(end, start + 4)).bytes;
    const seen = back === 3 || start === back ||
      head.subarray(0, back).some((byte) => !isContinuation(byte));
    const textStart = start - back +
      (seen ? startAfterCut(head, back) : boundaryAtOrAfter(head, back));
    let textEnd = end;
    if (!(final && end === streamEnd)) {
      const tail = this.read(Math.max(textStart, end - 4), end).bytes;
      textEnd = Math.max(textStart, end - (tail.length - completePrefixLength(tail)));
    }
    const decoder = new TextDecoder();
    let text = "";
    for (const piece of this.#pieces(textStart, textEnd)) {
      text += decoder.decode(piece, { stream: true });
    }
    return { text: text + decoder.decode(), start: textStart, end: textEnd, dropped };
  }

  /**
   * How many bytes from `start` read as `text` (as {@link readText} decoded them): its UTF-8
   * length, unless invalid bytes stand in it as U+FFFD (one for one to three bytes, where the
   * UTF-8 length counts three).
   */
  bytesOfText(start: number, text: string): number {
    return bytesOfText(this, start, text);
  }

  /** Absolute offset where line `n` starts (clamped to what is kept). */
  lineStart(n: number): number {
    const lines = this.#lines;
    if (n >= lines.count) return this.#end;
    return Math.max(this.#start, lines.start(Math.max(n, lines.first)));
  }

  /** The number of the line holding `offset`. */
  lineAt(offset: number): number {
    return this.#lines.lineAt(offset);
  }

  /** When the first kept byte of line `n` arrived (ms since the epoch). */
  lineTime(n: number): number {
    return this.timeAt(this.lineStart(n));
  }

  /** When the byte at `offset` arrived (ms since the epoch); -1 before any output. */
  timeAt(offset: number): number {
    const marks = this.#marks;
    const index = Math.max(marks.first, marks.lastAtOrBelow(offset, markOffset));
    return index < marks.next ? marks.at(index).time : -1;
  }

  /** The offset of the first byte that arrived after `time`; {@link end} if none did. */
  offsetAfter(time: number): number {
    const marks = this.#marks;
    const index = marks.lastAtOrBelow(time, markTime) + 1;
    return index < marks.next ? Math.max(this.#start, marks.at(index).offset) : this.#end;
  }
}

/** See {@link OutputBuffer.bytesOfText}. */
function bytesOfText(reader: OutputReader, start: number, text: string): number {
  if (!text.includes("\uFFFD")) return utf8Length(text);
  return bytesOfDecodedPrefix(reader.read(start, start + 3 * text.length).bytes, text.length);
}

/** What a {@link FrozenOutput} is made of: the buffer's state when frozen, and its reads then. */
interface Frozen {
  end: number;
  lineCount: number;
  endsWithNewline: boolean;
  /** False once the buffer has dropped bytes after all. */
  current(): boolean;
  readText(from: number | undefined, to: number | undefined, final: boolean): TextRange;
  longStringEnd(at: number): number | undefined;
  pastSequence(at: number): number;
  release(): void;
}

/**
 * An output buffer as it was when frozen ({@link OutputBuffer.freeze}): what arrived after is
 * not in it, and it reads what the buffer held then (the buffer drops nothing meanwhile). Once
 * the buffer dropped bytes after all, every use throws {@link Overtaken}.
 */
export class FrozenOutput implements OutputReader {
  readonly #buffer: OutputBuffer;
  readonly #frozen: Frozen;
  #released = false;

  constructor(buffer: OutputBuffer, frozen: Frozen) {
    this.#buffer = buffer;
    this.#frozen = frozen;
  }

  /** The buffer, if this view still reads what it did when frozen. */
  #live(): OutputBuffer {
    if (this.#released) throw new Error("a frozen output view was used after its release");
    if (!this.#frozen.current()) throw new Overtaken("the output was dropped under the read");
    return this.#buffer;
  }

  get start(): number {
    return this.#live().start;
  }

  get end(): number {
    this.#live();
    return this.#frozen.end;
  }

  get firstLine(): number {
    const buffer = this.#live();
    return this.#frozen.lineCount === 0
      ? 0
      : Math.min(buffer.firstLine, this.#frozen.lineCount - 1);
  }

  get lineCount(): number {
    this.#live();
    return this.#frozen.lineCount;
  }

  get firstLineCut(): boolean {
    return this.#live().firstLineCut;
  }

  get endsWithNewline(): boolean {
    this.#live();
    return this.#frozen.endsWithNewline;
  }

  read(from?: number, to?: number): ByteRange {
    const end = this.#frozen.end;
    return this.#live().read(from, Math.min(to ?? end, end));
  }

  readText(from?: number, to?: number, final = false): TextRange {
    this.#live();
    return this.#frozen.readText(from, to, final);
  }

  bytesOfText(start: number, text: string): number {
    return bytesOfText(this, start, text);
  }

  lineStart(n: number): number {
    const buffer = this.#live();
    return n >= this.#frozen.lineCount ? this.#frozen.end : buffer.lineStart(n);
  }

  lineAt(offset: number): number {
    const buffer = this.#live();
    const { end, lineCount } = this.#frozen;
    // A line started at the frozen end since (a checkpoint there) is not this view's.
    return lineCount === 0 ? 0 : Math.min(buffer.lineAt(Math.min(offset, end)), lineCount - 1);
  }

  pastSequence(at: number): number {
    this.#live();
    return this.#frozen.pastSequence(at);
  }

  longStringEnd(at: number): number | undefined {
    this.#live();
    return this.#frozen.longStringEnd(at);
  }

  /** Done reading: the buffer may drop what it held back for this view. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#frozen.release();
  }
}

/** Where the last ESC or C1 control (UTF-8: C2 80-9F) in `bytes` starts, or -1. */
function lastSequenceStart(bytes: Uint8Array): number {
  const escape = bytes.lastIndexOf(0x1b);
  for (let i = bytes.length - 2; i > escape; i--) {
    if (bytes[i] === 0xc2 && bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9f) return i;
  }
  return escape;
}

/** The part of `block` (which starts at absolute `blockStart`) inside [from, to). */
function slice(block: Uint8Array, blockStart: number, from: number, to: number): Uint8Array {
  const begin = from - blockStart;
  if (begin < 0 || begin >= block.length) return block.subarray(0, 0);
  return block.subarray(begin, Math.min(block.length, to - blockStart));
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}
