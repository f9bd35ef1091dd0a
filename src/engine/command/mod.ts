/**
 * One-shot commands (the room's face): the {@link CommandService} that starts and keeps them,
 * and the {@link Command} each is.
 *
 * @example
 * ```ts
 * import { CommandService } from "./mod.ts";
 * const service = new CommandService();
 * const { command } = await service.run({ command: "echo hi", shellType: "default" });
 * await command.done;
 * command.read({}).stdout.text; // "hi\n" (cleaned)
 * await service.shutdown();
 * ```
 * @module
 */
export * from "./command.ts";
export * from "./service.ts";
