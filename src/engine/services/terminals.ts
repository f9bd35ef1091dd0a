/**
 * Persistent terminals: shells, REPLs, dev servers and full-screen programs that live across
 * calls. Each keeps its output in a ring of numbered, timestamped lines (line numbers are never
 * reused), takes text and keys, can be waited on (until output matches, goes idle, or the
 * program exits), rendered as a screen, resized, killed and released (ACP's terminal
 * semantics). Idle terminals are released after a while; their number is capped.
 *
 * @example
 * ```ts
 * import { TerminalService } from "./terminals.ts";
 * const terminals = new TerminalService();
 * const shell = terminals.create({});                       // the platform shell
 * await shell.write("echo ready\r");
 * const outcome = await shell.wait({ pattern: /ready/, timeoutMs: 5000 });
 * outcome.condition; // "pattern"
 * await terminals.shutdown(500);
 * ```
 * @module
 */
import { log } from "../../log.ts";
import type { ChildProcess, ExitStatus, SignalName } from "../../pty/mod.ts";
import { cleanTerminalText } from "../output/clean.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { type LaunchContext, Launcher, resolveDirectory } from "../launching/launcher.ts";
import { childEnvironment } from "../launching/environment.ts";
import { EngineError } from "../errors.ts";
import { Listeners } from "../events.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import { type LineReadOptions, readLines, settledLines } from "../output/lines.ts";
import { OutputBuffer } from "../output/buffer.ts";
import { Recording } from "../output/recording.ts";
import { Screen, type ScreenView } from "../output/screen.ts";
import { buildTerminalInvocation, type TerminalInvocationRequest } from "../launching/shells.ts";
import { checkTerminalEncoding, ChildCodec, requestedEncoding } from "./encoding.ts";
import { Takeover } from "./takeover.ts";

/** Limits and timings of a {@link TerminalService}. */
export interface TerminalServiceOptions {
  /** Terminals open at once. Default 64. */
  maxTerminals?: number;
  /** A terminal unused this long (ms) is released. Default 24 hours. */
  idleMs?: number;
  /** Lines of output kept per terminal. Default 10,000. */
  maxLines?: number;
  /** Bytes of output kept per terminal. Default 10 MiB. */
  maxBytes?: number;
  /** Time between SIGTERM and SIGKILL when stopping, in ms. Default 2000. */
  killGraceMs?: number;
  /** Bytes of asciicast recording kept per terminal (0: none). Default 4 MiB. */
  recordingMaxBytes?: number;
  /** Starts processes (policy, audit). Default: no policy, no audit. */
  launcher?: Launcher;
}

/** The default bound of a terminal's recording: 4 MiB. */
export const DEFAULT_RECORDING_MAX_BYTES = 4 * 1024 * 1024;

/** What {@link TerminalService.create} needs. */
export interface CreateTerminalRequest extends TerminalInvocationRequest {
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  /** ACP: `terminal_output` returns at most this many of the newest bytes. */
  outputByteLimit?: number;
  /**
   * The program's encoding (`utf-8`, `oem`, `ansi`, a code page or a label): decodes its bytes
   * on POSIX; on Windows, where conhost always speaks UTF-8, it switches a cmd or PowerShell
   * shell's console to that code page.
   */
  encoding?: string;
  /** The front end that asked (for the audit log). */
  via?: FrontEnd;
}

/** Something that happened to a terminal. */
export type TerminalEvent =
  | { type: "output"; data: Uint8Array }
  | { type: "resize"; cols: number; rows: number }
  | { type: "exit"; status: ExitStatus };

/**
 * A viewer's start: the screen as escape sequences at one point of the output, and its size;
 * {@link Watch.start} then delivers every event after that point, none missed, none twice.
 */
export interface Watch {
  snapshot: string;
  cols: number;
  rows: number;
  /** The output offset the snapshot stands at: the events that follow start there. */
  offset: number;
  /** Delivers the events held since the snapshot, then each as it happens. */
  start(): void;
  stop(): void;
}

/**
 * Conditions a wait ends on; the first to happen wins. The program's exit always ends a wait
 * (no output can come after it), so with no pattern and no idle time it waits for the exit.
 */
