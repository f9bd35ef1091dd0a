/**
 * A running Windows child: its pipes served by the completion port, its exit learnt from the
 * process handle's signalled state (never from the exit code's value: a program may exit with
 * 259, STILL_ACTIVE) when the job reports an exit (or a poll finds it), its tree ended through
 * the job object, and asked to stop through its console first (Ctrl+C, or the console closing).
 *
 * End of output on a pseudoconsole: conhost keeps the output pipe open after the child exits,
 * so the output is drained until it goes quiet, then the pseudoconsole is closed (off the
 * reading path) and reading goes on until the pipe breaks.
 *
 * @module
 */
import { log } from "../../log.ts";
import { ChildBase } from "../child.ts";
import { type SignalName, type StdioMode, WRITE_TIMEOUT_MS } from "../types.ts";
import { win32 } from "node:path";
import { askConsoleCodePage } from "./console_code_page.ts";
import { type Handle, kernel32, systemDirectory, W } from "./kernel32.ts";
import { closePseudoConsole, resizePseudoConsole } from "./pseudoconsole.ts";
import type { WindowsReactor } from "./reactor.ts";
import { OverlappedReader, OverlappedWriter } from "./streams.ts";

/** Output must be quiet this long after the exit before the pseudoconsole is closed. */
const QUIET_MS = 100;
/** Longest wait for quiet output, and for the pipes to break once conhost is told to go. */
const DRAIN_LIMIT_MS = 2000;
/** The exit code a killed tree reports. */
const KILLED_EXIT_CODE = 1;
/** A console reads Ctrl+Z then Enter as end of input. */
const CONSOLE_EOF = new Uint8Array([0x1a, 0x0d]);
/** Ctrl+C typed into a console: conhost sends CTRL_C_EVENT to every process attached. */
const CTRL_C = new Uint8Array([0x03]);
/** Signals asked of a console as Ctrl+C. */
const INTERRUPTS: readonly SignalName[] = ["SIGINT", "SIGTERM", "SIGQUIT"];
/** Signals whose default action on POSIX is to do nothing: nothing to do here either. */
const HARMLESS: readonly SignalName[] = ["SIGWINCH", "SIGCONT"];

/** What a child's bytes are in `mode` (see ChildProcess.codePage). */
export function windowsCodePage(mode: StdioMode): "utf-8" | number {
  return mode === "pty" ? "utf-8" : kernel32().GetOEMCP();
}

/** Our ends of a child's streams. */
export interface WindowsChildIo {
  /** [input, output] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  streams: Handle[];
  /**
   * The pseudoconsole: the terminal in PTY mode; in pipe mode a console nobody sees, with our
   * ends of its [input, output] pipes, kept for control events.
   */
  console?: { handle: Handle; pipes?: Handle[] };
}

/** See the module documentation. */
export class WindowsChild extends ChildBase {
  readonly codePage: "utf-8" | number;
  protected readonly readers: OverlappedReader[];
  protected readonly writer: OverlappedWriter;
  protected readonly endOfInput = CONSOLE_EOF;
  /** Where Ctrl+C is typed: the terminal's input, or the pipe-mode console's. */
  readonly #consoleInput: OverlappedWriter | undefined;
  #consoleClosed = false;
  #jobKey: bigint | undefined;
  /** The signal that ended the tree (TerminateJobObject), if one did. */
  #killedBy: SignalName | undefined;
  /** The last signal the console was asked to pass on (Ctrl+C typed counts as SIGINT). */
  #asked: SignalName | undefined;
  #exitPoll: ReturnType<typeof setInterval> | undefined;

