/**
 * One-shot commands (the winterm `run_command` family): start, capture both streams, time out,
 * take input, terminate, and keep finished commands queryable for a while.
 *
 * @example
 * ```ts
 * import { CommandService } from "./command.ts";
 * const service = new CommandService();
 * const { command } = await service.run({ command: "echo hi", shellType: "default" });
 * await command.done;
 * command.read({}).stdout.text; // "hi\n" (cleaned)
 * await service.shutdown();
 * ```
 * @module
 */
import { log } from "../../log.ts";
import type { ChildProcess, ExitStatus, StreamName } from "../../pty/mod.ts";
import { HOST_FLAVOR, WRITE_TIMEOUT_MS } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { EngineError } from "../errors.ts";
import { childEnvironment, pagerEnvironment } from "../launching/environment.ts";
import { Listeners } from "../events.ts";
import {
  inputFailure,
  type LaunchContext,
  Launcher,
  resolveDirectory,
} from "../launching/launcher.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import type { SandboxInfo, SandboxRequest } from "../launching/sandbox.ts";
import { DEFAULT_MAX_BYTES } from "../output/buffer.ts";
import { OutputBudget } from "../output/budget.ts";
import { TextFollower } from "../output/follow.ts";
import type { RangeRead } from "../output/ranges.ts";
import { DEFAULT_ANSWER_BYTES, jsonSizeSteps } from "../output/shape.ts";
import { StreamOutput, type StreamView } from "../output/stream.ts";
import { atOnce, type Steps } from "../slices.ts";
import { buildInvocation, type Invocation, type InvocationRequest } from "../launching/shells.ts";
import {
  checkTerminalEncoding,
  ChildCodec,
  prepareEncodings,
  requestedEncoding,
} from "../encoding.ts";
import { type Clamped, clampSize, shortDisplay } from "../limits.ts";

/** What {@link CommandService.run} needs. */
export interface RunRequest extends InvocationRequest {
  /** Seconds before the command is stopped. Default 30. */
  timeoutSeconds?: number;
  /** Working directory; relative paths resolve against the server's. */
  cwd?: string;
  /** PTY (default) or pipes (stdout and stderr kept apart). */
  usePty?: boolean;
  /** Bytes kept per stream; at most the service's `maxBufferSize` (also the default). */
  maxBufferSize?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * How the program's bytes are read and its input written (`utf-8`, `oem`, `ansi`, a code
   * page or a label); default: followed (see src/engine/encoding.ts). A cmd or PowerShell shell
   * is switched to it.
   */
  encoding?: string;
  /**
   * Windows: start even though the ANSI view of the program, its arguments, the command or
   * the working directory differs from them (see launching/ansi_view.ts).
   */
  allowAnsiMismatch?: boolean;
  /** The front end that asked (for the audit log). */
  via?: FrontEnd;
  /** Aborted when the caller gives up: a start still waiting for its turn is not made. */
  signal?: AbortSignal;
  /** Its sandbox (it can only tighten the server's, which applies without one). */
  sandbox?: SandboxRequest;
}

/** Where a command is in its life. */
export type CommandStatus = "running" | "completed" | "terminated";

/** Something that happened to a command. */
export type CommandEvent =
  | { type: "output"; stream: StreamName; data: Uint8Array }
  | { type: "exit" };

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
}

