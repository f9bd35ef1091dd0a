/**
 * Reads an fd on Deno's blocking pool, a block at a time, through stdio's `fread` (Linux).
 *
 * A flooding PTY gives at most 4 KiB a read, and each read may first wait in the kernel for the
 * terminal's flush worker. Read on the JavaScript thread, every one of those waits is time the
 * thread neither reads nor handles what it has read, and the program's output waits behind it.
 * `fread` on an unbuffered stream calls `read` in a loop straight into the caller's block until
 * the block is full, or the fd has nothing more now (EAGAIN: the fd is nonblocking), ends or
 * fails. So one call on the pool takes up to a block (16 PTY reads) while the JavaScript thread
 * handles the previous one, and the event loop never waits on the flood.
 *
 * Only where stdio is known to read an unbuffered stream straight into the caller's block
 * (glibc): a stdio that buffered some bytes itself would keep them from the synchronous reads
 * that take over once a pool read comes back short.
 *
 * @example
 * ```ts ignore
 * const pool = PoolReader.open(fd);
 * const block = new Uint8Array(64 * 1024);
 * const n = await pool!.read(block); // short: nothing more now, end of file or an error
 * pool!.close();
 * ```
 * @module
 */
import { C, cString, fcntl, libc, POLLIN } from "./libc.ts";

const MODE_READ = cString("r");
/** setvbuf(3): no buffering (the same value in glibc and macOS). */
const UNBUFFERED = 2;

/** See the module documentation. */
export class PoolReader {
  #file: Deno.PointerObject;
  #fd: number;
  #busy = false;
  #closed = false;

  private constructor(fd: number, file: Deno.PointerObject) {
    this.#fd = fd;
    this.#file = file;
  }

  /** Whether reads on the pool are available on this platform. */
  static readonly supported = Deno.build.os === "linux";

  /**
   * A reader over a close-on-exec duplicate of `fd` (so closing `fd` never pulls the fd from
   * under a read in flight), or undefined if the platform has none or the duplicate fails.
   */
  static open(fd: number): PoolReader | undefined {
    if (!PoolReader.supported) return undefined;
    const lib = libc();
    const copy = fcntl(fd, C.F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return undefined;
    const file = lib.fdopen(copy, MODE_READ);
    if (file === null) {
      lib.close(copy);
      return undefined;
    }
    lib.setvbuf(file, null, UNBUFFERED, 0n);
    return new PoolReader(copy, file);
  }

  /**
   * Reads into `block` on the pool; resolves to the bytes read. Fewer than the block holds
   * means the fd had nothing more now, ended or failed: a synchronous read tells which.
   * One read at a time.
   */
  read(block: Uint8Array<ArrayBuffer>): Promise<number> {
    return this.#use(async (lib) => {
      const n = Number(await lib.fread(block, 1n, BigInt(block.length), this.#file));
      // stdio remembers EAGAIN and end of file; the next read must try again.
      lib.clearerr(this.#file);
      return n;
    });
  }

  /** Whether the fd turns readable within `timeoutMs` (waited for on the pool if need be). */
  readable(timeoutMs: number): Promise<boolean> {
    const fds = new Uint8Array(8);
    const view = new DataView(fds.buffer);
    view.setInt32(0, this.#fd, true);
    view.setInt16(4, POLLIN, true);
    return this.#use(async (lib) => {
      if (lib.poll_sync(fds, 1n, 0) === 0) await lib.poll(fds, 1n, timeoutMs);
      return (view.getInt16(6, true) & POLLIN) !== 0;
    });
  }

  /** Runs one call on the fd; a close meanwhile waits for it to return. */
  async #use<T>(call: (lib: ReturnType<typeof libc>) => Promise<T>): Promise<T> {
    if (this.#busy || this.#closed) throw new Error("the pool reader is busy or closed");
    this.#busy = true;
    try {
      return await call(libc());
    } finally {
      this.#busy = false;
      if (this.#closed) libc().fclose(this.#file);
    }
  }

  /** Closes the duplicate fd, once the call in flight (if any) has returned. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#busy) libc().fclose(this.#file);
  }
}
