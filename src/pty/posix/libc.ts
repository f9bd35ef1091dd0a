/**
 * The libc functions the POSIX layer calls, bound through Deno FFI, with the constants and
 * struct layouts of Linux (glibc) and macOS. Loaded on first use, so importing this module on
 * Windows costs nothing.
 *
 * Variadic functions (`ioctl`, `fcntl`) are declared with fixed signatures. That matches the
 * calling convention on x86_64 and Linux/aarch64, but not on Apple silicon, where variadic
 * arguments travel on the stack: there the declaration pads the eight argument registers so
 * that the variadic argument lands in the first stack slot, where `va_arg` reads it.
 *
 * @module
 */

const IS_DARWIN = Deno.build.os === "darwin";
const APPLE_ARM = IS_DARWIN && Deno.build.arch === "aarch64";
const ARM = Deno.build.arch === "aarch64";

/** OS constants. */
export const C = IS_DARWIN
  ? {
    O_RDWR: 0x2,
    O_NOCTTY: 0x20000,
    O_NONBLOCK: 0x4,
    O_CLOEXEC: 0x1000000,
    O_DIRECTORY: 0x100000,
    O_PATH: 0, // none: a directory is opened for reading
    F_SETFD: 2,
    F_GETFL: 3,
    F_SETFL: 4,
    FD_CLOEXEC: 1,
    EINTR: 4,
    EIO: 5,
    EAGAIN: 35,
    EPIPE: 32,
    ESRCH: 3,
    ECHILD: 10,
    F_GETPATH: 50,
    F_DUPFD_CLOEXEC: 67,
    LOCK_EX: 2,
    LOCK_NB: 4,
    TIOCSWINSZ: 0x80087467n,
    IUTF8: 0x4000,
    ICANON: 0x100,
    ECHO: 0x8,
    TCFLAG_BYTES: 8,
    POSIX_SPAWN_SETSIGDEF: 0x04,
    POSIX_SPAWN_SETSIGMASK: 0x08,
    POSIX_SPAWN_SETSID: 0x0400,
    POSIX_SPAWN_CLOEXEC_DEFAULT: 0x4000,
  }
  : {
    O_RDWR: 0x2,
    O_NOCTTY: 0x100,
    O_NONBLOCK: 0x800,
    O_CLOEXEC: 0x80000,
    O_DIRECTORY: ARM ? 0x4000 : 0x10000,
    O_PATH: 0x200000,
    F_SETFD: 2,
    F_GETFL: 3,
    F_SETFL: 4,
    FD_CLOEXEC: 1,
    EINTR: 4,
    EIO: 5,
    EAGAIN: 11,
    EPIPE: 32,
    ESRCH: 3,
    ECHILD: 10,
    F_GETPATH: 0,
    F_DUPFD_CLOEXEC: 1030,
    LOCK_EX: 2,
    LOCK_NB: 4,
    TIOCSWINSZ: 0x5414n,
    IUTF8: 0x4000,
    ICANON: 0x2,
    ECHO: 0x8,
    TCFLAG_BYTES: 4,
    POSIX_SPAWN_SETSIGDEF: 0x04,
    POSIX_SPAWN_SETSIGMASK: 0x08,
    POSIX_SPAWN_SETSID: 0x80,
    POSIX_SPAWN_CLOEXEC_DEFAULT: 0,
  };

/** poll(2) event bits (the same on Linux and macOS). */
export const POLLIN = 0x1, POLLOUT = 0x4, POLLERR = 0x8, POLLHUP = 0x10, POLLNVAL = 0x20;

/**
 * Sizes generous enough for every supported libc: glibc's posix_spawn_file_actions_t is 80
 * bytes, posix_spawnattr_t 336, sigset_t 128, termios 60; macOS uses pointers and 72 bytes.
 */
export const OPAQUE_BYTES = 512;

const pad6 = ["u64", "u64", "u64", "u64", "u64", "u64"] as const;
const PADDING = [0n, 0n, 0n, 0n, 0n, 0n] as const;

