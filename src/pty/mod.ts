/**
 * The platform layer: start a child on a pseudo-terminal or pipes, the same way on every OS
 * (libc on Linux and macOS, kernel32 ConPTY on Windows). Each child's tree ends with it.
 * What answers for everything the server starts, across restarts, is supervision
 * (supervision/mod.ts, a face of its own: the groundwork loads it before this one), handed to
 * {@link spawn}.
 *
 * @example
 * ```ts
 * import { spawn } from "./mod.ts";
 * const child = await spawn({ file: "sh", args: ["-c", "echo hi"], cwd: "/", env: { PATH: "/bin" } });
 * child.onData((bytes) => console.error(new TextDecoder().decode(bytes)));
 * console.error(await child.exited); // { exitCode: 0, signal: null }
 * ```
 * @module
 */
import { openDirectory as openPosixDirectory } from "./posix/directory.ts";
import { trimHeap } from "./posix/heap.ts";
import { preparePosix, spawnPosix } from "./posix/process.ts";
import { openDirectory as openWindowsDirectory } from "./windows/directory.ts";
import { prepareWindows, spawnWindows, WINDOWS_SANDBOX_REFUSAL } from "./windows/process.ts";
import { windowsCodePage } from "./windows/child.ts";
import {
  type ChildProcess,
  type OpenDirectory,
  type PreparedSpawn,
  type SandboxBackend,
  type SandboxSpec,
  SpawnError,
  type SpawnOptions,
  type StdioMode,
} from "./types.ts";
import type { Supervision } from "./supervision/mod.ts";

export * from "./types.ts";
export { superviseChildren, type Supervision } from "./supervision/mod.ts";
export {
  envValue,
  fileIdentity,
  HOST_FLAVOR,
  isDirectory,
  type PathFlavor,
  realPathOf,
  resolveProgram,
  searchPath,
} from "./resolve.ts";
export { type Interpreter, type Interpreters, scriptInterpreters } from "./posix/shebang.ts";
export { quoteWindowsCommandLine } from "./windows/command_line.ts";
export { runningUnderWine, systemCodePages } from "./windows/kernel32.ts";
export { type AnsiMismatch, ansiMismatch } from "./windows/ansi.ts";

const WINDOWS = Deno.build.os === "windows";

/**
 * Decides what will run for `options` without starting anything: the program resolved, and
 * the interpreter that really runs it, if any. Throws {@link SpawnError}.
 */
export function prepareSpawn(options: SpawnOptions): PreparedSpawn {
  return WINDOWS ? prepareWindows(options) : preparePosix(options);
}

/**
 * Starts a child: exactly what {@link prepareSpawn} decided, or `options` prepared now, under
 * the server's `supervision` if given (see supervision/mod.ts; without it, as for the platform
 * layer used as a library, each child's own tree is still ended with it). Rejects with
 * {@link SpawnError} when it cannot start.
 */
export async function spawn(
  what: SpawnOptions | PreparedSpawn,
  supervision?: Supervision,
): Promise<ChildProcess> {
  const prepared = "options" in what ? what : prepareSpawn(what);
  if (WINDOWS) return spawnWindows(prepared);
  return await spawnPosix(prepared, await supervision?.registry?.());
}

/**
 * What the bytes of a child started in `mode` will be (see {@link ChildProcess.codePage}),
 * known before it starts: its input can be encoded, and refused, before anything runs.
 */
export function childCodePage(mode: StdioMode): "utf-8" | number | null {
  return WINDOWS ? windowsCodePage(mode) : null;
}

/**
 * How `spec` would be enforced here: the backend, and what this kernel cannot enforce. Throws
 * {@link SpawnError} (`ESANDBOX`) naming the reason when it cannot be applied at all (Windows,
 * a kernel without Landlock or too old, an unknown architecture): a sandbox is never skipped.
 */
export async function sandboxSupport(spec: SandboxSpec): Promise<SandboxBackend> {
  if (Deno.build.os === "linux") {
    return (await import("./posix/sandbox/linux.ts")).linuxSandboxSupport(spec);
  }
  if (Deno.build.os === "darwin") {
    return (await import("./posix/sandbox/seatbelt.ts")).seatbeltSupport(spec);
  }
  throw new SpawnError(
    "ESANDBOX",
    WINDOWS ? WINDOWS_SANDBOX_REFUSAL : `the sandbox is not supported on ${Deno.build.os}`,
  );
}

/** Lets go of what sandboxed starts keep ready (a Worker); at shutdown. */
export async function releaseSandboxes(): Promise<void> {
  if (Deno.build.os !== "linux") return;
  (await import("./posix/sandbox/spawner.ts")).releaseSpare();
}

/**
 * Opens a working directory for {@link SpawnOptions.directory}: its real path, and (POSIX) a
 * descriptor the child changes into. Throws {@link SpawnError}.
 */
export function openDirectory(path: string): OpenDirectory {
  return WINDOWS ? openWindowsDirectory(path) : openPosixDirectory(path);
}

/**
 * Gives the memory the C heap holds free back to the OS, where the platform has a call for it
 * (glibc: see posix/heap.ts); resolves whether it could ask. (Windows' heaps decommit free
 * pages themselves.)
 */
export function returnFreedMemory(): Promise<boolean> {
  return WINDOWS ? Promise.resolve(false) : trimHeap();
}
