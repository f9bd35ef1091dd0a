/**
 * The Windows event reactor: ONE I/O completion port per server carries every overlapped pipe
 * read and write of every child AND the job objects' notifications (process exits), and ONE
 * pending `GetQueuedCompletionStatusEx` (on Deno's blocking pool) serves them all. A blocking
 * call per terminal would exhaust the runtime's thread pool at a few dozen terminals.
 *
 * The loop runs only while something is registered; the last unregistration posts a wake-up
 * packet, so the pending call always ends on its own.
 *
 * @module
 */
import { log } from "../../log.ts";
import { type Handle, kernel32, LAYOUT, W, Win32Error } from "./kernel32.ts";

/** Receives the completions of one completion key. */
export interface CompletionHandler {
  /**
   * An overlapped operation finished (`overlapped` is its OVERLAPPED's address), or, for a job
   * object, a notification arrived (`bytes` is the message, `overlapped` the process id).
   * `status` is the NTSTATUS (0 for success).
   */
  completed(overlapped: bigint, bytes: number, status: number): void;
}

const WAKE_KEY = 0n;
const BATCH = 64;

/** True for an NTSTATUS of the error class (a failed operation, not a warning). */
export function isFailure(status: number): boolean {
  return (status >>> 30) === 3;
}

/** See the module documentation. Use {@link reactor} for the process-wide instance. */
export class WindowsReactor {
  readonly port: Handle;
  #handlers = new Map<bigint, CompletionHandler>();
  #nextKey = 1n;
  #running = false;
  #entries = new Uint8Array(LAYOUT.OVERLAPPED_ENTRY * BATCH);
  #removed = new Uint32Array(1);

  constructor() {
    const k = kernel32();
    this.port = k.CreateIoCompletionPort(
      Deno.UnsafePointer.create(0xffff_ffff_ffff_ffffn),
      null,
      0n,
      0,
    );
    if (this.port === null) throw new Win32Error("CreateIoCompletionPort", k.GetLastError());
  }

  /** Associates a file handle (opened for overlapped I/O) with the port; returns its key. */
  addHandle(handle: Handle, handler: CompletionHandler): bigint {
    const key = this.#add(handler);
    if (kernel32().CreateIoCompletionPort(handle, this.port, key, 0) === null) {
      this.#handlers.delete(key);
      throw new Win32Error("CreateIoCompletionPort", kernel32().GetLastError());
    }
    this.#start();
    return key;
  }

  /** Routes a job object's notifications to `handler`; returns its key. */
  addJob(job: Handle, handler: CompletionHandler): bigint {
    const key = this.#add(handler);
    const info = new Uint8Array(16);
    const view = new DataView(info.buffer);
    view.setBigUint64(0, key, true);
    view.setBigUint64(8, BigInt(Deno.UnsafePointer.value(this.port)), true);
    const ok = kernel32().SetInformationJobObject(
      job,
      W.JobObjectAssociateCompletionPortInformation,
      info,
      16,
    );
    if (!ok) {
      this.#handlers.delete(key);
      throw new Win32Error("SetInformationJobObject(completion port)", kernel32().GetLastError());
    }
    this.#start();
    return key;
  }

  /** Stops routing a key; call once nothing of it can complete any more. */
  remove(key: bigint): void {
    if (this.#handlers.delete(key) && this.#handlers.size === 0 && this.#running) {
      kernel32().PostQueuedCompletionStatus(this.port, 0, WAKE_KEY, null);
    }
  }

  #add(handler: CompletionHandler): bigint {
    const key = this.#nextKey++;
    this.#handlers.set(key, handler);
    return key;
  }

  #start(): void {
    if (!this.#running) this.#loop();
  }

  async #loop(): Promise<void> {
    this.#running = true;
    const k = kernel32();
    const view = new DataView(this.#entries.buffer);
    const removed = new Uint8Array(this.#removed.buffer);
    let failures = 0;
    try {
      while (this.#handlers.size > 0) {
        const ok = await k.GetQueuedCompletionStatusEx(
          this.port,
          this.#entries,
          BATCH,
          removed,
          W.INFINITE,
          0,
        );
        if (!ok) {
          if (++failures % 100 === 0) {
            log.error("GetQueuedCompletionStatusEx keeps failing", { failures });
          }
          continue;
        }
        failures = 0;
        for (let i = 0; i < this.#removed[0]; i++) {
          const at = i * LAYOUT.OVERLAPPED_ENTRY;
          const key = view.getBigUint64(at, true);
          if (key === WAKE_KEY) continue;
          const overlapped = view.getBigUint64(at + 8, true);
          const status = Number(view.getBigUint64(at + 16, true) & 0xffff_ffffn);
          const bytes = view.getUint32(at + 24, true);
          const handler = this.#handlers.get(key);
          try {
            handler?.completed(overlapped, bytes, status);
          } catch (error) {
            log.error("completion handler failed", { error, stack: (error as Error).stack });
          }
        }
      }
    } finally {
      this.#running = false;
    }
  }
}

let instance: WindowsReactor | undefined;

/** The process-wide reactor, created on first use. */
export function reactor(): WindowsReactor {
  instance ??= new WindowsReactor();
  return instance;
}
