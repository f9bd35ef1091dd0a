/**
 * Tool profiles: which tools the server offers (`--tools all | winterm | terminals`).
 *
 * @module
 */
import type { ToolProfile } from "../config.ts";
import type { FrontEnd } from "../engine/launching/audit.ts";
import type { Engine } from "../engine/mod.ts";
import type { ToolDefinition } from "./tool.ts";
import { terminalTools } from "./terminal_tools.ts";
import { wintermTools } from "./winterm_tools.ts";

/** The tools of a profile, for the front end `via`. */
export function toolsFor(profile: ToolProfile, engine: Engine, via: FrontEnd): ToolDefinition[] {
  switch (profile) {
    case "winterm":
      return wintermTools(engine.commands, via);
    case "terminals":
      return terminalTools(engine.terminals, via);
    default:
      return [...wintermTools(engine.commands, via), ...terminalTools(engine.terminals, via)];
  }
}
