/**
 * A line for work that at most `width` callers may do at once, served in order: a caller takes
 * a turn, does its work, and ends the turn, which lets the next one in. A caller whose signal
 * aborts while it waits leaves the line. Callers that say which client they work for are
 * served round the clients (see `#next`): one client's forty reads in line do not hold up
 * another's one (it waited 5.4 s behind them, served in order of arrival).
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

/** One waiting for a turn, the client it works for, and the turns given before it came. */
interface Waiting {
  turn: () => void;
  client: object | undefined;
  since: number;
}

/** See the module documentation. */
export class Turns {
  #running = 0;
  /** Who waits for a turn, in order of arrival. */
  #waiting: Waiting[] = [];
  /** When each client was last served (a count of turns given). */
  readonly #served = new WeakMap<object, number>();
  #given = 0;

  constructor(readonly width: number) {}

  /** Turns taken and not yet ended (one being handed on counts until the next task). */
  get running(): number {
    return this.#running;
  }

  /**
   * Waits for a turn; returns what ends it (call it once the work is done; more calls do
   * nothing). Rejects with the signal's reason if `signal` aborts first. `client`: whom the work
   * is for (see the module documentation); without one, the caller is a client of its own.
   */
  async take(signal?: AbortSignal, client?: object): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#running >= this.width) {
      await new Promise<void>((resolve, reject) => {
        const waiting: Waiting = {
          turn: () => {
            signal?.removeEventListener("abort", leave);
            resolve();
          },
          client,
          since: this.#given,
        };
        const leave = () => {
          const index = this.#waiting.indexOf(waiting);
          if (index >= 0) this.#waiting.splice(index, 1);
          reject(signal!.reason);
        };
        this.#waiting.push(waiting);
        signal?.addEventListener("abort", leave, { once: true });
      });
    } else {
      this.#running++;
    }
    if (client) this.#served.set(client, ++this.#given);
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

  /**
   * Hands the turn to the one waiting that comes first round the clients: each counts from when
   * it came (the turns given by then), or from the turn after its client's last, if later; in
   * order of arrival among equals. So a client served once waits for those that came before
   * its next turn would be due, and one that waits is never passed by those that come later.
   */
  #next(): void {
    let chosen = -1, first = Infinity;
    for (let i = 0; i < this.#waiting.length; i++) {
      const { client, since } = this.#waiting[i];
      const served = client ? this.#served.get(client) : undefined;
      const due = served === undefined ? since : Math.max(since, served + 1);
      if (due < first) [chosen, first] = [i, due];
    }
    if (chosen < 0) {
      this.#running--;
      return;
    }
    const [next] = this.#waiting.splice(chosen, 1);
    next.turn();
  }
}
