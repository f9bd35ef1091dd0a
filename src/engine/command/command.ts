/**
 * A one-shot command (the winterm `run_command` family): its child, captured on both streams
 * (reads.ts), its time limit, its input, its end.
 *
 * @module
 */
import { log } from "../../log.ts";
import type { ChildProcess, ExitStatus, StreamName } from "../../pty/mod.ts";
import { HOST_FLAVOR } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { EngineError } from "../errors.ts";
import { Listeners } from "../events.ts";
import { inputFailure, type LaunchContext, type Launcher } from "../launching/launcher.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import type { Launch } from "../launching/request.ts";
import type { SandboxInfo } from "../launching/sandbox.ts";
import type { Steps } from "../slices.ts";
import type { ChildCodec } from "../encoding.ts";
import { shortDisplay } from "../limits.ts";
import { enterOn, typedInput, type TypingRequest } from "../terminal/typing.ts";
import {
  type CommandEvent,
  CommandOutput,
  type CommandRead,
  type CommandReadRequest,
  type OutputLimits,
} from "./reads.ts";

export type {
  CommandEvent,
  CommandGrep,
  CommandRead,
  CommandReadRequest,
  CommandStreamRead,
  OutputLimits,
} from "./reads.ts";

/** Where a command is in its life. */
export type CommandStatus = "running" | "completed" | "terminated";

/** Terminal size for commands: wide, so that tools do not wrap or truncate their lines. */
export const COMMAND_COLS = 160, COMMAND_ROWS = 40;

/** A command and everything known about it. */
export class Command {
  readonly token: string;
  /** When it started, ms since the epoch. */
  readonly startedAt: number = Date.now();
  readonly events: Listeners<CommandEvent> = new Listeners();
  /** What runs, as a command line (shortened past 1000 characters). */
  readonly display: string;
  /** Its working directory, resolved. */
  readonly cwd: string;
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
  /**
   * Why the program did not take all of its `stdin` (it ended first, or did not read it within
   * its time), if it did not.
   */
  stdinUntaken: string | undefined;
  #child: ChildProcess;
  #startTime = performance.now();
  #elapsed: number | undefined;
  #timer: ReturnType<typeof setTimeout>;
  #terminated = false;
  #stopping: Promise<unknown> | undefined;
  readonly #output: CommandOutput;
  readonly #codec: ChildCodec;

  constructor(
    private readonly context: LaunchContext,
    child: ChildProcess,
    launch: Launch,
    limits: OutputLimits,
    timeoutSeconds: number,
    private readonly killGraceMs: number,
    private readonly writeTimeoutMs: number,
    private readonly launcher: Launcher,
    codec: ChildCodec,
    /** Its stdin (see RunRequest.stdin), encoded: written at once, then end of input. */
    stdin?: { text: string; bytes: Uint8Array },
  ) {
    this.token = context.id;
    this.#codec = codec;
    this.#child = child;
    this.display = shortDisplay(launch.invocation.display);
    this.cwd = launch.cwd;
    this.bufferSize = limits.bufferSize;
    // Output is kept as UTF-8: code pages (Windows pipes) are converted on arrival.
    // On a terminal, output is cleaned as that terminal shows it; pipes have no width.
    const columns = child.mode === "pty" ? COMMAND_COLS : undefined;
    const output = this.#output = new CommandOutput(this, limits, codec, columns);
    child.onData((raw, stream) => {
      const data = output.streams[stream].append(raw);
      // Lent bytes (see DataListener): listeners, which may keep them, get a copy.
      if (data.length > 0 && this.events.size > 0) {
        this.events.emit({ type: "output", stream, data: data.slice() });
      }
    });
    this.#timer = setTimeout(() => this.#onTimeout(), timeoutSeconds * 1000);
    this.done = child.exited.then((status) => this.#onExit(status));
    if (stdin) this.#writeStdin(stdin, timeoutSeconds * 1000);
  }

  /**
   * Writes the stdin, then ends the input, for as long as the command may run (the program
   * reads when it will). A program that ends without taking it all did not fail the call:
   * {@link stdinUntaken} says so.
   */
  #writeStdin(stdin: { text: string; bytes: Uint8Array }, timeoutMs: number): void {
    this.launcher.input(this.context, stdin.text);
    // Queued now: input typed later goes after it (a terminal takes more; a pipe is closed).
    this.#child.writeLast(stdin.bytes, timeoutMs).catch((error: Error) =>
      this.stdinUntaken = error.message
    );
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
    return this.#output.read(request);
  }

  /** {@link read} as steps (see {@link CommandOutput.readSteps}). */
  readSteps(request: CommandReadRequest): Steps<CommandRead> {
    return this.#output.readSteps(request);
  }

  /** Follows the output as cleaned text (see {@link CommandOutput.follow}). */
  follow(onText: (stream: StreamName, text: string) => void, onExit: () => void): () => void {
    return this.#output.follow(onText, onExit);
  }

  /** The output kept so far, then every event (see {@link CommandOutput.watch}). */
  watch(listener: (event: CommandEvent) => void): { kept: Uint8Array[]; stop: () => void } {
    return this.#output.watch(listener);
  }

  /** Gives the kept output back to the budget (the command is being forgotten). */
  release(): void {
    this.#output.release();
  }

  /**
   * Types into the command's input by the one Enter rule (see terminal/typing.ts; Enter is the
   * key on a terminal, the host's line end on a pipe); returns the bytes written (by the
   * command's codec). Writes reach the program in the order they were asked for, whatever the
   * time their encoding takes (see ChildCodec.encodeNow).
   */
  async type(request: TypingRequest, via: FrontEnd = "internal"): Promise<number> {
    this.#assertRunning();
    const input = typedInput(request, enterOn(this.mode, HOST_FLAVOR));
    const queued = this.#inputOrder.then(async () => {
      const bytes = await this.#codec.encodeNow(input, "input", this.#child);
      this.launcher.input({ ...this.context, via }, input);
      return { written: this.#child.write(bytes, this.writeTimeoutMs), length: bytes.length };
    });
    this.#inputOrder = queued.then(() => undefined, () => undefined);
    const { written, length } = await queued;
    await inputFailure(written);
    return length;
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
      const data = this.#output.streams[stream].finish();
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
