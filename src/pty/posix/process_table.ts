/**
 * The operating system's process table, as far as ending process trees needs it: every
 * process with its parent, group, session and start time. Linux reads /proc (procfs.ts);
 * macOS asks libproc (`proc_listallpids`, `proc_pidinfo`) and `getsid`.
 *
 * A pid alone is no identity (pids are reused): a process is the pair (pid, start time).
 *
 * The PTY's own: a child's identity is taken at its start (process.ts, reactor.ts) and its tree
 * is found here when it ends (tree.ts); supervision (../supervision/) only reads it too.
 *
 * @module
 */
import { libc } from "./libc.ts";
import { environmentVariable, processIds, processStat } from "./procfs.ts";

/** One process. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  /** Start time: clock ticks since boot on Linux, microseconds since the epoch on macOS. */
  start: number;
  /** Exited but not yet reaped by its parent. */
  zombie: boolean;
}

const IS_LINUX = Deno.build.os === "linux";
/** libproc: PROC_PIDTBSDINFO and the size of its struct proc_bsdinfo. */
const PROC_PIDTBSDINFO = 3, BSDINFO_BYTES = 136;
/** proc_bsdinfo.pbi_status of a zombie. */
const SZOMB = 5;

/** Every process now. Empty where the table cannot be read. */
export function processTable(): ProcessEntry[] {
  if (IS_LINUX) return processIds().map(linuxEntry).filter((entry) => entry !== undefined);
  return darwinPids().map(darwinEntry).filter((entry) => entry !== undefined);
}

/** One process, or undefined once it is gone (a zombie is still there). */
export function processEntry(pid: number): ProcessEntry | undefined {
  return IS_LINUX ? linuxEntry(pid) : darwinEntry(pid);
}

/**
 * A variable of the environment the process started with, where the OS shows it (Linux, same
 * user or root); undefined elsewhere.
 */
export function startEnvironment(pid: number, name: string): string | undefined {
  return IS_LINUX ? environmentVariable(pid, name) : undefined;
}

function linuxEntry(pid: number): ProcessEntry | undefined {
  const stat = processStat(pid);
  if (!stat) return undefined;
  return {
    pid,
    ppid: stat.ppid,
    pgrp: stat.pgrp,
    session: stat.session,
    start: stat.startTicks,
    zombie: stat.state === "Z" || stat.state === "X",
  };
}

function darwinPids(): number[] {
  const list = libc().proc_listallpids;
  if (!list) return [];
  // The count grows between calls: ask with room to spare.
  const buffer = new Int32Array(Math.max(1024, list(null, 0) + 256));
  const count = list(new Uint8Array(buffer.buffer), buffer.byteLength);
  return [...buffer.subarray(0, Math.max(0, count))].filter((pid) => pid > 0);
}

function darwinEntry(pid: number): ProcessEntry | undefined {
  const lib = libc();
  if (!lib.proc_pidinfo) return undefined;
  const info = new Uint8Array(BSDINFO_BYTES);
  if (lib.proc_pidinfo(pid, PROC_PIDTBSDINFO, 0n, info, BSDINFO_BYTES) !== BSDINFO_BYTES) {
    return undefined;
  }
  const view = new DataView(info.buffer);
  return {
    pid,
    ppid: view.getUint32(16, true),
    pgrp: view.getUint32(100, true),
    session: lib.getsid(pid),
    start: Number(view.getBigUint64(120, true)) * 1e6 + Number(view.getBigUint64(128, true)),
    zombie: view.getUint32(4, true) === SZOMB,
  };
}
