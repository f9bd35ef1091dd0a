/**
 * The seccomp filter of a sandboxed child (classic BPF over `struct seccomp_data`), written
 * here as data, so that it can be read, tested against an emulator, and installed by one
 * `prctl`. What it refuses, with EPERM unless said:
 *
 * - another architecture's calls (an i386 or x32 call on x86_64): the process is killed;
 * - ptrace and reading or writing other processes' memory (`process_vm_*`, `pidfd_getfd`);
 * - io_uring (its operations bypass the checks made on system calls);
 * - mount, umount, pivot_root, chroot and the new mount API; `unshare`, `setns`, and `clone`
 *   with any namespace flag; `clone3` answers ENOSYS (its flags cannot be seen: glibc then
 *   uses `clone`);
 * - kexec, bpf, perf_event_open, modules, reboot, swap, acct, the kernel keyring, userfaultfd,
 *   open_by_handle_at, syslog, quotactl, the clock setters, kcmp, process_madvise;
 * - `ioctl(TIOCSTI)` and `TIOCLINUX` (typing into a terminal);
 * - with the network off: every socket but AF_UNIX; through the proxy: every socket but AF_UNIX
 *   and TCP (AF_INET/AF_INET6, SOCK_STREAM, protocol 0 or TCP: no UDP, raw, SCTP or MPTCP),
 *   and `sendto`/`sendmsg`/`sendmmsg` with MSG_FASTOPEN (a connect that no connect check sees);
 * - where Landlock cannot scope signals (ABI < 6): signals to the server (its pid and process
 *   group), `kill(-1)`, `tkill` and `pidfd_send_signal` (whose target cannot be seen here), and
 *   `pidfd_open` of the server.
 *
 * Everything else is allowed: the filter confines escapes, Landlock confines files.
 *
 * @example
 * ```ts
 * import { seccompFilter } from "./seccomp.ts";
 * const program = seccompFilter({ arch: "x86_64", network: "off" });
 * program.length / 8; // instructions
 * ```
 * @module
 */

/** The architectures the filter knows the system call numbers of. */
export type FilterArch = "x86_64" | "aarch64";

/** What the filter must enforce. */
export interface FilterOptions {
  arch: FilterArch;
  /** `off`: AF_UNIX sockets only; `proxy`: also TCP; `on`: any socket. */
  network: "off" | "proxy" | "on";
  /** Set where Landlock cannot scope signals: the server's pid and process group. */
  protect?: { pid: number; pgid: number };
}

/** `AUDIT_ARCH_*`. */
const AUDIT_ARCH: Record<FilterArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** System call numbers: x86_64, and the generic table aarch64 uses. */
const CALLS = {
  ptrace: [101, 117],
  process_vm_readv: [310, 270],
  process_vm_writev: [311, 271],
  pidfd_getfd: [438, 438],
  io_uring_setup: [425, 425],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  mount: [165, 40],
  umount2: [166, 39],
  pivot_root: [155, 41],
  chroot: [161, 51],
  open_tree: [428, 428],
  move_mount: [429, 429],
  fsopen: [430, 430],
  fsconfig: [431, 431],
  fsmount: [432, 432],
  fspick: [433, 433],
  mount_setattr: [442, 442],
  open_tree_attr: [467, 467],
  unshare: [272, 97],
  setns: [308, 268],
  clone: [56, 220],
  clone3: [435, 435],
  kexec_load: [246, 104],
  kexec_file_load: [320, 294],
  bpf: [321, 280],
  perf_event_open: [298, 241],
  init_module: [175, 105],
  finit_module: [313, 273],
  delete_module: [176, 106],
  reboot: [169, 142],
  swapon: [167, 224],
  swapoff: [168, 225],
  acct: [163, 89],
  keyctl: [250, 219],
  add_key: [248, 217],
  request_key: [249, 218],
  userfaultfd: [323, 282],
  open_by_handle_at: [304, 265],
  syslog: [103, 116],
  quotactl: [179, 60],
  quotactl_fd: [443, 443],
  settimeofday: [164, 170],
  clock_settime: [227, 112],
  adjtimex: [159, 171],
  clock_adjtime: [305, 266],
  kcmp: [312, 272],
  process_madvise: [440, 440],
  ioctl: [16, 29],
  socket: [41, 198],
  sendto: [44, 206],
  sendmsg: [46, 211],
  sendmmsg: [307, 269],
  kill: [62, 129],
  tkill: [200, 130],
  tgkill: [234, 131],
  rt_sigqueueinfo: [129, 138],
  rt_tgsigqueueinfo: [297, 240],
  pidfd_open: [434, 434],
  pidfd_send_signal: [424, 424],
} as const;
type Call = keyof typeof CALLS;

