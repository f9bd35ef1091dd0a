/**
 * A running POSIX child: its streams driven by the reactor, its exit learnt from `waitpid`,
 * its signals sent to its whole process tree (tree.ts).
 *
 * @module
 */
import { ChildBase } from "../child.ts";
import {
  type InputModes,
  type SignalName,
  type StdioMode,
  type TerminalReader,
  UNKNOWN_EXIT,
} from "../types.ts";
import type { ChildRegistry } from "../supervision/types.ts";
import { inputModes, lineModeLimit, setWindowSize } from "./pty.ts";
import type { PosixReactor } from "./reactor.ts";
import { decodeWaitStatus, signalNumber } from "./signals.ts";
import { FdReader, FdWriter, SharedFd } from "./streams.ts";
import { readProcFile } from "./procfs.ts";
import { type Terminal, terminalReader } from "./terminal_reader.ts";
import { characterDevice } from "./devices.ts";
import { signalTree, type TreeSelector } from "./tree.ts";

/** How long output may keep arriving after the child was reaped before we stop waiting. */
const DRAIN_GRACE_MS = 1000;
/** The terminal's end-of-file character (VEOF, Ctrl+D). */
const EOF_CHAR = new Uint8Array([0x04]);
/**
 * Bytes that end (or discard) the line a terminal in line mode is collecting: newline,
 * carriage return (ICRNL), and the default VINTR, VEOF, VKILL, VSUSP, VQUIT characters.
 */
const LINE_ENDS = new Set([0x0a, 0x0d, 0x03, 0x04, 0x15, 0x1a, 0x1c]);

const IS_LINUX = Deno.build.os === "linux";

/** See the module documentation. */
export class PosixChild extends ChildBase {
  readonly codePage = null;
  protected readonly readers: FdReader[];
  protected readonly writer: FdWriter;
  protected readonly endOfInput = EOF_CHAR;
  #master: number | undefined;
  /** Bytes written since the last line end: the start of the line a terminal is collecting. */
  #openLine = 0;
  /** The terminal as its readers are told apart (see {@link terminalReader}). */
  #terminal: Terminal | undefined;

  /**
   * `fds`: [master] in PTY mode; [stdin, stdout, stderr] in pipe mode. `registry`: the
   * server's supervision, told when the child is done. `terminal`: the path of the terminal's
   * device (PTY mode).
   */
  constructor(
    pid: number,
    mode: StdioMode,
    private readonly loop: PosixReactor,
    fds: number[],
    private readonly tree: TreeSelector,
    private readonly registry: ChildRegistry | undefined,
    private readonly terminal?: string,
  ) {
    super(pid, mode, DRAIN_GRACE_MS);
    const ended = () => this.readerEnded();
    if (mode === "pty") {
      const master = new SharedFd(fds[0], 2);
      this.#master = fds[0];
      this.writer = new FdWriter(loop, master);
      this.readers = [new FdReader(loop, master, this.emitter("stdout"), ended, true)];
    } else {
      this.writer = new FdWriter(loop, new SharedFd(fds[0], 1));
      this.readers = [
        new FdReader(loop, new SharedFd(fds[1], 1), this.emitter("stdout"), ended),
        new FdReader(loop, new SharedFd(fds[2], 1), this.emitter("stderr"), ended),
      ];
    }
    loop.watchChild(
      pid,
      (status) => this.exitedWith(status === undefined ? UNKNOWN_EXIT : decodeWaitStatus(status)),
    );
  }

