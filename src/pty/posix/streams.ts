/**
 * Nonblocking fd readers and writers driven by the reactor, and a reference-counted fd so a
 * PTY master shared by the reader and the writer is closed exactly once, by the last user.
 *
 * @module
 */
import { log } from "../../log.ts";
import { type InputWriter, type OutputReader, PendingInput } from "../child.ts";
import { C, errno, errnoName, libc, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT } from "./libc.ts";
import { PoolReader } from "./pool_reader.ts";
import { type FdWatcher, type PosixReactor, READ_READY, WRITE_READY } from "./reactor.ts";

/** An fd closed when its last user releases it. */
export class SharedFd {
  #users: number;
  constructor(readonly fd: number, users: number) {
    this.#users = users;
  }
  /** Gives up one use; the last one closes the fd. */
  release(): void {
    if (--this.#users === 0) libc().close(this.fd);
  }
}

/**
 * Whether poll(2) says `fd` is hung up or in error. errno is read by a second FFI call, and the
 * runtime may make system calls of its own in between (a collection after an allocation):
 * measured here, one errno in about two million read after an EAGAIN read came back as another
 * call's (ENOENT), which ended a live terminal's output for good. So a stream is ended, or a
 * write failed, on an error only when poll confirms it; else the fd is polled again.
 */
function brokenByPoll(fd: number): boolean {
  const fds = new Uint8Array(8);
  const view = new DataView(fds.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, POLLIN | POLLOUT, true);
  if (libc().poll_sync(fds, 1n, 0) !== 1) return false;
  return (view.getInt16(6, true) & (POLLHUP | POLLERR | POLLNVAL)) !== 0;
}
/** Failures in a row that poll does not confirm, after which the fd counts as broken anyway. */
const UNCONFIRMED_FAILURES = 16;

/** At most this many reads per readiness, so one flooding child cannot starve the others. */
const READS_PER_TURN = 32;
/**
 * When the drain limit passes, what a stream holds then is read, up to this much (its kernel
 * buffer holds far less: a writer still at it is cut off after this).
 */
const FINAL_READ_BYTES = 1024 * 1024;
const FINAL_READ_BLOCK = 64 * 1024;
/**
 * Chunks are handed on as views of the reader's block, lent (see DataListener): reads that
 * follow one another go into it in turn, and once everything in it has been handed on it is
 * read into again from its start. A reader's first block is small; when less than
 * {@link MIN_READ} is left, a block smaller than the largest makes way for one twice its size.
 */
const FIRST_BLOCK = 4 * 1024, LARGEST_BLOCK = 64 * 1024, MIN_READ = 1024;
/**
 * A turn that has read POOL_AFTER, or FLOOD_TURN and run out of time, found a flood: the fd
 * goes on being read on the blocking pool (see pool_reader.ts and PosixReactor.poolFlood), into
 * the two {@link poolBlocks} by turns, until a read comes back short. A read goes to the other
 * block once less than POOL_MIN_READ is left in this one. Blocks of 1 MiB rather than 256 KiB:
 * each trip through the pool costs a thread's wake-up or two (tens of microseconds on a virtual
 * machine), and 40 MB took 30 ms less of the server's CPU (paired rounds).
 */
const POOL_AFTER = 16 * 1024, FLOOD_TURN = 2 * 1024;
const POOL_BLOCK = 1024 * 1024, POOL_MIN_READ = 4 * 1024;
/**
 * The pool's blocks, shared by all readers: the reactor lets one fd at a time onto the pool, and
 * its reader hands on every byte it read there before it lets go (PosixReactor.poolDone).
 */
const poolBlocks: Uint8Array<ArrayBuffer>[] = [];
/** After a short read on the pool, how long to wait there for more before the reactor looks. */
const POOL_LINGER_MS = 10;

/**
 * Reads an fd until end of file (0, or EIO on a Linux PTY master) and hands on the bytes: in the
 * reactor's turns, and, for a PTY's flood while it is the only one, on the blocking pool (see
 * {@link PosixReactor.poolFlood}). There 40 MB through `run_command` ran at 0.93-1.00x of
 * `script`'s rate against 0.90-0.94x read in the turns (the same rounds), with 60 ms less of the
 * server's CPU, and the event loop no longer waited on its reads.
 * Not a pipe's: a pipe read takes 64 KiB at once, without a kernel worker to wait for, and on the
 * pool every 64 KiB cost two trips through it (pipe floods 25-40% slower).
 *
 * The bytes are lent, and the blocks read into again: a flood costs no memory of its own. With a
 * fresh block for every 256 KiB (handed on as views, kept by the output buffer), 40 MB through
 * `run_command` allocated 40 MB that only the runtime's full collections freed; lent, and copied
 * into the buffer's recycled slabs (see slabs.ts), the server spent 60-110 ms less of user CPU a
 * run, and went from 0.94x to 1.00x of `script`'s rate (paired rounds, the same run).
 */
export class FdReader implements FdWatcher, OutputReader {
  #ended = false;
  #unconfirmed = 0;
  #block: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #used = 0;
  /** Reads on the blocking pool, opened the first time the fd floods. */
  #pool: PoolReader | undefined;
  /** Whether the pool is reading the fd now (then this thread must not). */
  #pooled = false;
  /**
   * Bytes the pool may still read since the drain limit passed while it was reading (see
   * {@link finish}); undefined before.
   */
  #finishing: number | undefined;
  /** `poolFloods`: floods may be read on the blocking pool (a PTY master's, not a pipe's). */
  constructor(
    private readonly reactor: PosixReactor,
    private readonly shared: SharedFd,
    private readonly onData: (data: Uint8Array) => void,
    private readonly onEnd: () => void,
    private readonly poolFloods = false,
  ) {
    reactor.add(this);
  }