  constructor(
    pid: number,
    mode: StdioMode,
    private readonly loop: WindowsReactor,
    private readonly process: Handle,
    private readonly job: Handle,
    private readonly io: WindowsChildIo,
  ) {
    super(pid, mode, DRAIN_LIMIT_MS * 2);
    this.codePage = windowsCodePage(mode);
    const ended = () => this.readerEnded();
    const [input, ...outputs] = io.streams;
    this.writer = new OverlappedWriter(loop, input);
    this.readers = outputs.map((handle, i) =>
      new OverlappedReader(loop, handle, this.emitter(i === 0 ? "stdout" : "stderr"), ended)
    );
    const consolePipes = io.console?.pipes;
    if (consolePipes) {
      // What programs write to the hidden console itself (CON) is read and dropped, so that
      // conhost never blocks on a full pipe.
      this.#consoleInput = new OverlappedWriter(loop, consolePipes[0]);
      this.readers.push(new OverlappedReader(loop, consolePipes[1], () => {}, ended));
    } else if (io.console) {
      this.#consoleInput = this.writer;
    }
    if (job !== null) {
      try {
        this.#jobKey = loop.addJob(job, {
          completed: (pid, message) => {
            const exit = message === W.JOB_OBJECT_MSG_EXIT_PROCESS ||
              message === W.JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS;
            if (
              (exit && Number(pid) === this.pid) || message === W.JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO
            ) this.#checkExit();
          },
        });
      } catch (error) {
        log.warn("job notifications unavailable: exits are polled", { error });
      }
    }
    // Without job notifications exits are polled; with them, a slow poll covers an exit that
    // happened before the job was wired to the port.
    this.#exitPoll = setInterval(() => this.#checkExit(), this.#jobKey === undefined ? 250 : 1000);
    this.#checkExit();
  }

  /**
   * Input. Ctrl+C typed into a terminal is noted (a program it ends exits with 0xC000013A: that
   * was SIGINT). In pipe mode the program's input is a pipe, where 0x03 is a byte like any
   * other: a write of Ctrl+C alone is typed into the command's console instead, as a terminal
   * would (CTRL_C_EVENT to every program attached).
   */
  override write(data: Uint8Array, timeoutMs?: number): Promise<void> {
    if (!this.hasExited && data.includes(0x03)) {
      if (this.mode === "pipe" && data.length === 1 && this.#consoleInput) {
        this.#asked = "SIGINT";
        return this.#consoleInput.write(CTRL_C, timeoutMs ?? WRITE_TIMEOUT_MS);
      }
      if (this.mode === "pty") this.#asked = "SIGINT";
    }
    return super.write(data, timeoutMs);
  }

  /** A console ends a line on Enter (`\r`), not on a line feed: each is typed as Enter. */
  protected override typedLast(data: Uint8Array): Uint8Array {
    return super.typedLast(data.map((byte) => byte === 0x0a ? 0x0d : byte));
  }

  /** The hidden console's code page now (pipe mode; see console_code_page.ts). */
  consoleCodePage(): Promise<number | undefined> {
    const console = this.io.console;
    if (this.mode !== "pipe" || !console || this.#consoleClosed || this.hasExited) {
      return Promise.resolve(undefined);
    }
    return askConsoleCodePage(console.handle, win32.join(systemDirectory(), "cmd.exe"));
  }

  resize(cols: number, rows: number): void {
    if (this.mode !== "pty" || !this.io.console) {
      throw new Error("resize needs a terminal (PTY mode)");
    }
    if (this.hasExited) throw new Error("the program has exited");
    resizePseudoConsole(this.io.console.handle, cols, rows);
  }

  protected signalTree(signal: SignalName): void {
    if (HARMLESS.includes(signal)) return;
    if (this.#consoleInput && INTERRUPTS.includes(signal)) {
      this.#asked = signal;
      this.#consoleInput.write(CTRL_C, WRITE_TIMEOUT_MS).catch(() => {});
      return;
    }
    if (this.io.console && signal === "SIGHUP") {
      this.#asked = signal;
      this.#closeConsole();
      return;
    }
    this.#killedBy ??= signal;
    const k = kernel32();
    if (this.job !== null) k.TerminateJobObject(this.job, KILLED_EXIT_CODE);
    else k.TerminateProcess(this.process, KILLED_EXIT_CODE);
  }

  #checkExit(): void {
    if (this.hasExited) return;
    const k = kernel32();
    if (k.WaitForSingleObject(this.process, 0) !== W.WAIT_OBJECT_0) return;
    const code = new Uint32Array(1);
    k.GetExitCodeProcess(this.process, new Uint8Array(code.buffer));
    // Ended by the default handler of a console event we passed on: that signal ended it. The
    // same code with no event passed on is the program's own (its exit code, or an event from
    // elsewhere): reported as it is. Exit codes are DWORDs, reported unsigned: 0xFFFFFFFF is
    // 4294967295, never the -1 that says "terminated" or "timed out".
    const bySignal = code[0] === W.STATUS_CONTROL_C_EXIT ? this.#asked ?? null : null;
    this.exitedWith({ exitCode: code[0], signal: this.#killedBy ?? bySignal });
  }

  protected override afterExit(): void {
    clearInterval(this.#exitPoll);
    // Whatever the child left running goes with it, as on POSIX.
    if (this.job !== null) kernel32().TerminateJobObject(this.job, KILLED_EXIT_CODE);
    this.writer.close();
    if (this.#consoleInput !== this.writer) this.#consoleInput?.close();
    if (this.mode === "pty") this.#closeConsoleWhenQuiet(performance.now());
    else this.#closeConsole();
  }

  /** conhost keeps the output pipe open after the child exits: close it once output is quiet. */
  #closeConsoleWhenQuiet(exitedAt: number): void {
    const reader = this.readers[0];
    const now = performance.now();
    if (!reader.ended && now - reader.lastDataAt < QUIET_MS && now - exitedAt < DRAIN_LIMIT_MS) {
      setTimeout(() => this.#closeConsoleWhenQuiet(exitedAt), QUIET_MS);
      return;
    }
    this.#closeConsole();
  }

  /** Closes the pseudoconsole once (its programs get CTRL_CLOSE_EVENT; its pipes then break). */
  #closeConsole(): void {
    if (!this.io.console || this.#consoleClosed) return;
    this.#consoleClosed = true;
    closePseudoConsole(this.io.console.handle).catch((error) =>
      log.error("ClosePseudoConsole failed", { error })
    );
  }

  protected release(): void {
    const k = kernel32();
    if (this.#jobKey !== undefined) this.loop.remove(this.#jobKey);
    if (this.job !== null) k.CloseHandle(this.job);
    k.CloseHandle(this.process);
  }
}