/** One stream's part of a {@link CommandRead}. */
export interface CommandStreamRead extends RangeRead {
  /** Bytes the stream has had in all. */
  length: number;
  /** Some of the requested output is not in `text`: dropped, left out, or past the budget. */
  truncated: boolean;
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

/** Limits and timings of a {@link CommandService}. */
export interface CommandServiceOptions {
  /** Finished commands kept for queries. Default 500. */
  retainCount?: number;
  /** How long a finished command stays queryable, in ms. Default 1 hour. */
  retainMs?: number;
  /** Commands running at once. Default 256. */
  maxRunning?: number;
  /** Most bytes kept per stream, whatever a request asks. Default 10 MiB. */
  maxBufferSize?: number;
  /** Most bytes of output text in one answer (JSON-escaped, both streams). Default 2 MiB. */
  answerBytes?: number;
  /** The server-wide budget for retained output. Default: its own of 256 MiB. */
  budget?: OutputBudget;
  /** Time between SIGTERM and SIGKILL when stopping, in ms. Default 2000. */
  killGraceMs?: number;
  /** How long a write may wait for the command to take its input, in ms. Default 10,000. */
  writeTimeoutMs?: number;
  /** Starts processes (policy, audit). Default: no policy, no audit. */
  launcher?: Launcher;
}

/** Terminal size for commands: wide, so that tools do not wrap or truncate their lines. */
const COMMAND_COLS = 160, COMMAND_ROWS = 40;
const TERMINAL_ENV = { TERM: "xterm-256color" };
/** Streaming: text pushed at most this often, at most this much at a time (as JSON). */
const FOLLOW_INTERVAL_MS = 200, FOLLOW_MAX_BYTES = 64 * 1024;

/** How a command keeps and shows its output. */
interface OutputLimits {
  bufferSize: number;
  answerBytes: number;
  budget: OutputBudget;
}

/** A command and everything known about it. */
export class Command {
  readonly token: string;
  /** When it started, ms since the epoch. */
  readonly startedAt: number = Date.now();
  readonly events: Listeners<CommandEvent> = new Listeners();
  /** What runs, as a command line (shortened past 1000 characters). */
  readonly display: string;
  /** Bytes kept per stream. */
  readonly bufferSize: number;
  /** Settles when the command has ended and its output is complete. */
  readonly done: Promise<void>;
  status: CommandStatus = "running";
  exitCode: number | null = null;
  /** The signal that ended it, if one did (POSIX name). */
  signal: string | null = null;
  timeoutOccurred = false;
  /** When it ended, ms since the epoch. */
  endedAt: number | undefined;
  #child: ChildProcess;
  #startTime = performance.now();
  #elapsed: number | undefined;
  #timer: ReturnType<typeof setTimeout>;
  #terminated = false;
  #stopping: Promise<unknown> | undefined;
  readonly #output: Record<StreamName, StreamOutput>;
  readonly #answerBytes: number;
  readonly #codec: ChildCodec;

