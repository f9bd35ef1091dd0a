/**
 * The engine: everything the front ends share (commands now, terminals later), and its
 * orderly shutdown.
 *
 * @example
 * ```ts
 * import { Engine } from "./mod.ts";
 * const engine = new Engine({ maxCommands: 10, commandRetention: 10, commandRetentionMinutes: 5, killGraceMs: 500 });
 * engine.commands.run({ command: "echo hi", shellType: "default" });
 * await engine.shutdown(500);
 * ```
 * @module
 */
import type { Config } from "../config.ts";
import { CommandService } from "./commands.ts";

/** The engine's settings (a subset of the server's configuration). */
export type EngineOptions = Pick<
  Config,
  "maxCommands" | "commandRetention" | "commandRetentionMinutes" | "killGraceMs"
>;

/** See the module documentation. */
export class Engine {
  readonly commands: CommandService;

  constructor(options: EngineOptions) {
    this.commands = new CommandService({
      maxRunning: options.maxCommands,
      retainCount: options.commandRetention,
      retainMs: options.commandRetentionMinutes * 60_000,
      killGraceMs: options.killGraceMs,
    });
  }

  /** Ends every process the engine started (SIGTERM, SIGKILL after `graceMs`). */
  async shutdown(graceMs: number): Promise<void> {
    await this.commands.shutdown(graceMs);
  }
}
