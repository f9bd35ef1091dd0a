/**
 * The command service: starts commands (within the limit on how many run at once), finds them,
 * and keeps finished ones queryable for a while (within the output budget).
 *
 * @module
 */
import { log } from "../../log.ts";
import { WRITE_TIMEOUT_MS } from "../../pty/mod.ts";
import { EngineError } from "../errors.ts";
import { type LaunchContext, Launcher } from "../launching/launcher.ts";
import type { Caller, Launch, RunRequest } from "../launching/request.ts";
import { DEFAULT_MAX_BYTES } from "../output/buffer.ts";
import { OutputBudget } from "../output/budget.ts";
import { buildInvocation } from "../launching/shells.ts";
import { prepareEncodings } from "../encoding.ts";
import { resolvePlace, SlotTable, startChild } from "../start.ts";
import { type Clamped, clampSize } from "../limits.ts";
import { Command, COMMAND_COLS, COMMAND_ROWS } from "./command.ts";
import { checkReadRequest, type CommandReadRequest } from "./reads.ts";
import { stdinBytes } from "./stdin.ts";

export type { RunRequest } from "../launching/request.ts";

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

/** Starts commands and keeps them. */
export class CommandService {
  #commands = new Map<string, Command>();
  /** The limit on commands running, those being started counted (see SlotTable). */
  readonly #slots: SlotTable;
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
    this.#slots = new SlotTable(
      this.maxRunning,
      () => [...this.#commands.values()].filter((command) => command.running).length,
      (running) =>
        new EngineError(
          "limit",
          `${running} commands are running, the most allowed (WINTERM_MAX_COMMANDS)`,
          { hint: { code: "end-some" } },
        ),
      () => this.launcher.checkOpen(),
    );
    // Past the budget, finished commands go first, oldest first.
    this.#budget.addReliever(() => this.#evictOldestFinished());
  }

  /**
   * Starts a command. Throws {@link EngineError} naming the input at fault. A `maxBufferSize`
   * over the service's is lowered to it (`bufferClamped` says so).
   */
  async run(
    request: RunRequest,
    caller: Caller = {},
  ): Promise<{ command: Command; bufferClamped?: Clamped }> {
    // Before any check: from there on to the count of those starting nothing waits, so no
    // other start can come between a limit checked and the command counted.
    await prepareEncodings(request.encoding);
    this.#prune();
    return await this.#slots.take(() => this.#run(request, caller));
  }

  async #run(
    request: RunRequest,
    caller: Caller,
  ): Promise<{ command: Command; bufferClamped?: Clamped }> {
    const context: LaunchContext = {
      via: caller.via ?? "internal",
      kind: "command",
      id: crypto.randomUUID(),
    };
    const launch = commandLaunch(request);
    let stdin: Uint8Array | undefined;
    const { child, codec } = await startChild(
      this.launcher,
      launch,
      context,
      caller.signal,
      (codec) => {
        if (request.stdin !== undefined) stdin = stdinBytes(request.stdin, launch.mode, codec);
      },
    );
    const bufferSize = request.maxBufferSize === undefined
      ? { value: Math.min(DEFAULT_MAX_BYTES, this.maxBufferSize), clamped: undefined }
      : clampSize(request.maxBufferSize, this.maxBufferSize);
    const command = new Command(
      context,
      child,
      launch,
      { bufferSize: bufferSize.value, answerBytes: this.answerBytes, budget: this.#budget },
      request.timeoutSeconds ?? 30,
      this.killGraceMs,
      this.writeTimeoutMs,
      this.launcher,
      codec,
      stdin && { text: request.stdin!, bytes: stdin },
    );
    this.#commands.set(command.token, command);
    log.info("command started", {
      token: command.token,
      pid: child.pid,
      command: command.display,
    });
    return bufferSize.clamped ? { command, bufferClamped: bufferSize.clamped } : { command };
  }

  /**
   * Refuses a read whose parts do not go together (see CommandOutput.read): a command whose
   * answer will be read so is checked before it starts.
   */
  checkRead(request: CommandReadRequest): void {
    checkReadRequest(request);
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

/**
 * What the engine adds to a command's request: its place, what runs there (in the code page
 * asked for), on a terminal of the command's size or on pipes, and the fields that hold the
 * program and its arguments (`executable` and `args`, or the one `command`).
 */
function commandLaunch(request: RunRequest): Launch {
  const mode = request.usePty === false ? "pipe" : "pty";
  const place = resolvePlace(request, mode);
  return {
    request,
    ...place,
    invocation: buildInvocation(request, place, place.encoding?.codePage),
    mode,
    cols: COMMAND_COLS,
    rows: COMMAND_ROWS,
    fields: request.executable
      ? { program: "executable", args: "args" }
      : { program: "command", args: "command" },
  };
}
