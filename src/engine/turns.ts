/**
 * A line for work that at most `width` callers may do at once, served in order: a caller takes
 * a turn, does its work, and ends the turn, which lets the next one in. A caller whose signal
 * aborts while it waits leaves the line.
 *
 * Why: work that runs on the event loop without waiting on anything (building a large answer,
 * the start of a process) holds up everything else while it runs. A hundred such calls taken
 * at once run back to back and every other request waits for all of them; in line, they go a
 * few at a time, each turn handed on in a later task, and whatever came in meanwhile (a
 * `get_version`, a keystroke) is served between two.
 *
 * @example
 * ```ts
 * import { Turns } from "./turns.ts";
 * const starts = new Turns(2);
 * const done = await starts.take();
 * try {
 *   // ... the work ...
 * } finally {
 *   done();
 * }
 * ```
 * @module
 */

/** See the module documentation. */
export class Turns {
  #running = 0;
  /** Who waits for a turn, in order. */
  #waiting: (() => void)[] = [];

  constructor(readonly width: number) {}

  /** Turns taken and not yet ended (one being handed on counts until the next task). */
  get running(): number {
    return this.#running;
  }

  /**
   * Waits for a turn (or the signal's abort: the caller leaves the line, and this rejects with
   * the signal's reason); resolves to the function that ends it, once, whatever calls it.
   */
  async take(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#running >= this.width) {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          const index = this.#waiting.indexOf(turn);
          if (index >= 0) this.#waiting.splice(index, 1);
          reject(signal!.reason);
        };
        this.#waiting.push(turn);
        signal?.addEventListener("abort", leave, { once: true });
      });
    } else {
      this.#running++;
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      // The next one begins in a task of its own, after what this turn made has gone on its
      // way (and is looked for then: the one waiting now may have left the line meanwhile).
      if (this.#waiting.length === 0) this.#running--;
      else setTimeout(() => this.#next(), 0);
    };
  }

  /** Hands a turn that ended to the first one waiting, if any. */
  #next(): void {
    const first = this.#waiting.shift();
    if (first) first();
    else this.#running--;
  }
}
