/**
 * What the live view hands to xterm.js, in order and one chunk at a time: a stream's output,
 * and the steps that start the view afresh or resize it.
 *
 * Why: xterm.js queues every write and parses it later, and its `reset()` leaves the queue as it
 * is, so a view opened while another terminal flooded went on drawing the old output into the
 * new one; and the queue had no bound, so a browser slower than the flood held ever more of it.
 * Here at most one chunk waits inside xterm.js. The rest waits in the feed, where starting
 * afresh drops it, and which never holds more than its bound: output beyond it is dropped with
 * what waits, and the view is told how much (a terminal's view starts again from its screen).
 *
 * @example
 * ```ts
 * import { Feed } from "./feed.ts";
 * const drawn: string[] = [];
 * const feed = new Feed({
 *   write: (data, done) => {
 *     drawn.push(new TextDecoder().decode(data));
 *     done();
 *   },
 * }, 1024, (dropped) => console.log(`${dropped} bytes not drawn`));
 * feed.data(new TextEncoder().encode("hello"));
 * feed.afresh(() => drawn.length = 0); // a reset, in order with the output
 * ```
 * @module
 */

/** Where the output goes: xterm.js's `write`, whose callback says the chunk is parsed. */
export interface FeedSink {
  write(data: Uint8Array, parsed: () => void): void;
}

/** See the module documentation. */
export class Feed {
  #steps: (Uint8Array | (() => void))[] = [];
  /** The first step not yet taken (a shift would move every step waiting, each time). */
  #next = 0;
  #waitingBytes = 0;
  /** A chunk handed to the sink is not parsed yet. */
  #inSink = false;

  /**
   * `maxWaitingBytes`: output the feed holds at most (it may be changed: a stream's history
   * comes at once); `onBehind(dropped)` hears of output dropped because it would have held more.
   */
  constructor(
    private readonly sink: FeedSink,
    public maxWaitingBytes: number,
    private readonly onBehind: (dropped: number) => void,
  ) {}

  /** Output waiting for the sink, in bytes. */
  get waitingBytes(): number {
    return this.#waitingBytes;
  }

  /** Output to draw, after everything given before it. */
  data(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.#waitingBytes + chunk.length > this.maxWaitingBytes) {
      this.onBehind(this.#drop() + chunk.length);
      return;
    }
    this.#steps.push(chunk);
    this.#waitingBytes += chunk.length;
    this.#pump();
  }

  /** A step (a resize) taken once everything given before it is drawn. */
  then(step: () => void): void {
    this.#steps.push(step);
    this.#pump();
  }

  /**
   * Drops everything waiting, then takes `step` (a reset) as soon as the chunk in the sink, if
   * any, is parsed: nothing given before it is drawn after it.
   */
  afresh(step: () => void): void {
    this.#drop();
    this.then(step);
  }

  /** Drops every step waiting; returns the bytes of output among them. */
  #drop(): number {
    const dropped = this.#waitingBytes;
    this.#steps = [];
    this.#next = 0;
    this.#waitingBytes = 0;
    return dropped;
  }

  #pump(): void {
    while (!this.#inSink && this.#next < this.#steps.length) {
      const step = this.#steps[this.#next++];
      // Taken steps go once they are half the list: a flood that never lets it empty keeps
      // neither them nor the bytes they hold.
      if (this.#next * 2 >= this.#steps.length) {
        [this.#steps, this.#next] = [this.#steps.slice(this.#next), 0];
      }
      if (typeof step === "function") {
        step();
        continue;
      }
      this.#waitingBytes -= step.length;
      this.#inSink = true;
      this.sink.write(step, () => {
        this.#inSink = false;
        this.#pump();
      });
    }
  }
}
