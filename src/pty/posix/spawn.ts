/**
 * `posix_spawn` of a child in a new session: its standard streams are the terminal (opened
 * after setsid, so it becomes the controlling terminal) or the three pipe ends; its working
 * directory is set by the file actions (into the open directory when there is one); every
 * signal is at its default and none is blocked; no fd of the server reaches it.
 *
 * @module
 */
import { SpawnError, type SpawnOptions } from "../types.ts";
import { C, cString, cStringArray, errnoName, libc, OPAQUE_BYTES } from "./libc.ts";

/** The child's standard streams, as the spawner needs them. */
export interface Stdio {
  /** Our ends: [master] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  parentFds: number[];
  /** The child's ends, closed in the parent once the child has started. */
  childFds: number[];
  /** In PTY mode, the slave's path, which the child opens to make it its controlling tty. */
  slavePath?: string;
}

/**
 * A start this soon after another goes through the blocking pool: the children before it are
 * still starting, and `posix_spawn` returns only once the new one has called exec, 3-10 ms
 * then (it waits for a CPU), which the event loop would wait too.
 */
const RECENT_START_MS = 50;
let lastStart = -Infinity;

/** What `posix_spawn` needs besides the program: plain data, so that a Worker can be given it. */
export interface SpawnRequest {
  path: string;
  argv: string[];
  /** The child's environment, as `NAME=value` strings. */
  env: string[];
  stdio: Stdio;
  /** The working directory's open fd, if there is one; else `cwd` is entered by path. */
  directoryFd?: number;
  cwd: string;
}

/** The request for `path` with `argv`, `options` and `stdio`. */
export function spawnRequest(
  path: string,
  argv: string[],
  options: SpawnOptions,
  stdio: Stdio,
): SpawnRequest {
  return {
    path,
    argv,
    env: Object.entries(options.env).map(([name, value]) => `${name}=${value}`),
    stdio,
    directoryFd: options.directory?.fd,
    cwd: options.cwd,
  };
}

/**
 * Spawns `path` with `argv` (on the blocking pool if another start came just before, see
 * {@link RECENT_START_MS}); resolves to the pid. Rejects with {@link SpawnError}.
 */
export async function posixSpawn(
  path: string,
  argv: string[],
  options: SpawnOptions,
  stdio: Stdio,
): Promise<number> {
  // Alone, on this thread (a trip through the pool costs a lone `echo` 0.2-0.5 ms); after
  // another start, on the pool (see posix_spawn_pooled).
  const pooled = performance.now() - lastStart < RECENT_START_MS;
  lastStart = performance.now();
  return await spawnWith(spawnRequest(path, argv, options, stdio), pooled ? "pooled" : "here");
}

/**
 * Spawns on the calling thread, which waits until the child has called exec: for a thread that
 * does nothing else (a sandbox's Worker, whose confinement the child inherits).
 */
export function posixSpawnHere(request: SpawnRequest): number {
  return spawnWith(request, "here") as number;
}

/**
 * Does everything a spawn of `request` does but the spawn: for a fresh thread (a sandbox's
 * Worker) to compile this code while it waits, not during its start.
 */
export function rehearseSpawn(request: SpawnRequest): void {
  spawnWith(request, "rehearsal");
}

/** Where the spawn runs: on this thread, on the blocking pool, or not at all. */
type SpawnWay = "here" | "pooled" | "rehearsal";

