/**
 * Children on Linux and macOS, started with `posix_spawn` in a new session whose controlling
 * terminal is a fresh PTY (or, in pipe mode, with three pipes and no terminal).
 *
 * Guarantees: signals reset to their defaults and none blocked; no fd of the server reaches
 * the child; IUTF8 set; output read until end of file even after the child has exited; the
 * exit is reported only after that; whatever the child left running in its session is killed
 * when it exits, so no process outlives the command that started it.
 *
 * @module
 */
import {
  type ChildProcess,
  type DataListener,
  type ExitStatus,
  type SignalName,
  SpawnError,
  type SpawnOptions,
  type StdioMode,
  type StreamName,
} from "../types.ts";
import { checkSpawnOptions, resolveProgram } from "../resolve.ts";
import {
  C,
  cString,
  cStringArray,
  errno,
  errnoName,
  fcntl,
  ioctl,
  libc,
  OPAQUE_BYTES,
} from "./libc.ts";
import { openPipe, type PosixReactor, reactor, setNonBlocking } from "./reactor.ts";
import { FdReader, FdWriter, SharedFd } from "./streams.ts";
import { decodeWaitStatus, signalNumber } from "./signals.ts";
import { signalSession } from "./session.ts";

/** How long output may keep arriving after the child was reaped before we stop waiting. */
const DRAIN_GRACE_MS = 1000;
/** The terminal's end-of-file character (VEOF, Ctrl+D). */
const EOF_CHAR = new Uint8Array([0x04]);
const IS_DARWIN = Deno.build.os === "darwin";
/**
 * macOS runs setsid AFTER the file actions, so the child would have no controlling terminal;
 * this shim re-opens the terminal once the new session exists, which makes it the controlling
 * terminal, then runs the real program.
 */
const DARWIN_CTTY_SHIM = 'exec 3<>"$0"; exec 3>&-; exec "$@"';

/** Starts a child per `options`. Throws {@link SpawnError} when it cannot start. */
export function spawnPosix(options: SpawnOptions): ChildProcess {
  const mode = options.mode ?? "pty";
  checkSpawnOptions(options, "posix");
  const program = resolveProgram(options.file, { cwd: options.cwd, env: options.env });
  const loop = reactor();
  const stdio = mode === "pty" ? openTerminal(options.cols ?? 80, options.rows ?? 24) : openPipes();
  let pid: number;
  try {
    const argv = IS_DARWIN && stdio.slavePath
      ? ["/bin/sh", "-c", DARWIN_CTTY_SHIM, stdio.slavePath, program, ...options.args]
      : [options.file, ...options.args];
    pid = posixSpawn(IS_DARWIN && stdio.slavePath ? "/bin/sh" : program, argv, options, stdio);
  } catch (error) {
    for (const fd of [...stdio.parentFds, ...stdio.childFds]) libc().close(fd);
    throw error;
  } finally {
    for (const fd of stdio.childFds) libc().close(fd);
  }
  return new PosixChild(pid, mode, loop, stdio.parentFds);
}

interface Stdio {
  /** Our ends: [master] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  parentFds: number[];
  /** The child's ends, closed in the parent once the child has started. */
  childFds: number[];
  /** In PTY mode, the slave's path, which the child opens to make it its controlling tty. */
  slavePath?: string;
}

function openTerminal(cols: number, rows: number): Stdio {
  const lib = libc();
  const flags = C.O_RDWR | C.O_NOCTTY;
  const master = lib.posix_openpt(IS_DARWIN ? flags : flags | C.O_CLOEXEC | C.O_NONBLOCK);
  if (master < 0) throw new SpawnError(errnoName(errno()), "cannot open a pseudo-terminal");
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
    if (slave < 0) throw new SpawnError(errnoName(errno()), `cannot open ${slavePath}`);
    setUtf8Input(slave);
    setWindowSize(slave, cols, rows);
    return { parentFds: [master], childFds: [slave], slavePath };
  } catch (error) {
    lib.close(master);
    throw error;
  }
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

/** TIOCSWINSZ on a terminal fd; returns the error name on failure. */
export function setWindowSize(fd: number, cols: number, rows: number): string | undefined {
  const winsize = new Uint8Array(8);
  const view = new DataView(winsize.buffer);
  view.setUint16(0, rows, true);
  view.setUint16(2, cols, true);
  return ioctl(fd, C.TIOCSWINSZ, winsize) === 0 ? undefined : errnoName(errno());
}

function openPipes(): Stdio {
  const opened: number[] = [];
  try {
    const [stdinRead, stdinWrite] = openPipe({ read: false, write: true });
    opened.push(stdinRead, stdinWrite);
    const [stdoutRead, stdoutWrite] = openPipe({ read: true, write: false });
    opened.push(stdoutRead, stdoutWrite);
    const [stderrRead, stderrWrite] = openPipe({ read: true, write: false });
    return {
      parentFds: [stdinWrite, stdoutRead, stderrRead],
      childFds: [stdinRead, stdoutWrite, stderrWrite],
    };
  } catch (error) {
    for (const fd of opened) libc().close(fd);
    throw error;
  }
}

