/**
 * Linux's /proc, read through libc (`open`/`read`, `opendir`/`readdir`, `readlink`) instead of
 * Deno's file API. Deno refuses every read under /proc without `--allow-all`
 * (denoland/deno#25055), and the server ships with narrower flags, under which a Deno read
 * fails and whatever is built on it silently sees nothing. Through libc the same reads work
 * under any flags that allow FFI.
 *
 * Every function answers `undefined` for a process that is gone or that may not be read.
 *
 * The PTY's own reads (a child's command line, what the terminal's reader waits in, an open
 * directory's path) and the process table's; supervision (../supervision/) also reads the boot id and
 * the server's children through it.
 *
 * @example
 * ```ts
 * import { procText, processIds, processStat } from "./procfs.ts";
 * for (const pid of processIds()) {
 *   const stat = processStat(pid);
 *   if (stat?.session === 1234) console.error(pid, stat.name, procText(pid, "wchan"));
 * }
 * ```
 * @module
 */
import { C, cString, libc } from "./libc.ts";

/** Offset of `d_name` in glibc's `struct dirent` (64-bit: ino 8, off 8, reclen 2, type 1). */
const DIRENT_NAME = 19;
const CHUNK = 64 * 1024;
const chunk = new Uint8Array(CHUNK);
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The pids of every process now (the numeric entries of /proc). */
export function processIds(): number[] {
  const lib = libc();
  const dir = lib.opendir(cString("/proc"));
  if (dir === null) return [];
  const pids: number[] = [];
  try {
    for (let entry = lib.readdir(dir); entry !== null; entry = lib.readdir(dir)) {
      const name = Deno.UnsafePointerView.getCString(entry, DIRENT_NAME);
      if (/^\d+$/.test(name)) pids.push(Number(name));
    }
  } finally {
    lib.closedir(dir);
  }
  return pids;
}

/**
 * The pids of this process's children (every thread's, from /proc/self/task/TID/children), or
 * undefined when the kernel does not say (CONFIG_PROC_CHILDREN off).
 */
export function ownChildren(): number[] | undefined {
  const lib = libc();
  const dir = lib.opendir(cString("/proc/self/task"));
  if (dir === null) return undefined;
  const children: number[] = [];
  try {
    for (let entry = lib.readdir(dir); entry !== null; entry = lib.readdir(dir)) {
      const tid = Deno.UnsafePointerView.getCString(entry, DIRENT_NAME);
      if (!/^\d+$/.test(tid)) continue;
      const bytes = readProcFile("self", `task/${tid}/children`);
      if (bytes === undefined && !threadGone(tid)) return undefined;
      const text = bytes ? decoder.decode(bytes) : "";
      for (const pid of text.split(" ")) if (pid.trim()) children.push(Number(pid));
    }
  } finally {
    lib.closedir(dir);
  }
  return children;
}

/** True when the thread's directory is gone (it ended while we listed them). */
function threadGone(tid: string): boolean {
  return smallProcText("self", `task/${tid}/stat`) === undefined;
}

/** The bytes of `/proc/<pid>/<name>` (at most `limit`). */
export function readProcFile(
  pid: number | "self",
  name: string,
  limit = 1024 * 1024,
): Uint8Array | undefined {
  return readWhole(`/proc/${pid}/${name}`, limit);
}

function readWhole(path: string, limit: number): Uint8Array | undefined {
  const lib = libc();
  const fd = lib.open(cString(path), C.O_CLOEXEC /* | O_RDONLY (0) */);
  if (fd < 0) return undefined;
  try {
    const parts: Uint8Array[] = [];
    let total = 0;
    while (total < limit) {
      const n = Number(lib.read(fd, chunk, BigInt(Math.min(CHUNK, limit - total))));
      if (n < 0) return undefined; // ESRCH: the process ended while we read
      if (n === 0) break;
      parts.push(chunk.slice(0, n));
      total += n;
    }
    if (parts.length === 1) return parts[0];
    const all = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      all.set(part, at);
      at += part.length;
    }
    return all;
  } finally {
    lib.close(fd);
  }
}

/** `/proc/<pid>/<name>` as text, e.g. `procText(pid, "wchan")` or `procText(pid, "syscall")`. */
export function procText(pid: number | "self", name: string): string | undefined {
  const bytes = readProcFile(pid, name);
  return bytes && decoder.decode(bytes);
}

const pathBuffer = new Uint8Array(64);
const smallBuffer = new Uint8Array(4096);

/**
 * A small /proc file (under 4 KiB) as text, without allocations on the way: read once per
 * process for every look at the process table, so it is worth keeping cheap.
 */
