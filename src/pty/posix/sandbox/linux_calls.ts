/**
 * The Linux calls that confine a thread, bound through Deno FFI: Landlock's three system calls
 * (raw `syscall()`, which glibc does not wrap), `prctl` for no_new_privs, seccomp, the
 * capability bounding set, ambient capabilities and securebits, and `capget`/`capset`.
 *
 * `syscall()` is variadic and FFI has no variadic calls: each system call gets its own
 * declaration with exactly its argument count (one wrong count made landlock_add_rule answer
 * EINVAL). Every wrapper answers the call's result and, when it failed, its errno, read right
 * after the call on the same thread. All of them act on the CALLING thread only: this is what
 * lets a dedicated thread (a Worker) confine itself and start a child, leaving the server's
 * other threads as they were.
 *
 * @example
 * ```ts
 * import { landlockAbi } from "./linux_calls.ts";
 * landlockAbi(); // 7 on Linux 6.15 and later, 0 where Landlock is off
 * ```
 * @module
 */
import { errno, libc } from "../libc.ts";

/** System call numbers: Landlock's are the same on every architecture. */
const NR = {
  landlock_create_ruleset: 444n,
  landlock_add_rule: 445n,
  landlock_restrict_self: 446n,
};

const SYMBOLS = {
  // syscall(SYS_landlock_create_ruleset, attr, size, flags)
  landlock_create_ruleset: {
    name: "syscall",
    parameters: ["i64", "buffer", "usize", "u32"],
    result: "i64",
  },
  // syscall(SYS_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags)
  landlock_add_rule: {
    name: "syscall",
    parameters: ["i64", "i32", "u32", "buffer", "u32"],
    result: "i64",
  },
  // syscall(SYS_landlock_restrict_self, ruleset_fd, flags)
  landlock_restrict_self: { name: "syscall", parameters: ["i64", "i32", "u32"], result: "i64" },
  capget: { parameters: ["buffer", "buffer"], result: "i32" },
  capset: { parameters: ["buffer", "buffer"], result: "i32" },
  gettid: { parameters: [], result: "i32" },
  getpgrp: { parameters: [], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

type Calls = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
let loaded: Calls | undefined;

function calls(): Calls {
  return loaded ??= Deno.dlopen("libc.so.6", SYMBOLS).symbols;
}

/** A call's result, and its errno when it failed (result < 0). */
export interface CallResult {
  result: number;
  errno: number;
}

function answer(result: number | bigint): CallResult {
  const value = Number(result);
  return { result: value, errno: value < 0 ? errno() : 0 };
}

/** `LANDLOCK_CREATE_RULESET_VERSION`: asks for the ABI version instead of a ruleset. */
export const LANDLOCK_CREATE_RULESET_VERSION = 1;
/** Rule types. */
export const LANDLOCK_RULE_PATH_BENEATH = 1, LANDLOCK_RULE_NET_PORT = 2;

/** `landlock_create_ruleset(attr, size, flags)`: a ruleset's fd, or the ABI version. */
export function landlockCreateRuleset(
  attr: Uint8Array<ArrayBuffer> | null,
  size: number,
  flags: number,
): CallResult {
  return answer(
    calls().landlock_create_ruleset(NR.landlock_create_ruleset, attr, BigInt(size), flags),
  );
}

/** `landlock_add_rule(ruleset_fd, rule_type, rule_attr, flags)`. */
export function landlockAddRule(
  rulesetFd: number,
  ruleType: number,
  attr: Uint8Array<ArrayBuffer>,
  flags = 0,
): CallResult {
  return answer(calls().landlock_add_rule(NR.landlock_add_rule, rulesetFd, ruleType, attr, flags));
}

/** `landlock_restrict_self(ruleset_fd, flags)`: confines the calling thread, for good. */
export function landlockRestrictSelf(rulesetFd: number, flags = 0): CallResult {
  return answer(calls().landlock_restrict_self(NR.landlock_restrict_self, rulesetFd, flags));
}

/** The kernel's Landlock ABI version; 0 where Landlock is not there or not enabled. */
export function landlockAbi(): number {
  const { result } = landlockCreateRuleset(null, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return result > 0 ? result : 0;
}

/** prctl options. */
export const PR = {
  CAPBSET_READ: 23,
  CAPBSET_DROP: 24,
  GET_SECUREBITS: 27,
  SET_SECUREBITS: 28,
  SET_NO_NEW_PRIVS: 38,
  GET_NO_NEW_PRIVS: 39,
  GET_SECCOMP: 21,
  SET_SECCOMP: 22,
  CAP_AMBIENT: 47,
} as const;
/** `PR_CAP_AMBIENT` operations. */
export const PR_CAP_AMBIENT_IS_SET = 1, PR_CAP_AMBIENT_CLEAR_ALL = 4;
/** `SECCOMP_MODE_FILTER`. */
export const SECCOMP_MODE_FILTER = 2;

/** `prctl(option, a, b, c, d)` with integer arguments. */
export function prctl(option: number, a = 0n, b = 0n, c = 0n, d = 0n): CallResult {
  const call = libc().prctl;
  if (!call) return { result: -1, errno: 38 /* ENOSYS */ };
  return answer(call(option, a, b, c, d));
}

/**
 * Installs a seccomp filter on the calling thread (no TSYNC: the server's other threads keep
 * none). `program` is the filter's `struct sock_filter` array; no_new_privs must be set first.
 */
export function installSeccompFilter(program: Uint8Array<ArrayBuffer>): CallResult {
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
  const fprog = new Uint8Array(16);
  const view = new DataView(fprog.buffer);
  view.setUint16(0, program.length / 8, true);
  view.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(program))), true);
  const result = prctl(
    PR.SET_SECCOMP,
    BigInt(SECCOMP_MODE_FILTER),
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(fprog))),
  );
  keep(program, fprog);
  return result;
}

/** `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set. */
const CAPABILITY_VERSION_3 = 0x20080522;

/** A thread's capability sets, as 64-bit masks. */
export interface Capabilities {
  effective: bigint;
  permitted: bigint;
  inheritable: bigint;
}

/** `capget` of the calling thread. */
export function capget(): Capabilities | CallResult {
  const header = capabilityHeader();
  const data = new Uint8Array(24);
  const result = answer(calls().capget(header, data));
  if (result.result < 0) return result;
  const view = new DataView(data.buffer);
  const set = (offset: number) =>
    BigInt(view.getUint32(offset, true)) | (BigInt(view.getUint32(offset + 12, true)) << 32n);
  return { effective: set(0), permitted: set(4), inheritable: set(8) };
}

/** `capset` of the calling thread. */
export function capset(capabilities: Capabilities): CallResult {
  const data = new Uint8Array(24);
  const view = new DataView(data.buffer);
  const put = (offset: number, mask: bigint) => {
    view.setUint32(offset, Number(mask & 0xffffffffn), true);
    view.setUint32(offset + 12, Number(mask >> 32n), true);
  };
  put(0, capabilities.effective);
  put(4, capabilities.permitted);
  put(8, capabilities.inheritable);
  return answer(calls().capset(capabilityHeader(), data));
}

function capabilityHeader(): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array(8);
  new DataView(header.buffer).setUint32(0, CAPABILITY_VERSION_3, true); // pid 0: this thread
  return header;
}

/** The calling thread's id. */
export function gettid(): number {
  return calls().gettid();
}

/** The calling process's process group. */
export function getpgrp(): number {
  return calls().getpgrp();
}

/** Uses its arguments, so that nothing they hold can be collected before this point. */
function keep(..._held: unknown[]): void {}
