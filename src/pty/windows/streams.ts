/**
 * Overlapped pipe reads and writes whose completions arrive through the reactor. Each keeps
 * its OVERLAPPED and data buffers referenced until the kernel reports the operation finished
 * (a closed handle completes pending operations with an error, which is how they end).
 *
 * @module
 */
import { type InputWriter, type OutputReader, PendingInput } from "../child.ts";
import { type Handle, kernel32, LAYOUT, W } from "./kernel32.ts";
import { isFailure, type WindowsReactor } from "./reactor.ts";

const READ_SIZE = 64 * 1024;

function pointerOf(buffer: Uint8Array): Deno.PointerValue {
  return Deno.UnsafePointer.of(buffer);
}

/** Reads a pipe until it breaks and hands on the bytes. Owns (and closes) the handle. */
export class OverlappedReader implements OutputReader {
  #overlapped = new Uint8Array(LAYOUT.OVERLAPPED);
  #buffer = new Uint8Array(READ_SIZE);
  #key: bigint;
  #pending = false;
  #stopping = false;
  #ended = false;
  #closed = false;

  constructor(
    private readonly reactor: WindowsReactor,
    private readonly handle: Handle,
    private readonly onData: (data: Uint8Array) => void,
    private readonly onEnd: () => void,
  ) {
    this.#key = reactor.addHandle(handle, this);
    this.#issue();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** When data last arrived (performance.now()), for "has the output gone quiet?" checks. */
  lastDataAt: number = performance.now();

  completed(_overlapped: bigint, bytes: number, status: number): void {
    this.#pending = false;
    if (bytes > 0) {
      this.lastDataAt = performance.now();
      // Lent (see DataListener): the next read, into the same buffer, is issued after this.
      this.onData(this.#buffer.subarray(0, bytes));
    }
    if (this.#stopping || (isFailure(status) && bytes === 0)) return this.#end();
    this.#issue();
  }

  /** Stops reading now: closes the handle, which ends the pending read. */
  /** Not read once more here (overlapped reads are always pending): reading stops. */
  finish(): void {
    this.stop();
  }

  stop(): void {
    if (this.#ended) return;
    this.#stopping = true;
    this.#close();
    if (!this.#pending) this.#end();
  }

  #issue(): void {
    const k = kernel32();
    this.#overlapped.fill(0);
    // Even a read that completes at once posts its completion packet: handle it there.
    const ok = k.ReadFile(
      this.handle,
      pointerOf(this.#buffer),
      READ_SIZE,
      null,
      pointerOf(this.#overlapped),
    );
    if (ok || k.GetLastError() === W.ERROR_IO_PENDING) {
      this.#pending = true;
      return;
    }
    this.#end(); // broken pipe (or another failure): no packet will come
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    kernel32().CloseHandle(this.handle);
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#close();
    this.reactor.remove(this.#key);
    this.onEnd();
  }
}

/** Writes queued bytes to a pipe, one overlapped write at a time. Owns (and closes) the handle. */
export class OverlappedWriter implements InputWriter {
  #overlapped = new Uint8Array(LAYOUT.OVERLAPPED);
  #queue: PendingInput[] = [];
  #inFlight: PendingInput | undefined;
  #key: bigint;
  #closed = false;
  #closeReason = "";
  #closeWhenDrained = false;

  constructor(private readonly reactor: WindowsReactor, private readonly handle: Handle) {
    this.#key = reactor.addHandle(handle, this);
  }

  /** Queues bytes; settles when the pipe has taken them, or fails after `timeoutMs`. */
  write(data: Uint8Array, timeoutMs: number): Promise<void> {
    if (this.#closed || this.#closeWhenDrained) {
      return Promise.reject(new Error("the program's input is closed"));
    }
    if (data.length === 0) return Promise.resolve();
    // A copy: the caller's buffer may change or be collected while the kernel reads it.
    const pending = new PendingInput(data.slice(), timeoutMs, (input) => this.#expire(input));
    this.#queue.push(pending);
    if (!this.#inFlight) this.#next();
    return pending.promise;
  }

  /**
   * A write ran out of time. Queued: it goes. In flight: it is cancelled, and its completion
   * (with the bytes the pipe took) ends it.
   */
  #expire(pending: PendingInput): void {
    if (pending === this.#inFlight) {
      kernel32().CancelIoEx(this.handle, pointerOf(this.#overlapped));
      return;
    }
    const index = this.#queue.indexOf(pending);
    if (index < 0) return;
    this.#queue.splice(index, 1);
    pending.timeOut();
  }

  /** Closes the pipe once everything queued is written (end of input for the child). */
  closeWhenDrained(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closeWhenDrained = true;
    if (!this.#inFlight && this.#queue.length === 0) this.close("end of input");
    return Promise.resolve();
  }

  /** Closes now; queued writes fail with `reason`. */
  close(reason = "the program exited before reading its input"): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    for (const pending of this.#queue.splice(0)) pending.reject(new Error(reason));
    kernel32().CloseHandle(this.handle);
    // A write in flight completes (with an error) after the close; the key goes then.
    if (!this.#inFlight) this.reactor.remove(this.#key);
  }

  completed(_overlapped: bigint, bytes: number, status: number): void {
    const done = this.#inFlight!;
    this.#inFlight = undefined;
    if (done.expired && !this.#closed) {
      // Cancelled for taking too long (or it finished just as it was cancelled).
      done.done = bytes;
      if (isFailure(status)) done.timeOut();
      else done.resolve();
    } else if (isFailure(status)) {
      done.reject(
        new Error(
          this.#closed ? this.#closeReason : `write failed (NTSTATUS 0x${status.toString(16)})`,
        ),
      );
      if (!this.#closed) this.close("the program's input is closed");
    } else {
      done.resolve();
    }
    if (this.#closed) return this.reactor.remove(this.#key);
    this.#next();
  }

  #next(): void {
    const next = this.#queue.shift();
    if (!next) {
      if (this.#closeWhenDrained) this.close("end of input");
      return;
    }
    const k = kernel32();
    this.#inFlight = next;
    this.#overlapped.fill(0);
    const ok = k.WriteFile(
      this.handle,
      pointerOf(next.data),
      next.data.length,
      null,
      pointerOf(this.#overlapped),
    );
    if (ok || k.GetLastError() === W.ERROR_IO_PENDING) return;
    this.#inFlight = undefined;
    next.reject(new Error("the program's input is closed"));
    this.close("the program's input is closed");
  }
}