const SYMBOLS = {
  posix_openpt: { parameters: ["i32"], result: "i32" },
  grantpt: { parameters: ["i32"], result: "i32" },
  unlockpt: { parameters: ["i32"], result: "i32" },
  ptsname_r: { parameters: ["i32", "buffer", "usize"], result: "i32", optional: true },
  ptsname: { parameters: ["i32"], result: "pointer" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  pipe: { parameters: ["buffer"], result: "i32" },
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
  // On the JS thread: for a look that must not wait, or waits briefly on purpose.
  poll_sync: { name: "poll", parameters: ["buffer", "u64", "i32"], result: "i32" },
  // stdio over an fd, for reads on the blocking pool (see pool_reader.ts).
  fdopen: { parameters: ["i32", "buffer"], result: "pointer" },
  setvbuf: { parameters: ["pointer", "pointer", "i32", "usize"], result: "i32" },
  fread: {
    parameters: ["buffer", "usize", "usize", "pointer"],
    result: "usize",
    nonblocking: true,
  },
  clearerr: { parameters: ["pointer"], result: "void" },
  fclose: { parameters: ["pointer"], result: "i32" },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  waitid: { parameters: ["i32", "i32", "buffer", "i32"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
  getsid: { parameters: ["i32"], result: "i32" },
  opendir: { parameters: ["buffer"], result: "pointer" },
  readdir: { parameters: ["pointer"], result: "pointer" },
  closedir: { parameters: ["pointer"], result: "i32" },
  readlink: { parameters: ["buffer", "buffer", "usize"], result: "isize" },
  access: { parameters: ["buffer", "i32"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  ftruncate: { parameters: ["i32", "i64"], result: "i32" },
  pwrite: { parameters: ["i32", "buffer", "usize", "i64"], result: "isize" },
  pread: { parameters: ["i32", "buffer", "usize", "u64"], result: "isize" },
  tcgetpgrp: { parameters: ["i32"], result: "i32" },
  // Linux (glibc 2.28+): a file's type and device numbers (see devices.ts).
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32", optional: true },
  // Linux: prctl is variadic, but its arguments are plain integers in registers there.
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32", optional: true },
  // macOS: the process table (libproc).
  proc_listallpids: { parameters: ["buffer", "i32"], result: "i32", optional: true },
  proc_pidinfo: {
    parameters: ["i32", "i32", "u64", "buffer", "i32"],
    result: "i32",
    optional: true,
  },
  posix_spawn: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  // On the blocking pool: the call returns once the child has called exec, which took 3-10 ms
  // while other children were starting (the new one waits for a CPU), all of it the event
  // loop's (250 commands started at once held every answer 2.5 s).
  posix_spawn_pooled: {
    name: "posix_spawn",
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
    nonblocking: true,
  },
  posix_spawn_file_actions_init: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_addopen: {
    parameters: ["buffer", "i32", "buffer", "i32", "u32"],
    result: "i32",
  },
  posix_spawn_file_actions_adddup2: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  posix_spawn_file_actions_addchdir_np: {
    parameters: ["buffer", "buffer"],
    result: "i32",
    optional: true,
  },
  posix_spawn_file_actions_addfchdir_np: {
    parameters: ["buffer", "i32"],
    result: "i32",
    optional: true,
  },
  posix_spawn_file_actions_addclosefrom_np: {
    parameters: ["buffer", "i32"],
    result: "i32",
    optional: true,
  },
  posix_spawnattr_init: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["buffer", "i16"], result: "i32" },
  posix_spawnattr_setsigdefault: { parameters: ["buffer", "buffer"], result: "i32" },
  posix_spawnattr_setsigmask: { parameters: ["buffer", "buffer"], result: "i32" },
  sigfillset: { parameters: ["buffer"], result: "i32" },
  sigemptyset: { parameters: ["buffer"], result: "i32" },
  tcgetattr: { parameters: ["i32", "buffer"], result: "i32" },
  tcsetattr: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  ioctl: {
    parameters: APPLE_ARM ? ["i32", "u64", ...pad6, "buffer"] : ["i32", "u64", "buffer"],
    result: "i32",
  },
  fcntl: {
    parameters: APPLE_ARM ? ["i32", "i32", ...pad6, "i64"] : ["i32", "i32", "i64"],
    result: "i32",
  },
  fcntl_buffer: {
    name: "fcntl",
    parameters: APPLE_ARM ? ["i32", "i32", ...pad6, "buffer"] : ["i32", "i32", "buffer"],
    result: "i32",
  },
  // glibc: hands the heap's free pages back to the OS (see heap.ts); on the pool, as it walks
  // every arena.
  malloc_trim: { parameters: ["usize"], result: "i32", nonblocking: true, optional: true },
  __errno_location: { parameters: [], result: "pointer", optional: true },
  __error: { parameters: [], result: "pointer", optional: true },
} as const satisfies Deno.ForeignLibraryInterface;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
let loaded: Libc | undefined;

/** The bound functions. Throws on platforms without a supported libc. */
export function libc(): Libc {
  if (loaded) return loaded;
  const path = IS_DARWIN ? "/usr/lib/libSystem.B.dylib" : "libc.so.6";
  loaded = Deno.dlopen(path, SYMBOLS).symbols;
  return loaded;
}

/** The calling thread's errno; read it right after the synchronous call that failed. */
export function errno(): number {
  const lib = libc();
  const locate = lib.__errno_location ?? lib.__error;
  const ptr = locate?.();
  return ptr ? new Deno.UnsafePointerView(ptr).getInt32() : 0;
}

/** `ioctl(fd, request, arg)` with the variadic argument placed right for this platform. */
export function ioctl(fd: number, request: bigint, arg: Uint8Array): number {
  const lib = libc() as unknown as { ioctl: (...args: unknown[]) => number };
  return APPLE_ARM ? lib.ioctl(fd, request, ...PADDING, arg) : lib.ioctl(fd, request, arg);
}

/** `fcntl(fd, cmd, buffer)` (F_GETPATH) with the variadic argument placed right. */
export function fcntlBuffer(fd: number, cmd: number, buffer: Uint8Array): number {
  const lib = libc() as unknown as { fcntl_buffer: (...args: unknown[]) => number };
  return APPLE_ARM
    ? lib.fcntl_buffer(fd, cmd, ...PADDING, buffer)
    : lib.fcntl_buffer(fd, cmd, buffer);
}

/** `fcntl(fd, cmd, arg)` with the variadic argument placed right for this platform. */
export function fcntl(fd: number, cmd: number, arg: number): number {
  const lib = libc() as unknown as { fcntl: (...args: unknown[]) => number };
  return APPLE_ARM ? lib.fcntl(fd, cmd, ...PADDING, BigInt(arg)) : lib.fcntl(fd, cmd, BigInt(arg));
}

const ERRNO_NAMES: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  3: "ESRCH",
  4: "EINTR",
  5: "EIO",
  7: "E2BIG",
  8: "ENOEXEC",
  9: "EBADF",
  10: "ECHILD",
  12: "ENOMEM",
  13: "EACCES",
  20: "ENOTDIR",
  21: "EISDIR",
  22: "EINVAL",
  23: "ENFILE",
  24: "EMFILE",
  26: "ETXTBSY",
  30: "EROFS",
  32: "EPIPE",
  38: "ENOSYS",
  95: "EOPNOTSUPP",
  [C.EAGAIN]: "EAGAIN",
};

/** The symbolic name of an errno value. */
export function errnoName(code: number): string {
  return ERRNO_NAMES[code] ?? `errno ${code}`;
}

const encoder = new TextEncoder();

/** A NUL-terminated copy of a string, for `char *` parameters. */
export function cString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/**
 * A NULL-terminated `char *[]` of the given strings. The returned `keep` array holds the
 * strings' memory: keep it referenced until the call that uses the array has returned.
 *
 * The strings share one buffer, each ending in its NUL: one encoding and one pointer for all
 * (an environment of 60 variables cost a spawn 0.2 ms as 60 buffers). A string holding a NUL
 * would end there for C, and here would misplace every string after it: it is refused.
 */
export function cStringArray(
  items: string[],
): { array: Uint8Array<ArrayBuffer>; keep: Uint8Array[] } {
  if (items.some((item) => item.includes("\0"))) throw new Error("a C string may not hold NUL");
  const bytes = encoder.encode(items.join("\0") + "\0");
  const base = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes)));
  const pointers = new BigUint64Array(items.length + 1);
  for (let i = 0, at = 0; i < items.length; i++) {
    pointers[i] = base + BigInt(at);
    at = bytes.indexOf(0, at) + 1;
  }
  return { array: new Uint8Array(pointers.buffer), keep: [bytes] };
}
