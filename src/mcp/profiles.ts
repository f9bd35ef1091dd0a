/**
 * Tool profiles: which tools the server offers (`--tools all | winterm | terminals`).
 *
 * @module
 */
import type { ToolProfile } from "../config.ts";
import type { Engine, FrontEnd } from "../engine/mod.ts";
import type { ToolDefinition } from "./tool.ts";
import { terminalTools } from "./terminal_tools.ts";
import { wintermTools } from "./winterm_tools.ts";

/**
 * The tools of a profile, for the front end `via`. Each call asks `engine` for the engine: the
 * tools are listed without it (over stdio it loads with the first call).
 */
export function toolsFor(
  profile: ToolProfile,
  engine: () => Promise<Engine>,
  via: FrontEnd,
): ToolDefinition[] {
  const commands = () => engine().then((loaded) => loaded.commands);
  const terminals = () => engine().then((loaded) => loaded.terminals);
  switch (profile) {
    case "winterm":
      return wintermTools(commands, via);
    case "terminals":
      return terminalTools(terminals, via);
    default:
      return [...wintermTools(commands, via), ...terminalTools(terminals, via)];
  }
}
