/**
 * One-shot commands (the winterm `run_command` family): start, capture both streams, time out,
 * take input, terminate, and keep finished commands queryable for a while.
 *
 * @example
 * ```ts
 * import { CommandService } from "./commands.ts";
 * const service = new CommandService();
 * const command = service.run({ command: "echo hi", shellType: "default" });
 * await command.done;
 * command.stdout.readText().text; // "hi\r\n" (PTY mode)
 * await service.shutdown();
 * ```
 * @module
 */
import { log } from "../../log.ts";
import type { ChildProcess, ExitStatus, StreamName } from "../../pty/mod.ts";
import { HOST_FLAVOR, WRITE_TIMEOUT_MS } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { EngineError } from "../errors.ts";
import { childEnvironment } from "../launching/environment.ts";
import { Listeners } from "../events.ts";
import {
  inputFailure,
  type LaunchContext,
  Launcher,
  resolveDirectory,
} from "../launching/launcher.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import { DEFAULT_MAX_BYTES, OutputBuffer } from "../output/buffer.ts";
import { checkTerminalEncoding, ChildCodec, requestedEncoding } from "./encoding.ts";
import { buildInvocation, type Invocation, type InvocationRequest } from "../launching/shells.ts";

/** What {@link CommandService.run} needs. */
export interface RunRequest extends InvocationRequest {
  /** Seconds before the command is stopped. Default 30. */
  timeoutSeconds?: number;
  /** Working directory; relative paths resolve against the server's. */
  cwd?: string;
  /** PTY (default) or pipes (stdout and stderr kept apart). */
  usePty?: boolean;
  /** Bytes kept per stream. Default 10 MiB. */
  maxBufferSize?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * How the program's bytes are read and its input written (`utf-8`, `oem`, `ansi`, a code
   * page or a label); default: detected (see services/encoding.ts). A cmd or PowerShell shell
   * is switched to it.
   */
  encoding?: string;
  /** The front end that asked (for the audit log). */
  via?: FrontEnd;
}

/** Where a command is in its life. */
export type CommandStatus = "running" | "completed" | "terminated";

/** Something that happened to a command. */
export type CommandEvent =
  | { type: "output"; stream: StreamName; data: Uint8Array }
  | { type: "exit" };

/** Limits and timings of a {@link CommandService}. */
export interface CommandServiceOptions {
  /** Finished commands kept for queries. Default 500. */
  retainCount?: number;
  /** How long a finished command stays queryable, in ms. Default 1 hour. */
  retainMs?: number;
  /** Commands running at once. Default 256. */
  maxRunning?: number;
  /** Time between SIGTERM and SIGKILL when stopping, in ms. Default 2000. */
  killGraceMs?: number;
  /** How long a write may wait for the command to take its input, in ms. Default 10,000. */
  writeTimeoutMs?: number;
  /** Starts processes (policy, audit). Default: no policy, no audit. */
  launcher?: Launcher;
}

/** Terminal size for commands: wide, so that tools do not wrap or truncate their lines. */
const COMMAND_COLS = 160, COMMAND_ROWS = 40;
/** Pagers would wait for a key no one presses. */
const COMMAND_ENV = { PAGER: "cat", GIT_PAGER: "cat" };
const TERMINAL_ENV = { TERM: "xterm-256color" };

/** A command and everything known about it. */
export class Command {
  readonly token: string;
  /** When it started, ms since the epoch. */
  readonly startedAt: number = Date.now();
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  readonly events: Listeners<CommandEvent> = new Listeners();
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
  #terminatedByUser = false;
  #stopping: Promise<unknown> | undefined;
  #codec: ChildCodec;

