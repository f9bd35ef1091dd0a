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
import { CommandService } from "./commands.ts";
import { TerminalService } from "./terminals.ts";

/** The engine's settings (a subset of the server's configuration). */
export type EngineOptions = Omit<Config, "logLevel" | "tools">;

/** See the module documentation. */
export class Engine {
  readonly commands: CommandService;
  readonly terminals: TerminalService;

  constructor(options: EngineOptions) {
    this.commands = new CommandService({
      maxRunning: options.maxCommands,
      retainCount: options.commandRetention,
      retainMs: options.commandRetentionMinutes * 60_000,
      killGraceMs: options.killGraceMs,
    });
    this.terminals = new TerminalService({
      maxTerminals: options.maxTerminals,
      idleMs: options.terminalIdleSeconds * 1000,
      maxLines: options.terminalMaxLines,
      maxBytes: options.terminalMaxBytes,
      killGraceMs: options.killGraceMs,
    });
  }

  /** Ends every process the engine started (SIGTERM, SIGKILL after `graceMs`). */
  async shutdown(graceMs: number): Promise<void> {
    await Promise.all([this.commands.shutdown(graceMs), this.terminals.shutdown(graceMs)]);
  }
}
