/**
 * What a child is on every platform (node-pty's `Terminal` base class is the model): output
 * listeners, the `exited` promise, and one life cycle. A child is finished only once it has
 * exited AND its output has ended (or the drain limit has passed); it finishes exactly once;
 * after its exit it takes no input and no signal (its pid may already belong to someone
 * else). The platforms supply the readers, the writer, how to signal the tree, and what to
 * free.
 *
 * @module
 */
import {
  type ChildProcess,
  type DataListener,
  type ExitStatus,
  type InputModes,
  type SignalName,
  type StdioMode,
  type StreamName,
  type TerminalReader,
  WRITE_TIMEOUT_MS,
} from "./types.ts";

/** An output stream's reader, as a child drives it. */
export interface OutputReader {
  /** True once the stream has ended (end of file, broken pipe, or stopped). */
  readonly ended: boolean;
  /** Stops reading now; the reader then ends. */
  stop(): void;
  /**
   * The drain limit passed: what the stream holds now is read (a bounded amount), then reading
   * stops. A loop held up past the limit (a burst of starts) must not lose what a child wrote
   * before it exited.
   */
  finish(): void;
}

/** The input stream's writer. */
export interface InputWriter {
  /**
   * Queues bytes; settles when the OS has taken them all. After `timeoutMs` the rest is taken
   * off the queue and the write fails with a message saying how much was taken.
   */
  write(data: Uint8Array, timeoutMs: number): Promise<void>;
  /** Closes the stream once everything queued is written (end of input). */
  closeWhenDrained(): Promise<void>;
  /** Closes now; queued writes fail with `reason`. */
  close(reason?: string): void;
}

/** The error of a write the program did not take in time. */
function writeTimedOut(taken: number, total: number, timeoutMs: number): Error {
  return new Error(
    `the program is not reading its input: it took ${taken} of ${total} bytes within ` +
      `${timeoutMs / 1000} s; the rest was not sent`,
  );
}

