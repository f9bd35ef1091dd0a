/**
 * Take-over: a viewer (a person in the web view, a stream client) typing into a terminal
 * alongside the agent. One holder at a time; a newer take-over replaces the older. Only the
 * holder may type or resize, and the size it set lasts only while it holds the terminal:
 * when it hands back (or goes away), the size from before the take-over returns, unless
 * someone else resized the terminal since. Every take-over and hand-back is audited.
 *
 * @example
 * ```ts
 * import { Takeover } from "./takeover.ts";
 * const size = { cols: 80, rows: 24, resize(c: number, r: number) { size.cols = c; size.rows = r; } };
 * const takeover = new Takeover(size, () => {});
 * const tab = {};
 * takeover.take(tab, "web");
 * takeover.resize(tab, 120, 40); // the person's window
 * takeover.release(tab);         // back to 80x24
 * ```
 * @module
 */
import type { FrontEnd } from "../launching/audit.ts";
import { Listeners } from "../events.ts";

/** What a take-over acts on: a terminal's size. */
export interface Resizable {
  readonly cols: number;
  readonly rows: number;
  resize(cols: number, rows: number): void;
}

/** Who holds a terminal now (undefined: nobody, the agent alone). */
export interface Holder {
  key: object;
  via: FrontEnd;
}

/** See the module documentation. */
export class Takeover {
  /** Emits the new holder (or undefined) whenever it changes. */
  readonly changes: Listeners<Holder | undefined> = new Listeners();
  #holder: Holder | undefined;
  /** The size before the first take-over, and the size the holder set last. */
  #before: { cols: number; rows: number } | undefined;
  #set: { cols: number; rows: number } | undefined;

  constructor(
    private readonly terminal: Resizable,
    private readonly audit: (event: "takeover" | "handback", via: FrontEnd) => void,
  ) {}

  /** The holder, if any. */
  get holder(): Holder | undefined {
    return this.#holder;
  }

  /** Whether `key` holds the terminal. */
  holds(key: object): boolean {
    return this.#holder?.key === key;
  }

  /** `key` takes control (from whoever had it). */
  take(key: object, via: FrontEnd): void {
    if (this.holds(key)) return;
    if (this.#holder) this.audit("handback", this.#holder.via);
    else this.#before = { cols: this.terminal.cols, rows: this.terminal.rows };
    this.#holder = { key, via };
    this.audit("takeover", via);
    this.changes.emit(this.#holder);
  }

  /** `key` hands control back (nothing happens if it does not hold it); `running`: restore the size. */
  release(key: object, running = true): void {
    if (!this.holds(key)) return;
    this.audit("handback", this.#holder!.via);
    const before = this.#before, set = this.#set;
    this.#holder = this.#before = this.#set = undefined;
    const untouched = set && set.cols === this.terminal.cols && set.rows === this.terminal.rows;
    if (running && before && untouched) {
      try {
        this.terminal.resize(before.cols, before.rows);
      } catch {
        // it has just exited: no size to restore
      }
    }
    this.changes.emit(undefined);
  }

  /** Resizes on behalf of `key`; false (and nothing done) unless it holds the terminal. */
  resize(key: object, cols: number, rows: number): boolean {
    if (!this.holds(key)) return false;
    if (cols === this.terminal.cols && rows === this.terminal.rows) return true;
    this.terminal.resize(cols, rows);
    this.#set = { cols, rows };
    return true;
  }
}
