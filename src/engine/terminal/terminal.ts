/**
 * A persistent terminal: a shell, REPL, dev server or full-screen program that lives across
 * calls. Its output is kept in a ring of numbered, timestamped lines (line numbers are never
 * reused); it takes text and keys, can be waited on (until output matches, goes idle, or the
 * program exits), rendered as a screen, resized, killed and released (ACP's terminal
 * semantics). Each is recorded (asciicast v2, bounded), can be watched (a snapshot of its
 * screen, then every event after it) and taken over by a viewer (takeover.ts).
 *
 * A {@link Terminal} owns small collaborators, each with its own state, as node-pty's
 * `Terminal` base owns what every platform shares: the session core (session.ts: the child,
 * its output, size, signals, stop), typing (typing.ts: the Enter rule, what was typed), waits
 * (waits.ts), runs through shell integration (runs.ts) and reads (reads.ts). Its methods are
 * theirs, as front ends call them.
 *
 * @module
 */
import type { ExitStatus, SignalName } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import type { Listeners } from "../events.ts";
import type { Recording } from "../output/recording.ts";
import type { ScreenView } from "../output/screen.ts";
import { estimateTokens } from "../output/shape.ts";
import type { SandboxInfo } from "../launching/sandbox.ts";
import { type Steps } from "../slices.ts";
import { type Clamped, clampSize } from "../limits.ts";
import { Takeover } from "./takeover.ts";
import { Session, type SessionParts, type TerminalEvent } from "./session.ts";
import { Typing, type TypingRequest } from "./typing.ts";
import { type WaitOutcome, type WaitRequest, Waits } from "./waits.ts";
import { type RunOptions, type RunOutcome, Runs } from "./runs.ts";
import {
  Reads,
  type ScreenRead,
  type TerminalRead,
  type TerminalReadRequest,
  type TerminalScreenRead,
  type WaitOutput,
  type Watch,
} from "./reads.ts";

export { describeExit } from "../../pty/mod.ts";
export { LINE_MODES, type LineMode } from "../output/lines.ts";
export { estimateTokens } from "../output/shape.ts";
export {
  compilePattern,
  loadPatterns,
  type Pattern,
  type PatternMatch,
} from "../output/patterns.ts";
export type { IntegrationTraits, TerminalEvent } from "./session.ts";
export { enterOn, typedInput, type TypingRequest } from "./typing.ts";
export type { WaitOutcome, WaitRequest } from "./waits.ts";
export type { RunOptions, RunOutcome } from "./runs.ts";
export type {
  ScreenRead,
  TerminalRead,
  TerminalReadRequest,
  TerminalScreenRead,
  WaitOutput,
  Watch,
} from "./reads.ts";

/**
 * What a terminal is doing: `prompt` (its shell waits for a command), `running` (a command or
 * program runs), `input` (the program in the foreground is blocked reading the terminal), or
 * `exited`. Without shell integration a shell at its prompt reads the terminal: `input`.
 */
export type TerminalState = "prompt" | "running" | "input" | "exited";

/** A terminal's state, its shell's working directory and last exit code. */
export interface TerminalActivity {
  state: TerminalState;
  /** While `running` or `input` in a shell: the command, when it started, how long it runs. */
  running: { command: string | null; startedAt: string; durationMs: number } | null;
  /** The shell's working directory as it last reported it, else the one the terminal began in. */
  cwd: string;
  /**
   * The exit code of the shell's last finished command (without a shell's integration: the
   * program's, once it has exited); null when none or unknown.
   */
  lastExitCode: number | null;
  /** `active` once the shell's marks arrive, `starting` until then, `none` without. */
  shellIntegration: "active" | "starting" | "none";
}

/** A terminal's description; times in ISO 8601. */
export interface TerminalInfo extends TerminalActivity {
  terminalId: string;
  pid: number;
  command: string;
  created: string;
  lastActivity: string;
  status: "active" | "exited";
  size: { cols: number; rows: number };
  exitStatus?: ExitStatus;
  /** The sandbox it runs in. */
  sandbox?: SandboxInfo;
}