function posixSpawn(path: string, argv: string[], options: SpawnOptions, stdio: Stdio): number {
  const lib = libc();
  const actions = new Uint8Array(OPAQUE_BYTES);
  const attr = new Uint8Array(OPAQUE_BYTES);
  const signals = new Uint8Array(OPAQUE_BYTES);
  lib.posix_spawn_file_actions_init(actions);
  lib.posix_spawnattr_init(attr);
  try {
    if (stdio.slavePath) {
      // Opened after setsid (glibc order), so the terminal becomes the controlling terminal.
      lib.posix_spawn_file_actions_addopen(actions, 0, cString(stdio.slavePath), C.O_RDWR, 0);
      lib.posix_spawn_file_actions_adddup2(actions, 0, 1);
      lib.posix_spawn_file_actions_adddup2(actions, 0, 2);
    } else {
      stdio.childFds.forEach((fd, target) =>
        lib.posix_spawn_file_actions_adddup2(actions, fd, target)
      );
    }
    if (!lib.posix_spawn_file_actions_addchdir_np) {
      throw new SpawnError("ENOSYS", "this libc lacks posix_spawn_file_actions_addchdir_np");
    }
    lib.posix_spawn_file_actions_addchdir_np(actions, cString(options.cwd));
    // Belt and braces: our fds are close-on-exec, but other code in the process may not be.
    lib.posix_spawn_file_actions_addclosefrom_np?.(actions, 3);
    lib.posix_spawnattr_setflags(
      attr,
      C.POSIX_SPAWN_SETSID | C.POSIX_SPAWN_SETSIGDEF | C.POSIX_SPAWN_SETSIGMASK |
        C.POSIX_SPAWN_CLOEXEC_DEFAULT,
    );
    // The runtime ignores SIGPIPE; children must get every signal at its default.
    lib.sigfillset(signals);
    lib.posix_spawnattr_setsigdefault(attr, signals);
    lib.sigemptyset(signals);
    lib.posix_spawnattr_setsigmask(attr, signals);
    const args = cStringArray(argv);
    const envp = cStringArray(Object.entries(options.env).map(([k, v]) => `${k}=${v}`));
    const pid = new Int32Array(1);
    const rc = lib.posix_spawn(
      new Uint8Array(pid.buffer),
      cString(path),
      actions,
      attr,
      args.array,
      envp.array,
    );
    if (rc !== 0) {
      throw new SpawnError(errnoName(rc), `cannot start '${options.file}': ${errnoName(rc)}`);
    }
    return pid[0];
  } finally {
    lib.posix_spawn_file_actions_destroy(actions);
    lib.posix_spawnattr_destroy(attr);
  }
}

/** A running child and its streams. */
class PosixChild implements ChildProcess {
  readonly exited: Promise<ExitStatus>;
  readonly outputEncoding = "utf-8";
  #resolveExited!: (status: ExitStatus) => void;
  #listeners: DataListener[] = [];
  #readers: FdReader[];
  #writer: FdWriter;
  #master: number | undefined;
  #status: ExitStatus | undefined;
  #finished = false;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly pid: number,
    readonly mode: StdioMode,
    private readonly loop: PosixReactor,
    fds: number[],
  ) {
    this.exited = new Promise((resolve) => this.#resolveExited = resolve);
    const emit = (stream: StreamName) => (data: Uint8Array) => {
      for (const listener of this.#listeners) listener(data, stream);
    };
    if (mode === "pty") {
      const master = new SharedFd(fds[0], 2);
      this.#master = fds[0];
      this.#writer = new FdWriter(loop, master);
      this.#readers = [new FdReader(loop, master, emit("stdout"), () => this.#onReaderEnd())];
    } else {
      this.#writer = new FdWriter(loop, new SharedFd(fds[0], 1));
      this.#readers = [
        new FdReader(loop, new SharedFd(fds[1], 1), emit("stdout"), () => this.#onReaderEnd()),
        new FdReader(loop, new SharedFd(fds[2], 1), emit("stderr"), () => this.#onReaderEnd()),
      ];
    }
    loop.watchChild(pid, (status) => this.#onReaped(decodeWaitStatus(status)));
  }

  onData(listener: DataListener): void {
    this.#listeners.push(listener);
  }

  write(data: Uint8Array): Promise<void> {
    if (this.#finished) return Promise.reject(new Error("the program has exited"));
    return this.#writer.write(data);
  }

  closeInput(): Promise<void> {
    if (this.#finished) return Promise.reject(new Error("the program has exited"));
    return this.mode === "pty" ? this.#writer.write(EOF_CHAR) : this.#writer.closeWhenDrained();
  }

  resize(cols: number, rows: number): void {
    if (this.#master === undefined) throw new Error("resize needs a terminal (PTY mode)");
    if (this.#finished) throw new Error("the program has exited");
    const failure = setWindowSize(this.#master, cols, rows);
    if (failure) throw new Error(`resize failed: ${failure}`);
  }

  kill(signal: SignalName = "SIGTERM"): void {
    if (this.#finished) return;
    signalSession(this.pid, signalNumber(signal));
  }

  #onReaped(status: ExitStatus): void {
    this.#status = status;
    // Whatever the child left running in its session (background jobs) goes with it; this
    // also closes their copies of the terminal, so the drain below ends with EIO promptly.
    signalSession(this.pid, signalNumber("SIGKILL"));
    if (this.#readers.every((reader) => reader.ended)) return this.#finish();
    this.#drainTimer = setTimeout(() => {
      for (const reader of this.#readers) reader.end();
    }, DRAIN_GRACE_MS);
  }

  #onReaderEnd(): void {
    if (!this.#readers.every((reader) => reader.ended)) return;
    if (this.#status) this.#finish();
    else this.loop.reap();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    this.#writer.close();
    this.#resolveExited(this.#status!);
  }
}