/** Refused outright (EPERM). */
export const DENIED: readonly Call[] = [
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "pidfd_getfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "mount",
  "umount2",
  "pivot_root",
  "chroot",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "open_tree_attr",
  "unshare",
  "setns",
  "kexec_load",
  "kexec_file_load",
  "bpf",
  "perf_event_open",
  "init_module",
  "finit_module",
  "delete_module",
  "reboot",
  "swapon",
  "swapoff",
  "acct",
  "keyctl",
  "add_key",
  "request_key",
  "userfaultfd",
  "open_by_handle_at",
  "syslog",
  "quotactl",
  "quotactl_fd",
  "settimeofday",
  "clock_settime",
  "adjtimex",
  "clock_adjtime",
  "kcmp",
  "process_madvise",
];

/** The system call number of `call` on `arch`. */
export function callNumber(call: Call, arch: FilterArch): number {
  return CALLS[call][arch === "x86_64" ? 0 : 1];
}

// Constants of the kernel's ABI.
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const EPERM = 1, ENOSYS = 38;
/** Every CLONE_NEW* flag clone takes (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET). */
export const CLONE_NAMESPACES = 0x7e020000;
export const AF_UNIX = 1, AF_INET = 2, AF_INET6 = 10;
export const SOCK_STREAM = 1, SOCK_TYPE_MASK = 0xf, IPPROTO_TCP = 6;
export const MSG_FASTOPEN = 0x20000000;
export const TIOCSTI = 0x5412, TIOCLINUX = 0x541c;
/** x32 system calls carry this bit (x86_64). */
export const X32_SYSCALL_BIT = 0x40000000;

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const NR_OFFSET = 0, ARCH_OFFSET = 4;
/** The low 32 bits of argument `index` (little-endian). */
const argOffset = (index: number) => 16 + 8 * index;

// BPF opcodes.
const LD_W_ABS = 0x20, JEQ_K = 0x15, JGE_K = 0x35, JSET_K = 0x45, AND_K = 0x54, RET_K = 0x06;

/** A jump target: a label, or the next instruction. */
type Target = string | "next";

interface Instruction {
  code: number;
  k: number;
  jt?: Target;
  jf?: Target;
}

/** A BPF program with labels, assembled into `struct sock_filter` bytes. */
class Assembler {
  #code: Instruction[] = [];
  #labels = new Map<string, number>();

  label(name: string): this {
    this.#labels.set(name, this.#code.length);
    return this;
  }

  load(offset: number): this {
    this.#code.push({ code: LD_W_ABS, k: offset });
    return this;
  }

  and(mask: number): this {
    this.#code.push({ code: AND_K, k: mask });
    return this;
  }

  /** If A == k go to `then`, else to `otherwise`. */
  ifEqual(k: number, then: Target, otherwise: Target = "next"): this {
    this.#code.push({ code: JEQ_K, k, jt: then, jf: otherwise });
    return this;
  }

  /** If A >= k go to `then`. */
  ifAtLeast(k: number, then: Target, otherwise: Target = "next"): this {
    this.#code.push({ code: JGE_K, k, jt: then, jf: otherwise });
    return this;
  }

  /** If A & k go to `then`. */
  ifAny(k: number, then: Target, otherwise: Target = "next"): this {
    this.#code.push({ code: JSET_K, k, jt: then, jf: otherwise });
    return this;
  }

  ret(value: number): this {
    this.#code.push({ code: RET_K, k: value });
    return this;
  }