/** A terminal's output statistics, and what it is doing. */
export interface TerminalStats extends TerminalActivity {
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

/** What a terminal is made of (see TerminalService.create). */
export interface TerminalParts extends SessionParts {
  /** Most bytes of output text in one answer (JSON-escaped). */
  answerBytes: number;
  /** ACP: `terminal_output` returns at most this many of the newest bytes (at most `maxBytes`). */
  outputByteLimit?: number;
}

/** A terminal. */
export class Terminal {
  readonly id: string;
  /** A viewer typing alongside the agent (see takeover.ts). */
  readonly takeover: Takeover;
  /** ACP's outputByteLimit, as applied (at most the server's per-terminal limit). */
  readonly outputByteLimit: number | undefined;
  /** Set when the requested outputByteLimit was over the server's limit. */
  readonly outputByteLimitClamped: Clamped | undefined;
  readonly #session: Session;
  readonly #typing: Typing;
  readonly #waits: Waits;
  readonly #runs: Runs;
  readonly #reads: Reads;

  constructor(parts: TerminalParts) {
    const session = this.#session = new Session(parts);
    this.id = session.id;
    const applied = parts.outputByteLimit === undefined
      ? undefined
      : clampSize(parts.outputByteLimit, parts.limits.maxBytes);
    this.outputByteLimit = applied?.value;
    this.outputByteLimitClamped = applied?.clamped;
    this.#typing = new Typing(session);
    this.#waits = new Waits(session, this.#typing);
    this.#reads = new Reads(session, parts.answerBytes, this.outputByteLimit);
    this.#runs = new Runs(session, this.#typing, this.#waits, this.#reads, parts.integration);
    this.takeover = new Takeover(
      session,
      (event, via) => parts.launcher.control({ ...parts.context, via }, event),
    );
  }

  /** When it was created, ms since the epoch. */
  get created(): number {
    return this.#session.created;
  }

  /** Last input, output or read, ms since the epoch. */
  get lastActivity(): number {
    return this.#session.lastActivity;
  }

  get events(): Listeners<TerminalEvent> {
    return this.#session.events;
  }

  /** What runs, as a command line (shortened past 1000 characters). */
  get command(): string {
    return this.#session.command;
  }

  /** Everything the program wrote and every resize, in asciicast v2 (bounded). */
  get recording(): Recording {
    return this.#session.recording;
  }

  /** Settles when the program has exited and its output is complete. */
  get exited(): Promise<ExitStatus> {
    return this.#session.exited;
  }

  get exitStatus(): ExitStatus | null {
    return this.#session.exitStatus;
  }

  /** When input was written, and how much (content is not kept). */
  get inputs(): readonly { time: number; bytes: number }[] {
    return this.#typing.inputs;
  }

  /** The directory it began in. */
  get cwd(): string {
    return this.#session.cwd;
  }

  get cols(): number {
    return this.#session.cols;
  }

  get rows(): number {
    return this.#session.rows;
  }

  /** How long input may wait for the program to take it (then writing it fails). */
  get writeTimeoutMs(): number {
    return this.#session.writeTimeoutMs;
  }

  get pid(): number {
    return this.#session.child.pid;
  }

  get running(): boolean {
    return this.#session.running;
  }

  /** The sandbox it runs in, if any. */
  get sandbox(): SandboxInfo | undefined {
    return this.#session.sandbox;
  }

  /** Marks the terminal as used (reads count: an agent watching a server is using it). */
  touch(): void {
    this.#session.touch();
  }

  /** Types text, Enter and keys by the one Enter rule (see typing.ts); returns the bytes written. */
  type(request: TypingRequest, via: FrontEnd = "internal"): Promise<number> {
    return this.#typing.type(request, via);
  }

  /**
   * Types text as it is (control characters and escape sequences included). `field`: the
   * request field an error about the text names. Returns the bytes written (by the terminal's
   * codec).
   */
  write(text: string, via: FrontEnd = "internal", field = "input"): Promise<number> {
    return this.#typing.write(text, via, field);
  }

  /** Resizes the terminal (and the screen view). */
  resize(cols: number, rows: number): void {
    this.#session.resize(cols, rows);
  }

  /** Sends a signal to the program's whole process tree. */
  signal(name: SignalName, via: FrontEnd = "internal"): void {
    this.#session.signal(name, via);
  }

  /** Stops the program and its tree (SIGHUP, as a closing terminal sends; SIGKILL after the grace period). */
  stop(graceMs: number, via: FrontEnd = "internal"): Promise<ExitStatus> {
    return this.#session.stop(graceMs, via);
  }

  /** Frees the screen and the kept output; the program must have ended. */
  dispose(): void {
    this.#session.dispose();
  }

  /** See {@link Reads.readSteps}. */
  readSteps(request: TerminalReadRequest): Steps<TerminalRead> {
    return this.#reads.readSteps(request);
  }

