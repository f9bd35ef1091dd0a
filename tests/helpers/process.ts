/**
 * Helpers for tests that start real children: output collection and process inspection.
 *
 * @module
 */
import type { ChildProcess, ExitStatus, SpawnOptions } from "../../src/pty/mod.ts";
import { spawn } from "../../src/pty/mod.ts";
import { processStat, readProcFile } from "../../src/pty/posix/procfs.ts";
import { processTable } from "../../src/pty/posix/process_table.ts";
import { concatBytes } from "../../src/bytes.ts";

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
export async function start(
  file: string,
  args: string[],
  options: Partial<SpawnOptions> = {},
): Promise<Collected> {
  const child = await spawn({ file, args, cwd: Deno.cwd(), env: Deno.env.toObject(), ...options });
  const chunks: Record<string, Uint8Array[]> = { stdout: [], stderr: [] };
  const waiters: (() => void)[] = [];
  child.onData((data, stream) => {
    chunks[stream].push(data.slice()); // lent: read into again once this returns
    for (const wake of waiters.splice(0)) wake();
  });
  const text = (stream: string) => new TextDecoder().decode(concat(chunks[stream]));
  const waitFor = async (pattern: string | RegExp, timeoutMs = WAIT_FLOOR_MS) => {
    const deadline = Date.now() + Math.max(timeoutMs, WAIT_FLOOR_MS);
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

/** Whether something is at `path` (a link is followed). */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Concatenates byte chunks. */
export const concat = concatBytes;

/** The live pids in session `sid` (Linux). */
export function sessionMembers(sid: number): number[] {
  return processTable().filter((entry) => entry.session === sid && !entry.zombie).map((entry) =>
    entry.pid
  );
}

/** The process's state letter from /proc (Z for a zombie), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  return processStat(pid)?.state;
}

/** The pids whose parent is `ppid`. */
export function childrenOf(ppid: number): number[] {
  return processTable().filter((entry) => entry.ppid === ppid).map((entry) => entry.pid);
}

/**
 * However short a wait a test names, it waits this long before it gives up: a bound only says
 * when a test stops waiting for something that will not come, never what the answer is. On a
 * machine loaded far beyond its cores (CI beside a build), 5 and 10 s bounds ran out while
 * processes were still being ended, and the tests failed for the machine's pace.
 */
export const WAIT_FLOOR_MS = 60_000;

/**
 * Polls until `check` is true; returns whether it became true before the bound (`timeoutMs`,
 * never less than {@link WAIT_FLOOR_MS}) passed. `step`, if given, runs before each check (to
 * fetch fresh state).
 */
export async function eventually(
  check: () => boolean,
  timeoutMs = WAIT_FLOOR_MS,
  step?: () => unknown,
): Promise<boolean> {
  const deadline = Date.now() + Math.max(timeoutMs, WAIT_FLOOR_MS);
  for (;;) {
    if (step) await step();
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * True when `check` stays false for `ms`: for what must NOT happen, where nothing announces
 * that it did not (a slower machine only makes this easier to pass, never harder).
 */
export async function staysFalse(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() <= deadline) {
    if (check()) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !check();
}

/**
 * A number no other test run uses, to mark the processes a test starts (`sleep <marker>1`):
 * other work on the machine, other developers' test runs included, must not count.
 */
export function uniqueMarker(): string {
  return String(100_000 + Math.floor(Math.random() * 800_000));
}

/**
 * Live pids (not zombies, not this process) whose command line contains (or, with `prefix`,
 * starts with) `marker`. Read through libc, so it works under any permissions that allow FFI.
 */
export function processesWith(marker: string, prefix = false): number[] {
  const result: number[] = [];
  for (const entry of processTable()) {
    if (entry.pid === Deno.pid || entry.zombie) continue;
    const bytes = readProcFile(entry.pid, "cmdline");
    if (!bytes) continue;
    const cmdline = new TextDecoder().decode(bytes).replaceAll("\0", " ");
    if (prefix ? cmdline.startsWith(marker) : cmdline.includes(marker)) result.push(entry.pid);
  }
  return result;
}