/** A write waiting in a writer's queue: it settles once, and its time limit ends with it. */
export class PendingInput {
  /** Bytes the OS has taken so far. */
  done = 0;
  /** Set once the time limit has passed (the writer then ends the write). */
  expired = false;
  readonly promise: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: Error) => void;
  #timer: ReturnType<typeof setTimeout>;

  /** `onExpiry` runs if the write is still pending after `timeoutMs`. */
  constructor(
    readonly data: Uint8Array,
    readonly timeoutMs: number,
    onExpiry: (input: PendingInput) => void,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = setTimeout(() => {
      this.expired = true;
      onExpiry(this);
    }, timeoutMs);
  }

  resolve(): void {
    clearTimeout(this.#timer);
    this.#resolve();
  }

  reject(error: Error): void {
    clearTimeout(this.#timer);
    this.#reject(error);
  }

  /** Fails it for running out of time, with how much was taken. */
  timeOut(): void {
    this.reject(writeTimedOut(this.done, this.data.length, this.timeoutMs));
  }
}

/** See the module documentation. */
export abstract class ChildBase implements ChildProcess {
  readonly exited: Promise<ExitStatus>;
  abstract readonly codePage: "utf-8" | number | null;
  /** The output streams: one in PTY mode, stdout and stderr in pipe mode. */
  protected abstract readonly readers: readonly OutputReader[];
  protected abstract readonly writer: InputWriter;
  /** What a terminal reads as end of input (PTY mode). */
  protected abstract readonly endOfInput: Uint8Array;
  #resolveExited!: (status: ExitStatus) => void;
  #listeners: DataListener[] = [];
  /**
   * Output read before the first listener came (copies): handed to it first. A child is
   * started on the blocking pool, and the reactor may read its output before the caller that
   * awaited the start has had its turn to listen.
   */
  #early: [Uint8Array, StreamName][] | undefined = [];
  #status: ExitStatus | undefined;
  #finished = false;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  /** `drainLimitMs`: how long output may go on arriving after the exit before reading stops. */
  protected constructor(
    readonly pid: number,
    readonly mode: StdioMode,
    private readonly drainLimitMs: number,
  ) {
    this.exited = new Promise((resolve) => this.#resolveExited = resolve);
  }

  onData(listener: DataListener): void {
    this.#listeners.push(listener);
    const early = this.#early;
    this.#early = undefined;
    for (const [data, stream] of early ?? []) listener(data, stream);
  }

  write(data: Uint8Array, timeoutMs: number = WRITE_TIMEOUT_MS): Promise<void> {
    if (this.hasExited) return Promise.reject(new Error("the program has exited"));
    return this.writer.write(data, timeoutMs);
  }

  closeInput(): Promise<void> {
    if (this.hasExited) return Promise.reject(new Error("the program has exited"));
    return this.mode === "pty" ? this.write(this.endOfInput) : this.writer.closeWhenDrained();
  }

  writeLast(data: Uint8Array, timeoutMs: number = WRITE_TIMEOUT_MS): Promise<void> {
    if (this.hasExited) return Promise.reject(new Error("the program has exited"));
    if (this.mode === "pty") return this.write(this.typedLast(data), timeoutMs);
    // The writer's own write: a pipe takes every byte as it is (see WindowsChild.write).
    const written = this.writer.write(data, timeoutMs);
    return Promise.all([written, this.writer.closeWhenDrained()]).then(() => undefined);
  }

  /**
   * `data` as typed into the terminal as the last of the input (see {@link writeLast}), end of
   * input included: here, the data then the EOF sequence.
   */
  protected typedLast(data: Uint8Array): Uint8Array {
    const typed = new Uint8Array(data.length + this.endOfInput.length);
    typed.set(data);
    typed.set(this.endOfInput, data.length);
    return typed;
  }

  abstract resize(cols: number, rows: number): void;

  /** Where the platform cannot tell (see {@link ChildProcess.terminalReader}). */
  terminalReader(): TerminalReader | null | undefined {
    return undefined;
  }

  /** Where the platform cannot tell (see {@link ChildProcess.outputDelivered}). */
  outputDelivered(): boolean | undefined {
    return undefined;
  }

  /** Nothing is refused here (see {@link ChildProcess.refusal}). */
  refusal(_data: Uint8Array): string | undefined {
    return undefined;
  }

  /** Where the platform cannot tell (see {@link ChildProcess.inputModes}). */
  inputModes(): InputModes | undefined {
    return undefined;
  }

  /** Where the platform cannot tell (see {@link ChildProcess.startedWith}). */
  startedWith(_text: string): boolean | undefined {
    return undefined;
  }

  kill(signal: SignalName = "SIGTERM"): void {
    if (!this.hasExited) this.signalTree(signal);
  }

  /** True once the exit is known (output may still be draining). */
  protected get hasExited(): boolean {
    return this.#status !== undefined;
  }

  /** The function that hands a stream's chunks to the listeners. */
  protected emitter(stream: StreamName): (data: Uint8Array) => void {
    return (data) => {
      this.#early?.push([data.slice(), stream]);
      for (const listener of this.#listeners) listener(data, stream);
    };
  }

  /** Sends `signal` to the child's whole tree (called only while it has not exited). */
  protected abstract signalTree(signal: SignalName): void;

  /** The platform saw the exit: output is read on until it ends or the drain limit passes. */
  protected exitedWith(status: ExitStatus): void {
    if (this.#status) return;
    this.#status = status;
    this.afterExit();
    if (this.#outputEnded()) return this.#finish();
    this.#drainTimer = setTimeout(
      () => this.readers.forEach((reader) => reader.finish()),
      this.drainLimitMs,
    );
  }

  /** A reader ended: the child finishes if it has exited too. */
  protected readerEnded(): void {
    if (!this.#outputEnded()) return;
    if (this.#status) this.#finish();
    else this.outputEndedFirst();
  }

  /** Right after the exit: end what the child left behind, let the console go. */
  protected afterExit(): void {}

  /** Every stream ended before the exit was seen (a hint to look for the exit now). */
  protected outputEndedFirst(): void {}

  /** Frees what the child held; runs once, just before `exited` settles. */
  protected abstract release(): void;

  #outputEnded(): boolean {
    return this.readers.every((reader) => reader.ended);
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    this.release();
    this.#resolveExited(this.#status!);
  }
}
