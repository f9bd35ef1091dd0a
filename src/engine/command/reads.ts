/**
 * A command's output: its two streams (stdout, stderr; on a terminal stderr stays empty), read
 * within one answer's budget, paged by offset or by time, followed as text, or watched.
 *
 * @module
 */
import type { StreamName } from "../../pty/mod.ts";
import type { Listeners } from "../events.ts";
import type { OutputBudget } from "../output/budget.ts";
import { TextFollower } from "../output/follow.ts";
import type { RangeRead } from "../output/ranges.ts";
import { DEFAULT_ANSWER_BYTES, jsonSizeSteps } from "../output/shape.ts";
import { StreamOutput, type StreamView } from "../output/stream.ts";
import { SearchClock } from "../output/grep.ts";
import type { Pattern } from "../output/patterns.ts";
import { EngineError } from "../errors.ts";
import { atOnce, type Steps } from "../slices.ts";
import type { ChildCodec } from "../encoding.ts";
import { type Clamped, clampSize } from "../limits.ts";

/**
 * What {@link Command.read} reads. A stream with an offset (or `after`) is read forward from
 * there, as far as the budget allows (a page: go on from its `end`); one without is shown
 * whole if it fits, else as its head and its tail with a marker between saying what was left
 * out and how to read it; `headLines`/`tailLines` show lines instead.
 */
export interface CommandReadRequest {
  /** Byte offsets (raw bytes, as the program wrote them) to page each stream from. */
  offsets?: Partial<Record<StreamName, number>>;
  /** Instead of offsets: page from the output that arrived after this time (ms since the epoch). */
  after?: number;
  /**
   * Most bytes of output text in the answer (as JSON, both streams together). Default
   * {@link DEFAULT_ANSWER_BYTES}; at most the answer limit (a larger value is lowered and
   * `maxBytesClamped` says so).
   */
  maxBytes?: number;
  /** The first this many lines of each stream (from its offset, if given). */
  headLines?: number;
  /** The last this many lines of each stream. With `headLines`: both, a marker between. */
  tailLines?: number;
  /** Keep escape sequences and carriage returns. */
  raw?: boolean;
  /**
   * The marker's advice for reading what an answer left out of `stream`, from byte `offset`.
   * Default: "read them from offset N".
   */
  hint?: (stream: StreamName, offset: number) => string;
  /**
   * Instead of the output: the lines of each stream (from its offset, if given) that match a
   * pattern (see output/grep.ts), numbered from 1 as the program wrote them, each with its byte
   * offset. Not with `headLines` or `tailLines`.
   */
  grep?: CommandGrep;
}

/** A search of a command's output (see {@link CommandReadRequest.grep}). */
export interface CommandGrep {
  pattern: Pattern;
  /** Lines shown before and after each match (0 to 20; default 0). */
  contextLines?: number;
  /**
   * The marker's advice for searching on in `stream` from byte `offset`. Default: "search on
   * from offset N".
   */
  resume?: (stream: StreamName, offset: number) => string;
}

/** Refuses a request whose parts do not go together: `grep` with `headLines` or `tailLines`. */
export function checkReadRequest(request: CommandReadRequest): void {
  for (const field of ["headLines", "tailLines"] as const) {
    if (request.grep && request[field] !== undefined) {
      throw new EngineError("invalid_input", [
        "cannot be used with ",
        { field: "grep" },
        " (it shows the lines that match)",
      ], field);
    }
  }
}

/** One stream's part of a {@link CommandRead}. */
export interface CommandStreamRead extends RangeRead {
  /** Bytes the stream has had in all. */
  length: number;
  /**
   * Some of the requested output is not in `text`: dropped, left out, or past the budget (with
   * grep: a match not shown, or output not searched).
   */
  truncated: boolean;
  /** With grep: the lines that matched (shown or not). */
  matches?: number;
}

