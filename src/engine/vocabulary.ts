/**
 * Names the front ends' schemas list (the ways to run a command, the line read modes), kept
 * apart from the code that acts on them: the tool schemas load without the engine, which loads
 * with the first tool call (see main.ts).
 *
 * @module
 */

/** The ways a command can be run. `default` is PowerShell on Windows, $SHELL or sh elsewhere. */
export const SHELL_TYPES = ["default", "powershell", "cmd", "bash", "sh", "executable"] as const;
/** One of {@link SHELL_TYPES}. */
export type ShellType = typeof SHELL_TYPES[number];

/** The read modes that work on lines. */
export const LINE_MODES = ["full", "head", "tail", "head-tail"] as const;
/** One of {@link LINE_MODES}. */
export type LineMode = typeof LINE_MODES[number];

/** The sandbox modes, loosest first (see launching/sandbox.ts). */
export const SANDBOX_MODES = ["off", "workspace-write", "read-only"] as const;
/** One of {@link SANDBOX_MODES}. */
export type SandboxMode = typeof SANDBOX_MODES[number];

/** Lines of context a search (grep) shows around each match, at most. */
export const MAX_CONTEXT_LINES = 20;
