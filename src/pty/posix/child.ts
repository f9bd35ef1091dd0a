/**
 * A running POSIX child: its streams driven by the reactor, its exit learnt from `waitpid`,
 * its signals sent to its whole session.
 *
 * @module
 */
import { ChildBase } from "../child.ts";
import type { SignalName, StdioMode } from "../types.ts";
import { setWindowSize } from "./pty.ts";
import type { PosixReactor } from "./reactor.ts";
import { signalSession } from "./session.ts";
import { decodeWaitStatus, signalNumber } from "./signals.ts";
import { FdReader, FdWriter, SharedFd } from "./streams.ts";

/** How long output may keep arriving after the child was reaped before we stop waiting. */
const DRAIN_GRACE_MS = 1000;
/** The terminal's end-of-file character (VEOF, Ctrl+D). */
const EOF_CHAR = new Uint8Array([0x04]);

/** See the module documentation. */
export class PosixChild extends ChildBase {
  readonly codePage = null;
  protected readonly readers: FdReader[];
  protected readonly writer: FdWriter;
  protected readonly endOfInput = EOF_CHAR;
  #master: number | undefined;

  /** `fds`: [master] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  constructor(pid: number, mode: StdioMode, private readonly loop: PosixReactor, fds: number[]) {
    super(pid, mode, DRAIN_GRACE_MS);
    const ended = () => this.readerEnded();
    if (mode === "pty") {
      const master = new SharedFd(fds[0], 2);
      this.#master = fds[0];
      this.writer = new FdWriter(loop, master);
      this.readers = [new FdReader(loop, master, this.emitter("stdout"), ended)];
    } else {
      this.writer = new FdWriter(loop, new SharedFd(fds[0], 1));
      this.readers = [
        new FdReader(loop, new SharedFd(fds[1], 1), this.emitter("stdout"), ended),
        new FdReader(loop, new SharedFd(fds[2], 1), this.emitter("stderr"), ended),
      ];
    }
    loop.watchChild(pid, (status) => this.exitedWith(decodeWaitStatus(status)));
  }

  resize(cols: number, rows: number): void {
    if (this.#master === undefined) throw new Error("resize needs a terminal (PTY mode)");
    if (this.hasExited) throw new Error("the program has exited");
    const failure = setWindowSize(this.#master, cols, rows);
    if (failure) throw new Error(`resize failed: ${failure}`);
  }

  protected signalTree(signal: SignalName): void {
    signalSession(this.pid, signalNumber(signal));
  }

  protected override afterExit(): void {
    // Whatever the child left running in its session (background jobs) goes with it; this
    // also closes their copies of the terminal, so the drain ends with EIO promptly.
    signalSession(this.pid, signalNumber("SIGKILL"));
  }

  protected override outputEndedFirst(): void {
    this.loop.reap();
  }

  protected release(): void {
    this.writer.close();
  }
}
