/**
 * The engine's face: everything a front end (src/mcp, src/http) takes from the engine comes
 * through here. The engine itself (engine.ts: the services, the output pipeline, launching)
 * loads when {@link createEngine} is first called; what is exported here as a value is light
 * (the words of requests, errors, key names, answer turns), because the tools are listed by an
 * idle server that has not loaded the engine (tests/house/startup_graph_test.ts).
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { createEngine, layGroundwork } from "./mod.ts";
 * const { config } = parseConfig([], {});
 * const engine = await createEngine(config, await layGroundwork(config));
 * await engine.commands.run({ command: "echo hi", shellType: "default" });
 * await engine.terminals.create({ command: "python3", args: ["-i"] });
 * await engine.shutdown(500);
 * ```
 * @module
 */
import type { Groundwork } from "./groundwork.ts";
import type { Engine, EngineOptions } from "./engine.ts";
import type { Pattern } from "./output/patterns.ts";

export type { Engine, EngineOptions } from "./engine.ts";
export { type Groundwork, layGroundwork } from "./groundwork.ts";

/** Loads the engine (on first use) and makes one over `groundwork` (see engine.ts). */
export async function createEngine(
  options: EngineOptions,
  groundwork: Groundwork,
): Promise<Engine> {
  const { Engine } = await import("./engine.ts");
  return new Engine(options, groundwork);
}

// Light values: the engine's words, its errors, events and answer turns.
export {
  EngineError,
  type EngineErrorKind,
  renameField,
  type Way,
  type Wording,
} from "./errors.ts";
export { waitFor } from "./events.ts";
export { type AnswerCaller, inAnswerSlices, inAnswerTurn, inReadSlices } from "./answer_turns.ts";
export { inSlices, type Steps } from "./slices.ts";
export { LINE_MODES, type LineMode, SHELL_TYPES, type ShellType } from "./vocabulary.ts";
export { sandboxHint } from "./sandbox_info.ts";
export { utf8Length } from "./output/utf8.ts";
export { KEY_NAMES, keySequence } from "./terminal/keys.ts";
export { STDIN_MAX_BYTES } from "./command/stdin.ts";
export type { FrontEnd } from "./launching/audit.ts";
export { describeExit, type ExitStatus, SIGNAL_NAMES, type SignalName } from "../pty/types.ts";

// The rooms' types (their values load with the engine).
export type {
  CreateTerminalRequest,
  RunOutcome,
  Terminal,
  TerminalEvent,
  TerminalService,
  TypingRequest,
  Watch,
} from "./terminal/mod.ts";
export type {
  Command,
  CommandGrep,
  CommandRead,
  CommandReadRequest,
  CommandService,
  RunRequest,
} from "./command/mod.ts";

/** The pattern compiler (loads re2js on first use: not while the server is idle). */
export function importPatterns(): Promise<typeof import("./output/patterns.ts")> {
  return import("./output/patterns.ts");
}

export type { Pattern };

/**
 * An agent's pattern, compiled (see output/patterns.ts: RE2 syntax, `flags` from `imsu`), the
 * compiler loaded first; a bad one is refused naming `field`.
 */
export async function agentPattern(
  source: string,
  flags: string,
  field: string,
): Promise<Pattern> {
  const { compilePattern, loadPatterns } = await importPatterns();
  await loadPatterns();
  return compilePattern(source, flags, field);
}

/** How the shells are found (loads the launching layer on first use). */
export function importShells(): Promise<typeof import("./launching/shells.ts")> {
  return import("./launching/shells.ts");
}