export interface WaitRequest {
  /** Output (cleaned, from `since` or the start of the wait) matches this. */
  pattern?: RegExp;
  /** No output for this many ms. */
  idleMs?: number;
  timeoutMs: number;
  /**
   * Match from this line on. Default: the output since the last write (the answer to what was
   * typed), or since the start if nothing was written: output that arrived before the wait
   * began still counts, so a write followed by a wait cannot miss a fast answer.
   */
  since?: number;
  signal?: AbortSignal;
}

/** How a wait ended. */
export interface WaitOutcome {
  condition: "pattern" | "idle" | "exit" | "timeout" | "cancelled";
  /** Offset the matched text starts from. */
  from: number;
  match?: RegExpExecArray;
}

const ENV_FOR_TERMINALS = { TERM: "xterm-256color" };
/** A pattern is matched against at most the newest this-many bytes of output. */
const MATCH_WINDOW = 1024 * 1024;
/** Pattern checks run at most this often while output streams in. */
const CHECK_INTERVAL_MS = 25;
const INPUT_HISTORY = 100;

/** A terminal. */
export class Terminal {
  readonly id: string;
  /** When it was created, ms since the epoch. */
  readonly created: number = Date.now();
  /** Last input, output or read, ms since the epoch. */
  lastActivity: number = Date.now();
  readonly output: OutputBuffer;
  /** Everything the program wrote and every resize, in asciicast v2 (bounded). */
  readonly recording: Recording;
  readonly events: Listeners<TerminalEvent> = new Listeners();
  /** A viewer typing alongside the agent (see takeover.ts). */
  readonly takeover: Takeover;
  /** Settles when the program has exited and its output is complete. */
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | null = null;
  /** When input was written, and how much (content is not kept). */
  readonly inputs: { time: number; bytes: number }[] = [];
  #child: ChildProcess;
  #screen: Promise<Screen> | undefined;
  /** The screen once loaded: fed synchronously with each output, so its order is the output's. */
  #loadedScreen: Screen | undefined;
  #stopping: Promise<ExitStatus> | undefined;
  /** Where the output stood when input was last written. */
  #inputOffset = 0;
  #codec: ChildCodec;

  constructor(
    private readonly context: LaunchContext,
    private readonly launcher: Launcher,
    child: ChildProcess,
    readonly command: string,
    readonly cwd: string,
    public cols: number,
    public rows: number,
    readonly outputByteLimit: number | undefined,
    limits: { maxLines: number; maxBytes: number; recordingMaxBytes: number },
    codec: ChildCodec,
  ) {
    this.id = context.id;
    this.#child = child;
    this.#codec = codec;
    this.output = new OutputBuffer({ maxLines: limits.maxLines, maxBytes: limits.maxBytes });
    this.recording = new Recording({
      cols,
      rows,
      maxBytes: limits.recordingMaxBytes,
      command,
      title: `${this.id}: ${command}`,
      startedAt: this.created,
    });
    this.takeover = new Takeover(
      this,
      (event, via) => launcher.control({ ...context, via }, event),
    );
    child.onData((raw, stream) => this.#output(codec.decode(raw, stream)));
    this.exited = child.exited.then((status) => {
      for (const [, rest] of codec.end()) this.#output(rest);
      this.recording.end();
      this.exitStatus = status;
      this.events.emit({ type: "exit", status });
      log.info("terminal exited", { terminalId: this.id, ...status });
      return status;
    });
  }

  #output(data: Uint8Array): void {
    if (data.length === 0) return;
    this.lastActivity = Date.now();
    this.output.append(data, this.lastActivity);
    this.recording.output(data);
    if (this.#loadedScreen?.write(data) === false) {
      // The emulator fell behind a flood: drop it; the next look rebuilds it from the buffer.
      log.warn("the screen fell behind the output; it is rebuilt when next needed", {
        terminalId: this.id,
      });
      this.dispose();
    }
    this.events.emit({ type: "output", data });
  }