function spawnWith(request: SpawnRequest, way: "pooled"): Promise<number>;
function spawnWith(request: SpawnRequest, way: SpawnWay): number | Promise<number>;
function spawnWith(request: SpawnRequest, way: SpawnWay): number | Promise<number> {
  const lib = libc();
  const actions = new Uint8Array(OPAQUE_BYTES);
  const attr = new Uint8Array(OPAQUE_BYTES);
  const signals = new Uint8Array(OPAQUE_BYTES);
  lib.posix_spawn_file_actions_init(actions);
  lib.posix_spawnattr_init(attr);
  let settled: number | Promise<number> | undefined;
  try {
    const { stdio } = request;
    if (stdio.slavePath) {
      // Opened after setsid (glibc order), so the terminal becomes the controlling terminal.
      lib.posix_spawn_file_actions_addopen(actions, 0, cString(stdio.slavePath), C.O_RDWR, 0);
      lib.posix_spawn_file_actions_adddup2(actions, 0, 1);
      lib.posix_spawn_file_actions_adddup2(actions, 0, 2);
    } else {
      stdio.childFds.forEach((fd, target) =>
        lib.posix_spawn_file_actions_adddup2(actions, fd, target)
      );
    }
    if (request.directoryFd !== undefined && lib.posix_spawn_file_actions_addfchdir_np) {
      // Into the open directory itself: no path is looked up again.
      lib.posix_spawn_file_actions_addfchdir_np(actions, request.directoryFd);
    } else if (lib.posix_spawn_file_actions_addchdir_np) {
      lib.posix_spawn_file_actions_addchdir_np(actions, cString(request.cwd));
    } else {
      throw new SpawnError("ENOSYS", "this libc lacks posix_spawn_file_actions_addchdir_np");
    }
    // Belt and braces: our fds are close-on-exec, but other code in the process may not be.
    lib.posix_spawn_file_actions_addclosefrom_np?.(actions, 3);
    lib.posix_spawnattr_setflags(
      attr,
      C.POSIX_SPAWN_SETSID | C.POSIX_SPAWN_SETSIGDEF | C.POSIX_SPAWN_SETSIGMASK |
        C.POSIX_SPAWN_CLOEXEC_DEFAULT,
    );
    // The runtime ignores SIGPIPE; children must get every signal at its default.
    lib.sigfillset(signals);
    lib.posix_spawnattr_setsigdefault(attr, signals);
    lib.sigemptyset(signals);
    lib.posix_spawnattr_setsigmask(attr, signals);
    const args = cStringArray(request.argv);
    const envp = cStringArray(request.env);
    const pid = new Int32Array(1);
    const file = cString(request.path);
    const call = [new Uint8Array(pid.buffer), file, actions, attr, args.array, envp.array] as const;
    const outcome = (rc: number) => {
      // Every buffer the call read on another thread is held until it has returned.
      keepAlive(file, args, envp, actions, attr);
      if (rc !== 0) {
        const name = errnoName(rc);
        const why = SPAWN_ERRORS[name] ?? "the system refused to start it";
        throw new SpawnError(name, why, `${name}: ${request.path}`);
      }
      return pid[0];
    };
    if (way === "rehearsal") return settled = 0;
    if (way === "here") {
      settled = outcome(lib.posix_spawn(...call));
      return settled;
    }
    settled = lib.posix_spawn_pooled(...call).then(outcome).finally(() => destroy());
    return settled;
  } finally {
    // A pooled call frees them once it has returned.
    if (!(settled instanceof Promise)) destroy();
  }

  function destroy() {
    lib.posix_spawn_file_actions_destroy(actions);
    lib.posix_spawnattr_destroy(attr);
  }
}

/**
 * What a failed `posix_spawn` means, by errno, for the message (the caller says "cannot start
 * X: " before it); the errno and the file are its detail.
 */
const SPAWN_ERRORS: Record<string, string> = {
  ENOEXEC: "it is neither a program this system runs nor a script with a #! line",
  ENOENT: "it, or the interpreter its #! line names, does not exist",
  EACCES: "permission denied (to the file, a directory on its path, or its interpreter)",
  ETXTBSY: "the file is open for writing",
  E2BIG: "its arguments and environment are too large",
  ENOMEM: "the system is out of memory",
  EAGAIN: "the system is out of processes or memory",
  EMFILE: "the server has too many files open",
  ENFILE: "the system has too many files open",
  ENOTDIR: "a directory on its path is not a directory",
  EISDIR: "its interpreter is a directory",
};

/** Uses its arguments, so that nothing they hold can be collected before this point. */
function keepAlive(..._held: unknown[]): void {}
