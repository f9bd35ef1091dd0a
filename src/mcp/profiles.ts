/**
 * Tool profiles: which tools the server offers (`--tools all | winterm | terminals`).
 *
 * @module
 */
import type { ToolProfile } from "../config.ts";
import type { Engine } from "../engine/mod.ts";
import type { ToolDefinition } from "./tool.ts";
import { terminalTools } from "./terminal_tools.ts";
import { wintermTools } from "./winterm_tools.ts";

/** The tools of a profile. */
export function toolsFor(profile: ToolProfile, engine: Engine): ToolDefinition[] {
  switch (profile) {
    case "winterm":
      return wintermTools(engine.commands);
    case "terminals":
      return terminalTools(engine.terminals);
    default:
      return [...wintermTools(engine.commands), ...terminalTools(engine.terminals)];
  }
}
