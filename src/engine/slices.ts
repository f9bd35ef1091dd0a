/**
 * Work that would hold the event loop for long (an answer cleaned out of megabytes of output,
 * measured and cut to its size) is done in slices of about {@link SLICE_MS}, and between two
 * slices the event loop runs whatever else is ready: a call that comes in waits for at most
 * about one slice. (The screens' emulators, the other such work, have a thread of their own:
 * see output/screen.ts.)
 *
 * All the sliced work of the server takes turns: one slice per task of the event loop, the
 * works in the order they asked, so that several at once hold it no longer at a time than one
 * does. A turn is a timer task. Deno's event loop looks for I/O (a request on a
 * socket) only when it has nothing ready to run, and only a timer makes it wait: promise jobs,
 * `setImmediate`, a `MessageChannel` and operations that complete at once (`Deno.stat`,
 * `crypto.subtle.digest`, an FFI call on the blocking pool) all kept a request from another
 * process waiting for seconds behind four works yielding through them (Deno 2.9.6).
 *
 * A timer waits at least a millisecond (about 2.2 ms here, rounded up to the timer wheel's).
 * Set before a slice runs, its wait passes while the slice does and a lone work loses nothing
 * to it; but then it has expired when the slice ends, and the loop runs it at once without
 * looking for I/O: behind answers built back to back, a `get_version` over HTTP waited 100-400
 * ms to be read. So at least every {@link REST_EVERY_MS} the next turn's timer is set once the
 * slice is over, and the loop waits for it, taking in I/O meanwhile (the same `get_version`
 * then waited 10 ms at the median): about a millisecond or two of rest in every eight of work.
 *
 * A work is written as a generator that yields where it may pause ({@link Steps}): run by
 * {@link inSlices}, it pauses there once its slice's time is spent; run by {@link atOnce}, it
 * never does (for callers that need the result now). So both get the same result by one
 * piece of code.
 *
 * @example
 * ```ts
 * import { atOnce, inSlices, type Steps } from "./slices.ts";
 * function* sum(values: number[]): Steps<number> {
 *   let total = 0;
 *   for (const [i, value] of values.entries()) {
 *     total += value;
 *     if (i % 1000 === 999) yield;
 *   }
 *   return total;
 * }
 * const values = Array.from({ length: 100_000 }, (_, i) => i);
 * atOnce(sum(values)) === await inSlices(() => sum(values)); // true
 * ```
 * @module
 */

/** How long a slice runs before the work lets the event loop go round. */
export const SLICE_MS = 4;
/** How often at least the event loop rests between two slices (see the module documentation). */
export const REST_EVERY_MS = 8;

/**
 * A piece of work that yields where it may pause and returns its result: see the module
 * documentation. Its yields should come often enough (every millisecond or so of work) for a
 * slice to end near its time.
 */
export type Steps<T> = Generator<void, T, void>;

/**
 * Thrown by a work whose data changed under it between two of its slices in a way it cannot
 * read around (an output buffer dropped what a frozen view of it still reads):
 * {@link inSlices} then does the work again at once.
 */
export class Overtaken extends Error {
  override name = "Overtaken";
}

/** Who waits for a slice, in order. */
const waiting: { resolve(): void; reject(reason: unknown): void }[] = [];
/** The timer of the next turn, if one is set. */
let nextTurn: ReturnType<typeof setTimeout> | undefined;
/** When the last turn began that let the loop rest before the next. */
let lastRest = -Infinity;

/**
 * Waits for this work's next slice: the next turn of the event loop that is its own (after
 * those of the works that asked before it). A work whose signal aborts while it waits leaves
 * the line, and this rejects with the signal's reason.
 */
export function nextSlice(signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const waiter = {
      resolve() {
        signal?.removeEventListener("abort", leave);
        resolve();
      },
      reject,
    };
    const leave = () => {
      const index = waiting.indexOf(waiter);
      if (index >= 0) waiting.splice(index, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", leave, { once: true });
    waiting.push(waiter);
    nextTurn ??= setTimeout(turn, 0);
  });
}

/**
 * A turn: the first work in line runs its slice. The next turn's timer is set before it does,
 * or, if the loop has not rested for {@link REST_EVERY_MS}, once it is over (in the promise job
 * that follows the slice's): then the loop rests until the timer is due.
 */
function turn(): void {
  nextTurn = undefined;
  const first = waiting.shift();
  if (!first) return;
  const now = performance.now();
  if (now - lastRest < REST_EVERY_MS) nextTurn = setTimeout(turn, 0);
  else lastRest = now;
  first.resolve();
  queueMicrotask(() => {
    if (waiting.length > 0) nextTurn ??= setTimeout(turn, 0);
  });
}

/** Runs `steps` to their end at once, and returns their result. */
export function atOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs the steps `work` makes in slices (see the module documentation), and returns their
 * result. The first slice runs at once. If `signal` aborts while they wait for a slice, they are
 * ended (their `finally` blocks run) and this rejects with the signal's reason. If they are
 * {@link Overtaken}, `work` is done again, at once.
 */
export async function inSlices<T>(work: () => Steps<T>, signal?: AbortSignal): Promise<T> {
  const steps = work();
  let until = performance.now() + SLICE_MS;
  try {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      if (performance.now() >= until) {
        await nextSlice(signal);
        until = performance.now() + SLICE_MS;
      }
    }
  } catch (error) {
    if (!(error instanceof Overtaken)) throw error;
    return atOnce(work());
  } finally {
    steps.return(undefined as T);
  }
}