  /** See {@link Reads.acpOutput}. */
  acpOutput(raw: boolean): { output: string; truncated: boolean } {
    return this.#reads.acpOutput(raw);
  }

  /** See {@link Reads.acpOutputSteps}. */
  acpOutputSteps(raw: boolean): Steps<{ output: string; truncated: boolean }> {
    return this.#reads.acpOutputSteps(raw);
  }

  /** See {@link Reads.waitOutput}. */
  waitOutput(from: number, maxBytes?: number, to?: number): WaitOutput & { notice?: string } {
    return this.#reads.waitOutput(from, maxBytes, to);
  }

  /** See {@link Reads.waitOutputSteps}. */
  waitOutputSteps(
    from: number,
    maxBytes?: number,
    to?: number,
  ): Steps<WaitOutput & { notice?: string }> {
    return this.#reads.waitOutputSteps(from, maxBytes, to);
  }

  /** The line an incremental read goes on from (a growing last line is read again). */
  get nextReadFrom(): number {
    return this.#reads.nextReadFrom;
  }

  /** See {@link Reads.renderScreen}. */
  renderScreen(): Promise<ScreenView> {
    return this.#reads.renderScreen();
  }

  /** See {@link Reads.screen}. */
  screen(budget?: number): Promise<ScreenRead> {
    return this.#reads.screen(budget);
  }

  /** See {@link Reads.screenRead}. */
  screenRead(
    view: ScreenView,
    request: Omit<TerminalReadRequest, "mode"> = {},
  ): TerminalScreenRead {
    return this.#reads.screenRead(view, request);
  }

  /** See {@link Reads.watch}. */
  watch(listener: (event: TerminalEvent) => void, historyBytes = 0): Promise<Watch> {
    return this.#reads.watch(listener, historyBytes);
  }

  /** See {@link Waits.checkConditions}. */
  checkWaitConditions(request: { prompt?: boolean; input?: boolean }): void {
    this.#waits.checkConditions(request);
  }

  /** Waits for the first of the request's conditions (see waits.ts). */
  wait(request: WaitRequest): Promise<WaitOutcome> {
    return this.#waits.wait(request);
  }

  /** See {@link Runs.run}. */
  run(command: string, timeoutMs: number, options: RunOptions = {}): Promise<RunOutcome> {
    return this.#runs.run(command, timeoutMs, options);
  }

  /** What the terminal is: id, process, command, directory, times, state, size. */
  info(): TerminalInfo {
    const activity = this.activity();
    return {
      terminalId: this.id,
      pid: this.pid,
      command: this.command,
      ...activity,
      created: new Date(this.created).toISOString(),
      lastActivity: new Date(this.lastActivity).toISOString(),
      status: this.running ? "active" : "exited",
      size: { cols: this.cols, rows: this.rows },
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
      ...(this.sandbox ? { sandbox: this.sandbox } : {}),
    };
  }

  /** What the terminal is doing now (see {@link TerminalActivity}). */
  activity(): TerminalActivity {
    const shell = this.#session.shell;
    const state = this.#state();
    const command = shell?.command;
    return {
      state,
      running: (state === "running" || state === "input") && command
        ? {
          command: command.text,
          startedAt: new Date(command.since).toISOString(),
          durationMs: Math.max(0, Date.now() - command.since),
        }
        : null,
      cwd: shell?.cwd ?? this.cwd,
      // A program run without a shell's integration: its own exit code, once it has exited.
      lastExitCode: shell ? shell.lastExitCode ?? null : this.exitStatus?.exitCode ?? null,
      shellIntegration: !shell ? "none" : shell.promptEnd >= 0 ? "active" : "starting",
    };
  }

  #state(): TerminalState {
    if (!this.running) return "exited";
    const shell = this.#session.shell;
    if (shell?.atPrompt) return "prompt";
    // At its continuation prompt the shell reads the rest of the line.
    if (shell?.readsOn) return "input";
    return this.#typing.readingInput() ? "input" : "running";
  }

  /** How much output there is, and how much is kept. */
  stats(): TerminalStats {
    const output = this.#session.output;
    return {
      terminalId: this.id,
      totalLines: output.lineCount,
      totalBytes: output.end,
      estimatedTokens: estimateTokens(output.end - output.start),
      bufferSize: output.lineCount - output.firstLine,
      oldestLine: output.firstLine,
      newestLine: Math.max(0, output.lineCount - 1),
      isActive: this.running,
      ...this.activity(),
    };
  }
}
