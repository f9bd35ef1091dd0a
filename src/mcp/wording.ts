/**
 * How the MCP tools say what the engine names (see src/engine/errors.ts): a field by the
 * tool's own argument name (the winterm tools' are snake_case, `working_directory` for the
 * engine's `cwd`; the terminal tools' are the engine's own), and a next step by the tool that
 * takes it.
 *
 * @example
 * ```ts
 * import { EngineError } from "../engine/mod.ts";
 * import { mcpWording } from "./wording.ts";
 * const error = new EngineError("busy", "terminal t1 is running a command", {
 *   hint: { code: "wait-prompt", terminalId: "t1" },
 * });
 * error.worded(mcpWording(), false); // "…: wait for its prompt (terminal_wait with prompt)"
 * mcpWording({ cwd: "working_directory" }).field("cwd"); // "working_directory"
 * ```
 * @module
 */
import { renameField, type Way, type Wording } from "../engine/mod.ts";

/** The tool (and its arguments) that takes each way. */
const WAYS: Record<Way, string> = {
  type: "terminal_write",
  read: "terminal_read",
  "wait-prompt": "terminal_wait with prompt",
  interrupt: 'terminal_write with keys ["ctrl_c"]',
  "type-and-read": "terminal_write and terminal_wait",
  release: "terminal_release",
  "wait-command": "query_command_status with wait_ms",
  terminate: "terminate_command",
  // Only run_command starts a program with pipes: a terminal is always a terminal.
  pipes: "run_command with use_pty: false",
};

/** The MCP wording for a tool whose argument names differ from the engine's by `fieldNames`. */
export function mcpWording(fieldNames: Readonly<Record<string, string>> = {}): Wording {
  return {
    field: (key) => renameField(key, fieldNames),
    way: (way) => WAYS[way],
  };
}
