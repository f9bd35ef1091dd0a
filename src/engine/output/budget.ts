/**
 * The server-wide budget for retained output: every command's and terminal's output counts
 * against one limit. Past it, finished commands are evicted first (oldest first, through the
 * relievers their services register), then the largest live buffers lose their oldest output,
 * until the total is back to nine tenths of the limit (so that enforcing it is rare, not a cost
 * on every append). Readers of a trimmed buffer are told how much they missed, as with any
 * buffer limit.
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

/** Something whose retained output counts against the budget. */
export interface BudgetMember {
  /** Bytes it retains now. */
  readonly retained: number;
  /** Drops its oldest `bytes` bytes (at most all it retains). */
  dropOldest(bytes: number): void;
}

/** See the module documentation. */
export class OutputBudget {
  readonly limit: number;
  #used = 0;
  #members = new Set<BudgetMember>();
  #relievers: (() => boolean)[] = [];
  #enforcing = false;

  constructor(limit: number) {
    this.limit = Math.max(1, limit);
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
    if (this.#members.delete(member)) this.#used -= member.retained;
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
    if (this.#used > this.limit) this.#enforce();
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
