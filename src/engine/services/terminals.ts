/**
 * Persistent terminals: shells, REPLs, dev servers and full-screen programs that live across
 * calls. Each keeps its output in a ring of numbered, timestamped lines (line numbers are never
 * reused), takes text and keys, can be waited on (until output matches, goes idle, or the
 * program exits), rendered as a screen, resized, killed and released (ACP's terminal
 * semantics). Idle terminals are released after a while; their number is capped. Each is
 * recorded (asciicast v2, bounded), can be watched (a snapshot of its screen, then every event
 * after it) and taken over by a viewer (takeover.ts).
 *
 * @example
 * ```ts
 * import { compilePattern, TerminalService } from "./terminals.ts";
 * const terminals = new TerminalService();
 * const shell = terminals.create({});                       // the platform shell
 * await shell.write("echo ready\r");
 * const pattern = compilePattern("ready", "", "pattern");
 * const outcome = await shell.wait({ pattern, timeoutMs: 5000 });
 * outcome.condition; // "pattern"
 * await terminals.shutdown(500);
 * ```
 * @module
 */
import { log } from "../../log.ts";
import {
  type ChildProcess,
  describeExit,
  type ExitStatus,
  type SignalName,
  WRITE_TIMEOUT_MS,
} from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import {
  inputFailure,
  type LaunchContext,
  Launcher,
  resolveDirectory,
} from "../launching/launcher.ts";
import { childEnvironment } from "../launching/environment.ts";
import { EngineError } from "../errors.ts";
import { Listeners } from "../events.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import { OutputBudget } from "../output/budget.ts";
import type { LineReadOptions } from "../output/lines.ts";
import type { Pattern, PatternMatch } from "../output/patterns.ts";
import { Recording } from "../output/recording.ts";
import type { ScreenView } from "../output/screen.ts";
import { cutHead, omissionMarker } from "../output/shape.ts";
import { StreamOutput } from "../output/stream.ts";
import { boundaryAtOrAfter, utf8Length } from "../output/utf8.ts";
import { buildTerminalInvocation, type TerminalInvocationRequest } from "../launching/shells.ts";
import { checkTerminalEncoding, ChildCodec, requestedEncoding } from "./encoding.ts";
import { type Clamped, clampSize, shortDisplay } from "./limits.ts";
import { Takeover } from "./takeover.ts";

export { LINE_MODES, type LineMode } from "../output/lines.ts";
export { compilePattern, type Pattern, type PatternMatch } from "../output/patterns.ts";

/** Limits and timings of a {@link TerminalService}. */
export interface TerminalServiceOptions {
  /** Terminals open at once. Default 64. */
  maxTerminals?: number;
  /** A terminal unused this long (ms) is released. Default 24 hours. */
  idleMs?: number;
  /** Lines of output kept per terminal. Default 10,000. */
  maxLines?: number;
  /** Bytes of output kept per terminal (and the most `outputByteLimit` can be). Default 10 MiB. */
  maxBytes?: number;
  /** Time between SIGTERM and SIGKILL when stopping, in ms. Default 2000. */
  killGraceMs?: number;
  /** Most bytes of output text in one answer (JSON-escaped). Default 2 MiB. */
  answerBytes?: number;
  /** The server-wide budget for retained output. Default: its own of 256 MiB. */
  budget?: OutputBudget;
  /** How long a write may wait for the terminal to take its input, in ms. Default 10,000. */
  writeTimeoutMs?: number;
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
  /** ACP: `terminal_output` returns at most this many of the newest bytes (at most `maxBytes`). */
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
  /** Written into a fresh terminal of `cols` × `rows`, it draws the screen at `offset`. */
  snapshot: Uint8Array;
  cols: number;
  rows: number;
  /** The output offset the snapshot stands at: the output events that follow start there. */
  offset: number;
  /** Delivers the events since the snapshot (the output kept after it first), then each as it happens. */
  start(): void;
  stop(): void;
}

/**
 * Conditions a wait ends on; the first to happen wins. The program's exit always ends a wait
 * (no output can come after it), so with no pattern and no idle time it waits for the exit.
 */
export interface WaitRequest {
  /** Output (cleaned, from `since` or the start of the wait) matches this (see patterns.ts). */
  pattern?: Pattern;
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
  /** Offset the matched output starts from (see {@link Terminal.outputSince}). */
  from: number;
  match?: PatternMatch;
  /** Output skipped unmatched because it came faster than the pattern could be matched. */
  skippedBytes: number;
}

