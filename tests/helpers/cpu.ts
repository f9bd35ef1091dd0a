/**
 * The CPU time the calling thread has used: what a piece of work cost, whatever else the
 * machine is doing. Wall time is not that: on a machine loaded far beyond its cores a
 * millisecond of work took hundreds of wall milliseconds, and tests that bounded the work by
 * the clock failed for the machine's pace. (Deno runs test modules on threads of one process:
 * the process's CPU time would count the others' work too.)
 *
 * POSIX `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through FFI; where there is none (Windows),
 * wall time, with that caveat.
 *
 * @module
 */

const POSIX = Deno.build.os !== "windows";
/** CLOCK_THREAD_CPUTIME_ID: 3 on Linux, 16 on macOS. */
const THREAD_CLOCK = Deno.build.os === "darwin" ? 16 : 3;

let clock: ((id: number, timespec: Uint8Array) => number) | undefined;

function load(): (id: number, timespec: Uint8Array) => number {
  const path = Deno.build.os === "darwin" ? "/usr/lib/libSystem.B.dylib" : "libc.so.6";
  const lib = Deno.dlopen(path, {
    clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
  });
  return (id, timespec) => lib.symbols.clock_gettime(id, timespec);
}

/** Milliseconds of CPU this thread has used (wall milliseconds where that cannot be told). */
export function threadCpuMs(): number {
  if (!POSIX) return performance.now();
  clock ??= load();
  const timespec = new Uint8Array(16);
  if (clock(THREAD_CLOCK, timespec) !== 0) throw new Error("clock_gettime failed");
  const view = new DataView(timespec.buffer);
  return Number(view.getBigInt64(0, true)) * 1000 + Number(view.getBigInt64(8, true)) / 1e6;
}

/** The CPU time `work` took on this thread, in milliseconds, and its result. */
export function cpuTimed<T>(work: () => T): { ms: number; result: T } {
  const started = threadCpuMs();
  const result = work();
  return { ms: threadCpuMs() - started, result };
}