  bytes(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.#code.length * 8);
    const view = new DataView(out.buffer);
    this.#code.forEach((instruction, index) => {
      const jump = (target: Target | undefined) => {
        if (target === undefined || target === "next") return 0;
        const at = this.#labels.get(target);
        if (at === undefined) throw new Error(`seccomp: no label ${target}`);
        const offset = at - index - 1;
        if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${target} out of range`);
        return offset;
      };
      view.setUint16(index * 8, instruction.code, true);
      view.setUint8(index * 8 + 2, jump(instruction.jt));
      view.setUint8(index * 8 + 3, jump(instruction.jf));
      view.setUint32(index * 8 + 4, instruction.k >>> 0, true);
    });
    return out;
  }
}

/** The filter for `options`, as `struct sock_filter` bytes (8 per instruction). */
export function seccompFilter(options: FilterOptions): Uint8Array<ArrayBuffer> {
  const { arch, network, protect } = options;
  const nr = (call: Call) => callNumber(call, arch);
  const a = new Assembler();
  a.load(ARCH_OFFSET).ifEqual(AUDIT_ARCH[arch], "next", "kill");
  a.load(NR_OFFSET);
  if (arch === "x86_64") a.ifAtLeast(X32_SYSCALL_BIT, "deny");
  for (const call of DENIED) a.ifEqual(nr(call), "deny");
  a.ifEqual(nr("clone3"), "nosys");
  a.ifEqual(nr("clone"), "clone");
  a.ifEqual(nr("ioctl"), "ioctl");
  if (network !== "on") a.ifEqual(nr("socket"), "socket");
  if (network === "proxy") {
    a.ifEqual(nr("sendto"), "send-flags-3");
    a.ifEqual(nr("sendmmsg"), "send-flags-3");
    a.ifEqual(nr("sendmsg"), "send-flags-2");
  }
  if (protect) {
    a.ifEqual(nr("tkill"), "deny");
    a.ifEqual(nr("pidfd_send_signal"), "deny");
    a.ifEqual(nr("kill"), "kill-target");
    for (const call of ["tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"] as const) {
      a.ifEqual(nr(call), "pid-target");
    }
  }
  a.ret(SECCOMP_RET_ALLOW);

  a.label("clone").load(argOffset(0)).ifAny(CLONE_NAMESPACES, "deny").ret(SECCOMP_RET_ALLOW);
  a.label("ioctl").load(argOffset(1)).ifEqual(TIOCSTI, "deny").ifEqual(TIOCLINUX, "deny")
    .ret(SECCOMP_RET_ALLOW);
  if (network !== "on") {
    a.label("socket").load(argOffset(0)).ifEqual(AF_UNIX, "allow");
    if (network === "proxy") a.ifEqual(AF_INET, "inet").ifEqual(AF_INET6, "inet");
    a.ret(SECCOMP_RET_ERRNO | EPERM);
  }
  if (network === "proxy") {
    a.label("inet").load(argOffset(1)).and(SOCK_TYPE_MASK).ifEqual(SOCK_STREAM, "next", "deny")
      .load(argOffset(2)).ifEqual(0, "allow").ifEqual(IPPROTO_TCP, "allow").ret(
        SECCOMP_RET_ERRNO | EPERM,
      );
    a.label("send-flags-3").load(argOffset(3)).ifAny(MSG_FASTOPEN, "deny").ret(SECCOMP_RET_ALLOW);
    a.label("send-flags-2").load(argOffset(2)).ifAny(MSG_FASTOPEN, "deny").ret(SECCOMP_RET_ALLOW);
  }
  if (protect) {
    a.label("kill-target").load(argOffset(0)).ifEqual(protect.pid, "deny")
      .ifEqual(-protect.pgid >>> 0, "deny").ifEqual(0xffffffff, "deny").ret(SECCOMP_RET_ALLOW);
    a.label("pid-target").load(argOffset(0)).ifEqual(protect.pid, "deny").ret(SECCOMP_RET_ALLOW);
  }
  a.label("allow").ret(SECCOMP_RET_ALLOW);
  a.label("deny").ret(SECCOMP_RET_ERRNO | EPERM);
  a.label("nosys").ret(SECCOMP_RET_ERRNO | ENOSYS);
  a.label("kill").ret(SECCOMP_RET_KILL_PROCESS);
  return a.bytes();
}

/** The architecture of this process, if the filter knows it. */
export function hostArch(): FilterArch | undefined {
  return Deno.build.arch === "x86_64" || Deno.build.arch === "aarch64"
    ? Deno.build.arch
    : undefined;
}
