/**
 * A terminal's recording in asciicast v2, the asciinema format: a JSON header line
 * (`{"version": 2, "width", "height", "timestamp", ...}`), then one JSON array per event:
 * `[seconds, "o", text]` for output, `[seconds, "r", "COLSxROWS"]` for a resize, and one
 * `[seconds, "m", label]` marker where the recording stopped at its size bound.
 *
 * Fed the output as the terminal keeps it (decoded to UTF-8 on arrival, once per chunk), so the
 * recording holds exactly the text the output buffer holds. Bounded: output events are counted by their bytes plus
 * {@link EVENT_OVERHEAD}; once the next event would pass `maxBytes`, recording stops (the
 * beginning is kept: a replay must start from the start to draw the right screen), and a
 * marker says where and why. Bursts closer together than {@link COALESCE_MS} become one event,
 * so a flood of tiny reads costs bytes, not objects. An event never ends inside a UTF-8
 * character (its rest opens the next event).
 *
 * What it keeps counts against the server's output budget (budget.ts), like any retained output:
 * when the budget needs room and the recording is the largest member, the recording is dropped
 * whole (a replay must start from the start), and a marker says so.
 *
 * @example
 * ```ts
 * import { Recording } from "./recording.ts";
 * const recording = new Recording({ cols: 80, rows: 24, maxBytes: 1 << 20, command: "bash" });
 * recording.output(new TextEncoder().encode("hi\r\n"));
 * [...recording.lines()].join(""); // '{"version":2,"width":80,...}\n[0.000123,"o","hi\r\n"]\n'
 * ```
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import type { BudgetMember, OutputBudget } from "./budget.ts";
import { completePrefixLength } from "./utf8.ts";

const decoder = new TextDecoder();

/** What a recording is of, and its bound. */
export interface RecordingOptions {
  cols: number;
  rows: number;
  /** Bytes kept at most (output bytes plus {@link EVENT_OVERHEAD} per event); 0: nothing is recorded. */
  maxBytes: number;
  /** The command line (the header's `command`). */
  command: string;
  /** The header's `title`. */
  title?: string;
  /** When the recording starts, ms since the epoch. Default: now. */
  startedAt?: number;
  /** The server-wide budget what it keeps counts against. */
  budget?: OutputBudget;
}

/** The bytes each event is counted for besides its data (its time and the array holding it). */
export const EVENT_OVERHEAD = 32;
/** Output arriving within this many ms of the previous output joins its event. */
export const COALESCE_MS = 8;

/** See the module documentation. */
export class Recording implements BudgetMember {
  readonly maxBytes: number;
  #budget: OutputBudget | undefined;
  /** What the budget has been told this recording keeps. */
  #charged = 0;
  /** Dropped for the budget (see {@link dropOldest}). */
  #dropped = false;
  #header: Record<string, unknown>;
  /** Event times, seconds since the start. */
  #times: number[] = [];
  /** Event codes: "o" output, "r" resize, "m" marker. */
  #codes: ("o" | "r" | "m")[] = [];
  /** Event data: output bytes, "COLSxROWS" for a resize, a marker's label. */
  #data: (Uint8Array | string)[] = [];
  /** Output of the newest event not yet closed (coalescing), and when it started (ms). */
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #pendingAt = -Infinity;
  /** The incomplete UTF-8 character that ended the last output. */
  #carry = new Uint8Array(0);
  #size = 0;
  #start: number;
  #stopped: string | undefined;

