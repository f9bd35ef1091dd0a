/**
 * The terminal service: creates terminals (within the limit on how many are open), finds them,
 * releases them, and releases the ones left idle too long.
 *
 * @module
 */
import { log } from "../../log.ts";
import { type ExitStatus, WRITE_TIMEOUT_MS } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { type LaunchContext, Launcher } from "../launching/launcher.ts";
import type { Caller, CreateTerminalRequest, Launch } from "../launching/request.ts";
import { EngineError } from "../errors.ts";
import { OutputBudget } from "../output/budget.ts";
import { buildTerminalInvocation, type ShellKind } from "../launching/shells.ts";
import { shellIntegration, ShellScripts } from "../launching/integration/mod.ts";
import { newNonce } from "../output/marks.ts";
import { prepareEncodings } from "../encoding.ts";
import { resolvePlace, SlotTable, startChild } from "../start.ts";
import { Terminal } from "./terminal.ts";

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
  /** Where shell integration files are kept. Default: a temporary directory. */
  shellScripts?: ShellScripts;
}

/** The default bound of a terminal's recording: 4 MiB. */
export const DEFAULT_RECORDING_MAX_BYTES = 4 * 1024 * 1024;

export type { CreateTerminalRequest } from "../launching/request.ts";

/** Creates, finds and ends terminals. */
export class TerminalService {
  #terminals = new Map<string, Terminal>();
  /** The limit on terminals open, those being started counted (see SlotTable). */
  readonly #slots: SlotTable;
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
  readonly #scripts: ShellScripts;

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
    this.#scripts = options.shellScripts ?? new ShellScripts();
    this.recordingMaxBytes = options.recordingMaxBytes ?? DEFAULT_RECORDING_MAX_BYTES;
    this.#slots = new SlotTable(
      this.maxTerminals,
      () => this.#terminals.size,
      (open) =>
        new EngineError(
          "limit",
          `${open} terminals are open, the most allowed (WINTERM_MAX_TERMINALS)`,
          { hint: { code: "release-some" } },
        ),
      () => this.launcher.checkOpen(),
    );
  }

  /** Starts a terminal. Throws {@link EngineError} naming the input at fault. */
  async create(request: CreateTerminalRequest, caller: Caller = {}): Promise<Terminal> {
    // Before any check: from here on to the launch nothing waits (see SlotTable.take).
    await prepareEncodings(request.encoding);
    return await this.#slots.take(() => this.#create(request, caller));
  }

  async #create(request: CreateTerminalRequest, caller: Caller): Promise<Terminal> {
    const nonce = newNonce();
    let id: string;
    do id = `term_${crypto.randomUUID().slice(0, 8)}`; while (this.#terminals.has(id));
    const context: LaunchContext = { via: caller.via ?? "internal", kind: "terminal", id };
    const launch = this.#launch(request, nonce);
    const { invocation } = launch;
    const { child, codec } = await startChild(this.launcher, launch, context, caller.signal);
    const terminal = new Terminal({
      context,
      launcher: this.launcher,
      child,
      command: invocation.display,
      cwd: launch.cwd,
      cols: launch.cols,
      rows: launch.rows,
      limits: {
        maxLines: this.maxLines,
        maxBytes: this.maxBytes,
        budget: this.#budget,
        recordingMaxBytes: this.recordingMaxBytes,
      },
      answerBytes: this.answerBytes,
      outputByteLimit: request.outputByteLimit,
      codec,
      writeTimeoutMs: this.writeTimeoutMs,
      integration: invocation.integration
        ? {
          nonce,
          runWrapping: invocation.integration.runWrapping,
          marksOutputStart: invocation.integration.marksOutputStart,
          promptOnInterrupt: invocation.integration.promptOnInterrupt,
          dropsContinuedRun: invocation.integration.dropsContinuedRun,
        }
        : undefined,
    });
    this.#terminals.set(id, terminal);
    this.#startSweeper();
    log.info("terminal created", { terminalId: id, pid: child.pid, command: invocation.display });
    return terminal;
  }

  /**
   * What the engine adds to a terminal's request: its place, what runs there (a shell with its
   * integration, marked by `nonce`, whose variables join the environment), and the field that
   * names the program (`shell`, or `command` when one is given).
   */
  #launch(request: CreateTerminalRequest, nonce: string): Launch {
    const place = resolvePlace(request, "pty");
    const integration = request.shellIntegration === false ? undefined : (shell: ShellKind) => {
      try {
        return shellIntegration(shell, nonce, place.env, this.#scripts);
      } catch (error) {
        // No place to write its files: the shell starts plain (and says so: `none`).
        log.warn("shell integration unavailable", { shell, error });
        return undefined;
      }
    };
    const invocation = buildTerminalInvocation(
      request,
      place,
      place.encoding?.codePage,
      integration,
    );
    Object.assign(place.env, invocation.env);
    for (const name of invocation.integration?.unset ?? []) delete place.env[name];
    return {
      request,
      ...place,
      invocation,
      mode: "pty",
      cols: request.cols ?? 80,
      rows: request.rows ?? 24,
      fields: { program: request.command === undefined ? "shell" : "command", args: "args" },
      // A sandboxed shell reads its integration files whatever is hidden.
      readable: invocation.integration ? this.#scripts.location() : undefined,
    };
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
    this.#scripts.remove();
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
