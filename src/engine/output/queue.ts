/**
 * An array with a moving head, for the output buffer's indexes: pushes at the end, drops at
 * the front, O(1) amortised, items addressed by absolute index (never reused).
 *
 * @example
 * ```ts
 * import { Queue } from "./queue.ts";
 * const queue = new Queue<number>();
 * for (const n of [10, 20, 30]) queue.push(n);
 * queue.dropBefore(1);
 * queue.at(queue.first); // 20
 * queue.lastAtOrBelow(25, (n) => n); // 1
 * ```
 * @module
 */

/** An array with a moving head: pushes at the end, drops at the front, O(1) amortised. */
export class Queue<T> {
  #items: T[] = [];
  #head = 0;
  /** The absolute index of #items[0]. */
  #base = 0;

  /** Absolute index of the oldest kept item. */
  get first(): number {
    return this.#base + this.#head;
  }

  /** Absolute index the next pushed item gets. */
  get next(): number {
    return this.#base + this.#items.length;
  }

  at(index: number): T {
    return this.#items[index - this.#base];
  }

  last(): T | undefined {
    return this.#items.length > this.#head ? this.#items[this.#items.length - 1] : undefined;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** Puts `item` at absolute `index` (a kept one, or {@link next}); later items move up one. */
  insert(index: number, item: T): void {
    this.#items.splice(index - this.#base, 0, item);
  }

  dropBefore(index: number): void {
    const head = Math.max(this.#head, Math.min(index, this.next) - this.#base);
    // Dropped items are let go of now, not at the next compaction: a block of output held
    // until then kept up to 1,024 dropped blocks (64 MiB) alive beyond the buffer's limit.
    this.#items.fill(undefined as T, this.#head, head);
    this.#head = head;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items.splice(0, this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
  }

  /** The last absolute index whose key is <= `value` (keys ascend), or {@link first} - 1. */
  lastAtOrBelow(value: number, key: (item: T) => number): number {
    let low = this.#head, high = this.#items.length - 1, found = this.#head - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (key(this.#items[mid]) <= value) {
        found = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    return this.#base + found;
  }
}
