/**
 * Whether the program in a terminal's foreground is blocked reading the terminal (Linux): the
 * terminal's foreground process group (`tcgetpgrp` on the master), then, for its processes
 * (the group's leader first), what each thread is blocked in, from /proc (read through
 * procfs.ts): `/proc/<pid>/task/<tid>/syscall` names the system call and its arguments.
 *
 * Reading the terminal means blocked (state S) in:
 * - `read`, `readv` or `pread64` on a descriptor that is the terminal, by whichever name it was
 *   opened: its own (`/dev/pts/N`), `/dev/tty` while the terminal is the process's controlling
 *   terminal (getpass, ssh and sudo read passwords so), or any other name of the same device
 *   (told by device number: devices.ts; by name alone where there is no `statx`);
 * - `poll`/`ppoll` whose descriptors for reading are all the terminal (the `pollfd` array is read
 *   from the process's memory, `/proc/<pid>/mem`);
 * - `select`/`pselect6` whose read set holds only the terminal (likewise; Python's REPL waits so);
 * - `epoll_wait`/`epoll_pwait`/`epoll_pwait2` on an epoll set that watches only the terminal for
 *   input (`/proc/<pid>/fdinfo/<epfd>` lists what it watches).
 *
 * A sleep (`nanosleep`), a wait for a child or for the network never is, and neither is a wait on
 * the terminal and something else at once: a relay (ssh, `docker run -it`), a dev server that
 * also takes commands from the terminal, an event loop (node's REPL) may be busy with the other.
 * A process whose memory may not be read (another user, a kernel that forbids it) is not seen
 * waiting in poll or select, nor one that gave up its controlling terminal (TIOCNOTTY) and reads
 * a `/dev/tty` it opened before (the kernel does not say which terminal that one reads). Each answer also counts the thread's context switches, so a caller can tell a
 * program that has not yet woken up to read what was just typed from one that read it and
 * waits again.
 *
 * @module
 */
import type { TerminalReader } from "../types.ts";
import {
  CONTROLLING_TERMINAL,
  decodeDevice,
  descriptorDevice,
  type Device,
  sameDevice,
} from "./devices.ts";
import { libc } from "./libc.ts";
import {
  fdPath,
  processIds,
  processMemory,
  processStat,
  readProcFile,
  threadIds,
  threadText,
} from "./procfs.ts";

/** System call numbers per architecture. */
const CALLS: Record<string, Record<number, Call>> = {
  x86_64: {
    0: "read",
    19: "readv",
    17: "read",
    7: "poll",
    271: "ppoll",
    23: "select",
    270: "select",
    232: "epoll",
    281: "epoll",
    441: "epoll",
  },
  aarch64: {
    63: "read",
    65: "readv",
    67: "read",
    73: "ppoll",
    72: "select",
    22: "epoll",
    441: "epoll",
  },
};
type Call = "read" | "readv" | "poll" | "ppoll" | "select" | "epoll";

const POLLIN = 0x1, EPOLLIN = 0x1;
/** Most descriptors of a poll array, and of a select set, looked at. */
const MAX_POLL = 256, MAX_SELECT = 4096;
/** The group's members are looked up in a table at most this old (one walk for many terminals). */
const TABLE_AGE_MS = 25;
const decoder = new TextDecoder();

let table: { at: number; groups: Map<number, number[]> } | undefined;

/** The pids of a process group, the leader first. */
function groupMembers(pgid: number): number[] {
  const now = performance.now();
  if (!table || now - table.at > TABLE_AGE_MS) {
    const groups = new Map<number, number[]>();
    for (const pid of processIds()) {
      const stat = processStat(pid);
      if (!stat || stat.state === "Z") continue;
      const members = groups.get(stat.pgrp) ?? [];
      members.push(pid);
      groups.set(stat.pgrp, members);
    }
    table = { at: now, groups };
  }
  const members = table.groups.get(pgid) ?? [];
  return [pgid, ...members.filter((pid) => pid !== pgid)];
}

/** A terminal as its readers are told apart: the path of its device, and the device's number. */
export interface Terminal {
  path: string;
  /** Undefined where numbers cannot be known (no statx): descriptors are then told by name. */
  device: Device | undefined;
}

/**
 * The thread of the terminal's foreground group that is blocked reading the terminal, or
 * null if none is. `master` is our end.
 */
export function terminalReader(master: number, terminal: Terminal): TerminalReader | null {
  const pgid = libc().tcgetpgrp(master);
  if (pgid <= 0) return null;
  const leader = readerIn(pgid, terminal);
  if (leader) return leader;
  for (const pid of groupMembers(pgid).slice(1, 64)) {
    const reader = readerIn(pid, terminal);
    if (reader) return reader;
  }
  return null;
}