/** Output of a command, both streams within one answer's size limit. */
export interface CommandRead {
  stdout: CommandStreamRead;
  stderr: CommandStreamRead;
  /**
   * When the output shown ends (ms since the epoch): pass it as `after` to follow the command.
   * Never a time later output can share; when a stream's read stopped short, one millisecond
   * before its first byte not shown (that millisecond is split there first, so its rest is
   * stamped later: read on from this time, nothing comes twice or is missed; a page by time
   * shows no byte of either stream after it). Null before any output.
   */
  lastOutputTime: number | null;
  /** Set when `maxBytes` was more than the answer limit. */
  maxBytesClamped?: Clamped;
}

/** Something that happened to a command. */
export type CommandEvent =
  | { type: "output"; stream: StreamName; data: Uint8Array }
  | { type: "exit" };

/** Streaming: text pushed at most this often, at most this much at a time (as JSON). */
const FOLLOW_INTERVAL_MS = 200, FOLLOW_MAX_BYTES = 64 * 1024;

/** How a command keeps and shows its output. */
export interface OutputLimits {
  bufferSize: number;
  answerBytes: number;
  budget: OutputBudget;
}

/** A command's two streams, and the reads of them. */
export class CommandOutput {
  readonly streams: Record<StreamName, StreamOutput>;
  /** Most bytes of output text in one answer (JSON-escaped, both streams). */
  readonly answerBytes: number;

  constructor(
    /** The command: whether it runs, and its events. */
    private readonly owner: { readonly running: boolean; readonly events: Listeners<CommandEvent> },
    limits: OutputLimits,
    codec: ChildCodec,
    /** On a terminal, output is cleaned as a terminal this wide shows it; pipes have no width. */
    columns: number | undefined,
  ) {
    this.answerBytes = limits.answerBytes;
    const stream = () =>
      new StreamOutput({
        maxBytes: limits.bufferSize,
        budget: limits.budget,
        decoder: codec.decoder(),
        columns,
      });
    this.streams = { stdout: stream(), stderr: stream() };
  }

  /**
   * Reads both streams (see {@link CommandReadRequest}) within one answer's budget: the stream
   * with less to show first, with half of it; the other gets the rest.
   */
  read(request: CommandReadRequest): CommandRead {
    return atOnce(this.readSteps(request));
  }

