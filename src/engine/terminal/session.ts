/**
 * A terminal's session core, what every collaborator of a Terminal shares: the child on
 * its PTY, its output (a ring of numbered lines, the screen, the shell's marks), its recording,
 * its events, its size, signals and stop. Typing, waits, runs and reads (typing.ts, waits.ts,
 * runs.ts, reads.ts) each keep their own state and act through it.
 *
 * @module
 */
import { log } from "../../log.ts";
import {
  type ChildProcess,
  describeExit,
  type ExitStatus,
  type SignalName,
} from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import type { LaunchContext, Launcher } from "../launching/launcher.ts";
import { EngineError } from "../errors.ts";
import { Listeners } from "../events.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import type { OutputBudget } from "../output/budget.ts";
import { MarkFilter } from "../output/marks.ts";
import { Recording } from "../output/recording.ts";
import { StreamOutput } from "../output/stream.ts";
import type { SandboxInfo } from "../launching/sandbox.ts";
import type { ChildCodec } from "../encoding.ts";
import { shortDisplay } from "../limits.ts";
import { ShellTracker } from "./shell_state.ts";

/** Something that happened to a terminal. */
export type TerminalEvent =
  | { type: "output"; data: Uint8Array }
  | { type: "state" }
  | { type: "resize"; cols: number; rows: number }
  | { type: "exit"; status: ExitStatus };

/** How a terminal keeps its output. */
export interface OutputLimits {
  maxLines: number;
  maxBytes: number;
  budget: OutputBudget;
  recordingMaxBytes: number;
}

/** What the shell's integration says about it (see launching/integration/). */
export interface IntegrationTraits {
  nonce: string;
  /** What `run` types for a command (see ShellIntegration.runWrapping). */
  runWrapping?: { prefix: string; exitQuery?: string };
  marksOutputStart?: boolean;
  /** The shell draws a new prompt when Ctrl+C reaches its line editor (see ShellIntegration). */
  promptOnInterrupt?: boolean;
  /** The shell drops a run's line it would read on from itself (see ShellIntegration). */
  dropsContinuedRun?: boolean;
}

/** What a session is made of (see TerminalService.create). */
export interface SessionParts {
  context: LaunchContext;
  launcher: Launcher;
  child: ChildProcess;
  /** What runs, as a command line. */
  command: string;
  cwd: string;
  cols: number;
  rows: number;
  limits: OutputLimits;
  codec: ChildCodec;
  /** How long input may wait for the program to take it (then writing it fails). */
  writeTimeoutMs: number;
  integration?: IntegrationTraits;
}

/** See the module documentation. */
export class Session {
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
  /** Settles when the program has exited and its output is complete. */
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | null = null;
  readonly context: LaunchContext;
  readonly launcher: Launcher;
  readonly child: ChildProcess;
  readonly output: StreamOutput;
  readonly codec: ChildCodec;
  readonly cwd: string;
  readonly writeTimeoutMs: number;
  cols: number;
  rows: number;
  /** The shell's state from its integration marks (shells started with it). */
  readonly shell: ShellTracker | undefined;
  /** Called with the offset of each prompt's end, before the shell's state takes it. */
  onPromptEnd: (offset: number) => void = () => {};
  #stopping: Promise<ExitStatus> | undefined;
  /** The nonce the shell's marks carry (shells started with integration). */
  readonly #nonce: string | undefined;

