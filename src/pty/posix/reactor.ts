/**
 * The POSIX event reactor: ONE pending `poll()` (run on Deno's blocking pool) over every fd of
 * every child plus a wake-up pipe, and child exits through SIGCHLD + `waitpid(WNOHANG)`.
 * A thread per terminal would exhaust the runtime's 32 blocking threads at ~15 terminals.
 *
 * When the server is a child subreaper (see ../supervision/posix.ts), orphans of our trees become our
 * children too; the reactor reaps those as well, so that none lingers as a zombie. They are
 * told apart from children someone else in this process started (Deno.Command): ours were
 * started in sessions of their own, those share the server's session.
 *
 * The loop runs only while something is watched, and every change of the watched set wakes
 * the pending `poll()`, so the call always ends on its own and never keeps the process alive
 * after the last child is gone.
 *
 * @module
 */
import { log } from "../../log.ts";
import { C, errno, fcntl, libc, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT } from "./libc.ts";
import { processEntry } from "./process_table.ts";

/** Something that wants to hear about an fd's readiness. */
export interface FdWatcher {
  /** The fd to poll. */
  readonly fd: number;
  /** The poll events wanted now (POLLIN and/or POLLOUT); 0 leaves the fd out of the poll. */
  events(): number;
  /** Called with the poll result bits for this fd. */
  ready(revents: number): void;
}

const WAKE_BYTE = new Uint8Array([1]);
/** How often children are reaped without waiting for SIGCHLD. */
const REAP_FALLBACK_MS = 200;
/** waitid(2): P_ALL, and the options WNOHANG, WEXITED, WNOWAIT (Linux); si_pid's offset. */
const P_ALL = 0, WNOHANG = 1, WEXITED = 4, WNOWAIT = 0x01000000, SI_PID = 16;
/**
 * For this long at most, turns follow one another without a trip through the blocking pool
 * while output keeps coming; then the event loop gets its turn. Within a burst, the next look
 * waits up to HOT_WAIT_MS on this thread for more (so the event loop waits 3 ms at most).
 */
const HOT_BURST_MS = 2, HOT_WAIT_MS = 1;
/** A turn that read this much is a stream in full flow: look again at once (see `#loop`). */
const HOT_TURN_BYTES = 16 * 1024;
/**
 * When fds turned ready more than {@link BUSY_READY} times in the last {@link BUSY_WINDOW_MS},
 * with less than {@link TRICKLE_BYTES} read a time on average (many terminals printing a line
 * now and then), each look waits GATHER_MS first, so that one turn takes in what several would
 * have (see `#loop`). A lone command's few turns never wait, and neither does a flood.
 */
const GATHER_MS = 1, BUSY_READY = 100, BUSY_WINDOW_MS = 100, TRICKLE_BYTES = 1024;
/** A flood read in the reactor's turns this recently keeps every other off the blocking pool. */
const SHARED_FLOOD_MS = 100;
/** At most this many orphans reaped per turn. */
const ORPHANS_PER_TURN = 1000;

/** Opens a pipe whose fds are close-on-exec; `nonBlocking` picks which ends are nonblocking. */
export function openPipe(nonBlocking: { read: boolean; write: boolean }): [number, number] {
  const fds = new Int32Array(2);
  if (libc().pipe(new Uint8Array(fds.buffer)) !== 0) {
    throw new Error(`pipe() failed: errno ${errno()}`);
  }
  for (const [i, fd] of [...fds].entries()) {
    fcntl(fd, C.F_SETFD, C.FD_CLOEXEC);
    if (i === 0 ? nonBlocking.read : nonBlocking.write) setNonBlocking(fd);
  }
  return [fds[0], fds[1]];
}

/** Sets O_NONBLOCK on an fd. */
export function setNonBlocking(fd: number): void {
  const flags = fcntl(fd, C.F_GETFL, 0);
  fcntl(fd, C.F_SETFL, flags | C.O_NONBLOCK);
}

/** What one poll looks at: the watchers, and their pollfd array (the wake pipe's first). */
interface PollSet {
  active: FdWatcher[];
  fds: Uint8Array;
  view: DataView;
}