/** The thread of `pid` blocked reading `terminal`: null if none, undefined if `pid` is gone. */
function readerIn(pid: number, terminal: Terminal): TerminalReader | null | undefined {
  const stat = processStat(pid);
  if (!stat || stat.state === "Z") return undefined;
  // A single-threaded process reads (or not) in its main thread; others are looked through.
  const tids = [pid, ...threadIds(pid).filter((tid) => tid !== pid)];
  for (const tid of tids) {
    const syscall = threadText(pid, tid, "syscall");
    if (syscall === undefined || !blockedReading(pid, syscall, terminal, stat.tty)) continue;
    const state = threadText(pid, tid, "stat");
    // Still blocked in it (not woken meanwhile): interruptible sleep.
    if (!state || state[state.lastIndexOf(")") + 2] !== "S") continue;
    return { pid, tid, switches: contextSwitches(threadText(pid, tid, "status")) };
  }
  return null;
}

/**
 * Whether a thread's `syscall` line shows it waiting for input from `terminal`; `controlling` is
 * the process's controlling terminal (`tty_nr`).
 */
function blockedReading(
  pid: number,
  syscall: string,
  terminal: Terminal,
  controlling: number,
): boolean {
  const fields = syscall.trim().split(" ");
  const call = CALLS[Deno.build.arch]?.[Number(fields[0])];
  if (!call || fields.length < 4) return false;
  const arg = (n: number) => BigInt(fields[1 + n]);
  const isTerminal = (fd: number) => isDescriptorOf(terminal, pid, fd, controlling);
  /** The descriptors waited on for reading are some, and all the terminal. */
  const onlyTerminal = (fds: number[]) => fds.length > 0 && fds.every(isTerminal);
  switch (call) {
    case "read":
    case "readv":
      return isTerminal(Number(arg(0)));
    case "poll":
    case "ppoll": {
      const count = Math.min(Number(arg(1)), MAX_POLL);
      const array = count > 0 ? processMemory(pid, arg(0), count * 8) : undefined;
      if (!array) return false;
      const view = new DataView(array.buffer);
      const reading: number[] = [];
      for (let i = 0; i < count; i++) {
        const fd = view.getInt32(i * 8, true);
        if (fd >= 0 && view.getInt16(i * 8 + 4, true) & POLLIN) reading.push(fd);
      }
      return onlyTerminal(reading);
    }
    case "select": {
      const count = Math.min(Number(arg(0)), MAX_SELECT);
      const set = count > 0 && arg(1) !== 0n
        ? processMemory(pid, arg(1), Math.ceil(count / 64) * 8)
        : undefined;
      if (!set) return false;
      const reading: number[] = [];
      for (let fd = 0; fd < count; fd++) if (set[fd >> 3] & (1 << (fd & 7))) reading.push(fd);
      return onlyTerminal(reading);
    }
    case "epoll": {
      const info = readProcFile(pid, `fdinfo/${Number(arg(0))}`, 64 * 1024);
      if (!info) return false;
      const reading: number[] = [];
      for (
        const match of decoder.decode(info).matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)
      ) {
        if (parseInt(match[2], 16) & EPOLLIN) reading.push(Number(match[1]));
      }
      return onlyTerminal(reading);
    }
  }
}

/**
 * Whether descriptor `fd` of process `pid` is `terminal`, by whichever name it was opened. A
 * member of the terminal's foreground group is in the terminal's session, whose controlling
 * terminal it is, unless it gave it up (TIOCNOTTY): its `/dev/tty` counts only while it has not.
 */
function isDescriptorOf(terminal: Terminal, pid: number, fd: number, controlling: number): boolean {
  if (fd < 0) return false;
  if (!terminal.device) return fdPath(fd, pid) === terminal.path;
  // One statx, no readlink: a select on 4096 descriptors is looked at in 20-35 ms, not 60-90.
  const device = descriptorDevice(pid, fd);
  if (!device) return false;
  return sameDevice(device, terminal.device) ||
    (sameDevice(device, CONTROLLING_TERMINAL) &&
      sameDevice(decodeDevice(controlling), terminal.device));
}

/** Voluntary plus involuntary context switches, from a `status` file. */
function contextSwitches(status: string | undefined): number {
  let total = 0;
  for (const match of (status ?? "").matchAll(/ctxt_switches:\s*(\d+)/g)) total += Number(match[1]);
  return total;
}