  /**
   * {@link read} as steps (see src/engine/slices.ts), of the output as it stood when they
   * began (the time it reports is reserved on the output as it is when they end).
   */
  readSteps(request: CommandReadRequest): Steps<CommandRead> {
    const final = !this.owner.running;
    return this.streams.stdout.frozen((stdout) =>
      this.streams.stderr.frozen((stderr) => this.#read(request, { stdout, stderr }, final))
    );
  }

  *#read(
    request: CommandReadRequest,
    output: Record<StreamName, StreamView>,
    final: boolean,
  ): Steps<CommandRead> {
    const limit = this.answerBytes;
    checkReadRequest(request);
    // A search of both streams works for the time one search may.
    const clock = request.grep ? new SearchClock() : undefined;
    // Only a size the client asked for is reported as lowered; the default just fits.
    const maxBytes = request.maxBytes === undefined
      ? { value: Math.min(DEFAULT_ANSWER_BYTES, limit), clamped: undefined }
      : clampSize(request.maxBytes, limit);
    const starts = {} as Record<StreamName, number | undefined>;
    for (const stream of ["stdout", "stderr"] as const) {
      starts[stream] = request.after === undefined
        ? request.offsets?.[stream]
        : this.streams[stream].offsetAfter(request.after);
    }
    const pending = (stream: StreamName) => output[stream].end - (starts[stream] ?? 0);
    const [small, large]: StreamName[] = pending("stderr") <= pending("stdout")
      ? ["stderr", "stdout"]
      : ["stdout", "stderr"];
    const reads = {} as Record<StreamName, CommandStreamRead>;
    const budgets = {} as Record<StreamName, number>;
    let used = 0;
    for (const stream of [small, large]) {
      budgets[stream] = stream === small ? Math.floor(maxBytes.value / 2) : maxBytes.value - used;
      const options = { raw: request.raw, final, budget: budgets[stream], clock };
      reads[stream] = yield* this.#readStream(
        stream,
        output[stream],
        starts[stream],
        options,
        request,
      );
      used += yield* jsonSizeSteps(reads[stream].text);
    }
    const reread = request.after === undefined
      ? undefined
      : (stream: StreamName, end: number) =>
        this.#readStream(
          stream,
          output[stream],
          starts[stream],
          { raw: request.raw, final, budget: budgets[stream], clock },
          request,
          end,
        );
    const lastOutputTime = yield* this.#reportTime(reads, reread);
    return {
      stdout: reads.stdout,
      stderr: reads.stderr,
      lastOutputTime,
      ...(maxBytes.clamped ? { maxBytesClamped: maxBytes.clamped } : {}),
    };
  }

  /** One stream's part of {@link read}. */
  *#readStream(
    stream: StreamName,
    output: StreamView,
    offset: number | undefined,
    options: { raw?: boolean; final: boolean; budget: number; clock?: SearchClock },
    request: CommandReadRequest,
    end = Infinity,
  ): Steps<CommandStreamRead> {
    const hint = (at: number) =>
      request.hint ? request.hint(stream, at) : `read them from offset ${at}`;
    const done = (read: RangeRead, omitted: boolean): CommandStreamRead => ({
      ...read,
      length: output.end,
      truncated: omitted || read.dropped > 0 || read.end < output.end,
    });
    if (request.grep) {
      return yield* this.#grepStream(stream, output, offset, options, request.grep, end);
    }
    if (request.headLines !== undefined || request.tailLines !== undefined) {
      const first = Math.max(offset ?? 0, output.start);
      const since = output.lineAt(first);
      const lines = yield* output.readLines({
        ...options,
        since,
        mode: request.tailLines === undefined
          ? "head"
          : request.headLines === undefined
          ? "tail"
          : "head-tail",
        headLines: request.headLines,
        tailLines: request.tailLines,
        hint: (_line, at) => hint(at),
      });
      const start = output.lineStart(since);
      const dropped = Math.max(0, Math.min(output.start, output.end) - (offset ?? 0));
      return done({ text: lines.output, start, end: lines.end, dropped }, lines.truncated);
    }
    if (offset !== undefined && end <= offset) {
      const start = Math.max(offset, output.start);
      return done({ text: "", start, end: start, dropped: start - offset }, false);
    }
    if (offset !== undefined) {
      return done(yield* output.readFrom(offset, end - offset, options), false);
    }
    const shaped = yield* output.readShaped(0, { ...options, hint: (at) => hint(at) });
    return done(shaped, shaped.omitted !== undefined);
  }

  /** One stream's part of a search ({@link CommandReadRequest.grep}). */
  *#grepStream(
    stream: StreamName,
    output: StreamView,
    offset: number | undefined,
    options: { raw?: boolean; final: boolean; budget: number; clock?: SearchClock },
    grep: CommandGrep,
    end: number,
  ): Steps<CommandStreamRead> {
    const { pattern, contextLines = 0, resume } = grep;
    const found = yield* output.grep({
      ...options,
      pattern,
      contextLines,
      from: offset === undefined ? undefined : { offset },
      to: end === Infinity ? undefined : end,
      lineBase: 1,
      offsets: true,
      resume: (at) => resume ? resume(stream, at) : `search on from offset ${at}`,
    });
    const { text, start, dropped, matches } = found;
    return {
      text,
      start,
      end: found.end,
      dropped,
      length: output.end,
      truncated: !found.complete || dropped > 0,
      matches,
    };
  }

  /**
   * The time a read reports (see {@link CommandRead.lastOutputTime}), reserved on both streams.
   * With `reread` (a page by time), a stream whose page goes past that time is read again up to
   * it (its rest would come again after the time told), which may lower the time in turn.
   */
  *#reportTime(
    reads: Record<StreamName, CommandStreamRead>,
    reread?: (stream: StreamName, end: number) => Steps<CommandStreamRead>,
  ): Steps<number | null> {
    const streams = ["stdout", "stderr"] as const;
    const forced = new Set<StreamName>();
    while (true) {
      const short = streams.filter((s) => reads[s].end < this.streams[s].end);
      // A page that stops inside a millisecond splits it, so that "after the time told" starts
      // exactly where the page stopped (else a millisecond of more than a page repeats forever).
      for (const s of short) this.streams[s].splitTimeAt(reads[s].end);
      const times = short.length
        ? short.map((s) => this.streams[s].timeAt(reads[s].end) - 1)
        : streams.map((s) => this.streams[s].newestTime()).filter((t) => t !== undefined);
      if (times.length === 0) return null;
      const time = short.length ? Math.min(...times) : Math.max(...times);
      // Each pass lowers the time or reads a stream again up to it, ending there or before (a
      // page shorter than before), unless a character or sequence whose bytes arrived on both
      // sides of the time must be shown whole: that page stays as it is.
      let again = false;
      for (const s of reread === undefined ? [] : streams) {
        const cut = this.streams[s].offsetAfter(time);
        if (reads[s].end <= cut || forced.has(s)) continue;
        const read = yield* reread!(s, cut);
        if (read.end > cut) forced.add(s);
        else [reads[s], again] = [read, true];
      }
      if (again) continue;
      for (const stream of streams) this.streams[stream].reserveUntil(time);
      return time;
    }
  }

  /**
   * Follows the output as cleaned text: `onText` gets each stream's new complete lines a few
   * times a second (at most 64 KiB at once; older text is skipped and says so), and the last
   * lines at the exit, then `onExit` is called. What was printed before the call is followed
   * too (a command may print before whoever started it gets to follow it). Returns the function
   * that stops following.
   */
  follow(onText: (stream: StreamName, text: string) => void, onExit: () => void): () => void {
    const columns = this.streams.stdout.columns;
    const followers = {
      stdout: new TextFollower({ maxBytes: FOLLOW_MAX_BYTES, columns }),
      stderr: new TextFollower({ maxBytes: FOLLOW_MAX_BYTES, columns }),
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deliver = (take: (follower: TextFollower) => string) => {
      for (const stream of ["stdout", "stderr"] as const) {
        const text = take(followers[stream]);
        if (text) onText(stream, text);
      }
    };
    const push = (stream: StreamName, data: Uint8Array) => {
      if (data.length === 0) return;
      followers[stream].push(data);
      timer ??= setTimeout(() => {
        timer = undefined;
        deliver((follower) => follower.take());
      }, FOLLOW_INTERVAL_MS);
    };
    for (const stream of ["stdout", "stderr"] as const) {
      const output = this.streams[stream];
      push(stream, output.readBytes(output.start).bytes);
    }
    if (!this.owner.running) {
      clearTimeout(timer);
      deliver((follower) => follower.end());
      onExit();
      return () => {};
    }
    const stop = this.owner.events.add((event) => {
      if (event.type === "output") return push(event.stream, event.data);
      clearTimeout(timer);
      deliver((follower) => follower.end());
      onExit();
      stop();
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }

  /**
   * The output kept so far (stdout's, then stderr's, as kept: UTF-8), and `listener` for every
   * event after it, from this moment: nothing missed, nothing twice. Returns the kept bytes and
   * the function that stops listening.
   */
  watch(listener: (event: CommandEvent) => void): { kept: Uint8Array[]; stop: () => void } {
    const kept = [this.streams.stdout, this.streams.stderr]
      .map((output) => output.readBytes(output.start).bytes)
      .filter((bytes) => bytes.length > 0);
    return { kept, stop: this.owner.events.add(listener) };
  }

  /** Gives the kept output back to the budget (the command is being forgotten). */
  release(): void {
    this.streams.stdout.release();
    this.streams.stderr.release();
  }
}
