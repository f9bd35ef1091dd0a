/**
 * The pseudo-terminal device: a master for us, a slave the child opens by path (which makes it
 * the child's controlling terminal), with IUTF8 set and the window size applied.
 *
 * @module
 */
import { type InputModes, SpawnError } from "../types.ts";
import { C, cString, errno, errnoName, fcntl, ioctl, libc, OPAQUE_BYTES } from "./libc.ts";
import { setNonBlocking } from "./reactor.ts";
import type { Stdio } from "./spawn.ts";

const IS_DARWIN = Deno.build.os === "darwin";

/** Opens a terminal of the given size: our end is the (nonblocking, close-on-exec) master. */
export function openTerminal(cols: number, rows: number): Stdio {
  const lib = libc();
  const flags = C.O_RDWR | C.O_NOCTTY;
  const master = lib.posix_openpt(IS_DARWIN ? flags : flags | C.O_CLOEXEC | C.O_NONBLOCK);
  if (master < 0) throw deviceError("cannot open a pseudo-terminal");
  try {
    if (IS_DARWIN) {
      fcntl(master, C.F_SETFD, C.FD_CLOEXEC);
      setNonBlocking(master);
    }
    if (lib.grantpt(master) !== 0 || lib.unlockpt(master) !== 0) {
      throw new SpawnError(errnoName(errno()), "cannot unlock the pseudo-terminal");
    }
    const slavePath = terminalName(master);
    // Opened here only to configure it before the child exists; the child opens it by path.
    const slave = lib.open(cString(slavePath), C.O_RDWR | C.O_NOCTTY | C.O_CLOEXEC);
    if (slave < 0) throw deviceError(`cannot open ${slavePath}`);
    setUtf8Input(slave);
    setWindowSize(slave, cols, rows);
    return { parentFds: [master], childFds: [slave], slavePath };
  } catch (error) {
    lib.close(master);
    throw error;
  }
}

/**
 * Opening a terminal failed (errno as it stands): said with the limit that was met, where that
 * is the server's or the system's rather than the request's.
 */
function deviceError(what: string): SpawnError {
  const code = errnoName(errno());
  const limit = code === "EMFILE"
    ? "the server has as many files open as it may (its descriptor limit, ulimit -n; each " +
      "terminal holds one)"
    : code === "ENFILE"
    ? "the system has as many files open as it may"
    : undefined;
  return new SpawnError(code, limit ? `${what}: ${limit} (${code})` : what);
}

function terminalName(master: number): string {
  const lib = libc();
  if (lib.ptsname_r) {
    const name = new Uint8Array(128);
    const rc = lib.ptsname_r(master, name, BigInt(name.length));
    if (rc !== 0) throw new SpawnError(errnoName(rc), "ptsname_r failed");
    return new TextDecoder().decode(name.subarray(0, name.indexOf(0)));
  }
  // macOS: ptsname is not reentrant, but all spawning happens on the one JS thread.
  const pointer = lib.ptsname(master);
  if (!pointer) throw new SpawnError(errnoName(errno()), "ptsname failed");
  return Deno.UnsafePointerView.getCString(pointer);
}

/** Sets IUTF8 so the line discipline erases whole UTF-8 characters, not bytes. */
function setUtf8Input(fd: number): void {
  const termios = new Uint8Array(OPAQUE_BYTES);
  const lib = libc();
  if (lib.tcgetattr(fd, termios) !== 0) return;
  const view = new DataView(termios.buffer);
  if (C.TCFLAG_BYTES === 8) {
    view.setBigUint64(0, view.getBigUint64(0, true) | BigInt(C.IUTF8), true);
  } else {
    view.setUint32(0, view.getUint32(0, true) | C.IUTF8, true);
  }
  lib.tcsetattr(fd, 0, /* TCSANOW */ termios);
}

/** What a terminal in line mode keeps of one line: Linux's N_TTY_BUF_SIZE - 1; macOS's MAX_CANON. */
const LINE_LIMIT = IS_DARWIN ? 1024 : 4095;

/**
 * The most bytes of one line the terminal keeps while it is in line mode (ICANON: the line
 * discipline collects a line until Enter); undefined when it passes input on as it comes.
 */
export function lineModeLimit(fd: number): number | undefined {
  const lflag = localModes(fd);
  return lflag !== undefined && lflag & C.ICANON ? LINE_LIMIT : undefined;
}

/** The terminal's input modes (see {@link InputModes}); undefined if it cannot be asked. */
export function inputModes(fd: number): InputModes | undefined {
  const lflag = localModes(fd);
  if (lflag === undefined) return undefined;
  return { lineMode: (lflag & C.ICANON) !== 0, echo: (lflag & C.ECHO) !== 0 };
}

/** The terminal's local modes (termios `c_lflag`), or undefined if tcgetattr fails. */
function localModes(fd: number): number | undefined {
  const termios = new Uint8Array(OPAQUE_BYTES);
  if (libc().tcgetattr(fd, termios) !== 0) return undefined;
  const view = new DataView(termios.buffer);
  // c_lflag is the fourth tcflag_t.
  return C.TCFLAG_BYTES === 8
    ? Number(view.getBigUint64(24, true) & 0xffffffffn)
    : view.getUint32(12, true);
}

/** TIOCSWINSZ on a terminal fd; returns the error name on failure. */
export function setWindowSize(fd: number, cols: number, rows: number): string | undefined {
  const winsize = new Uint8Array(8);
  const view = new DataView(winsize.buffer);
  view.setUint16(0, rows, true);
  view.setUint16(2, cols, true);
  return ioctl(fd, C.TIOCSWINSZ, winsize) === 0 ? undefined : errnoName(errno());
}
