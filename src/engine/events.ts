/**
 * Small async helpers: listener sets and bounded waits.
 *
 * @example
 * ```ts
 * import { Listeners, waitFor } from "./events.ts";
 * const exits = new Listeners<number>();
 * const stop = exits.add((code) => console.error("exit", code));
 * exits.emit(0);
 * stop();
 * await waitFor(new Promise((r) => setTimeout(r, 10)), 1000); // resolves after 10 ms
 * ```
 * @module
 */

/** A set of listeners for events of type `T`. */
export class Listeners<T> {
  #listeners = new Set<(event: T) => void>();

  /** How many listeners there are. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Adds a listener; returns the function that removes it. */
  add(listener: (event: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls every listener; one that throws does not stop the others. */
  emit(event: T): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own business
      }
    }
  }
}

/** A promise that settles after `ms`, and the way to cancel its timer. */
export function delay(ms: number): { promise: Promise<void>; cancel: () => void } {
  let id: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<void>((resolve) => id = setTimeout(resolve, ms));
  return { promise, cancel: () => clearTimeout(id) };
}

/**
 * Waits for `promise` at most `ms` (and not past `signal`). Resolves with its value, or with
 * `undefined` when time ran out or the wait was cancelled.
 */
export async function waitFor<T>(
  promise: Promise<T>,
  ms: number,
  signal?: AbortSignal,
): Promise<T | undefined> {
  if (signal?.aborted) return undefined;
  const timer = delay(ms);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, timer.promise.then(() => undefined), aborted]);
  } finally {
    timer.cancel();
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
