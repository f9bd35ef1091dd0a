/**
 * Helpers for tests that start real children: output collection and process inspection.
 *
 * @module
 */
import type { ChildProcess, ExitStatus, SpawnOptions } from "../../src/pty/mod.ts";
import { spawn } from "../../src/pty/mod.ts";
import { sessionsOfAllProcesses } from "../../src/pty/posix/session.ts";

/** A child with its output collected. */
export interface Collected {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The raw bytes of a stream so far. */
  bytes: (stream: "stdout" | "stderr") => Uint8Array;
  /** Resolves when `pattern` has appeared in stdout. */
  waitFor: (pattern: string | RegExp, timeoutMs?: number) => Promise<void>;
  exited: Promise<ExitStatus>;
}

/** Spawns with the test's environment and collects output. */
export function start(
  file: string,
  args: string[],
  options: Partial<SpawnOptions> = {},
): Collected {
  const child = spawn({ file, args, cwd: Deno.cwd(), env: Deno.env.toObject(), ...options });
  const chunks: Record<string, Uint8Array[]> = { stdout: [], stderr: [] };
  const waiters: (() => void)[] = [];
  child.onData((data, stream) => {
    chunks[stream].push(data);
    for (const wake of waiters.splice(0)) wake();
  });
  const text = (stream: string) => new TextDecoder().decode(concat(chunks[stream]));
  const waitFor = async (pattern: string | RegExp, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    const matches = () =>
      typeof pattern === "string" ? text("stdout").includes(pattern) : pattern.test(text("stdout"));
    while (!matches()) {
      if (Date.now() > deadline) {
        throw new Error(
          `timed out waiting for ${pattern}; output: ${JSON.stringify(text("stdout"))}`,
        );
      }
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return {
    child,
    stdout: () => text("stdout"),
    stderr: () => text("stderr"),
    bytes: (stream) => concat(chunks[stream]),
    waitFor,
    exited: child.exited,
  };
}

/** Resolves with `promise`, or rejects with `message` if it takes longer than `ms`. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(message)), ms)
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A new temporary directory: in the system's temp folder, or the working directory if it has none. */
export function tempDir(prefix: string): string {
  try {
    return Deno.makeTempDirSync({ prefix });
  } catch {
    return Deno.makeTempDirSync({ prefix, dir: Deno.cwd() });
  }
}

/** Concatenates byte chunks. */
export function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The pids in session `sid` (Linux /proc). */
export function sessionMembers(sid: number): number[] {
  return sessionsOfAllProcesses().filter(([, session]) => session === sid).map(([pid]) => pid);
}

/** The process's state letter from /proc (Z for a zombie), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** The pids whose parent is `ppid`. */
export function childrenOf(ppid: number): number[] {
  const result: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === ppid) result.push(pid);
    } catch {
      // gone
    }
  }
  return result;
}

/**
 * Polls until `check` is true or `timeoutMs` passes; returns whether it became true. `step`, if
 * given, runs before each check (to fetch fresh state).
 */
export async function eventually(
  check: () => boolean,
  timeoutMs = 5000,
  step?: () => unknown,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (step) await step();
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Pids of processes whose command line contains (or, with `prefix`, starts with) `marker`. */
export function processesWith(marker: string, prefix = false): number[] {
  const result: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid) || pid === Deno.pid) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
      const found = prefix ? cmdline.startsWith(marker) : cmdline.includes(marker);
      if (found && processState(pid) !== "Z") result.push(pid);
    } catch {
      // gone
    }
  }
  return result;
}
