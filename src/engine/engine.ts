/**
 * The engine: everything the front ends share (one-shot commands and persistent terminals),
 * and its orderly shutdown.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { layGroundwork } from "./groundwork.ts";
 * import { Engine } from "./engine.ts";
 * const { config } = parseConfig([], {});
 * const engine = new Engine(config, await layGroundwork(config));
 * await engine.commands.run({ command: "echo hi", shellType: "default" });
 * await engine.terminals.create({ command: "python3", args: ["-i"] });
 * await engine.shutdown(500);
 * ```
 * @module
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { returnFreedMemory } from "../pty/mod.ts";
import type { Supervision } from "../pty/supervision/mod.ts";
import type { Groundwork } from "./groundwork.ts";
import { ShellScripts } from "./launching/integration/mod.ts";
import { OutputBudget } from "./output/budget.ts";
import { CommandService } from "./command/mod.ts";
import { Launcher } from "./launching/launcher.ts";
import { Sandboxes, sandboxSettings } from "./launching/sandbox.ts";
import { TerminalService } from "./terminal/mod.ts";

/** The engine's settings (a subset of the server's configuration). */
export type EngineOptions = Omit<Config, "logLevel" | "tools" | "http">;

/** See the module documentation. */
export class Engine {
  readonly commands: CommandService;
  readonly terminals: TerminalService;
  /** What answers for the processes the engine starts beyond their own trees (one per process). */
  readonly supervision: Supervision;
  readonly #groundwork: Groundwork;
  readonly #launcher: Launcher;

  /** The services, over `groundwork`: its policy, audit log and supervision (groundwork.ts). */
  constructor(options: EngineOptions, groundwork: Groundwork) {
    this.#groundwork = groundwork;
    const launcher = this.#launcher = new Launcher(
      groundwork.policy,
      groundwork.audit,
      new Sandboxes(
        groundwork.sandbox ?? sandboxSettings({}, undefined, {
          home: Deno.env.get("HOME"),
          auditPath: options.auditPath,
          policyPath: options.policyPath,
          stateDir: options.stateDir,
        }),
      ),
      groundwork.supervision,
    );
    // One budget for the output of every command and terminal.
    const budget = new OutputBudget(options.outputBudgetBytes, returnFreedMemory);
    this.commands = new CommandService({
      launcher,
      maxRunning: options.maxCommands,
      retainCount: options.commandRetention,
      retainMs: options.commandRetentionMinutes * 60_000,
      killGraceMs: options.killGraceMs,
      maxBufferSize: options.commandMaxBytes,
      answerBytes: options.maxAnswerBytes,
      budget,
      writeTimeoutMs: options.writeTimeoutMs,
    });
    this.terminals = new TerminalService({
      launcher,
      maxTerminals: options.maxTerminals,
      idleMs: options.terminalIdleSeconds * 1000,
      maxLines: options.terminalMaxLines,
      maxBytes: options.terminalMaxBytes,
      recordingMaxBytes: options.recordingMaxBytes,
      killGraceMs: options.killGraceMs,
      answerBytes: options.maxAnswerBytes,
      budget,
      writeTimeoutMs: options.writeTimeoutMs,
      // Shell integration files: beside the ledger, else a temporary directory.
      shellScripts: new ShellScripts(
        options.stateDir === undefined ? undefined : join(options.stateDir, "shell-integration"),
      ),
    });
    this.supervision = groundwork.supervision;
  }

  /**
   * Ends every process the engine started (SIGTERM, SIGKILL after `graceMs`), then whatever
   * of theirs still runs. Nothing new starts from the first call on (such requests fail).
   */
  async shutdown(graceMs: number): Promise<void> {
    this.#launcher.close();
    await Promise.all([this.commands.shutdown(graceMs), this.terminals.shutdown(graceMs)]);
    this.killEverything();
    await this.#launcher.closeSandboxes();
  }

  /** Kills at once whatever the engine started that still runs (the end of any shutdown). */
  killEverything(): void {
    this.#groundwork.endEverything();
  }
}
