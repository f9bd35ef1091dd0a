/**
 * Tool profiles: which tools the server offers (`--tools all | winterm | terminals`).
 *
 * @module
 */
import type { ToolProfile } from "../config.ts";
import type { Engine } from "../engine/mod.ts";
import type { ToolDefinition } from "./tool.ts";
import { wintermTools } from "./winterm_tools.ts";

/** The tools of a profile. */
export function toolsFor(profile: ToolProfile, engine: Engine): ToolDefinition[] {
  const winterm = wintermTools(engine.commands);
  switch (profile) {
    case "winterm":
      return winterm;
    case "terminals":
      return [];
    default:
      return winterm;
  }
}