  /**
   * A terminal in line mode keeps only the first few KiB of a line until it ends, and drops
   * the rest without a word: such input is refused whole rather than reported as written.
   */
  override write(data: Uint8Array, timeoutMs?: number): Promise<void> {
    if (this.#master === undefined || this.hasExited) return super.write(data, timeoutMs);
    const fit = this.#lineFit(data);
    if (typeof fit === "string") return Promise.reject(new Error(fit));
    this.#openLine = fit;
    return super.write(data, timeoutMs);
  }

  /**
   * In line mode, EOF hands the program the line typed so far, and ends input only at a line's
   * start: after text left without Enter it is sent twice (once, `wc -c` got "abc" and went on
   * reading).
   */
  override closeInput(): Promise<void> {
    if (this.#master === undefined || this.hasExited || this.#openLine === 0) {
      return super.closeInput();
    }
    if (lineModeLimit(this.#master) === undefined) return super.closeInput();
    return this.write(new Uint8Array([...this.endOfInput, ...this.endOfInput]));
  }

  /**
   * In line mode, a line longer than the terminal keeps goes in parts: after each, EOF hands the
   * program what is typed so far (read returns it, as a part of a line), so nothing is dropped;
   * a part ends before a UTF-8 sequence it would cut where it can. Then EOF, twice after text
   * left without Enter (see {@link closeInput}). In raw mode the bytes go as they are, then the
   * EOF character, as closeInput sends it.
   */
  protected override typedLast(data: Uint8Array): Uint8Array {
    const limit = this.#master === undefined ? undefined : lineModeLimit(this.#master);
    if (limit === undefined) return super.typedLast(data);
    // A part holds at least limit - 3 bytes (the first may be shorter): room for every EOF.
    const typed = new Uint8Array(data.length + Math.ceil(data.length / (limit - 3)) + 3);
    let length = 0;
    let line = this.#openLine;
    for (const byte of data) {
      if (LINE_ENDS.has(byte)) line = 0;
      else {
        if (line + Math.min(utf8SequenceLength(byte), limit) > limit) {
          typed[length++] = EOF_CHAR[0];
          line = 0;
        }
        line++;
      }
      typed[length++] = byte;
    }
    typed[length++] = EOF_CHAR[0];
    if (line > 0) typed[length++] = EOF_CHAR[0];
    return typed.subarray(0, length);
  }

  override refusal(data: Uint8Array): string | undefined {
    if (this.#master === undefined || this.hasExited) return undefined;
    const fit = this.#lineFit(data);
    return typeof fit === "string" ? fit : undefined;
  }

  /**
   * The length of the line left open after `data` (0 in raw mode: the program takes bytes as
   * they come), or why the terminal would drop part of it.
   */
  #lineFit(data: Uint8Array): number | string {
    const limit = lineModeLimit(this.#master!);
    if (limit === undefined) return 0;
    let line = this.#openLine;
    for (const byte of data) {
      line = LINE_ENDS.has(byte) ? 0 : line + 1;
      if (line > limit) {
        return `the terminal is in line mode (canonical input), which keeps at most ${limit} ` +
          "bytes of a line until Enter; this input makes a longer line, whose end the terminal " +
          "would drop. Nothing was written: send shorter lines, or write to a program that " +
          "reads raw input";
      }
    }
    return line;
  }

  /** Linux only (see terminal_reader.ts); the master must still be open (the reader's). */
  override terminalReader(): TerminalReader | null | undefined {
    if (!IS_LINUX || this.#master === undefined || this.terminal === undefined) return undefined;
    if (this.hasExited || this.readers[0].ended) return undefined;
    // Its device's number, looked up once: the same for the terminal's whole life.
    this.#terminal ??= { path: this.terminal, device: characterDevice(this.terminal) };
    return terminalReader(this.#master, this.#terminal);
  }

  /** PTY mode: the master's reader has read and handed on all it held (see FdReader.caughtUp). */
  override outputDelivered(): boolean | undefined {
    return this.#master === undefined ? undefined : this.readers[0].caughtUp();
  }

  override inputModes(): InputModes | undefined {
    return this.#master === undefined || this.hasExited ? undefined : inputModes(this.#master);
  }

  /**
   * Linux only: /proc/<pid>/cmdline and environ are those of the program it runs now. Both read
   * empty while exec loads a program (posix_spawn may return then): that says nothing.
   */
  override startedWith(text: string): boolean | undefined {
    if (!IS_LINUX || this.hasExited) return undefined;
    const wanted = new TextEncoder().encode(text);
    const cmdline = readProcFile(this.pid, "cmdline");
    if (!cmdline?.length) return undefined;
    if (indexOfBytes(cmdline, wanted) >= 0) return true;
    const environ = readProcFile(this.pid, "environ");
    return environ === undefined ? undefined : indexOfBytes(environ, wanted) >= 0;
  }

  resize(cols: number, rows: number): void {
    if (this.#master === undefined) throw new Error("resize needs a terminal (PTY mode)");
    if (this.hasExited) throw new Error("the program has exited");
    const failure = setWindowSize(this.#master, cols, rows);
    if (failure) throw new Error(`resize failed: ${failure}`);
  }

  protected signalTree(signal: SignalName): void {
    signalTree(this.tree, signalNumber(signal));
  }

  protected override afterExit(): void {
    // Whatever the child left running (background jobs, daemons) goes with it; this also
    // closes their copies of the terminal, so the drain ends with EIO promptly.
    signalTree(this.tree, signalNumber("SIGKILL"), true);
  }

  protected override outputEndedFirst(): void {
    this.loop.reap();
  }

  protected release(): void {
    this.writer.close();
    this.registry?.ended(this.pid);
  }
}

/** The length of the UTF-8 sequence `byte` starts (1 for a byte that starts none). */
function utf8SequenceLength(byte: number): number {
  return byte >= 0xf0 && byte <= 0xf4
    ? 4
    : byte >= 0xe0 && byte <= 0xef
    ? 3
    : byte >= 0xc2 && byte <= 0xdf
    ? 2
    : 1;
}

/** Where `needle` first occurs in `bytes`, or -1. */
function indexOfBytes(bytes: Uint8Array, needle: Uint8Array): number {
  if (needle.length === 0) return 0;
  for (let at = bytes.indexOf(needle[0]); at >= 0; at = bytes.indexOf(needle[0], at + 1)) {
    if (at + needle.length > bytes.length) return -1;
    let i = 1;
    while (i < needle.length && bytes[at + i] === needle[i]) i++;
    if (i === needle.length) return at;
  }
  return -1;
}
