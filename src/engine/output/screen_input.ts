/**
 * What the screen emulator is fed: the output with the parameters of CSI sequences clamped,
 * because @xterm/headless does work in proportion to some of them. It loops once per count in
 * SU, SD, IL, DL, CHT and CBT (`\x1b[2000000000S` allocates two billion blank lines) and
 * allocates count times a cell's text for REP (`x\x1b[2147483647b` asks for 8 GiB). A count
 * beyond the screen does nothing more than the screen's size would, so:
 *
 * - SU `S`, SD `T`, IL `L`, DL `M`: at most the rows;
 * - CHT `I`, CBT `Z`, ICH `@`, DCH `P`, ECH `X`, REP `b`: at most the columns (REP repeats
 *   within a row);
 * - every other number: at most {@link MAX_NUMBER}; a sequence longer than
 *   {@link MAX_SEQUENCE} bytes is dropped (xterm reads at most 32 parameters anyway).
 *
 * A filter keeps its state between calls, so a sequence split across two pieces of output is
 * still seen whole. Everything else passes through unchanged.
 *
 * It also estimates what the emulator will make of the bytes, in cells touched: a byte is one,
 * a line feed a row (it may scroll), a scroll or line insertion its count of rows times the
 * screen's width and height, an erase of the display the whole screen. A filter call stops
 * once it has passed `maxCost` (after the sequence that crossed it), so that the caller can feed
 * the emulator in pieces of bounded work, whatever the output holds.
 *
 * @example
 * ```ts
 * import { ScreenInput } from "./screen_input.ts";
 * const input = new ScreenInput(() => ({ cols: 80, rows: 24 }));
 * const { bytes } = input.filter(new TextEncoder().encode("\x1b[9999999S"));
 * new TextDecoder().decode(bytes); // "\x1b[24S"
 * ```
 * @module
 */

/** The largest number passed on in any parameter. */
export const MAX_NUMBER = 99_999;
/** Bytes between a CSI introducer and its final byte beyond which the sequence is dropped. */
export const MAX_SEQUENCE = 256;

const ESC = 0x1b, CAN = 0x18, SUB = 0x1a, DEL = 0x7f;
/** Finals whose first parameter is a count of rows or of columns. */
const ROW_COUNTS = new Set("STLM".split("").map((c) => c.charCodeAt(0)));
const COLUMN_COUNTS = new Set("IZ@PXb".split("").map((c) => c.charCodeAt(0)));

const enum State {
  Ground,
  /** After ESC. */
  Escape,
  /** After 0xC2, the lead byte of the UTF-8 form of a C1 control. */
  C1Lead,
  Csi,
}

/** See the module documentation. */
export class ScreenInput {
  #state = State.Ground;
  #introducer: number[] = [];
  #body: number[] = [];
  #overflow = false;
  readonly #size: () => { cols: number; rows: number };

  /** `size` tells the screen's current size. */
  constructor(size: () => { cols: number; rows: number }) {
    this.#size = size;
  }

  /** Forgets a sequence in progress (the emulator was reset). */
  reset(): void {
    this.#state = State.Ground;
    this.#body = [];
  }