  constructor(options: RecordingOptions) {
    this.maxBytes = options.maxBytes;
    if (this.enabled) {
      this.#budget = options.budget;
      this.#budget?.join(this);
    }
    const startedAt = options.startedAt ?? Date.now();
    this.#start = performance.now() - (Date.now() - startedAt);
    this.#header = {
      version: 2,
      width: options.cols,
      height: options.rows,
      timestamp: Math.floor(startedAt / 1000),
      command: options.command,
      ...(options.title ? { title: options.title } : {}),
      env: { TERM: "xterm-256color" },
    };
  }

  /** Whether anything is recorded at all (maxBytes > 0). */
  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** Bytes counted against the bound so far. */
  get size(): number {
    return this.#size + this.#pendingBytes + (this.#pendingBytes ? EVENT_OVERHEAD : 0);
  }

  /** Bytes counted against the output budget. */
  get retained(): number {
    return this.#charged;
  }

  /**
   * The budget needs room: the recording is dropped whole (see the module documentation), and a
   * marker says so; asked again (the marker alone is too much for the budget), the marker goes.
   */
  dropOldest(bytes: number): void {
    if (bytes <= 0 || this.#charged === 0) return;
    const dropped = this.size;
    const again = this.#dropped;
    [this.#times, this.#codes, this.#data, this.#pending] = [[], [], [], []];
    [this.#pendingBytes, this.#pendingAt, this.#size] = [0, -Infinity, 0];
    this.#carry = new Uint8Array(0);
    this.#dropped = true;
    this.#stopped = `recording dropped at ${dropped} bytes: the output budget ` +
      "(WINTERM_OUTPUT_BUDGET_BYTES) needed the room; the live view and the output go on";
    if (!again) this.#push(performance.now(), "m", this.#stopped);
    this.#settle();
  }

  /** Gives what it keeps back to the budget; nothing is recorded afterwards. */
  release(): void {
    this.#budget?.leave(this);
    this.#budget = undefined;
    this.#stopped ??= "released";
  }

  /** Why recording stopped early (the bound), or undefined while it goes on. */
  get stopped(): string | undefined {
    return this.#stopped;
  }

  /** Records output that arrived at `at` (performance.now() ms). */
  output(data: Uint8Array, at: number = performance.now()): void {
    if (!this.enabled || this.#stopped || data.length === 0) return;
    const bytes = this.#carry.length ? concatBytes([this.#carry, data]) : data;
    const complete = completePrefixLength(bytes);
    this.#carry = bytes.slice(complete);
    this.#append(bytes.subarray(0, complete), at);
    this.#settle();
  }

  /** The program has ended: an incomplete character held back is recorded as it is. */
  end(at: number = performance.now()): void {
    const rest = this.#carry;
    this.#carry = new Uint8Array(0);
    if (!this.#stopped) this.#append(rest, at);
    this.#settle();
  }

  #append(bytes: Uint8Array, at: number): void {
    if (bytes.length === 0) return;
    if (at - this.#pendingAt > COALESCE_MS) this.#close();
    // The open event's overhead counts too, whether it opens now or is being joined.
    if (this.#size + this.#pendingBytes + EVENT_OVERHEAD + bytes.length > this.maxBytes) {
      this.#stop(at);
      return;
    }
    if (!this.#pendingBytes) this.#pendingAt = at;
    this.#pending.push(bytes.slice());
    this.#pendingBytes += bytes.length;
  }

  /** Records a resize. */
  resize(cols: number, rows: number, at: number = performance.now()): void {
    if (!this.enabled || this.#stopped) return;
    this.#close();
    const size = `${cols}x${rows}`;
    if (this.#size + EVENT_OVERHEAD + size.length > this.maxBytes) this.#stop(at);
    else this.#push(at, "r", size);
    this.#settle();
  }

  /** Tells the budget what the recording keeps now (set first: the budget may drop it). */
  #settle(): void {
    const delta = this.size - this.#charged;
    this.#charged += delta;
    if (delta !== 0) this.#budget?.charge(delta);
  }

  /** The recording so far, one asciicast v2 line (with its newline) at a time. */
  *lines(): Generator<string> {
    this.#close();
    // Events recorded while the lines are read are left for the next read.
    const count = this.#times.length;
    yield JSON.stringify(this.#header) + "\n";
    for (let i = 0; i < count; i++) {
      const item = this.#data[i];
      const data = typeof item === "string" ? item : decoder.decode(item);
      yield JSON.stringify([this.#times[i], this.#codes[i], data]) + "\n";
    }
  }

  #seconds(at: number): number {
    // Microseconds, as asciinema writes them; never before the start.
    return Math.max(0, Math.round((at - this.#start) * 1000)) / 1e6;
  }

  #push(at: number, code: "o" | "r" | "m", item: Uint8Array | string): void {
    this.#times.push(this.#seconds(at));
    this.#codes.push(code);
    this.#data.push(item);
    this.#size += EVENT_OVERHEAD + item.length;
  }

  /** Closes the coalescing event: its parts become one. */
  #close(): void {
    if (!this.#pendingBytes) return;
    this.#push(this.#pendingAt, "o", concatBytes(this.#pending));
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#pendingAt = -Infinity;
  }

  #stop(at: number): void {
    this.#close();
    this.#stopped = `recording stopped at ${this.#size} of ${this.maxBytes} bytes ` +
      "(WINTERM_RECORDING_MAX_BYTES); the live view and the output go on";
    this.#carry = new Uint8Array(0);
    // The marker may pass the bound by its own few bytes: it is the one event that must be there.
    this.#push(at, "m", this.#stopped);
  }
}
