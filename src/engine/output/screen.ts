/**
 * What a person would see on a terminal right now: a headless terminal emulator
 * (@xterm/headless) kept at the terminal's size and fed its output. The only sane view of a
 * full-screen program (vim, htop, a progress display). Loaded on first use, so terminals whose
 * screen is never asked for cost nothing.
 *
 * The emulators live in a thread of their own, one for all screens (screen_worker.ts, started
 * with the first screen asked for, ended {@link IDLE_THREAD_MS} after the last one is freed):
 * feeding them, however much output there is to catch up on, never holds the event loop that
 * answers calls. Measured (scripts/bench.ts, screen-reads: four terminals redrawing at 500 KB/s
 * each, their screens read without pause, a quiet caller's get_version over HTTP), fed in
 * slices of 4 ms on the server's own thread (src/engine/slices.ts): p50 9-15 ms, p99 35-92 ms,
 * 120-240 screen reads a second; in their thread, which runs on the other core: p50 4-8 ms, p99
 * 17-38 ms, 160-290 reads a second. The thread costs about 13 MiB while any screen is in use.
 *
 * The emulator is fed lazily, when the screen is asked for ({@link Screen.render},
 * {@link Screen.snapshot}), from the output buffer, and at a bounded cost:
 * - through ScreenInput (in the emulators' thread), which clamps the counts xterm would loop
 *   or allocate over;
 * - at most the newest {@link CATCH_UP} bytes: further behind (or when the buffer has dropped
 *   what it had not seen), it restarts from a line start that recent (full-screen programs
 *   redraw the screen, a shell's last lines are there);
 * - in pieces of {@link PIECE_BYTES}, each parsed in pieces of bounded work, the screens fed at
 *   once taking turns in their thread (see screen_worker.ts);
 * - for at most {@link RENDER_BUDGET_MS} per request: output the emulator could not get through
 *   by then is reported as `unrenderedBytes` and fed on the next request.
 * Resizes are recorded at the output offset they happened at ({@link Screen.resize}) and applied
 * when the feeding gets there: output is laid out at the size it was written for.
 *
 * A {@link Screen.snapshot} is the screen as escape sequences (@xterm/addon-serialize) at an
 * exact output offset: written into a fresh terminal of the same size, then followed by the
 * output from that offset on, it draws what this screen draws. So a viewer that joins late sees
 * vim as it is, and misses nothing. (If the output is in the middle of a sequence or a character
 * at that offset, the snapshot ends with its first bytes, so that the output continues it.)
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { Screen } from "./screen.ts";
 * const buffer = new OutputBuffer();
 * const screen = new Screen(buffer, 20, 3);
 * buffer.append(new TextEncoder().encode("ab\x1b[2;5Hcd"));
 * (await screen.render()).text; // "ab\n    cd\n" (blank rows below are left out)
 * screen.dispose();
 * ```
 * @module
 */
import { log } from "../../log.ts";
import type { OutputBuffer } from "./buffer.ts";
import type { EmulatorSnapshot, EmulatorView } from "./screen_emulator.ts";
import type { FromEmulators, ToEmulators } from "./screen_worker.ts";

/** The emulator is fed at most this many of the newest bytes. */
export const CATCH_UP = 1024 * 1024;
/** One request feeds the emulator for at most this long. */
export const RENDER_BUDGET_MS = 1000;
/** Bytes sent to the emulator at once, at most. */
export const PIECE_BYTES = 64 * 1024;
/** The emulators' thread ends this long after the last screen is freed. */
export const IDLE_THREAD_MS = 10_000;
/** Resizes not yet applied that are kept; beyond, the oldest is forgotten. */
export const MAX_PENDING_RESIZES = 1024;
/**
 * A snapshot ends with at most this many bytes of a sequence still unfinished at its offset;
 * of a longer one (an endless control string), only its introducer.
 */
export const MAX_UNFINISHED = 4096;

/** A rendered screen. */
export interface ScreenView extends EmulatorView {
  /** Output not yet shown: the emulator did not get through it in this request's time. */
  unrenderedBytes: number;
}

/** A resize, at the output offset it happened at. */
export interface ScreenResize {
  offset: number;
  cols: number;
  rows: number;
}

/** The screen at one point of the output (see {@link Screen.snapshot}). */
export interface ScreenSnapshot {
  /** Escape sequences that redraw the screen in a fresh terminal of its size. */
  data: Uint8Array;
  cols: number;
  rows: number;
  /** The output offset it stands at: the output from here on follows it. */
  offset: number;
  /** Resizes at or after `offset`, not in the snapshot yet, in order. */
  resizes: ScreenResize[];
}

const ESC = 0x1b;
let screens = 0;