/** The reactor. Use {@link reactor} for the process-wide instance. */
export class PosixReactor {
  #watchers = new Set<FdWatcher>();
  #children = new Map<number, (status: number | undefined) => void>();
  #adopting = false;
  /** Children being started (see {@link spawning}). */
  #spawning = 0;
  /** A reap passed over orphans while children were being started. */
  #orphansLeft = false;
  #wakeRead: number;
  #wakeWrite: number;
  #running = false;
  #woken = false;
  /** The watched set or some watcher's events changed since the poll set was built. */
  #changed = true;
  /** Bytes read in the current turn (see {@link countRead}). */
  #turnBytes = 0;
  /** The watcher reading its flood on the blocking pool now (see {@link poolFlood}). */
  #pooled: FdWatcher | undefined;
  /** When each watcher last found a flood in its turn (see {@link poolFlood}). */
  #floods = new Map<FdWatcher, number>();
  /** Many terminals print a line now and then: looks gather output first (see `#loop`). */
  #busy = false;
  /** When the current burst's time is up (see {@link inTime}). */
  #deadline = Infinity;
  #statusBuf = new Int32Array(1);
  #reapTimer: ReturnType<typeof setInterval> | undefined;
  /** Where the wake-up pipe's bytes are read to (and dropped). */
  #wakeBuffer = new Uint8Array(64);

