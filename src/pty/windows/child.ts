/**
 * A running Windows child: its pipes served by the completion port, its exit learnt from the
 * job's messages (or a poll), its tree ended through the job object.
 *
 * End of output on a pseudoconsole: conhost keeps the output pipe open after the child exits,
 * so the output is drained until it goes quiet, then the pseudoconsole is closed (off the
 * reading path) and reading goes on until the pipe breaks.
 *
 * @module
 */
import { log } from "../../log.ts";
import { ChildBase } from "../child.ts";
import type { SignalName, StdioMode } from "../types.ts";
import { codePageLabel, type Handle, kernel32, W } from "./kernel32.ts";
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

/** Our ends of a child's streams. */
export interface WindowsChildIo {
  /** [input, output] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  ours: Handle[];
  /** The pseudoconsole (PTY mode). */
  console?: Handle;
}

/** See the module documentation. */
export class WindowsChild extends ChildBase {
  /** The encoding of output bytes: UTF-8 on a terminal, the OEM code page through pipes. */
  readonly outputEncoding: string;
  protected readonly readers: OverlappedReader[];
  protected readonly writer: OverlappedWriter;
  protected readonly endOfInput = CONSOLE_EOF;
  #jobKey: bigint | undefined;
  #killedBy: SignalName | undefined;
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
    this.outputEncoding = mode === "pty" ? "utf-8" : codePageLabel(kernel32().GetOEMCP());
    const ended = () => this.readerEnded();
    this.writer = new OverlappedWriter(loop, io.ours[0]);
    this.readers = mode === "pty"
      ? [new OverlappedReader(loop, io.ours[1], this.emitter("stdout"), ended)]
      : [
        new OverlappedReader(loop, io.ours[1], this.emitter("stdout"), ended),
        new OverlappedReader(loop, io.ours[2], this.emitter("stderr"), ended),
      ];
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

  resize(cols: number, rows: number): void {
    if (!this.io.console) throw new Error("resize needs a terminal (PTY mode)");
    if (this.hasExited) throw new Error("the program has exited");
    resizePseudoConsole(this.io.console, cols, rows);
  }

  protected signalTree(signal: SignalName): void {
    if (signal === "SIGINT" && this.mode === "pty") {
      // Ctrl+C typed into the console: conhost delivers CTRL_C_EVENT to its processes.
      this.write(new Uint8Array([0x03])).catch(() => {});
      return;
    }
    this.#killedBy ??= signal;
    const k = kernel32();
    if (this.job !== null) k.TerminateJobObject(this.job, KILLED_EXIT_CODE);
    else k.TerminateProcess(this.process, KILLED_EXIT_CODE);
  }

  #checkExit(): void {
    if (this.hasExited) return;
    const code = new Uint32Array(1);
    if (!kernel32().GetExitCodeProcess(this.process, new Uint8Array(code.buffer))) return;
    if (code[0] === W.STILL_ACTIVE) return;
    this.exitedWith({ exitCode: code[0] | 0, signal: this.#killedBy ?? null });
  }

  protected override afterExit(): void {
    clearInterval(this.#exitPoll);
    // Whatever the child left running goes with it, as on POSIX.
    if (this.job !== null) kernel32().TerminateJobObject(this.job, KILLED_EXIT_CODE);
    this.writer.close();
    if (this.io.console) this.#closeConsoleWhenQuiet(this.io.console, performance.now());
  }

  /** conhost keeps the output pipe open after the child exits: close it once output is quiet. */
  #closeConsoleWhenQuiet(console: Handle, exitedAt: number): void {
    const reader = this.readers[0];
    const now = performance.now();
    if (!reader.ended && now - reader.lastDataAt < QUIET_MS && now - exitedAt < DRAIN_LIMIT_MS) {
      setTimeout(() => this.#closeConsoleWhenQuiet(console, exitedAt), QUIET_MS);
      return;
    }
    closePseudoConsole(console).catch((error) => log.error("ClosePseudoConsole failed", { error }));
  }

  protected release(): void {
    const k = kernel32();
    if (this.#jobKey !== undefined) this.loop.remove(this.#jobKey);
    if (this.job !== null) k.CloseHandle(this.job);
    k.CloseHandle(this.process);
  }
}
