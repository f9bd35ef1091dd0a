/**
 * The thread that starts a sandboxed child (Linux). Landlock, seccomp without TSYNC,
 * no_new_privs, capabilities and the bounding set all belong to a THREAD, and glibc's
 * `posix_spawn` runs the child from the calling thread, which it inherits them from. So a
 * Worker (its own OS thread) confines itself with synchronous FFI calls, spawns the child,
 * reports its pid and ends: the server's own threads are never confined, and a thread once
 * confined cannot be widened again, so each start has a fresh one (see spawner.ts).
 *
 * This module is both the worker's code (run as a Worker, it answers jobs) and, imported by
 * the server, where its own URL comes from: the same file is the Worker's entry whether it runs
 * from source, from the bundle (a chunk of its own) or from a compiled executable.
 *
 * The order: capabilities first (securebits and the bounding set need CAP_SETPCAP, still
 * held), then no_new_privs (which Landlock and seccomp need instead of a capability), Landlock,
 * and seccomp last (so that it refuses nothing the steps before need). After that the thread
 * only calls `posix_spawn` (clone, which the filter allows without namespace flags; `clone3`
 * answers ENOSYS and glibc falls back) and posts its answer (memory only).
 *
 * @module
 */
import { SpawnError } from "../../types.ts";
import { errnoName, libc } from "../libc.ts";
import { posixSpawnHere, rehearseSpawn, type SpawnRequest } from "../spawn.ts";
import { dropCapabilities } from "./capabilities.ts";
import {
  capget,
  gettid,
  installSeccompFilter,
  landlockAbi,
  landlockRestrictSelf,
  PR,
  prctl,
  SECCOMP_MODE_FILTER,
} from "./linux_calls.ts";

/** This module, for `new Worker(...)`. */
export const WORKER_URL: string = import.meta.url;

/** What a worker is asked to do, once. */
export interface ConfinedSpawnJob {
  /** A Landlock ruleset's fd (the process's: made by the server's thread). */
  ruleset: number;
  /** The seccomp filter (`struct sock_filter` array). */
  filter: Uint8Array<ArrayBuffer>;
  spawn: SpawnRequest;
}

/** What it answers. */
export type ConfinedSpawnAnswer =
  | { pid: number }
  | { spawnError: { code: string; message: string; detail?: string } }
  | { confinement: string };

/** Confines the calling thread; answers why it could not, or undefined once confined. */
export function confineThread(
  ruleset: number,
  filter: Uint8Array<ArrayBuffer>,
): string | undefined {
  const capabilities = dropCapabilities();
  if (capabilities) return capabilities;
  const noNewPrivileges = prctl(PR.SET_NO_NEW_PRIVS, 1n);
  if (noNewPrivileges.result < 0) {
    return `cannot set no_new_privs (${errnoName(noNewPrivileges.errno)})`;
  }
  const restricted = landlockRestrictSelf(ruleset);
  if (restricted.result < 0) {
    return `landlock_restrict_self failed (${errnoName(restricted.errno)})`;
  }
  const installed = installSeccompFilter(filter);
  if (installed.result < 0) {
    return `cannot install the seccomp filter (${errnoName(installed.errno)})`;
  }
  if (prctl(PR.GET_SECCOMP).result !== SECCOMP_MODE_FILTER) return "seccomp is not in force";
  return undefined;
}

/** Runs a job on this thread. */
export function runJob(job: ConfinedSpawnJob): ConfinedSpawnAnswer {
  const failure = confineThread(job.ruleset, job.filter);
  if (failure) return { confinement: failure };
  try {
    return { pid: posixSpawnHere(job.spawn) };
  } catch (error) {
    if (!(error instanceof SpawnError)) throw error;
    return { spawnError: { code: error.code, message: error.message, detail: error.detail } };
  }
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<ConfinedSpawnJob>) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
}

if ("WorkerGlobalScope" in globalThis) {
  const scope = globalThis as unknown as WorkerScope;
  // The FFI bindings, and the job's code compiled, while the worker waits: done during the job,
  // the bindings cost it 12-38 ms, and its code run cold 2-5 ms more.
  libc();
  gettid();
  capget();
  landlockAbi();
  prctl(PR.GET_SECCOMP);
  for (
    const stdio of [{ parentFds: [], childFds: [] }, {
      parentFds: [],
      childFds: [],
      slavePath: "/",
    }]
  ) {
    rehearseSpawn({ path: "/", argv: ["-"], env: ["A=b"], stdio, cwd: "/" });
  }
  scope.onmessage = (event) => {
    let answer: ConfinedSpawnAnswer;
    try {
      answer = runJob(event.data);
    } catch (error) {
      answer = { confinement: `the sandbox's thread failed: ${(error as Error).message}` };
    }
    scope.postMessage(answer);
    // Confined for good: it serves no other start.
    scope.close();
  };
  scope.postMessage("ready");
}