/** See the module documentation. */
export class Screen {
  readonly #buffer: OutputBuffer;
  readonly #id = ++screens;
  /** The thread its emulator is in (none before the first request, or after its release). */
  #thread: EmulatorThread | undefined;
  /** The emulator's size (the size at {@link #fed}). */
  #size: { cols: number; rows: number };
  /** Resizes not applied yet, in order, each at a later offset than the one before. */
  #resizes: ScreenResize[] = [];
  /** Offset of the first byte its emulator has not taken. */
  #fed: number;
  /** Requests run one after the other. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The render queued and not yet begun, which a new request joins. */
  #nextRender?: Promise<ScreenView>;
  #disposed = false;

  /** A screen of the given size showing `buffer`'s output (the emulator loads on first use). */
  constructor(buffer: OutputBuffer, cols: number, rows: number) {
    this.#buffer = buffer;
    this.#size = { cols, rows };
    this.#fed = buffer.start;
  }

  /** The terminal was resized now: the output from here on is laid out at the new size. */
  resize(cols: number, rows: number): void {
    const offset = this.#buffer.end;
    const last = this.#resizes.at(-1);
    // Sizes set with no output between: only the last one lays anything out.
    if (last?.offset === offset) this.#resizes.pop();
    this.#resizes.push({ offset, cols, rows });
    if (this.#resizes.length > MAX_PENDING_RESIZES) this.#resizes.shift();
  }

  /**
   * The screen once the output so far has been processed (within the time budget). Requests
   * made while a render waits to start share it: a hundred at once cost two renders, not a
   * hundred seconds.
   */
  render(): Promise<ScreenView> {
    return this.#nextRender ??= this.#enqueue(async () => {
      this.#nextRender = undefined;
      const thread = await this.#catchUp();
      const view = await thread.ask<EmulatorView>({ type: "view", id: this.#id });
      return { ...view, unrenderedBytes: this.#buffer.end - this.#fed };
    });
  }

  /**
   * The screen as escape sequences that redraw it (contents, colours, the alternate screen,
   * modes, the cursor), once the output so far has been processed (within the time budget), at
   * the exact offset the emulator has got to. `taken` is called with it at once when it comes
   * (so it can start listening for what follows); its result is returned.
   */
  snapshot<T>(taken: (snapshot: ScreenSnapshot) => T): Promise<T> {
    return this.#enqueue(async () => {
      const thread = await this.#catchUp();
      const { data: screen, cols, rows, unfinished } = await thread.ask<EmulatorSnapshot>({
        type: "snapshot",
        id: this.#id,
      });
      const rest = this.#unfinishedBytes(unfinished.length, unfinished.introducer);
      const data = new Uint8Array(screen.length + rest.length);
      data.set(screen);
      data.set(rest, screen.length);
      return taken({
        data,
        cols,
        rows,
        offset: this.#fed,
        resizes: this.#resizes.map((resize) => ({ ...resize })),
      });
    });
  }

