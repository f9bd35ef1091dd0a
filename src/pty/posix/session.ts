/**
 * Signalling a child's whole session. Our children lead their own session and process group,
 * but an interactive shell moves each job into a group of its own, so a group signal alone
 * misses background jobs. On Linux the session's members are found in /proc; elsewhere the
 * group is what can be reached (documented in the README).
 *
 * Scans are batched: many kills in one tick (shutdown of 100 terminals) cost one /proc walk.
 *
 * @module
 */
import { libc } from "./libc.ts";

const pending = new Map<number, Set<number>>();

/** Sends `signo` to the process group `sid` now, and to every member of session `sid` soon. */
export function signalSession(sid: number, signo: number): void {
  libc().kill(-sid, signo);
  if (Deno.build.os !== "linux") return;
  if (pending.size === 0) queueMicrotask(sweep);
  const signals = pending.get(sid) ?? new Set();
  signals.add(signo);
  pending.set(sid, signals);
}

function sweep(): void {
  const wanted = new Map(pending);
  pending.clear();
  const lib = libc();
  for (const [pid, sid] of sessionsOfAllProcesses()) {
    for (const signo of wanted.get(sid) ?? []) lib.kill(pid, signo);
  }
}

/** [pid, session id] for every process in /proc. */
export function sessionsOfAllProcesses(): [number, number][] {
  const result: [number, number][] = [];
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return result;
  }
  for (const entry of entries) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      result.push([pid, Number(fields[3])]);
    } catch {
      // the process ended while we looked
    }
  }
  return result;
}