  constructor() {
    [this.#wakeRead, this.#wakeWrite] = openPipe({ read: true, write: true });
    Deno.addSignalListener("SIGCHLD", () => this.reap());
  }

  /** Starts watching an fd. */
  add(watcher: FdWatcher): void {
    this.#watchers.add(watcher);
    this.update();
  }

  /** Stops watching an fd. Call before closing it. */
  remove(watcher: FdWatcher): void {
    this.#floods.delete(watcher);
    if (this.#watchers.delete(watcher)) this.update();
  }

  /** Tells the loop that some watcher's {@link FdWatcher.events} changed. */
  update(): void {
    this.#changed = true;
    if (!this.#running) {
      if (this.#watchers.size > 0) this.#loop();
      return;
    }
    if (this.#woken) return;
    this.#woken = true;
    libc().write(this.#wakeWrite, WAKE_BYTE, 1n);
  }

  /** A reader tells how much it read (streams in full flow are looked at again at once). */
  countRead(bytes: number): void {
    this.#turnBytes += bytes;
  }

  /**
   * Whether a reader may read on in this turn: false once the burst's time (HOT_BURST_MS from
   * the last trip through the pool) is spent. A read of a flowing PTY can sleep in the kernel
   * until its worker has refilled the buffer (`tty_buffer_flush_work`), and 32 reads took
   * 4.6 ms at the median and 35 at most: while one command flooded, the event loop waited that
   * long between turns, and get_version's p99 was 20-100 ms.
   */
  inTime(): boolean {
    return performance.now() < this.#deadline;
  }

  /**
   * A reader whose turn read a flood asks whether it may read on on the blocking pool (see
   * pool_reader.ts): yes for one fd at a time, while no other floods. Read on the pool, a flood
   * is read as fast as its program writes, and its program takes a CPU: with four such floods on
   * two cores, get_version's median went from 4.7 to 8 ms, with forty from 9 to 48. Floods read
   * in the reactor's turns share them, and their programs wait for the reader. Nor while many
   * terminals trickle (`#busy`): on a machine they keep busy, a flood on the pool took the CPU
   * from the server (get_version's p99 under 32 such terminals: 252-457 ms against 181-235).
   */
  poolFlood(watcher: FdWatcher): boolean {
    this.#floods.set(watcher, performance.now());
    if (this.#pooled !== undefined || this.#busy || this.floodShared(watcher)) return false;
    this.#pooled = watcher;
    return true;
  }

  /** Whether another fd than `watcher` found a flood in its turn lately. */
  floodShared(watcher: FdWatcher): boolean {
    const now = performance.now();
    for (const [other, at] of this.#floods) {
      if (now - at >= SHARED_FLOOD_MS) this.#floods.delete(other);
      else if (other !== watcher) return true;
    }
    return false;
  }

  /** The watcher reading on the pool is back in the reactor's turns (or has ended). */
  poolDone(watcher: FdWatcher): void {
    if (this.#pooled === watcher) this.#pooled = undefined;
  }

  /**
   * Calls `onExit` with the raw wait status once `pid` has exited and been reaped, or with
   * undefined if its status was taken by someone else (ECHILD). Register before `done` of the
   * {@link spawning} that started it: until then, no reap takes its status.
   */
  watchChild(pid: number, onExit: (status: number | undefined) => void): void {
    this.#children.set(pid, onExit);
    // Started on the blocking pool, it may have exited already, its SIGCHLD handled before it
    // was watched: looked at once, just after its watcher is set up.
    queueMicrotask(() => this.#children.has(pid) && this.#reapChild(pid));
    // Signal listeners do not keep Deno's event loop alive, so a child whose output has ended
    // but which is not reaped yet would let the loop finish under a pending wait. This timer
    // holds the loop open while children remain, and reaps should a SIGCHLD ever be missed.
    this.#reapTimer ??= setInterval(() => this.reap(), REAP_FALLBACK_MS);
  }

  /** True while `pid` is a child this reactor waits for (started, not yet reaped). */
  watches(pid: number): boolean {
    return this.#children.has(pid);
  }

  /**
   * A child is being started (on the blocking pool): until `done`, exited children nobody
   * watches are not reaped as orphans, since one of them may be it, exited before it is
   * watched (its status would be lost). It is watched, and looked at once, by then.
   */
  spawning(): { done(): void } {
    this.#spawning++;
    let done = false;
    return {
      done: () => {
        if (done) return;
        done = true;
        // Orphans left while it started are reaped now.
        if (--this.#spawning === 0 && this.#orphansLeft) queueMicrotask(() => this.reap());
      },
    };
  }

  /** From now on, also reaps orphans that reparent to this process (a child subreaper). */
  adoptOrphans(): void {
    this.#adopting = true;
  }

  /** Reaps every watched child that has exited (and adopted orphans, if asked to). */
  reap(): void {
    for (const pid of [...this.#children.keys()]) this.#reapChild(pid);
    this.#orphansLeft = this.#adopting && this.#spawning > 0;
    if (this.#adopting && this.#spawning === 0) this.#reapOrphans();
    if (this.#children.size === 0 && this.#reapTimer !== undefined) {
      clearInterval(this.#reapTimer);
      this.#reapTimer = undefined;
    }
  }

  #reapChild(pid: number): void {
    const onExit = this.#children.get(pid)!;
    const result = libc().waitpid(pid, new Uint8Array(this.#statusBuf.buffer), WNOHANG);
    if (result === 0) return;
    this.#children.delete(pid);
    // result < 0 is ECHILD: someone else took the status. It ended, but how is unknown.
    onExit(result === pid ? this.#statusBuf[0] : undefined);
  }

  /** Looks at exited children without reaping them (WNOWAIT) and reaps the orphans. */
  #reapOrphans(): void {
    const lib = libc();
    const info = new Uint8Array(128);
    const view = new DataView(info.buffer);
    const ownSession = lib.getsid(0);
    for (let turn = 0; turn < ORPHANS_PER_TURN; turn++) {
      info.fill(0);
      if (lib.waitid(P_ALL, 0, info, WEXITED | WNOHANG | WNOWAIT) !== 0) return;
      const pid = view.getInt32(SI_PID, true);
      if (pid === 0) return;
      if (this.#children.has(pid)) {
        this.#reapChild(pid);
        continue;
      }
      // A child of ours that we did not spawn: an orphan from one of our trees, unless it
      // shares our session (someone else in this process started it and will reap it).
      if (processEntry(pid)?.session === ownSession) return;
      lib.waitpid(pid, new Uint8Array(this.#statusBuf.buffer), WNOHANG);
    }
  }

  async #loop(): Promise<void> {
    this.#running = true;
    const lib = libc();
    let failures = 0;
    let set: PollSet = {
      active: [],
      fds: new Uint8Array(0),
      view: new DataView(new ArrayBuffer(0)),
    };
    // A burst starts only after a poll through the pool: the first turn must not read inside
    // the `add` that started the loop (its watcher's owner has not attached its listeners yet).
    let burst = -Infinity;
    /** Fds found ready and bytes read in this window (see `#busy`). */
    let [window, readyCount, windowBytes] = [-Infinity, 0, 0];
    /** The fd the current turn starts at (see {@link #dispatchReady}). */
    let first = 0;
    try {
      while (this.#watchers.size > 0) {
        if (this.#changed) {
          // Built again only when something changed: 64 quiet terminals cost nothing a turn.
          this.#changed = false;
          set = this.#pollSet();
        }
        const { fds, view, active } = set;
        this.#woken = false;
        // A stream in full flow refills within microseconds of a read: the next look waits
        // for it here (HOT_WAIT_MS at most) instead of going through the blocking pool (a
        // thread hand-off each way; a fifth less of the reader's CPU for 40 MB), for
        // HOT_BURST_MS at most, then the event loop gets its turn. Only after a turn that read
        // a lot (polling every fd again costs more than it saves for terminals that print a
        // line now and then), and with no wait while many terminals trickle (`#busy`), where
        // any one's next line kept the burst going (get_version's p99 under 64 printing
        // terminals went from 10 to 25 ms).
        const flowing = this.#turnBytes >= HOT_TURN_BYTES;
        windowBytes += this.#turnBytes;
        const hot = flowing && performance.now() - burst < HOT_BURST_MS;
        this.#turnBytes = 0;
        let n = hot
          ? lib.poll_sync(fds, BigInt(active.length + 1), this.#busy ? 0 : HOT_WAIT_MS)
          : 0;
        if (n <= 0) {
          // Each look through the pool costs a thread hand-off each way (about 50 us of CPU):
          // with 64 terminals printing 100 lines a second each, a look per line took half a
          // core. While looks come that often, output is gathered for a millisecond first.
          const now = performance.now();
          if (now - window >= BUSY_WINDOW_MS) {
            this.#busy = readyCount > BUSY_READY && windowBytes < readyCount * TRICKLE_BYTES;
            [window, readyCount, windowBytes] = [now, 0, 0];
          }
          if (this.#busy && !flowing) {
            await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
          }
          n = await lib.poll(fds, BigInt(active.length + 1), -1);
          burst = performance.now();
          this.#deadline = burst + HOT_BURST_MS;
        }
        if (n < 0) {
          // EINTR from a signal landing on the polling thread; errno is not readable here.
          if (++failures % 1000 === 0) log.error("poll keeps failing", { failures });
          continue;
        }
        failures = 0;
        if (view.getInt16(6, true) !== 0) this.#drainWake();
        first = first + 1 < active.length ? first + 1 : 0;
        readyCount += this.#dispatchReady(set, first);
      }
    } finally {
      this.#running = false;
      this.#changed = true;
    }
  }

  /** The pollfd array: the wake pipe first, then every watcher that wants an event. */
  #pollSet(): PollSet {
    const active = [...this.#watchers].filter((w) => w.events() !== 0);
    const fds = new Uint8Array(8 * (active.length + 1));
    const view = new DataView(fds.buffer);
    view.setInt32(0, this.#wakeRead, true);
    view.setInt16(4, POLLIN, true);
    active.forEach((w, i) => {
      view.setInt32(8 * (i + 1), w.fd, true);
      view.setInt16(8 * (i + 1) + 4, w.events(), true);
    });
    return { active, fds, view };
  }

  /**
   * Hands each ready fd its events, starting at `first`: each turn starts at the next fd, so
   * that one whose reads spend the burst's time cannot leave those after it unread turn after
   * turn. Returns how many were ready.
   */
  #dispatchReady({ active, view }: PollSet, first: number): number {
    let ready = 0;
    for (let k = 0; k < active.length; k++) {
      const i = first + k < active.length ? first + k : first + k - active.length;
      const revents = view.getInt16(8 * (i + 1) + 6, true);
      if (revents === 0 || !this.#watchers.has(active[i])) continue;
      ready++;
      this.#dispatch(active[i], revents);
    }
    return ready;
  }

  #dispatch(watcher: FdWatcher, revents: number): void {
    try {
      watcher.ready(revents);
    } catch (error) {
      log.error("fd handler failed", { fd: watcher.fd, error });
    }
  }

  #drainWake(): void {
    const lib = libc();
    while (lib.read(this.#wakeRead, this.#wakeBuffer, BigInt(this.#wakeBuffer.length)) > 0) {
      // keep draining
    }
  }
}

/** Poll bits that mean "read now": data, hang-up, error or a closed fd. */
export const READ_READY = POLLIN | POLLHUP | POLLERR | POLLNVAL;
/** Poll bits that mean "write now" (errors surface from the write itself). */
export const WRITE_READY = POLLOUT | POLLHUP | POLLERR | POLLNVAL;

let instance: PosixReactor | undefined;

/** The process-wide reactor, created on first use. */
export function reactor(): PosixReactor {
  instance ??= new PosixReactor();
  return instance;
}
