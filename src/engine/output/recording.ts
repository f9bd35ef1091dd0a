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
}

/** The bytes each event is counted for besides its data (its time and the array holding it). */
export const EVENT_OVERHEAD = 32;
/** Output arriving within this many ms of the previous output joins its event. */
export const COALESCE_MS = 8;

/** See the module documentation. */
export class Recording {
  readonly maxBytes: number;
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
  }

  /** The program has ended: an incomplete character held back is recorded as it is. */
  end(at: number = performance.now()): void {
    const rest = this.#carry;
    this.#carry = new Uint8Array(0);
    if (!this.#stopped) this.#append(rest, at);
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
    if (this.#size + EVENT_OVERHEAD + size.length > this.maxBytes) return this.#stop(at);
    this.#push(at, "r", size);
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