  get pid(): number {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  /** Marks the terminal as used (reads count: an agent watching a server is using it). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Types text (which may hold control characters and escape sequences). */
  async write(text: string, via: FrontEnd = "internal"): Promise<void> {
    this.#assertRunning();
    const bytes = this.#codec.encode(text, "input");
    this.launcher.input({ ...this.context, via }, text);
    this.#inputOffset = this.output.end;
    this.touch();
    this.inputs.push({ time: this.lastActivity, bytes: bytes.length });
    if (this.inputs.length > INPUT_HISTORY) this.inputs.shift();
    await this.#child.write(bytes);
  }

  /** Resizes the terminal (and the screen view). */
  resize(cols: number, rows: number): void {
    this.#assertRunning();
    try {
      this.#child.resize(cols, rows);
    } catch (error) {
      throw new EngineError("failed", (error as Error).message);
    }
    this.cols = cols;
    this.rows = rows;
    this.#loadedScreen?.resize(cols, rows);
    this.recording.resize(cols, rows);
    this.events.emit({ type: "resize", cols, rows });
  }

  /** Sends a signal to the program's whole process tree. */
  signal(name: SignalName, via: FrontEnd = "internal"): void {
    this.#assertRunning();
    this.launcher.kill({ ...this.context, via }, name);
    this.#child.kill(name);
  }

  /** Stops the program and its tree (SIGHUP, as a closing terminal sends; SIGKILL after the grace period). */
  stop(graceMs: number, via: FrontEnd = "internal"): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    if (!this.#stopping) this.launcher.kill({ ...this.context, via }, "SIGHUP");
    this.#stopping ??= stopProcess(this.#child, graceMs, "SIGHUP");
    return this.#stopping;
  }

  /** Reads output by line (see {@link readLines}); counts as activity. */
  read(options: Omit<LineReadOptions, "final">): TerminalRead {
    this.touch();
    const read = readLines(this.output, { ...options, final: !this.running });
    return {
      output: read.output,
      totalLines: read.totalLines,
      nextReadFrom: read.nextReadFrom,
      hasMore: read.hasMore,
      truncated: read.truncated,
      stats: {
        totalBytes: this.output.end,
        estimatedTokens: estimateTokens(read.output.length),
        linesShown: read.linesShown,
        linesOmitted: read.linesOmitted,
      },
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
    };
  }

  /** What the terminal is: id, process, command, directory, times, state, size. */
  info(): TerminalInfo {
    return {
      terminalId: this.id,
      pid: this.pid,
      command: this.command,
      cwd: this.cwd,
      created: new Date(this.created).toISOString(),
      lastActivity: new Date(this.lastActivity).toISOString(),
      status: this.running ? "active" : "exited",
      size: { cols: this.cols, rows: this.rows },
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
    };
  }

  /** The line an incremental read goes on from (a growing last line is read again). */
  get nextReadFrom(): number {
    return settledLines(this.output, !this.running);
  }

  /** How much output there is, and how much is kept. */
  stats(): TerminalStats {
    const buffer = this.output;
    return {
      terminalId: this.id,
      totalLines: buffer.lineCount,
      totalBytes: buffer.end,
      estimatedTokens: estimateTokens(buffer.end - buffer.start),
      bufferSize: buffer.lineCount - buffer.firstLine,
      oldestLine: buffer.firstLine,
      newestLine: Math.max(0, buffer.lineCount - 1),
      isActive: this.running,
    };
  }

  /** What a person would see now. */
  async screen(): Promise<ScreenView> {
    this.touch();
    return (await this.#loadScreen()).render();
  }

  /**
   * Starts watching: `listener` gets every event after the returned snapshot once
   * {@link Watch.start} is called (events meanwhile are held, so the snapshot can be sent
   * first).
   */
  async watch(listener: (event: TerminalEvent) => void): Promise<Watch> {
    const screen = await this.#loadScreen();
    // From here to the snapshot's request nothing else runs: the events held are exactly those
    // after the point the snapshot is taken at.
    let held: TerminalEvent[] | undefined = [];
    const stop = this.events.add((event) => held ? held.push(event) : listener(event));
    const offset = this.output.end;
    const { data, cols, rows } = await screen.snapshot();
    return {
      snapshot: data,
      cols,
      rows,
      offset,
      start() {
        const events = held ?? [];
        held = undefined;
        for (const event of events) listener(event);
      },
      stop() {
        stop();
        held = undefined;
      },
    };
  }

  /** Builds the screen on first use from the output kept so far; then new output feeds it. */
  #loadScreen(): Promise<Screen> {
    this.#screen ??= Screen.create(this.cols, this.rows).then((screen) => {
      // Output that arrived while the emulator loaded is in the buffer, so read it here (and
      // feed the screen directly from now on): nothing twice, nothing missed.
      screen.write(this.output.read().bytes);
      this.#loadedScreen = screen;
      return screen;
    });
    return this.#screen;
  }

  /** Waits for the first of the request's conditions. */
  wait(request: WaitRequest): Promise<WaitOutcome> {
    this.touch();
    const from = request.since === undefined
      ? this.#inputOffset
      : this.output.lineStart(request.since);
    return new Promise((resolve) => {
      const timers: ReturnType<typeof setTimeout>[] = [];
      let checkTimer: ReturnType<typeof setTimeout> | undefined;
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      let stopListening = () => {};
      const finish = (condition: WaitOutcome["condition"], match?: RegExpExecArray) => {
        for (const timer of [...timers, checkTimer, idleTimer]) clearTimeout(timer);
        stopListening();
        request.signal?.removeEventListener("abort", onAbort);
        this.touch();
        resolve({ condition, from, match });
      };
      const matchNow = (): boolean => {
        if (!request.pattern) return false;
        const start = Math.max(from, this.output.end - MATCH_WINDOW);
        const text = cleanTerminalText(this.output.readText(start, undefined, !this.running).text);
        request.pattern.lastIndex = 0;
        const match = request.pattern.exec(text);
        if (match) finish("pattern", match);
        return match !== null;
      };
      const armIdle = () => {
        if (request.idleMs === undefined) return;
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => finish("idle"), request.idleMs);
      };
      const onAbort = () => finish("cancelled");
      if (matchNow()) return;
      if (!this.running) return finish("exit");
      if (request.signal?.aborted) return finish("cancelled");
      request.signal?.addEventListener("abort", onAbort, { once: true });
      timers.push(setTimeout(() => finish("timeout"), request.timeoutMs));
      armIdle();
      stopListening = this.events.add((event) => {
        if (event.type === "exit") {
          if (!matchNow()) finish("exit");
          return;
        }
        if (event.type !== "output") return;
        armIdle();
        checkTimer ??= setTimeout(() => {
          checkTimer = undefined;
          matchNow();
        }, CHECK_INTERVAL_MS);
      });
    });
  }

  /** Frees the screen (rebuilt from the buffer if it is needed again). */
  dispose(): void {
    this.#screen?.then((screen) => screen.dispose());
    this.#screen = undefined;
    this.#loadedScreen = undefined;
  }

  #assertRunning(): void {
    if (!this.running) {
      throw new EngineError(
        "inactive",
        `terminal ${this.id} has exited (${describeExit(this.exitStatus!)})`,
      );
    }
  }
}

