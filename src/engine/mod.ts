/**
 * The engine: everything the front ends share (one-shot commands and persistent terminals),
 * and its orderly shutdown.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { Engine } from "./mod.ts";
 * const engine = new Engine(parseConfig([], {}).config);
 * await engine.commands.run({ command: "echo hi", shellType: "default" });
 * await engine.terminals.create({ command: "python3", args: ["-i"] });
 * await engine.shutdown(500);
 * ```
 * @module
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { endAllChildren, superviseChildren, type Supervision } from "../pty/mod.ts";
import { AuditLog } from "./launching/audit.ts";
import { ShellScripts } from "./launching/integration/mod.ts";
import { OutputBudget } from "./output/budget.ts";
import { CommandService } from "./services/commands.ts";
import { Launcher } from "./launching/launcher.ts";
import { Policy } from "./launching/policy.ts";
import { TerminalService } from "./services/terminals.ts";

/** The engine's settings (a subset of the server's configuration). */
export type EngineOptions = Omit<Config, "logLevel" | "tools" | "http">;

/** See the module documentation. */
export class Engine {
  readonly commands: CommandService;
  readonly terminals: TerminalService;
  /** What answers for the processes the engine starts beyond their own trees (one per process). */
  readonly supervision: Supervision;

  /**
   * Loads the policy and opens the audit log, if configured. Throws (PolicyError, or the file
   * error) when either cannot be used: better not to start than to start unguarded. Then takes
   * charge of the processes it will start, ending what killed predecessors left (see
   * `superviseChildren`).
   */
  constructor(options: EngineOptions) {
    const launcher = new Launcher(
      options.policyPath ? Policy.load(options.policyPath) : undefined,
      options.auditPath
        ? new AuditLog(options.auditPath, { inputContent: options.auditInputContent })
        : undefined,
    );
    // One budget for the output of every command and terminal.
    const budget = new OutputBudget(options.outputBudgetBytes);
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
    this.supervision = superviseChildren(options.stateDir);
  }

  /**
   * Ends every process the engine started (SIGTERM, SIGKILL after `graceMs`), then whatever
   * of theirs still runs.
   */
  async shutdown(graceMs: number): Promise<void> {
    await Promise.all([this.commands.shutdown(graceMs), this.terminals.shutdown(graceMs)]);
    this.killEverything();
  }

  /** Kills at once whatever the engine started that still runs (the end of any shutdown). */
  killEverything(): void {
    endAllChildren();
  }
}