  get fd(): number {
    return this.shared.fd;
  }

  get ended(): boolean {
    return this.#ended;
  }

  events(): number {
    return this.#ended || this.#pooled ? 0 : POLLIN;
  }

  ready(revents: number): void {
    if (revents & READ_READY) this.drain();
  }

  /**
   * Reads whatever is available now. Reads that follow one another in a block are handed on as
   * one chunk (when the turn ends or the block is full): a PTY gives about 4 KiB a read, and
   * every chunk costs each consumer a pass (40 MB: 8,500 reads, a few hundred chunks).
   */
  drain(): void {
    if (this.#pooled) return;
    const lib = libc();
    // Everything read before was handed on: the block is free again.
    let from = this.#used = 0;
    let read = 0;
    for (let turn = 0; turn < READS_PER_TURN && !this.#ended; turn++) {
      if (this.#block.length - this.#used < MIN_READ) {
        this.#handOn(from);
        if (this.#ended) return; // its consumer stopped it
        if (this.#block.length < LARGEST_BLOCK) {
          this.#block = new Uint8Array(Math.max(FIRST_BLOCK, this.#block.length * 2));
        }
        this.#used = from = 0;
      }
      const space = this.#block.subarray(this.#used);
      const n = Number(lib.read(this.fd, space, BigInt(space.length)));
      if (n > 0) {
        this.#unconfirmed = 0;
        this.reactor.countRead(n);
        this.#used += n;
        read += n;
        // The rest waits for the next turn, after the event loop's (see PosixReactor.inTime).
        const inTime = this.reactor.inTime();
        // A flood goes on on the pool if the reactor lets it (else it is noted as one).
        if ((read >= POOL_AFTER || (!inTime && read >= FLOOD_TURN)) && this.#readOnPool(from)) {
          return;
        }
        if (!inTime) break;
        continue;
      }
      // errno before the consumers run: their own system calls may overwrite it.
      const code = n < 0 ? errno() : 0;
      this.#handOn(from);
      from = this.#used;
      if (n === 0) return this.stop();
      if (code === C.EAGAIN) return;
      if (code === C.EINTR) continue;
      if (!brokenByPoll(this.fd) && ++this.#unconfirmed < UNCONFIRMED_FAILURES) return;
      // EIO is how a Linux PTY master says "the last slave fd is closed and all data read".
      if (code !== C.EIO) log.debug("read ended", { fd: this.fd, error: errnoName(code) });
      return this.stop();
    }
    this.#handOn(from);
  }

  /**
   * Hands on what was read since `from` and goes on reading on the pool, if it can; false
   * (nothing done) if it cannot.
   */
  #readOnPool(from: number): boolean {
    if (!this.poolFloods || !PoolReader.supported || !this.reactor.poolFlood(this)) return false;
    this.#pool ??= PoolReader.open(this.fd);
    if (!this.#pool) {
      this.reactor.poolDone(this);
      return false;
    }
    try {
      this.#handOn(from);
    } catch (error) {
      this.reactor.poolDone(this); // its consumer failed: the pool stays free for others
      throw error;
    }
    if (this.#ended) {
      this.reactor.poolDone(this); // its consumer stopped it
      return true;
    }
    this.#pooled = true;
    this.reactor.update(); // out of the poll set while the pool reads it
    void this.#pump(this.#pool);
    return true;
  }

  /**
   * Reads on the pool, each read while the one before is handed on, until one finds nothing
   * (nothing more now, the end, or an error) and nothing more comes within POOL_LINGER_MS; then
   * the fd goes back to the reactor, whose next look finds out which.
   *
   * The next read starts before a chunk is handed on, a short one too: a PTY holds only about
   * 17 KiB that its reader has not taken (0.4 ms of a flood here), and a writer that fills it
   * sleeps until it is woken. Short reads are most of a flood's (the reader keeps catching up
   * with the writer for a moment), and handing one on (copied and line-indexed by an output
   * buffer) before the next read started left the writer asleep each time.
   */
  async #pump(pool: PoolReader): Promise<void> {
    let current = 0, used = 0;
    /**
     * The rest of the current block, or the other one from its start if less than POOL_MIN_READ
     * is left: everything in that one has been handed on (one read is in flight at a time, and
     * each is handed on before the next is awaited).
     */
    const space = () => {
      if (POOL_BLOCK - used < POOL_MIN_READ) [current, used] = [1 - current, 0];
      return (poolBlocks[current] ??= new Uint8Array(POOL_BLOCK)).subarray(used);
    };
    let into = space();
    let next: Promise<number> | undefined = pool.read(into);
    /** Whether the read in flight was started after a wait that found the fd readable. */
    let afterWait = false;
    try {
      while (next) {
        const n = await next;
        next = undefined;
        if (this.#ended) break;
        if (this.#finishing !== undefined) {
          // The drain limit passed: what the read found is delivered, and the rest of what the
          // fd holds is read once the pool has let go (see the end).
          if (n > 0) this.#deliver(into.subarray(0, n));
          this.#finishing -= Math.max(0, n);
          break;
        }
        // Another fd flooding too takes this one back to the reactor's shared turns.
        if (this.reactor.floodShared(this)) {
          if (n > 0) this.#deliver(into.subarray(0, n));
          break;
        }
        if (n > 0) {
          used += n;
          const data = into.subarray(0, n);
          next = pool.read(into = space());
          afterWait = false;
          this.#deliver(data);
          continue;
        }
        // Readable, yet nothing read: the reactor's look tells the end or an error apart.
        if (afterWait) break;
        if ((await pool.readable(POOL_LINGER_MS)) && !this.#ended) {
          next = pool.read(into = space());
          afterWait = true;
        }
      }
    } catch (error) {
      log.error("pool read failed", { fd: this.fd, error });
    } finally {
      this.#pooled = false;
      this.reactor.poolDone(this);
      if (this.#finishing !== undefined) this.#readWhatIsLeft(this.#finishing);
      else if (!this.#ended) this.reactor.update();
    }
  }

  /** Hands on bytes read on the pool; a consumer's failure is logged, as in the turns. */
  #deliver(data: Uint8Array): void {
    try {
      this.onData(data);
    } catch (error) {
      log.error("fd handler failed", { fd: this.fd, error });
    }
  }

  /** Hands on what was read into the block since `from`. */
  #handOn(from: number): void {
    if (this.#used > from) this.onData(this.#block.subarray(from, this.#used));
  }

  /**
   * The drain limit passed: what the fd holds now is read (up to FINAL_READ_BYTES), then reading
   * stops. Read on the pool, the pool goes on doing so (its read in flight was dropped with the
   * stop, before 2026-11-29: on a machine at load 7-76 the last 70 KB a command wrote before it
   * exited were lost, end of its output included).
   */
  finish(): void {
    if (this.#ended) return;
    if (this.#pooled) this.#finishing ??= FINAL_READ_BYTES;
    else this.#readWhatIsLeft(FINAL_READ_BYTES);
  }

  /** Reads what the fd holds now, up to `most` bytes, then stops. */
  #readWhatIsLeft(most: number): void {
    const lib = libc();
    const block = new Uint8Array(FINAL_READ_BLOCK);
    for (let read = 0; read < most && !this.#ended;) {
      const n = Number(lib.read(this.fd, block, BigInt(Math.min(block.length, most - read))));
      if (n <= 0) break; // nothing more now, the end, or an error: stopped all the same
      read += n;
      this.#deliver(block.subarray(0, n));
    }
    this.stop();
  }

  /**
   * Whether every byte the fd has held so far was handed on: no read in flight on the pool,
   * and none left unread (a poll that does not wait). A PTY master's poll also takes in what
   * the terminal has not yet pushed to it: a write to the terminal reaches the master through
   * a kernel worker, and FIONREAD, which does not wait for it, answered 0 in 18% of 20,000
   * looks right after a write, where poll never missed.
   */
  caughtUp(): boolean {
    if (this.#ended) return true;
    if (this.#pooled) return false;
    const fds = new Uint8Array(8);
    const view = new DataView(fds.buffer);
    view.setInt32(0, this.fd, true);
    view.setInt16(4, POLLIN, true);
    // A failed poll (a signal) proves nothing: not caught up, looked at again later.
    return libc().poll_sync(fds, 1n, 0) === 0;
  }

  stop(): void {
    if (this.#ended) return;
    this.#ended = true;
    // Its owner may be kept long after (a finished command): the block goes now.
    this.#block = new Uint8Array(0);
    this.reactor.remove(this);
    this.#pool?.close(); // after the read in flight, if any: it reads a duplicate fd
    this.shared.release();
    this.onEnd();
  }
}

/** Queues bytes for an fd and writes them as the fd accepts them. */
export class FdWriter implements FdWatcher, InputWriter {
  #queue: PendingInput[] = [];
  #unconfirmed = 0;
  #closed = false;
  #closeWhenDrained = false;
  #drained: (() => void)[] = [];

  constructor(private readonly reactor: PosixReactor, private readonly shared: SharedFd) {}

  get fd(): number {
    return this.shared.fd;
  }

  events(): number {
    return this.#queue.length > 0 && !this.#closed ? POLLOUT : 0;
  }

  ready(revents: number): void {
    if (revents & WRITE_READY) this.#flush();
  }

  /** Queues bytes; settles when the OS has accepted all of them, or fails after `timeoutMs`. */
  write(data: Uint8Array, timeoutMs: number): Promise<void> {
    if (this.#closed || this.#closeWhenDrained) {
      return Promise.reject(new Error("the program's input is closed"));
    }
    if (data.length === 0) return Promise.resolve();
    const wasIdle = this.#queue.length === 0;
    const pending = new PendingInput(data, timeoutMs, (input) => this.#expire(input));
    this.#queue.push(pending);
    if (wasIdle) {
      this.#flush();
      if (this.#queue.length > 0) this.reactor.add(this);
    }
    return pending.promise;
  }

  /** A write ran out of time: what is left of it goes, and the writes behind it go on. */
  #expire(pending: PendingInput): void {
    const index = this.#queue.indexOf(pending);
    if (index < 0) return;
    this.#queue.splice(index, 1);
    pending.timeOut();
    if (this.#queue.length > 0) return;
    this.reactor.remove(this);
    if (this.#closeWhenDrained) this.close();
  }

  /** Closes the fd once everything queued is written. */
  closeWhenDrained(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closeWhenDrained = true;
    if (this.#queue.length === 0) {
      this.close();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /** Closes now; queued bytes are dropped and their writers told why. */
  close(reason = "the program exited before reading its input"): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) pending.reject(new Error(reason));
    this.reactor.remove(this);
    this.shared.release();
    for (const resolve of this.#drained.splice(0)) resolve();
  }

  #flush(): void {
    const lib = libc();
    while (this.#queue.length > 0) {
      const head = this.#queue[0];
      const rest = head.data.subarray(head.done);
      const n = Number(lib.write(this.fd, rest, BigInt(rest.length)));
      if (n >= 0) {
        this.#unconfirmed = 0;
        head.done += n;
        if (head.done === head.data.length) {
          this.#queue.shift();
          head.resolve();
        }
        continue;
      }
      const code = errno();
      if (code === C.EINTR) continue;
      if (
        code === C.EAGAIN ||
        (!brokenByPoll(this.fd) && ++this.#unconfirmed < UNCONFIRMED_FAILURES)
      ) {
        return this.reactor.update();
      }
      return this.close(`write failed: ${errnoName(code)}`);
    }
    this.reactor.remove(this);
    if (this.#closeWhenDrained) this.close();
  }
}