  constructor(
    private readonly context: LaunchContext,
    child: ChildProcess,
    readonly invocation: Invocation,
    readonly cwd: string,
    maxBufferSize: number,
    timeoutSeconds: number,
    private readonly killGraceMs: number,
    private readonly writeTimeoutMs: number,
    private readonly launcher: Launcher,
    codec: ChildCodec,
  ) {
    this.token = context.id;
    this.#child = child;
    this.#codec = codec;
    this.stdout = new OutputBuffer({ maxBytes: maxBufferSize });
    this.stderr = new OutputBuffer({ maxBytes: maxBufferSize });
    // Output is kept as UTF-8: code pages (Windows pipes) are converted on arrival.
    child.onData((raw, stream) => this.#output(codec.decode(raw, stream), stream));
    this.#timer = setTimeout(() => this.#onTimeout(), timeoutSeconds * 1000);
    this.done = child.exited.then((status) => this.#onExit(status));
  }

  #output(data: Uint8Array, stream: StreamName): void {
    if (data.length === 0) return;
    (stream === "stdout" ? this.stdout : this.stderr).append(data);
    this.events.emit({ type: "output", stream, data });
  }

  /** The child's process id. */
  get pid(): number {
    return this.#child.pid;
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

  /** Writes text to the command's input, with Enter after it if asked. */
  async write(text: string, appendNewline: boolean, via: FrontEnd = "internal"): Promise<void> {
    this.#assertRunning();
    const newline = this.mode === "pty" ? "\r" : HOST_FLAVOR === "windows" ? "\r\n" : "\n";
    const input = appendNewline ? text + newline : text;
    const bytes = this.#codec.encode(input, "input");
    this.launcher.input({ ...this.context, via }, input);
    await inputFailure(this.#child.write(bytes, this.writeTimeoutMs));
  }

  /** Ends the command's input (EOF). */
  async closeInput(): Promise<void> {
    this.#assertRunning();
    await inputFailure(this.#child.closeInput());
  }

  /** Stops the command and its whole process tree; status becomes `terminated`. */
  async terminate(via: FrontEnd = "internal"): Promise<void> {
    this.#assertRunning();
    this.#terminatedByUser = true;
    this.launcher.kill({ ...this.context, via }, "SIGTERM");
    await this.stop();
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
    for (const [stream, rest] of this.#codec.end()) this.#output(rest, stream);
    clearTimeout(this.#timer);
    this.#elapsed = performance.now() - this.#startTime;
    this.endedAt = Date.now();
    this.signal = status.signal;
    if (this.#terminatedByUser) {
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
  readonly retainCount: number;
  readonly retainMs: number;
  readonly maxRunning: number;
  readonly killGraceMs: number;
  readonly writeTimeoutMs: number;
  readonly launcher: Launcher;

  constructor(options: CommandServiceOptions = {}) {
    this.retainCount = options.retainCount ?? 500;
    this.retainMs = options.retainMs ?? 60 * 60 * 1000;
    this.maxRunning = options.maxRunning ?? 256;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.launcher = options.launcher ?? new Launcher();
  }

  /** Starts a command. Throws {@link EngineError} naming the input at fault. */
  run(request: RunRequest): Command {
    this.#prune();
    const running = [...this.#commands.values()].filter((command) => command.running).length;
    if (running >= this.maxRunning) {
      throw new EngineError(
        "limit",
        `${running} commands are running, the most allowed; wait for some or terminate them`,
      );
    }
    const cwd = resolveDirectory(request.cwd, "working_directory");
    const usePty = request.usePty ?? true;
    const env = childEnvironment(
      request.env,
      usePty ? { ...COMMAND_ENV, ...TERMINAL_ENV } : COMMAND_ENV,
    );
    const encoding = requestedEncoding(request.encoding);
    const invocation = buildInvocation({ ...request, codePage: encoding?.codePage }, { cwd, env });
    checkTerminalEncoding(encoding, usePty, invocation.codePage);
    const context: LaunchContext = {
      via: request.via ?? "internal",
      kind: "command",
      id: crypto.randomUUID(),
    };
    const child = this.launcher.launch(
      invocation,
      {
        cwd,
        env,
        envOverrides: request.env ?? {},
        mode: usePty ? "pty" : "pipe",
        cols: COMMAND_COLS,
        rows: COMMAND_ROWS,
      },
      {
        program: request.executable ? "executable" : "command",
        cwd: "working_directory",
        env: "env",
      },
      context,
    );
    const command = new Command(
      context,
      child,
      invocation,
      cwd,
      request.maxBufferSize ?? DEFAULT_MAX_BYTES,
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
      command: invocation.display,
    });
    return command;
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

  /** Stops every running command (grace `graceMs`) and waits until they have ended. */
  async shutdown(graceMs: number = this.killGraceMs): Promise<void> {
    await Promise.all(
      [...this.#commands.values()].filter((c) => c.running).map((c) => c.stop(graceMs)),
    );
  }

  /** Drops finished commands past their age or beyond the count kept. */
  #prune(): void {
    // Runs on every query, so: one pass for expiry, and a sort only when too many are kept.
    const oldest = Date.now() - this.retainMs;
    const finished: Command[] = [];
    for (const command of this.#commands.values()) {
      if (command.running) continue;
      if (command.endedAt! < oldest) this.#commands.delete(command.token);
      else finished.push(command);
    }
    if (finished.length <= this.retainCount) return;
    finished.sort((a, b) => a.endedAt! - b.endedAt!);
    for (const command of finished.slice(0, finished.length - this.retainCount)) {
      this.#commands.delete(command.token);
    }
  }
}