/** The output since a wait's start, as a wait answers it. */
export interface WaitOutput {
  output: string;
  /** Older output was left out (a marker at the start says how much and how to read it). */
  truncated: boolean;
}

/** A screen as an answer shows it. */
export interface ScreenRead extends ScreenView {
  /** The text was cut to the answer size limit (rows past it are left out, with a marker). */
  truncated: boolean;
}

const ENV_FOR_TERMINALS = { TERM: "xterm-256color" };
/** Pattern checks run at most this often while output streams in. */
const CHECK_INTERVAL_MS = 25;
/** A wait's output: at most this many bytes (JSON), the newest. */
const WAIT_OUTPUT_BYTES = 64 * 1024;
const INPUT_HISTORY = 100;
/** The output kept after a watcher's snapshot is delivered in pieces of at most this size. */
const WATCH_PIECE_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/** How a terminal keeps and shows its output. */
interface OutputLimits {
  maxLines: number;
  maxBytes: number;
  answerBytes: number;
  budget: OutputBudget;
  recordingMaxBytes: number;
}

/** A terminal. */
export class Terminal {
  readonly id: string;
  /** When it was created, ms since the epoch. */
  readonly created: number = Date.now();
  /** Last input, output or read, ms since the epoch. */
  lastActivity: number = Date.now();
  readonly events: Listeners<TerminalEvent> = new Listeners();
  /** What runs, as a command line (shortened past 1000 characters). */
  readonly command: string;
  /** Everything the program wrote and every resize, in asciicast v2 (bounded). */
  readonly recording: Recording;
  /** A viewer typing alongside the agent (see takeover.ts). */
  readonly takeover: Takeover;
  /** Settles when the program has exited and its output is complete. */
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | null = null;
  /** When input was written, and how much (content is not kept). */
  readonly inputs: { time: number; bytes: number }[] = [];
  /** ACP's outputByteLimit, as applied (at most the server's per-terminal limit). */
  readonly outputByteLimit: number | undefined;
  /** Set when the requested outputByteLimit was over the server's limit. */
  readonly outputByteLimitClamped: Clamped | undefined;
  #child: ChildProcess;
  #output: StreamOutput;
  #answerBytes: number;
  #codec: ChildCodec;
  #stopping: Promise<ExitStatus> | undefined;
  /** Where the output stood when input was last written. */
  #inputOffset = 0;