  constructor(
    private readonly context: LaunchContext,
    child: ChildProcess,
    invocation: Invocation,
    readonly cwd: string,
    limits: OutputLimits,
    timeoutSeconds: number,
    private readonly killGraceMs: number,
    private readonly writeTimeoutMs: number,
    private readonly launcher: Launcher,
    codec: ChildCodec,
  ) {
    this.token = context.id;
    this.#codec = codec;
    this.#child = child;
    this.display = shortDisplay(invocation.display);
    this.bufferSize = limits.bufferSize;
    this.#answerBytes = limits.answerBytes;
    // Output is kept as UTF-8: code pages (Windows pipes) are converted on arrival.
    // On a terminal, output is cleaned as that terminal shows it; pipes have no width.
    const columns = child.mode === "pty" ? COMMAND_COLS : undefined;
    const stream = () =>
      new StreamOutput({
        maxBytes: limits.bufferSize,
        budget: limits.budget,
        decoder: codec.decoder(),
        columns,
      });
    this.#output = { stdout: stream(), stderr: stream() };
    child.onData((raw, stream) => {
      const data = this.#output[stream].append(raw);
      // Lent bytes (see DataListener): listeners, which may keep them, get a copy.
      if (data.length > 0 && this.events.size > 0) {
        this.events.emit({ type: "output", stream, data: data.slice() });
      }
    });
    this.#timer = setTimeout(() => this.#onTimeout(), timeoutSeconds * 1000);
    this.done = child.exited.then((status) => this.#onExit(status));
  }

  /** The child's process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** The sandbox it runs in, if any. */
  get sandbox(): SandboxInfo | undefined {
    return this.launcher.sandboxOf(this.#child);
  }

  /** `pty` or `pipe`. */
  get mode(): "pty" | "pipe" {
    return this.#child.mode;
  }

  get running(): boolean {
    return this.status === "running";
  }

  /** Milliseconds from start to end (or to now while running). */
  get executionTimeMs(): number {
    return Math.round(this.#elapsed ?? performance.now() - this.#startTime);
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
    const final = !this.running;
    return this.#output.stdout.frozen((stdout) =>
      this.#output.stderr.frozen((stderr) => this.#read(request, { stdout, stderr }, final))
    );
  }

  *#read(
    request: CommandReadRequest,
    output: Record<StreamName, StreamView>,
    final: boolean,
  ): Steps<CommandRead> {
    const limit = this.#answerBytes;
    // Only a size the client asked for is reported as lowered; the default just fits.
    const maxBytes = request.maxBytes === undefined
      ? { value: Math.min(DEFAULT_ANSWER_BYTES, limit), clamped: undefined }
      : clampSize(request.maxBytes, limit);
    const starts = {} as Record<StreamName, number | undefined>;
    for (const stream of ["stdout", "stderr"] as const) {
      starts[stream] = request.after === undefined
        ? request.offsets?.[stream]
        : this.#output[stream].offsetAfter(request.after);
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
      const options = { raw: request.raw, final, budget: budgets[stream] };
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
          { raw: request.raw, final, budget: budgets[stream] },
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
    options: { raw?: boolean; final: boolean; budget: number },
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
      const short = streams.filter((s) => reads[s].end < this.#output[s].end);
      // A page that stops inside a millisecond splits it, so that "after the time told" starts
      // exactly where the page stopped (else a millisecond of more than a page repeats forever).
      for (const s of short) this.#output[s].splitTimeAt(reads[s].end);
      const times = short.length
        ? short.map((s) => this.#output[s].timeAt(reads[s].end) - 1)
        : streams.map((s) => this.#output[s].newestTime()).filter((t) => t !== undefined);
      if (times.length === 0) return null;
      const time = short.length ? Math.min(...times) : Math.max(...times);
      // Each pass lowers the time or reads a stream again up to it, ending there or before (a
      // page shorter than before), unless a character or sequence whose bytes arrived on both
      // sides of the time must be shown whole: that page stays as it is.
      let again = false;
      for (const s of reread === undefined ? [] : streams) {
        const cut = this.#output[s].offsetAfter(time);
        if (reads[s].end <= cut || forced.has(s)) continue;
        const read = yield* reread!(s, cut);
        if (read.end > cut) forced.add(s);
        else [reads[s], again] = [read, true];
      }
      if (again) continue;
      for (const stream of streams) this.#output[stream].reserveUntil(time);
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
    const columns = this.#output.stdout.columns;
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
      const output = this.#output[stream];
      push(stream, output.readBytes(output.start).bytes);
    }
    if (!this.running) {
      clearTimeout(timer);
      deliver((follower) => follower.end());
      onExit();
      return () => {};
    }
    const stop = this.events.add((event) => {
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
    const kept = [this.#output.stdout, this.#output.stderr]
      .map((output) => output.readBytes(output.start).bytes)
      .filter((bytes) => bytes.length > 0);
    return { kept, stop: this.events.add(listener) };
  }

  /** Gives the kept output back to the budget (the command is being forgotten). */
  release(): void {
    this.#output.stdout.release();
    this.#output.stderr.release();
  }

  /**
   * Writes text to the command's input, with Enter after it if asked. Writes reach the program
   * in the order they were asked for, whatever the time their encoding takes (see
   * ChildCodec.encodeNow).
   */
  async write(text: string, appendNewline: boolean, via: FrontEnd = "internal"): Promise<void> {
    this.#assertRunning();
    const newline = this.mode === "pty" ? "\r" : HOST_FLAVOR === "windows" ? "\r\n" : "\n";
    const input = appendNewline ? text + newline : text;
    const queued = this.#inputOrder.then(async () => {
      const bytes = await this.#codec.encodeNow(input, "input", this.#child);
      this.launcher.input({ ...this.context, via }, input);
      return { written: this.#child.write(bytes, this.writeTimeoutMs) };
    });
    this.#inputOrder = queued.then(() => undefined, () => undefined);
    const { written } = await queued;
    await inputFailure(written);
  }

  /** Settles once the last write asked for is queued to the program (see {@link write}). */
  #inputOrder: Promise<void> = Promise.resolve();

  /** Ends the command's input (EOF). */
  async closeInput(): Promise<void> {
    this.#assertRunning();
    await inputFailure(this.#child.closeInput());
  }

  /**
   * Stops the command and its whole process tree (SIGKILL after `graceMs`); status becomes
   * `terminated`, whether a client asked or the server is ending.
   */
  async terminate(via: FrontEnd = "internal", graceMs: number = this.killGraceMs): Promise<void> {
    this.#assertRunning();
    this.#terminated = true;
    this.launcher.kill({ ...this.context, via }, "SIGTERM");
    await this.stop(graceMs);
  }

  /** Stops the process tree (SIGTERM, SIGKILL after the grace period) and waits for the end. */
  async stop(graceMs: number = this.killGraceMs): Promise<void> {
    this.#stopping ??= stopProcess(this.#child, graceMs);
    await this.#stopping;
    await this.done;
  }

  #assertRunning(): void {
    if (!this.running) {
      throw new EngineError(
        "inactive",
        `command ${this.token} is no longer running (${this.status})`,
      );
    }
  }

  #onTimeout(): void {
    if (!this.running) return;
    this.timeoutOccurred = true;
    log.info("command timed out", { token: this.token });
    this.launcher.kill(this.context, "SIGTERM (timeout)");
    this.stop().catch((error) => log.error("stopping a timed-out command failed", { error }));
  }

  #onExit(status: ExitStatus): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const data = this.#output[stream].finish();
      if (data.length > 0) this.events.emit({ type: "output", stream, data });
    }
    clearTimeout(this.#timer);
    this.#elapsed = performance.now() - this.#startTime;
    this.endedAt = Date.now();
    this.signal = status.signal;
    if (this.#terminated) {
      this.status = "terminated";
      this.exitCode = -1;
    } else {
      this.status = "completed";
      this.exitCode = this.timeoutOccurred ? -1 : status.exitCode;
    }
    log.debug("command ended", { token: this.token, status: this.status, exitCode: this.exitCode });
    this.events.emit({ type: "exit" });
  }
}

/** Starts commands and keeps them. */
export class CommandService {
  #commands = new Map<string, Command>();
  /** Commands being started (their program is being spawned): they count as running. */
  #starting = 0;
  readonly retainCount: number;
  readonly retainMs: number;
  readonly maxRunning: number;
  readonly killGraceMs: number;
  readonly writeTimeoutMs: number;
  readonly launcher: Launcher;
  readonly maxBufferSize: number;
  readonly answerBytes: number;
  readonly #budget: OutputBudget;

  constructor(options: CommandServiceOptions = {}) {
    this.retainCount = options.retainCount ?? 500;
    this.retainMs = options.retainMs ?? 60 * 60 * 1000;
    this.maxRunning = options.maxRunning ?? 256;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.launcher = options.launcher ?? new Launcher();
    this.maxBufferSize = options.maxBufferSize ?? DEFAULT_MAX_BYTES;
    this.answerBytes = options.answerBytes ?? 2 * 1024 * 1024;
    this.#budget = options.budget ?? new OutputBudget(256 * 1024 * 1024);
    // Past the budget, finished commands go first, oldest first.
    this.#budget.addReliever(() => this.#evictOldestFinished());
  }

  /**
   * Starts a command. Throws {@link EngineError} naming the input at fault. A `maxBufferSize`
   * over the service's is lowered to it (`bufferClamped` says so).
   */
  async run(request: RunRequest): Promise<{ command: Command; bufferClamped?: Clamped }> {
    // Before any check: from there on to the count of those starting nothing waits, so no
    // other start can come between a limit checked and the command counted.
    await prepareEncodings(request.encoding);
    this.#prune();
    this.launcher.checkOpen();
    const running = [...this.#commands.values()].filter((command) => command.running).length +
      this.#starting;
    if (running >= this.maxRunning) {
      throw new EngineError(
        "limit",
        `${running} commands are running, the most allowed (WINTERM_MAX_COMMANDS); wait for ` +
          "some or terminate them",
      );
    }
    this.#starting++;
    try {
      return await this.#run(request);
    } finally {
      this.#starting--;
    }
  }

  async #run(request: RunRequest): Promise<{ command: Command; bufferClamped?: Clamped }> {
    const cwd = resolveDirectory(request.cwd, "working_directory");
    const usePty = request.usePty ?? true;
    const env = childEnvironment(
      request.env,
      usePty ? { ...pagerEnvironment(), ...TERMINAL_ENV } : pagerEnvironment(),
    );
    const encoding = requestedEncoding(request.encoding);
    const invocation = buildInvocation({ ...request, codePage: encoding?.codePage }, { cwd, env });
    checkTerminalEncoding(encoding, usePty, invocation.codePage);
    const context: LaunchContext = {
      via: request.via ?? "internal",
      kind: "command",
      id: crypto.randomUUID(),
    };
    const child = await this.launcher.launch(
      invocation,
      {
        cwd,
        env,
        envOverrides: request.env ?? {},
        mode: usePty ? "pty" : "pipe",
        cols: COMMAND_COLS,
        rows: COMMAND_ROWS,
        signal: request.signal,
        sandbox: request.sandbox,
        allowAnsiMismatch: request.allowAnsiMismatch,
      },
      {
        program: request.executable ? "executable" : "command",
        cwd: "working_directory",
        env: "env",
        args: request.executable ? "args" : "command",
        ansiOptIn: "allow_ansi_mismatch",
      },
      context,
    );
    const bufferSize = request.maxBufferSize === undefined
      ? { value: Math.min(DEFAULT_MAX_BYTES, this.maxBufferSize), clamped: undefined }
      : clampSize(request.maxBufferSize, this.maxBufferSize);
    const command = new Command(
      context,
      child,
      invocation,
      cwd,
      { bufferSize: bufferSize.value, answerBytes: this.answerBytes, budget: this.#budget },
      request.timeoutSeconds ?? 30,
      this.killGraceMs,
      this.writeTimeoutMs,
      this.launcher,
      new ChildCodec(child, encoding, invocation.codePage),
    );
    this.#commands.set(command.token, command);
    log.info("command started", {
      token: command.token,
      pid: child.pid,
      command: command.display,
    });
    return bufferSize.clamped ? { command, bufferClamped: bufferSize.clamped } : { command };
  }

  /** The command with this token, if it is still kept. */
  get(token: string): Command | undefined {
    this.#prune();
    return this.#commands.get(token);
  }

  /** Every kept command, oldest first. */
  list(): Command[] {
    this.#prune();
    return [...this.#commands.values()];
  }

  /**
   * Terminates every running command (grace `graceMs`) and waits until they have ended: they
   * end `terminated`, as by terminate_command (they ended `completed` with the signal).
   */
  async shutdown(graceMs: number = this.killGraceMs): Promise<void> {
    await Promise.all(
      [...this.#commands.values()].filter((c) => c.running).map((c) =>
        c.terminate("internal", graceMs)
      ),
    );
  }

  /** Drops finished commands past their age or beyond the count kept. */
  #prune(): void {
    // Runs on every query, so: one pass for expiry, and a sort only when too many are kept.
    const oldest = Date.now() - this.retainMs;
    const finished: Command[] = [];
    for (const command of this.#commands.values()) {
      if (command.running) continue;
      if (command.endedAt! < oldest) this.#forget(command);
      else finished.push(command);
    }
    if (finished.length <= this.retainCount) return;
    finished.sort((a, b) => a.endedAt! - b.endedAt!);
    for (const command of finished.slice(0, finished.length - this.retainCount)) {
      this.#forget(command);
    }
  }

  /** Evicts the finished command that ended first; false if none is left. */
  #evictOldestFinished(): boolean {
    let oldest: Command | undefined;
    for (const command of this.#commands.values()) {
      if (!command.running && (!oldest || command.endedAt! < oldest.endedAt!)) oldest = command;
    }
    if (!oldest) return false;
    log.debug("evicting a finished command for the output budget", { token: oldest.token });
    this.#forget(oldest);
    return true;
  }

  #forget(command: Command): void {
    this.#commands.delete(command.token);
    command.release();
  }
}
