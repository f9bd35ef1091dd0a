/**
 * The platform layer: start a child on a pseudo-terminal or pipes, the same way on every OS
 * (libc on Linux and macOS, kernel32 ConPTY on Windows).
 *
 * @example
 * ```ts
 * import { spawn } from "./mod.ts";
 * const child = spawn({ file: "sh", args: ["-c", "echo hi"], cwd: "/", env: { PATH: "/bin" } });
 * child.onData((bytes) => console.error(new TextDecoder().decode(bytes)));
 * console.error(await child.exited); // { exitCode: 0, signal: null }
 * ```
 * @module
 */
import { spawnPosix } from "./posix/process.ts";
import { spawnWindows } from "./windows/process.ts";
import type { ChildProcess, SpawnOptions } from "./types.ts";

export * from "./types.ts";
export { envValue, HOST_FLAVOR, isDirectory, type PathFlavor, resolveProgram } from "./resolve.ts";
export { quoteWindowsCommandLine } from "./windows/command_line.ts";
export { runningUnderWine } from "./windows/kernel32.ts";

/** Starts a child. Throws {@link SpawnError} when it cannot start. */
export function spawn(options: SpawnOptions): ChildProcess {
  return Deno.build.os === "windows" ? spawnWindows(options) : spawnPosix(options);
}