/** A terminal's description; times in ISO 8601. */
export interface TerminalInfo {
  terminalId: string;
  pid: number;
  command: string;
  cwd: string;
  created: string;
  lastActivity: string;
  status: "active" | "exited";
  size: { cols: number; rows: number };
  exitStatus?: ExitStatus;
}

/** A line read, with statistics. */
export interface TerminalRead {
  output: string;
  totalLines: number;
  nextReadFrom: number;
  hasMore: boolean;
  truncated: boolean;
  stats: { totalBytes: number; estimatedTokens: number; linesShown: number; linesOmitted: number };
  exitStatus?: ExitStatus;
}

/** A terminal's output statistics. */
export interface TerminalStats {
  terminalId: string;
  totalLines: number;
  totalBytes: number;
  estimatedTokens: number;
  /** Lines kept. */
  bufferSize: number;
  oldestLine: number;
  newestLine: number;
  isActive: boolean;
}

/** About four characters of English per token. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** "exit code 0", "signal SIGTERM". */
export function describeExit(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.exitCode}`;
}

/** Creates, finds and ends terminals. */
export class TerminalService {
  #terminals = new Map<string, Terminal>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  readonly maxTerminals: number;
  readonly idleMs: number;
  readonly maxLines: number;
  readonly maxBytes: number;
  readonly killGraceMs: number;
  readonly recordingMaxBytes: number;
  readonly launcher: Launcher;

  constructor(options: TerminalServiceOptions = {}) {
    this.maxTerminals = options.maxTerminals ?? 64;
    this.recordingMaxBytes = options.recordingMaxBytes ?? DEFAULT_RECORDING_MAX_BYTES;
    this.idleMs = options.idleMs ?? 24 * 60 * 60 * 1000;
    this.maxLines = options.maxLines ?? 10_000;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.launcher = options.launcher ?? new Launcher();
  }

  /** Starts a terminal. Throws {@link EngineError} naming the input at fault. */
  create(request: CreateTerminalRequest): Terminal {
    if (this.#terminals.size >= this.maxTerminals) {
      throw new EngineError(
        "limit",
        `${this.#terminals.size} terminals are open, the most allowed (WINTERM_MAX_TERMINALS); ` +
          "release some with terminal_release",
      );
    }
    const cwd = resolveDirectory(request.cwd, "cwd");
    const env = childEnvironment(request.env, ENV_FOR_TERMINALS);
    const encoding = requestedEncoding(request.encoding);
    const invocation = buildTerminalInvocation({ ...request, codePage: encoding?.codePage }, {
      cwd,
      env,
    });
    checkTerminalEncoding(encoding, true, invocation.codePage);
    const cols = request.cols ?? 80, rows = request.rows ?? 24;
    let id: string;
    do id = `term_${crypto.randomUUID().slice(0, 8)}`; while (this.#terminals.has(id));
    const context: LaunchContext = { via: request.via ?? "internal", kind: "terminal", id };
    const child = this.launcher.launch(
      invocation,
      { cwd, env, envOverrides: request.env ?? {}, mode: "pty", cols, rows },
      { program: request.command === undefined ? "shell" : "command", cwd: "cwd", env: "env" },
      context,
    );
    const terminal = new Terminal(
      context,
      this.launcher,
      child,
      invocation.display,
      cwd,
      cols,
      rows,
      request.outputByteLimit,
      {
        maxLines: this.maxLines,
        maxBytes: Math.max(this.maxBytes, request.outputByteLimit ?? 0),
        recordingMaxBytes: this.recordingMaxBytes,
      },
      new ChildCodec(child, encoding, invocation.codePage),
    );
    this.#terminals.set(id, terminal);
    this.#startSweeper();
    log.info("terminal created", { terminalId: id, pid: child.pid, command: invocation.display });
    return terminal;
  }

  /** The terminal with this id; throws a not-found error naming `terminalId`. */
  get(id: string): Terminal {
    const terminal = this.#terminals.get(id);
    if (!terminal) {
      throw new EngineError(
        "not_found",
        `no terminal ${id} (never created, released, or expired)`,
        "terminalId",
      );
    }
    return terminal;
  }

  /** Every terminal, oldest first. */
  list(): Terminal[] {
    return [...this.#terminals.values()];
  }

  /** Kills the terminal if it runs, frees it; its id is invalid afterwards. */
  async release(id: string, via: FrontEnd = "internal"): Promise<ExitStatus> {
    const terminal = this.get(id);
    this.#terminals.delete(id);
    const status = await terminal.stop(this.killGraceMs, via);
    terminal.dispose();
    log.info("terminal released", { terminalId: id });
    return status;
  }

  /** Stops every terminal (grace `graceMs`) and frees them all. */
  async shutdown(graceMs: number = this.killGraceMs): Promise<void> {
    clearInterval(this.#sweeper);
    const all = [...this.#terminals.values()];
    this.#terminals.clear();
    await Promise.all(all.map((terminal) => terminal.stop(graceMs).then(() => terminal.dispose())));
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    const sweeper = setInterval(
      () => this.#sweep(),
      Math.min(60_000, Math.max(1000, this.idleMs / 4)),
    );
    // The sweep must not keep the server alive on its own.
    Deno.unrefTimer(sweeper);
    this.#sweeper = sweeper;
  }

  #sweep(): void {
    const oldest = Date.now() - this.idleMs;
    for (const terminal of this.#terminals.values()) {
      if (terminal.lastActivity < oldest) {
        log.info("releasing an idle terminal", { terminalId: terminal.id });
        this.release(terminal.id).catch((error) => log.error("release failed", { error }));
      }
    }
  }
}
