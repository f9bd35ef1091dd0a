/**
 * Persistent terminals (the room's face): the {@link TerminalService} that creates, finds and
 * releases them, the {@link Terminal} each is, and the words of its requests and answers.
 *
 * @example
 * ```ts
 * import { compilePattern, loadPatterns, TerminalService } from "./mod.ts";
 * await loadPatterns(); // the pattern compiler (re2js) loads first
 * const terminals = new TerminalService();
 * const shell = await terminals.create({});                       // the platform shell
 * await shell.type({ text: "echo ready" });                       // Enter follows the text
 * const pattern = compilePattern("ready", "", "pattern");
 * const outcome = await shell.wait({ pattern, timeoutMs: 5000 });
 * outcome.condition; // "pattern"
 * await terminals.shutdown(500);
 * ```
 * @module
 */
export * from "./terminal.ts";
export * from "./service.ts";
export { KEY_NAMES, keySequence } from "./keys.ts";