  /**
   * The bytes to feed the emulator for the next piece of output, and how many of `data` they
   * stand for (all of it, unless `maxCost` stopped the filter early).
   */
  filter(data: Uint8Array, maxCost = Infinity): { bytes: Uint8Array; consumed: number } {
    const out: Uint8Array[] = [];
    const { cols, rows } = this.#size();
    let cost = 0;
    let pending: number[] = [];
    const flush = () => {
      if (pending.length) out.push(Uint8Array.from(pending));
      pending = [];
    };
    let runStart = 0;
    let i = 0;
    for (; i < data.length; i++) {
      const byte = data[i];
      if (cost > maxCost && this.#state === State.Ground) break;
      if (this.#state === State.Ground) {
        cost += byte === 0x0a ? cols : 1;
        if (byte !== ESC && byte !== 0xc2) continue;
        flush();
        out.push(data.subarray(runStart, i));
        this.#state = byte === ESC ? State.Escape : State.C1Lead;
        continue;
      }
      if (this.#state === State.Escape || this.#state === State.C1Lead) {
        const csi = this.#state === State.Escape ? byte === 0x5b : byte === 0x9b;
        if (csi) {
          this.#introducer = this.#state === State.Escape ? [ESC, 0x5b] : [0xc2, 0x9b];
          this.#state = State.Csi;
          this.#body = [];
          this.#overflow = false;
          runStart = i + 1;
          continue;
        }
        // Not a CSI: the held byte passes, and this one is read again in the ground state.
        // (ESC c resets the terminal, ESC # 8 fills the screen: the whole screen's work.)
        const escape = this.#state === State.Escape;
        cost += escape && (byte === 0x63 || byte === 0x23) ? cols * rows : escape ? cols : 0;
        pending.push(escape ? ESC : 0xc2);
        this.#state = State.Ground;
        runStart = i;
        i--;
        continue;
      }
      // Inside a CSI sequence.
      if (byte >= 0x20 && byte <= 0x3f) {
        if (this.#body.length < MAX_SEQUENCE) this.#body.push(byte);
        else this.#overflow = true;
      } else if (byte >= 0x40 && byte <= 0x7e) {
        if (!this.#overflow) {
          const { body, count } = this.#rewrite(byte, cols, rows);
          pending.push(...this.#introducer, ...body, byte);
          cost += this.#cost(byte, count, cols, rows);
        }
        this.#state = State.Ground;
        runStart = i + 1;
      } else if (byte < 0x20 && byte !== CAN && byte !== SUB && byte !== ESC) {
        // A C0 control acts at once inside a sequence: passing it first changes nothing.
        pending.push(byte);
      } else if (byte !== DEL) {
        // CAN, SUB, ESC or a non-ASCII byte ends the sequence unfinished: it is dropped.
        this.#state = State.Ground;
        runStart = i;
        i--;
      }
    }
    flush();
    if (this.#state === State.Ground) out.push(data.subarray(runStart, i));
    return { bytes: out.length === 1 ? out[0] : concat(out), consumed: i };
  }

  /** About how many cells the emulator touches for a CSI sequence. */
  #cost(final: number, count: number, cols: number, rows: number): number {
    if (ROW_COUNTS.has(final)) return Math.max(1, count) * (cols + rows);
    if (final === 0x4a /* J */) return cols * rows;
    return COLUMN_COUNTS.has(final) || final === 0x4b /* K */ ? cols : 1;
  }

  /** The parameter bytes of a CSI sequence ending in `final`, numbers clamped, and its count. */
  #rewrite(final: number, cols: number, rows: number): { body: number[]; count: number } {
    const body = this.#body;
    const plain = body.length === 0 || (body[0] < 0x3c && body.every((b) => b >= 0x30));
    const countLimit = !plain
      ? MAX_NUMBER
      : ROW_COUNTS.has(final)
      ? rows
      : COLUMN_COUNTS.has(final)
      ? cols
      : MAX_NUMBER;
    const result: number[] = [];
    let number = -1, first = true, count = 1;
    const emit = () => {
      if (number < 0) return;
      const value = Math.min(number, first ? countLimit : MAX_NUMBER);
      if (first) count = value;
      for (const char of String(value)) result.push(char.charCodeAt(0));
      number = -1;
    };
    for (const byte of body) {
      if (byte >= 0x30 && byte <= 0x39) {
        number = Math.min(MAX_NUMBER + 1, Math.max(0, number) * 10 + byte - 0x30);
        continue;
      }
      emit();
      if (byte === 0x3b || byte === 0x3a) first = false;
      result.push(byte);
    }
    emit();
    return { body: result, count };
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
