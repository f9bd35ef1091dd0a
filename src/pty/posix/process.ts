/**
 * Children on Linux and macOS, started with `posix_spawn` in a new session whose controlling
 * terminal is a fresh PTY (or, in pipe mode, with three pipes and no terminal).
 *
 * Guarantees: signals reset to their defaults and none blocked; no fd of the server reaches
 * the child; IUTF8 set; output read until end of file even after the child has exited; the
 * exit is reported only after that; whatever the child left running in its tree (tree.ts) is
 * killed when it exits, so no process outlives the command that started it.
 *
 * @module
 */
import { type ChildProcess, type PreparedSpawn, SpawnError, type SpawnOptions } from "../types.ts";
import { checkSpawnOptions, realPathOf, resolveProgram } from "../resolve.ts";
import type { ChildRegistry } from "../supervision/types.ts";
import { PosixChild } from "./child.ts";
import { libc } from "./libc.ts";
import { processEntry } from "./process_table.ts";
import { openTerminal } from "./pty.ts";
import { openPipe, reactor } from "./reactor.ts";
import { posixSpawn, spawnRequest, type Stdio } from "./spawn.ts";
import { newMark, TREE_VARIABLE } from "./tree.ts";

const IS_DARWIN = Deno.build.os === "darwin";
/**
 * macOS runs setsid AFTER the file actions, so the child would have no controlling terminal;
 * this shim re-opens the terminal once the new session exists, which makes it the controlling
 * terminal, then runs the real program.
 */
const DARWIN_CTTY_SHIM = 'exec 3<>"$0"; exec 3>&-; exec "$@"';

/** Checks `options` and resolves the program and its real path. Throws {@link SpawnError}. */
export function preparePosix(options: SpawnOptions): PreparedSpawn {
  checkSpawnOptions(options, "posix");
  const program = resolveProgram(options.file, { cwd: options.cwd, env: options.env });
  return { options, program, realProgram: realPathOf(program) };
}

/**
 * Starts a prepared child: its real program, by that path (argv[0] is the name asked for),
 * recorded in `registry` (the server's supervision) from its start to its end, if given.
 * Rejects with {@link SpawnError} when it cannot start.
 */
export async function spawnPosix(
  { options, realProgram }: PreparedSpawn,
  registry?: ChildRegistry,
): Promise<ChildProcess> {
  const mode = options.mode ?? "pty";
  if (options.sandbox && !IS_DARWIN && Deno.build.os !== "linux") {
    throw new SpawnError("ESANDBOX", `the sandbox is not supported on ${Deno.build.os}`);
  }
  const loop = reactor();
  const stdio = mode === "pty" ? openTerminal(options.cols ?? 80, options.rows ?? 24) : openPipes();
  // Everything the child starts inherits the mark, by which its tree is found (tree.ts).
  const mark = newMark();
  const env = { ...options.env, [TREE_VARIABLE]: mark };
  let pid: number;
  // Until it is watched, an exited child of ours is no orphan to reap (see reactor.ts).
  const spawning = loop.spawning();
  try {
    const shim = IS_DARWIN && stdio.slavePath !== undefined;
    // macOS: sandbox-exec runs the program under its profile (after the shim, if any).
    const seatbelt = IS_DARWIN && options.sandbox
      ? (await import("./sandbox/seatbelt.ts")).seatbeltCommand(
        options.sandbox,
        stdio.slavePath,
      )
      : [];
    const wrapped = shim || seatbelt.length > 0;
    const argv = wrapped
      ? [
        ...(shim ? ["/bin/sh", "-c", DARWIN_CTTY_SHIM, stdio.slavePath!] : []),
        ...seatbelt,
        realProgram,
        ...options.args,
      ]
      : [options.file, ...options.args];
    const path = wrapped ? argv[0] : realProgram;
    if (options.sandbox && !IS_DARWIN) {
      const { spawnSandboxed } = await import("./sandbox/linux.ts");
      pid = await spawnSandboxed(
        spawnRequest(path, argv, { ...options, env }, stdio),
        options.sandbox,
        stdio.slavePath,
      );
    } else pid = await posixSpawn(path, argv, { ...options, env }, stdio);
  } catch (error) {
    spawning.done();
    for (const fd of stdio.parentFds) libc().close(fd);
    throw error;
  } finally {
    // The child has its own copies now (or never will): ours are closed exactly once.
    for (const fd of stdio.childFds) libc().close(fd);
  }
  // Not reaped before the reactor does it, so the pid is still this child's: its start time
  // makes the pair an identity no reuse can fake.
  const root = { pid, start: processEntry(pid)?.start ?? 0 };
  registry?.started(root);
  try {
    return new PosixChild(
      pid,
      mode,
      loop,
      stdio.parentFds,
      {
        mark,
        roots: [root],
        since: root.start,
        sessionsOfGoneRoots: true,
      },
      registry,
      stdio.slavePath,
    );
  } finally {
    spawning.done();
  }
}

function openPipes(): Stdio {
  const opened: number[] = [];
  try {
    const [stdinRead, stdinWrite] = openPipe({ read: false, write: true });
    opened.push(stdinRead, stdinWrite);
    const [stdoutRead, stdoutWrite] = openPipe({ read: true, write: false });
    opened.push(stdoutRead, stdoutWrite);
    const [stderrRead, stderrWrite] = openPipe({ read: true, write: false });
    return {
      parentFds: [stdinWrite, stdoutRead, stderrRead],
      childFds: [stdinRead, stdoutWrite, stderrWrite],
    };
  } catch (error) {
    for (const fd of opened) libc().close(fd);
    throw error;
  }
}