function smallProcText(pid: number | string, name: string): string | undefined {
  const { written } = encoder.encodeInto(`/proc/${pid}/${name}`, pathBuffer);
  pathBuffer[written] = 0;
  const lib = libc();
  const fd = lib.open(pathBuffer, C.O_CLOEXEC);
  if (fd < 0) return undefined;
  const n = Number(lib.read(fd, smallBuffer, BigInt(smallBuffer.length)));
  lib.close(fd);
  return n > 0 ? decoder.decode(smallBuffer.subarray(0, n)) : undefined;
}

/** The fields of `/proc/<pid>/stat` this project uses. */
export interface ProcessStat {
  pid: number;
  /** The command name (at most 15 bytes; may hold spaces and parentheses). */
  name: string;
  /** R, S, D, Z (zombie), T, X (dead), ... */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Its controlling terminal's device number as the kernel encodes it (0: none; see devices.ts). */
  tty: number;
  /** When the process started, in clock ticks since boot: with the pid, its identity. */
  startTicks: number;
}

/** The process's `stat` line, parsed. */
export function processStat(pid: number | "self"): ProcessStat | undefined {
  const text = smallProcText(pid, "stat");
  if (!text) return undefined;
  // "pid (name) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice threads itrealvalue starttime ...": the name may hold
  // anything, so fields are counted from its closing parenthesis.
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  return {
    pid: Number(text.slice(0, text.indexOf(" "))),
    name: text.slice(text.indexOf("(") + 1, close),
    state: fields[0],
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    tty: Number(fields[4]),
    startTicks: Number(fields[19]),
  };
}

/**
 * The value of one variable in the environment the process was started with (what
 * `/proc/<pid>/environ` holds), or undefined if it has none or cannot be read.
 */
export function environmentVariable(pid: number, name: string): string | undefined {
  const bytes = readProcFile(pid, "environ");
  if (!bytes) return undefined;
  const prefix = encoder.encode(name + "=");
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(0, start);
    if (end < 0) end = bytes.length;
    if (
      end - start >= prefix.length && prefix.every((byte, i) => bytes[start + i] === byte)
    ) {
      return decoder.decode(bytes.subarray(start + prefix.length, end));
    }
    start = end + 1;
  }
  return undefined;
}

/** This boot's random id: start times (ticks since boot) compare only within one boot. */
export function bootId(): string | undefined {
  const bytes = readWhole("/proc/sys/kernel/random/boot_id", 64);
  return bytes && decoder.decode(bytes).trim();
}

/** The path the kernel has for an open fd of ours (or of process `pid`): `/proc/<pid>/fd/<fd>`. */
export function fdPath(fd: number, pid: number | "self" = "self"): string | undefined {
  const buffer = new Uint8Array(4097);
  const n = Number(
    libc().readlink(cString(`/proc/${pid}/fd/${fd}`), buffer, BigInt(buffer.length - 1)),
  );
  return n > 0 ? decoder.decode(buffer.subarray(0, n)) : undefined;
}

/** A small /proc file of one thread of a process (`/proc/<pid>/task/<tid>/<name>`), as text. */
export function threadText(pid: number, tid: number, name: string): string | undefined {
  return smallProcText(`${pid}/task/${tid}`, name);
}

/** The thread ids of a process (its /proc/<pid>/task entries), at most `limit` of them. */
export function threadIds(pid: number, limit = 64): number[] {
  const lib = libc();
  const dir = lib.opendir(cString(`/proc/${pid}/task`));
  if (dir === null) return [];
  const tids: number[] = [];
  try {
    for (
      let entry = lib.readdir(dir);
      entry !== null && tids.length < limit;
      entry = lib.readdir(dir)
    ) {
      const name = Deno.UnsafePointerView.getCString(entry, DIRENT_NAME);
      if (/^\d+$/.test(name)) tids.push(Number(name));
    }
  } finally {
    lib.closedir(dir);
  }
  return tids;
}

/**
 * `length` bytes of a process's memory at `address` (`/proc/<pid>/mem`), as the kernel allows
 * a tracer: our own descendants, same user (Yama's ptrace_scope 1 allows descendants too).
 */
export function processMemory(
  pid: number,
  address: bigint,
  length: number,
): Uint8Array | undefined {
  const lib = libc();
  const fd = lib.open(cString(`/proc/${pid}/mem`), C.O_CLOEXEC);
  if (fd < 0) return undefined;
  try {
    const bytes = new Uint8Array(length);
    const n = Number(lib.pread(fd, bytes, BigInt(length), address));
    return n === length ? bytes : undefined;
  } finally {
    lib.close(fd);
  }
}
