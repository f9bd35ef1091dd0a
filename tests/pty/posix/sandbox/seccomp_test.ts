/**
 * The sandbox's seccomp filter (src/pty/posix/sandbox/seccomp.ts), run by a BPF interpreter over
 * hostile system calls: random numbers, random 64-bit arguments, other architectures, x32 calls,
 * every network mode, with and without the server's protection. Each verdict must be what the
 * reference (written here from the filter's documentation) says.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  AF_INET,
  AF_INET6,
  AF_UNIX,
  callNumber,
  CLONE_NAMESPACES,
  DENIED,
  ENOSYS,
  EPERM,
  type FilterArch,
  type FilterOptions,
  IPPROTO_TCP,
  MSG_FASTOPEN,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  seccompFilter,
  SOCK_STREAM,
  TIOCLINUX,
  TIOCSTI,
  X32_SYSCALL_BIT,
} from "../../../../src/pty/posix/sandbox/seccomp.ts";
import { runFilter, type SeccompData } from "../../../helpers/bpf.ts";
import { fc } from "../../../helpers/arbitraries.ts";

const ARCH: Record<FilterArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };
const DENY = SECCOMP_RET_ERRNO | EPERM, ALLOW = SECCOMP_RET_ALLOW;
const SERVER = { pid: 4242, pgid: 4000 };

/** What the filter must answer (the module documentation, written as code). */
function reference(options: FilterOptions, data: SeccompData): number {
  const { arch, network, protect } = options;
  if (data.arch !== ARCH[arch]) return SECCOMP_RET_KILL_PROCESS;
  const nr = data.nr >>> 0;
  if (arch === "x86_64" && nr >= X32_SYSCALL_BIT) return DENY;
  const is = (name: Parameters<typeof callNumber>[0]) => nr === callNumber(name, arch);
  const low = (index: number) => Number(BigInt.asUintN(32, data.args[index]));
  if (DENIED.some((name) => is(name))) return DENY;
  if (is("clone3")) return SECCOMP_RET_ERRNO | ENOSYS;
  if (is("clone")) return low(0) & CLONE_NAMESPACES ? DENY : ALLOW;
  if (is("ioctl")) return low(1) === TIOCSTI || low(1) === TIOCLINUX ? DENY : ALLOW;
  if (is("socket") && network !== "on") {
    if (low(0) === AF_UNIX) return ALLOW;
    if (network === "proxy" && (low(0) === AF_INET || low(0) === AF_INET6)) {
      return (low(1) & 0xf) === SOCK_STREAM && (low(2) === 0 || low(2) === IPPROTO_TCP)
        ? ALLOW
        : DENY;
    }
    return DENY;
  }
  if (network === "proxy") {
    if (is("sendto") || is("sendmmsg")) return low(3) & MSG_FASTOPEN ? DENY : ALLOW;
    if (is("sendmsg")) return low(2) & MSG_FASTOPEN ? DENY : ALLOW;
  }
  if (protect) {
    if (is("tkill") || is("pidfd_send_signal")) return DENY;
    if (is("kill")) {
      const pid = low(0);
      return pid === protect.pid || pid === (-protect.pgid >>> 0) || pid === 0xffffffff
        ? DENY
        : ALLOW;
    }
    if (is("tgkill") || is("rt_sigqueueinfo") || is("rt_tgsigqueueinfo") || is("pidfd_open")) {
      return low(0) === protect.pid ? DENY : ALLOW;
    }
  }
  return ALLOW;
}

const options = fc.record({
  arch: fc.constantFrom<FilterArch>("x86_64", "aarch64"),
  network: fc.constantFrom<FilterOptions["network"]>("off", "proxy", "on"),
  protect: fc.option(fc.constant(SERVER), { nil: undefined }),
});
/** Arguments that hit the values the filter looks at, and random 64-bit ones. */
const argument = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  fc.constantFrom(
    0n,
    1n,
    BigInt(AF_UNIX),
    BigInt(AF_INET),
    BigInt(AF_INET6),
    BigInt(SOCK_STREAM),
    BigInt(SOCK_STREAM | 0x80000),
    2n, // SOCK_DGRAM
    BigInt(IPPROTO_TCP),
    17n, // UDP
    132n, // SCTP
    262n, // MPTCP
    BigInt(TIOCSTI),
    BigInt(TIOCSTI) | (1n << 32n), // only the low 32 bits count
    BigInt(MSG_FASTOPEN),
    0x10000000n, // CLONE_NEWUSER
    0x01200011n, // what fork passes
    BigInt(SERVER.pid),
    BigInt(-SERVER.pgid >>> 0),
    0xffffffffn,
    (1n << 64n) - 1n,
  ),
);
const callNumbers = fc.oneof(
  fc.integer({ min: 0, max: 500 }),
  fc.integer({ min: X32_SYSCALL_BIT, max: X32_SYSCALL_BIT + 600 }),
  fc.integer({ min: -5, max: -1 }),
);

Deno.test("seccomp: every verdict is the documented one, for hostile calls and arguments", () => {
  fc.assert(
    fc.property(
      options,
      callNumbers,
      fc.oneof(fc.constantFrom(ARCH.x86_64, ARCH.aarch64, 0x40000003 /* i386 */), fc.integer()),
      fc.array(argument, { minLength: 6, maxLength: 6 }),
      (filter, nr, arch, args) => {
        const program = seccompFilter(filter);
        const data = { nr, arch: arch >>> 0, args };
        assertEquals(runFilter(program, data), reference(filter, data));
      },
    ),
    { numRuns: 20_000 },
  );
});

Deno.test("seccomp: the escapes the sandbox is there for are refused on both architectures", () => {
  for (const arch of ["x86_64", "aarch64"] as const) {
    const program = seccompFilter({ arch, network: "off" });
    const call = (name: Parameters<typeof callNumber>[0], ...args: bigint[]) =>
      runFilter(program, {
        nr: callNumber(name, arch),
        arch: ARCH[arch],
        args: [...args, 0n, 0n, 0n, 0n, 0n, 0n].slice(0, 6),
      });
    for (const name of ["ptrace", "mount", "unshare", "io_uring_setup", "bpf"] as const) {
      assertEquals(call(name), DENY, `${arch} ${name}`);
    }
    assertEquals(call("socket", BigInt(AF_INET), 2n), DENY); // UDP
    assertEquals(call("socket", BigInt(AF_UNIX), 1n), ALLOW);
    assertEquals(call("clone", 0x10000000n), DENY);
    assertEquals(call("clone", 0x01200011n), ALLOW);
    assertEquals(call("clone3"), SECCOMP_RET_ERRNO | ENOSYS);
    // Another architecture's calls kill the process.
    assertEquals(
      runFilter(program, { nr: 1, arch: 0x40000003, args: [0n, 0n, 0n, 0n, 0n, 0n] }),
      SECCOMP_RET_KILL_PROCESS,
    );
  }
});
