/**
 * The server-wide budget for retained output: every command's and terminal's output counts
 * against one limit. Past it, finished commands are evicted first (oldest first, through the
 * relievers their services register), then the largest live buffers lose their oldest output,
 * until the total is back to nine tenths of the limit (so that enforcing it is rare, not a cost
 * on every append). Readers of a trimmed buffer are told how much they missed, as with any
 * buffer limit.
 *
 * What its members give up is freed by the runtime's collector, into the C heap, which keeps it
 * (see src/pty/posix/heap.ts): once {@link RETURN_AFTER_BYTES} were given up, the budget asks
 * for the heap's free memory to go back to the OS a moment later ({@link RETURN_DELAY_MS}, time
 * for the collector), at most once in that moment.
 *
 * @example
 * ```ts
 * import { OutputBudget } from "./budget.ts";
 * import { OutputBuffer } from "./buffer.ts";
 * const budget = new OutputBudget(1000);
 * const a = new OutputBuffer({ budget }), b = new OutputBuffer({ budget });
 * a.append(new Uint8Array(800));
 * b.append(new Uint8Array(800)); // 1600 > 1000: the largest (either) loses its oldest bytes
 * budget.used <= 1000;            // true
 * ```
 * @module
 */
import { log } from "../../log.ts";

/** Something whose retained output counts against the budget. */
export interface BudgetMember {
  /** Bytes it retains now. */
  readonly retained: number;
  /** Drops its oldest `bytes` bytes (at most all it retains). */
  dropOldest(bytes: number): void;
}

/** Bytes given up after which the heap's free memory is handed back. */
export const RETURN_AFTER_BYTES = 16 * 1024 * 1024;
/** How long after that it is handed back. */
export const RETURN_DELAY_MS = 1000;

/** See the module documentation. */
export class OutputBudget {
  readonly limit: number;
  #used = 0;
  #members = new Set<BudgetMember>();
  #relievers: (() => boolean)[] = [];
  #enforcing = false;
  readonly #returnMemory: (() => Promise<unknown>) | undefined;
  /** Bytes given up since the heap's free memory was last handed back. */
  #givenUp = 0;
  #returnTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `returnMemory` hands the heap's free memory back to the OS (none: the heap keeps it), as
   * `returnFreedMemory` of src/pty/mod.ts does.
   */
  constructor(limit: number, returnMemory?: () => Promise<unknown>) {
    this.limit = Math.max(1, limit);
    this.#returnMemory = returnMemory;
  }

  /** Bytes retained by all members together. */
  get used(): number {
    return this.#used;
  }

  join(member: BudgetMember): void {
    this.#members.add(member);
  }

  /** Removes a member and gives back what it retained. */
  leave(member: BudgetMember): void {
    if (!this.#members.delete(member)) return;
    this.#used -= member.retained;
    this.#gaveUp(member.retained);
  }

  /**
   * Registers a function that frees retained output by evicting something whole (a finished
   * command); it returns false when it has nothing left to evict.
   */
  addReliever(relieve: () => boolean): void {
    this.#relievers.push(relieve);
  }

  /** A member now retains `delta` more bytes (negative: fewer). */
  charge(delta: number): void {
    this.#used += delta;
    if (delta < 0) this.#gaveUp(-delta);
    if (this.#used > this.limit) this.#enforce();
  }

  #gaveUp(bytes: number): void {
    this.#givenUp += bytes;
    if (!this.#returnMemory || this.#givenUp < RETURN_AFTER_BYTES || this.#returnTimer) return;
    const timer = this.#returnTimer = setTimeout(() => {
      this.#returnTimer = undefined;
      this.#givenUp = 0;
      this.#returnMemory!().catch((error) =>
        log.warn("could not hand free memory back", { error: String(error) })
      );
    }, RETURN_DELAY_MS);
    // Never what keeps the process alive.
    Deno.unrefTimer(timer);
  }

  #enforce(): void {
    if (this.#enforcing) return;
    this.#enforcing = true;
    try {
      const target = Math.floor(this.limit * 0.9);
      for (const relieve of this.#relievers) {
        while (this.#used > target && relieve());
      }
      while (this.#used > target) {
        let largest: BudgetMember | undefined;
        for (const member of this.#members) {
          if (!largest || member.retained > largest.retained) largest = member;
        }
        if (!largest || largest.retained === 0) break;
        largest.dropOldest(Math.min(largest.retained, this.#used - target));
      }
    } finally {
      this.#enforcing = false;
    }
  }
}