  constructor(
    private readonly context: LaunchContext,
    private readonly launcher: Launcher,
    child: ChildProcess,
    command: string,
    readonly cwd: string,
    public cols: number,
    public rows: number,
    outputByteLimit: number | undefined,
    limits: OutputLimits,
    codec: ChildCodec,
    private readonly writeTimeoutMs: number,
  ) {
    this.id = context.id;
    this.#child = child;
    this.#codec = codec;
    this.command = shortDisplay(command);
    const applied = outputByteLimit === undefined
      ? undefined
      : clampSize(outputByteLimit, limits.maxBytes);
    this.outputByteLimit = applied?.value;
    this.outputByteLimitClamped = applied?.clamped;
    this.#answerBytes = limits.answerBytes;
    this.#output = new StreamOutput({
      maxLines: limits.maxLines,
      maxBytes: limits.maxBytes,
      budget: limits.budget,
      decoder: codec.decoder(),
      columns: cols,
    });
    this.recording = new Recording({
      cols,
      rows,
      maxBytes: limits.recordingMaxBytes,
      command: this.command,
      title: `${this.id}: ${this.command}`,
      startedAt: this.created,
    });
    this.takeover = new Takeover(
      this,
      (event, via) => launcher.control({ ...context, via }, event),
    );
    child.onData((raw) => {
      this.lastActivity = Date.now();
      this.#arrived(this.#output.append(raw, this.lastActivity));
    });
    this.exited = child.exited.then((status) => {
      this.#arrived(this.#output.finish());
      this.recording.end();
      this.exitStatus = status;
      this.events.emit({ type: "exit", status });
      log.info("terminal exited", { terminalId: this.id, ...status });
      return status;
    });
  }

  /** Output as kept (decoded, UTF-8) goes to the recording and the listeners. */
  #arrived(data: Uint8Array): void {
    if (data.length === 0) return;
    this.recording.output(data);
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
    this.#inputOffset = this.#output.end;
    this.touch();
    this.inputs.push({ time: this.lastActivity, bytes: bytes.length });
    if (this.inputs.length > INPUT_HISTORY) this.inputs.shift();
    await inputFailure(this.#child.write(bytes, this.writeTimeoutMs));
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
    this.#output.resize(cols, rows);
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

  /** Reads output by line (see lines.ts), within the answer size limit; counts as activity. */
  read(options: Omit<LineReadOptions, "final" | "budget">): TerminalRead {
    this.touch();
    const read = this.#output.readLines({
      ...options,
      final: !this.running,
      budget: this.#answerBytes,
    });
    return {
      output: read.output,
      totalLines: read.totalLines,
      nextReadFrom: read.nextReadFrom,
      hasMore: read.hasMore,
      truncated: read.truncated,
      stats: {
        totalBytes: this.#output.end,
        estimatedTokens: estimateTokens(read.output.length),
        linesShown: read.linesShown,
        linesOmitted: read.linesOmitted,
      },
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
    };
  }

  /**
   * ACP terminal/output: the output so far (cleaned unless raw), its newest `outputByteLimit`
   * bytes if the terminal has one (cut forward to a character boundary), within the answer
   * size limit.
   */
  acpOutput(raw: boolean): { output: string; truncated: boolean } {
    this.touch();
    const read = this.#output.readNewest(0, {
      raw,
      final: !this.running,
      budget: this.#answerBytes,
    });
    let output = read.text;
    let cut = read.start > 0;
    const limit = this.outputByteLimit;
    if (limit !== undefined) {
      const bytes = encoder.encode(output);
      if (bytes.length > limit) {
        output = new TextDecoder().decode(
          bytes.subarray(boundaryAtOrAfter(bytes, bytes.length - limit)),
        );
        cut = true;
      }
    }
    return { output, truncated: cut };
  }

  /**
   * The output since a wait began (offset `from`), cleaned, as a wait answers it: the newest
   * 64 KiB, a marker in front saying what was left out.
   */
  outputSince(from: number): WaitOutput {
    const output = this.#output;
    const read = output.readNewest(from, {
      final: !this.running,
      budget: Math.min(this.#answerBytes, WAIT_OUTPUT_BYTES) - 200,
    });
    const first = Math.max(from, output.start);
    if (read.start <= first) return { output: read.text, truncated: read.dropped > 0 };
    const marker = omissionMarker({
      bytes: read.start - first,
      hint: `read them with since=${output.lineAt(first)}`,
    });
    return { output: marker + read.text, truncated: true };
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
    return this.#output.settledLines(!this.running);
  }

  /** How much output there is, and how much is kept. */
  stats(): TerminalStats {
    const output = this.#output;
    return {
      terminalId: this.id,
      totalLines: output.lineCount,
      totalBytes: output.end,
      estimatedTokens: estimateTokens(output.end - output.start),
      bufferSize: output.lineCount - output.firstLine,
      oldestLine: output.firstLine,
      newestLine: Math.max(0, output.lineCount - 1),
      isActive: this.running,
    };
  }

  /** What a person would see now, within the answer size limit (the top rows first). */
  async screen(): Promise<ScreenRead> {
    this.touch();
    const view = await this.#output.screen(this.cols, this.rows).render();
    const budget = this.#answerBytes - 200;
    const cut = cutHead(view.text, budget);
    if (cut === view.text.length) return { ...view, truncated: false };
    const shown = view.text.slice(0, view.text.lastIndexOf("\n", cut - 1) + 1);
    const rows = view.text.split("\n").length - shown.split("\n").length;
    const marker = omissionMarker({
      lines: rows,
      bytes: utf8Length(view.text) - utf8Length(shown),
      hint: "over the answer size limit",
    });
    return { ...view, text: shown + marker, truncated: true };
  }

  /**
   * Starts watching: a snapshot of the screen (the emulator catches up first, within its time
   * budget) at an exact output offset; once {@link Watch.start} is called, `listener` gets the
   * output kept after that offset (and the resizes in it, in order), then every event as it
   * happens: nothing missed, nothing twice. (A viewer is not the agent: watching is not
   * activity that keeps an idle terminal.)
   */
  watch(listener: (event: TerminalEvent) => void): Promise<Watch> {
    const output = this.#output;
    return output.screen(this.cols, this.rows).snapshot((snapshot) => {
      // Called at the moment of the snapshot: what is kept after it and what comes next meet here.
      const held: TerminalEvent[] = [];
      let at = snapshot.offset;
      const keptUntil = (end: number) => {
        for (; at < end; at += WATCH_PIECE_BYTES) {
          const piece = output.readBytes(at, Math.min(end, at + WATCH_PIECE_BYTES));
          if (piece.bytes.length > 0) held.push({ type: "output", data: piece.bytes });
        }
        at = end;
      };
      for (const { offset, cols, rows } of snapshot.resizes) {
        keptUntil(offset);
        held.push({ type: "resize", cols, rows });
      }
      keptUntil(output.end);
      let waiting: TerminalEvent[] | undefined = held;
      const stop = this.events.add((event) => waiting ? waiting.push(event) : listener(event));
      return {
        snapshot: snapshot.data,
        cols: snapshot.cols,
        rows: snapshot.rows,
        offset: snapshot.offset,
        start() {
          const events = waiting ?? [];
          waiting = undefined;
          for (const event of events) listener(event);
        },
        stop() {
          stop();
          waiting = undefined;
        },
      };
    });
  }

  /** Waits for the first of the request's conditions. */
  wait(request: WaitRequest): Promise<WaitOutcome> {
    this.touch();
    const from = request.since === undefined
      ? this.#inputOffset
      : this.#output.lineStart(request.since);
    const scanner = request.pattern ? this.#output.scan(request.pattern, from) : undefined;
    return new Promise((resolve) => {
      let done = false;
      let checkTimer: ReturnType<typeof setTimeout> | undefined;
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      const timers: ReturnType<typeof setTimeout>[] = [];
      let stopListening = () => {};
      const finish = (condition: WaitOutcome["condition"], match?: PatternMatch) => {
        if (done) return;
        done = true;
        for (const timer of [...timers, checkTimer, idleTimer]) clearTimeout(timer);
        scanner?.cancel();
        stopListening();
        request.signal?.removeEventListener("abort", onAbort);
        this.touch();
        resolve({ condition, from, match, skippedBytes: scanner?.skipped ?? 0 });
      };
      /** Matches the new output; true when it matched (and the wait is over). */
      const check = async (final: boolean): Promise<boolean> => {
        if (!scanner || done) return false;
        const match = await scanner.scan(final);
        if (match) finish("pattern", match);
        return match !== undefined;
      };
      const armIdle = () => {
        if (request.idleMs === undefined) return;
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => finish("idle"), request.idleMs);
      };
      const onExit = () => check(true).then((matched) => matched || finish("exit"));
      const onAbort = () => finish("cancelled");
      if (request.signal?.aborted) return finish("cancelled");
      request.signal?.addEventListener("abort", onAbort, { once: true });
      timers.push(setTimeout(() => finish("timeout"), request.timeoutMs));
      armIdle();
      stopListening = this.events.add((event) => {
        if (event.type === "exit") {
          onExit();
          return;
        }
        if (event.type !== "output") return;
        armIdle();
        checkTimer ??= setTimeout(() => {
          checkTimer = undefined;
          check(false);
        }, CHECK_INTERVAL_MS);
      });
      // What arrived before the wait counts too; an exit before it ends it at once.
      if (!this.running) onExit();
      else check(false);
    });
  }

  /** Frees the screen and the kept output; the program must have ended. */
  dispose(): void {
    this.#output.release();
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

export { describeExit };

/** About four characters of English per token. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
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
  readonly writeTimeoutMs: number;
  readonly launcher: Launcher;
  readonly answerBytes: number;
  readonly recordingMaxBytes: number;
  readonly #budget: OutputBudget;

  constructor(options: TerminalServiceOptions = {}) {
    this.maxTerminals = options.maxTerminals ?? 64;
    this.idleMs = options.idleMs ?? 24 * 60 * 60 * 1000;
    this.maxLines = options.maxLines ?? 10_000;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.launcher = options.launcher ?? new Launcher();
    this.answerBytes = options.answerBytes ?? 2 * 1024 * 1024;
    this.#budget = options.budget ?? new OutputBudget(256 * 1024 * 1024);
    this.recordingMaxBytes = options.recordingMaxBytes ?? DEFAULT_RECORDING_MAX_BYTES;
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
        maxBytes: this.maxBytes,
        answerBytes: this.answerBytes,
        budget: this.#budget,
        recordingMaxBytes: this.recordingMaxBytes,
      },
      new ChildCodec(child, encoding, invocation.codePage),
      this.writeTimeoutMs,
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