  constructor(parts: SessionParts) {
    const { context, child, limits, integration } = parts;
    this.id = context.id;
    this.context = context;
    this.launcher = parts.launcher;
    this.child = child;
    this.codec = parts.codec;
    this.cwd = parts.cwd;
    this.cols = parts.cols;
    this.rows = parts.rows;
    this.writeTimeoutMs = parts.writeTimeoutMs;
    this.#nonce = integration?.nonce;
    this.command = shortDisplay(parts.command);
    const shell = integration
      ? new ShellTracker((offset) => this.#lineEnd(offset), integration.marksOutputStart)
      : undefined;
    this.shell = shell;
    this.output = new StreamOutput({
      maxLines: limits.maxLines,
      maxBytes: limits.maxBytes,
      budget: limits.budget,
      decoder: parts.codec.decoder(),
      columns: parts.cols,
      marks: shell && {
        filter: new MarkFilter(integration!.nonce),
        onMark: (mark, offset) => {
          if (mark.kind === "prompt-end") this.onPromptEnd(offset);
          if (shell.onMark(mark, offset)) this.events.emit({ type: "state" });
        },
      },
    });
    this.recording = new Recording({
      cols: parts.cols,
      rows: parts.rows,
      maxBytes: limits.recordingMaxBytes,
      command: this.command,
      title: `${this.id}: ${this.command}`,
      startedAt: this.created,
      budget: limits.budget,
    });
    child.onData((raw) => {
      this.lastActivity = Date.now();
      this.#arrived(this.output.append(raw, this.lastActivity));
    });
    this.exited = child.exited.then((status) => {
      this.#arrived(this.output.finish());
      this.recording.end();
      this.exitStatus = status;
      this.events.emit({ type: "exit", status });
      log.info("terminal exited", { terminalId: this.id, ...status });
      return status;
    });
  }

  /**
   * Output as kept (decoded, UTF-8) goes to the recording and the listeners. The bytes may be
   * lent (see DataListener): the recording copies what it keeps, listeners get a copy.
   */
  #arrived(data: Uint8Array): void {
    if (data.length === 0) return;
    this.recording.output(data);
    if (this.events.size > 0) this.events.emit({ type: "output", data: data.slice() });
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  /** Marks the terminal as used (reads count: an agent watching a server is using it). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** The sandbox it runs in, if any. */
  get sandbox(): SandboxInfo | undefined {
    return this.launcher.sandboxOf(this.child);
  }

  /** Resizes the terminal (and the screen view). */
  resize(cols: number, rows: number): void {
    this.assertRunning();
    try {
      this.child.resize(cols, rows);
    } catch (error) {
      throw new EngineError("failed", (error as Error).message);
    }
    this.cols = cols;
    this.rows = rows;
    this.output.resize(cols, rows);
    this.recording.resize(cols, rows);
    this.events.emit({ type: "resize", cols, rows });
  }

  /** Sends a signal to the program's whole process tree. */
  signal(name: SignalName, via: FrontEnd = "internal"): void {
    this.assertRunning();
    this.launcher.kill({ ...this.context, via }, name);
    this.child.kill(name);
  }

  /** Stops the program and its tree (SIGHUP, as a closing terminal sends; SIGKILL after the grace period). */
  stop(graceMs: number, via: FrontEnd = "internal"): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    if (!this.#stopping) this.launcher.kill({ ...this.context, via }, "SIGHUP");
    this.#stopping ??= stopProcess(this.child, graceMs, "SIGHUP");
    return this.#stopping;
  }

  /**
   * The shell has replaced itself (exec) with a program started without the terminal's nonce,
   * which sends no marks: known on Linux (see ChildProcess.startedWith), never assumed.
   */
  integrationGone(): boolean {
    return this.#nonce !== undefined && this.child.startedWith(this.#nonce) === false;
  }

  /** After the first line feed from `offset` on (the echo of a typed line), if one came. */
  afterEcho(offset: number): number {
    return this.#lineEnd(offset) ?? offset;
  }

  /**
   * The offset after the first line feed at or after `offset`, if one came. An offset the output
   * no longer keeps is its own answer: the line feed went with it, and the oldest line kept, read
   * as the start of a command's output, hid that anything went (a run of `seq 1 3000000` in sh
   * answered from 2990003 on, `truncated: false`).
   */
  #lineEnd(offset: number): number | undefined {
    if (offset < this.output.start) return offset;
    const next = this.output.lineStart(this.output.lineAt(offset) + 1);
    return next > offset && next <= this.output.end ? next : undefined;
  }

  /**
   * Resolves once `done` holds (looked at on each change of state, output, or exit), or after
   * `ms`.
   */
  until(done: () => boolean, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        stop();
        signal?.removeEventListener("abort", finish);
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      const stop = this.events.add((event) => {
        if (event.type === "exit" || (event.type !== "resize" && done())) finish();
      });
      signal?.addEventListener("abort", finish, { once: true });
      if (done() || signal?.aborted || !this.running) finish();
    });
  }

  /** Frees the screen and the kept output; the program must have ended. */
  dispose(): void {
    this.output.release();
    this.recording.release();
  }

  assertRunning(): void {
    if (!this.running) {
      throw new EngineError(
        "inactive",
        `terminal ${this.id} has exited (${describeExit(this.exitStatus!)})`,
      );
    }
  }
}
