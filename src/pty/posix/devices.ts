/**
 * Character devices by number (Linux): which terminal a descriptor is, whatever name it was
 * opened by. A terminal's descriptor shows `/dev/pts/3` in `/proc/<pid>/fd` when it was opened
 * by that name, but `/dev/tty` when it was opened as the controlling terminal (getpass, ssh and
 * sudo read passwords so), and another name again through a link or a bind mount: only the
 * device number (`statx` of `/proc/<pid>/fd/<fd>`, which follows the descriptor, not a name)
 * says which device it is. `/dev/tty` itself is one device (5, 0) for everyone: it reads the
 * process's controlling terminal, which `/proc/<pid>/stat` gives as a number (`tty_nr`).
 *
 * @example
 * ```ts
 * import { CONTROLLING_TERMINAL, decodeDevice, sameDevice } from "./devices.ts";
 * decodeDevice(34816); // { major: 136, minor: 0 }: /dev/pts/0, as tty_nr holds it
 * sameDevice(decodeDevice(1280), CONTROLLING_TERMINAL); // true: (5, 0)
 * ```
 * @module
 */
import { cString, libc } from "./libc.ts";

/** A device number. */
export interface Device {
  major: number;
  minor: number;
}

/** `/dev/tty`: whichever terminal controls the process that reads it. */
export const CONTROLLING_TERMINAL: Device = { major: 5, minor: 0 };

/** Whether two device numbers are one device. */
export function sameDevice(a: Device, b: Device): boolean {
  return a.major === b.major && a.minor === b.minor;
}

/**
 * A device number as the kernel shows it in `/proc/<pid>/stat` (`tty_nr`, its `new_encode_dev`):
 * the minor's low 8 bits, then 12 bits of major, then the minor's other 12 bits, printed as a
 * signed 32-bit number. A terminal past `/dev/pts/255` has a minor over 255 (`/dev/pts/256` is
 * (136, 256)), so the major is not simply the second byte.
 */
export function decodeDevice(encoded: number): Device {
  // 32 bits, shown as a signed int: a minor past 0x7ffff reads negative.
  const bits = encoded >>> 0;
  return { major: (bits >>> 8) & 0xfff, minor: (bits & 0xff) | ((bits >>> 12) & 0xfff00) };
}

/** AT_FDCWD, AT_STATX_DONT_SYNC, STATX_TYPE (Linux, every architecture). */
const AT_FDCWD = -100, DONT_SYNC = 0x4000, STATX_TYPE = 0x1;
/** `struct statx` (the same on every architecture): its size, and where its fields are. */
const STATX_BYTES = 256, MODE = 28, RDEV_MAJOR = 128, RDEV_MINOR = 132;
const S_IFMT = 0o170000, S_IFCHR = 0o020000;
const statxBuffer = new Uint8Array(STATX_BYTES);

/**
 * The device a path is, if it is a character device: following links (`/proc/<pid>/fd/<fd>`
 * leads to the open file itself). Cached attributes are enough (AT_STATX_DONT_SYNC): a file on
 * a network or FUSE file system is not asked for fresh ones, which a hung server would never give.
 * Undefined if it is something else, is gone, may not be looked at, or there is no `statx` (glibc
 * before 2.28, macOS).
 */
export function characterDevice(path: string): Device | undefined {
  const statx = libc().statx;
  if (!statx || statx(AT_FDCWD, cString(path), DONT_SYNC, STATX_TYPE, statxBuffer) !== 0) {
    return undefined;
  }
  const view = new DataView(statxBuffer.buffer);
  if ((view.getUint16(MODE, true) & S_IFMT) !== S_IFCHR) return undefined;
  return { major: view.getUint32(RDEV_MAJOR, true), minor: view.getUint32(RDEV_MINOR, true) };
}

/** The device `fd` of process `pid` is (see {@link characterDevice}). */
export function descriptorDevice(pid: number, fd: number): Device | undefined {
  return characterDevice(`/proc/${pid}/fd/${fd}`);
}