  /** Frees the emulator (once the requests under way are done). */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#enqueue(() => {
      this.#thread?.close(this.#id);
      this.#thread = undefined;
      return Promise.resolve();
    });
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => {});
    return result;
  }

  /**
   * Feeds the emulator the output it has not had, in pieces, within the time budget. Returns
   * the thread it is in.
   */
  async #catchUp(): Promise<EmulatorThread> {
    if (this.#disposed) throw new Error("the screen was freed");
    const thread = emulatorThread();
    const output = this.#buffer;
    // Too far behind starts afresh once a request: again each time a flood outpaced the
    // emulator, it reset the screen over and over. Nor does a request end on a fresh start
    // (a blank screen) before a piece has been sent. A new thread (the first request, or one
    // after the last failed) has a fresh emulator.
    let fresh = false;
    if (this.#thread !== thread) {
      this.#thread = thread;
      thread.open(this.#id, this.#size);
      if (this.#fed > output.start) fresh = this.#restart(thread);
    }
    // In ms since the epoch: the emulators' thread has a clock of its own.
    const deadline = now() + RENDER_BUDGET_MS;
    if (output.end - this.#fed > CATCH_UP) fresh = this.#restart(thread);
    for (;;) {
      if (this.#fed < output.start) fresh = this.#restart(thread); // dropped before it was fed
      this.#applyResizes(thread);
      if (this.#fed >= output.end || (now() >= deadline && !fresh)) return thread;
      // A piece ends where the next resize happened, so that it is laid out at its size.
      const end = Math.min(
        output.end,
        this.#fed + PIECE_BYTES,
        this.#resizes[0]?.offset ?? Infinity,
      );
      // Output may come and go while it is parsed: the loop looks again.
      this.#fed += await thread.feed(this.#id, output.read(this.#fed, end).bytes, deadline);
      fresh = false;
    }
  }

  /**
   * Too far behind: starts afresh from a recent line start, at the size the terminal had there.
   * Returns true (the screen is fresh).
   */
  #restart(thread: EmulatorThread): true {
    const output = this.#buffer;
    const from = Math.max(output.start, output.end - CATCH_UP);
    const line = output.lineStart(output.lineAt(from) + 1);
    this.#fed = output.lineStart(output.lineAt(from)) === from || line >= output.end ? from : line;
    while (this.#resizes.length > 0 && this.#resizes[0].offset <= this.#fed) {
      const { cols, rows } = this.#resizes.shift()!;
      this.#size = { cols, rows };
    }
    thread.post({ type: "restart", id: this.#id, ...this.#size });
    return true;
  }

  /** Applies the resizes the feeding has got to. */
  #applyResizes(thread: EmulatorThread): void {
    while (this.#resizes.length > 0 && this.#resizes[0].offset <= this.#fed) {
      const { cols, rows } = this.#resizes.shift()!;
      this.#size = { cols, rows };
      thread.post({ type: "resize", id: this.#id, cols, rows });
    }
  }

  /**
   * The first bytes of what the output is in the middle of where the feeding stands (`length`
   * bytes of it, begun with `introducer`), without the C0 controls among them: those have
   * acted already (inside an escape sequence) or do nothing (inside a control string), and
   * must not act twice.
   */
  #unfinishedBytes(length: number, introducer: Uint8Array): Uint8Array {
    const from = this.#fed - length;
    if (length === 0 || length > MAX_UNFINISHED || from < this.#buffer.start) return introducer;
    return this.#buffer.read(from, this.#fed).bytes.filter((byte) => byte >= 0x20 || byte === ESC);
  }
}

/** Now, in ms since the epoch (a clock the emulators' thread shares). */
function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The emulators' thread (screen_worker.ts) as the screens use it: what they send, what it
 * answers. Should it fail, what waits on it is rejected, and the next request starts another
 * (its screens start afresh).
 */
class EmulatorThread {
  readonly #worker: Worker;
  /** The screens whose emulators are in it. */
  readonly #screens = new Set<number>();
  readonly #answers = new Map<
    number,
    { resolve(value: never): void; reject(error: Error): void }
  >();
  #requests = 0;
  #idle: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.#worker = new Worker(new URL("./screen_worker.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = ({ data }: MessageEvent<FromEmulators>) => this.#receive(data);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(new Error(`the screen emulators' thread failed: ${event.message}`));
    };
  }

  /** Makes an emulator for screen `id`. */
  open(id: number, size: { cols: number; rows: number }): void {
    clearTimeout(this.#idle);
    this.#screens.add(id);
    this.post({ type: "open", id, ...size });
  }

  post(message: ToEmulators, transfer: Transferable[] = []): void {
    this.#worker.postMessage(message, transfer);
  }

  /** Asks for an answer (a view, a snapshot) of screen `id`'s emulator. */
  ask<T>(message: { type: "view" | "snapshot"; id: number }): Promise<T> {
    return this.#request<T>((request) => this.post({ ...message, request }));
  }

  /**
   * Feeds screen `id`'s emulator `bytes` (given away), parsing on until `until` (ms since the
   * epoch) once it has taken a piece; resolves to how many bytes it took.
   */
  feed(id: number, bytes: Uint8Array, until: number): Promise<number> {
    return this.#request<number>((request) =>
      this.post({ type: "feed", id, request, bytes, until }, [bytes.buffer])
    );
  }

  #request<T>(send: (request: number) => void): Promise<T> {
    const request = ++this.#requests;
    return new Promise<T>((resolve, reject) => {
      this.#answers.set(request, { resolve: resolve as (value: never) => void, reject });
      send(request);
    });
  }

  /**
   * Frees screen `id`'s emulator; the thread ends {@link IDLE_THREAD_MS} after the last one, if
   * no other has come (a thread takes 80-100 ms to start).
   */
  close(id: number): void {
    if (!this.#screens.delete(id)) return;
    this.post({ type: "close", id });
    if (this.#screens.size > 0) return;
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#screens.size > 0) return;
      this.#worker.terminate();
      if (thread === this) thread = undefined;
    }, IDLE_THREAD_MS);
    Deno.unrefTimer(this.#idle);
  }

  #receive(message: FromEmulators): void {
    const answer = message.request === undefined ? undefined : this.#answers.get(message.request);
    if (message.request !== undefined) this.#answers.delete(message.request);
    if (message.type === "failed") {
      const error = new Error(`screen ${message.id}'s emulator failed: ${message.message}`);
      if (answer) answer.reject(error);
      else log.error("a screen's emulator failed", { screen: message.id, error: message.message });
      return;
    }
    const value = message.type === "fed"
      ? message.consumed
      : message.type === "view"
      ? message.view
      : message.snapshot;
    answer?.resolve(value as never);
  }

  #fail(error: Error): void {
    log.error("the screen emulators' thread failed", { error: error.message });
    this.#worker.terminate();
    if (thread === this) thread = undefined;
    for (const answer of this.#answers.values()) answer.reject(error);
    this.#answers.clear();
    this.#screens.clear();
  }
}

/** The emulators' thread, started with the first screen's request. */
let thread: EmulatorThread | undefined;

function emulatorThread(): EmulatorThread {
  return thread ??= new EmulatorThread();
}
