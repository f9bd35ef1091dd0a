/**
 * Signal numbers of Linux and macOS, and decoding of `waitpid` status words.
 *
 * @module
 */
import type { ExitStatus } from "../types.ts";

const COMMON: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
  SIGXFSZ: 25,
  SIGVTALRM: 26,
  SIGPROF: 27,
  SIGWINCH: 28,
};

const LINUX: Record<string, number> = {
  ...COMMON,
  SIGBUS: 7,
  SIGUSR1: 10,
  SIGUSR2: 12,
  SIGSTKFLT: 16,
  SIGCHLD: 17,
  SIGCONT: 18,
  SIGSTOP: 19,
  SIGTSTP: 20,
  SIGTTIN: 21,
  SIGTTOU: 22,
  SIGURG: 23,
  SIGIO: 29,
  SIGPWR: 30,
  SIGSYS: 31,
};

const DARWIN: Record<string, number> = {
  ...COMMON,
  SIGEMT: 7,
  SIGBUS: 10,
  SIGSYS: 12,
  SIGURG: 16,
  SIGSTOP: 17,
  SIGTSTP: 18,
  SIGCONT: 19,
  SIGCHLD: 20,
  SIGTTIN: 21,
  SIGTTOU: 22,
  SIGIO: 23,
  SIGINFO: 29,
  SIGUSR1: 30,
  SIGUSR2: 31,
};

const TABLE = Deno.build.os === "darwin" ? DARWIN : LINUX;
const NAMES = new Map(Object.entries(TABLE).map(([name, num]) => [num, name]));

/** The number of a signal on this OS. */
export function signalNumber(name: string): number {
  const num = TABLE[name];
  if (num === undefined) throw new Error(`unknown signal ${name}`);
  return num;
}

/** The name of a signal number on this OS (`SIG42` for one without a name). */
export function signalName(num: number): string {
  return NAMES.get(num) ?? `SIG${num}`;
}

/** Decodes a `waitpid` status word (the encoding is the same on Linux and macOS). */
export function decodeWaitStatus(status: number): ExitStatus {
  const low = status & 0x7f;
  if (low === 0) return { exitCode: (status >> 8) & 0xff, signal: null };
  return { exitCode: null, signal: signalName(low) };
}
