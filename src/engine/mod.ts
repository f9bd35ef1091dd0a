/**
 * The engine: everything the front ends share (one-shot commands and persistent terminals),
 * and its orderly shutdown.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { Engine } from "./mod.ts";
 * const engine = new Engine(parseConfig([], {}).config);
 * engine.commands.run({ command: "echo hi", shellType: "default" });
 * engine.terminals.create({ command: "python3", args: ["-i"] });
 * await engine.shutdown(500);
 * ```
 * @module
 */
import type { Config } from "../config.ts";
import { AuditLog } from "./launching/audit.ts";
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

  /**
   * Loads the policy and opens the audit log, if configured. Throws (PolicyError, or the file
   * error) when either cannot be used: better not to start than to start unguarded.
   */
  constructor(options: EngineOptions) {
    const launcher = new Launcher(
      options.policyPath ? Policy.load(options.policyPath) : undefined,
      options.auditPath
        ? new AuditLog(options.auditPath, { inputContent: options.auditInputContent })
        : undefined,
    );
    this.commands = new CommandService({
      launcher,
      maxRunning: options.maxCommands,
      retainCount: options.commandRetention,
      retainMs: options.commandRetentionMinutes * 60_000,
      killGraceMs: options.killGraceMs,
    });
    this.terminals = new TerminalService({
      launcher,
      maxTerminals: options.maxTerminals,
      idleMs: options.terminalIdleSeconds * 1000,
      maxLines: options.terminalMaxLines,
      maxBytes: options.terminalMaxBytes,
      recordingMaxBytes: options.recordingMaxBytes,
      killGraceMs: options.killGraceMs,
    });
  }

  /** Ends every process the engine started (SIGTERM, SIGKILL after `graceMs`). */
  async shutdown(graceMs: number): Promise<void> {
    await Promise.all([this.commands.shutdown(graceMs), this.terminals.shutdown(graceMs)]);
  }
}
