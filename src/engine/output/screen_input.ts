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
 * It also follows where the emulator's parser stands ({@link ScreenInput.unfinished}): the
 * bytes at the end of what it consumed that belong to an escape sequence, a control string or a
 * UTF-8 character not finished yet. Such bytes change nothing on the screen until their end
 * arrives, so a snapshot of the screen followed by them and by the rest of the output draws
 * what the emulator will draw.
 *
 * It also estimates what the emulator will make of the bytes, in cells touched: a byte is one,
 * a line feed a row (it may scroll), a scroll or line insertion its count of rows times the
 * screen's width and height, an erase of the display the whole screen, a repeat (REP) four
 * cells a character. A filter call stops
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
/** A CSI sequence's introducers: ESC [, and C1 CSI in UTF-8. */
const CSI_7BIT = [ESC, 0x5b], CSI_8BIT = [0xc2, 0x9b];
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

/** The unfinished end of the output consumed so far (see {@link ScreenInput.unfinished}). */
export interface Unfinished {
  /** Bytes of it (0: the parser is at rest). */
  length: number;
  /** Its first bytes (an escape or C1 introducer, or a character's first bytes). */
  introducer: Uint8Array;
}

/** See the module documentation. */
export class ScreenInput {
  #state = State.Ground;
  /** The CSI sequence in progress: its introducer (ESC [ or the UTF-8 form of C1 CSI). */
  #introducer: readonly number[] = CSI_7BIT;
  /** Its parameter and intermediate bytes so far (at most MAX_SEQUENCE of them). */
  readonly #body = new Uint8Array(MAX_SEQUENCE);
  #bodyLength = 0;
  #overflow = false;
  readonly #size: () => { cols: number; rows: number };
  readonly #parser = new ParserPosition();

  /** `size` tells the screen's current size. */
  constructor(size: () => { cols: number; rows: number }) {
    this.#size = size;
  }

  /** Forgets a sequence in progress (the emulator was reset). */
  reset(): void {
    this.#state = State.Ground;
    this.#bodyLength = 0;
    this.#parser.reset();
  }

  /**
   * The end of the output consumed so far that the emulator's parser is still in the middle
   * of: an escape sequence, a control string (OSC, DCS, SOS, PM, APC) or a UTF-8 character.
   */
  get unfinished(): Unfinished {
    return this.#parser.unfinished;
  }

  /**
   * The bytes to feed the emulator for the next piece of output, and how many of `data` they
   * stand for (all of it, unless `maxCost` stopped the filter early).
   *
   * They are written in order into one array: what passes unchanged is copied a run at a time,
   * a sequence's rewrite byte by byte. (Each sequence was an array of its own, joined at the
   * end: for output of little but cursor moves, most of the time of a screen read, and of the
   * collector's.) Nothing grows in the rewrite but a sequence begun in an earlier piece, which
   * is written whole here.
   */
  filter(data: Uint8Array, maxCost = Infinity): { bytes: Uint8Array; consumed: number } {
    const out = new Uint8Array(data.length + MAX_SEQUENCE + 4);
    let written = 0;
    const { cols, rows } = this.#size();
    let cost = 0;
    let runStart = 0;
    let i = 0;
    for (; i < data.length; i++) {
      const byte = data[i];
      if (this.#state === State.Ground) {
        if (cost > maxCost) break;
        cost += byte === 0x0a ? cols : 1;
        if (byte !== ESC && byte !== 0xc2) continue;
        out.set(data.subarray(runStart, i), written);
        written += i - runStart;
        this.#state = byte === ESC ? State.Escape : State.C1Lead;
        continue;
      }
      if (this.#state === State.Escape || this.#state === State.C1Lead) {
        const csi = this.#state === State.Escape ? byte === 0x5b : byte === 0x9b;
        if (csi) {
          this.#introducer = this.#state === State.Escape ? CSI_7BIT : CSI_8BIT;
          this.#state = State.Csi;
          this.#bodyLength = 0;
          this.#overflow = false;
          runStart = i + 1;
          continue;
        }
        // Not a CSI: the held byte passes, and this one is read again in the ground state.
        // (ESC c resets the terminal, ESC # 8 fills the screen: the whole screen's work.)
        const escape = this.#state === State.Escape;
        cost += escape && (byte === 0x63 || byte === 0x23) ? cols * rows : escape ? cols : 0;
        out[written++] = escape ? ESC : 0xc2;
        this.#state = State.Ground;
        runStart = i;
        i--;
        continue;
      }
      // Inside a CSI sequence.
      if (byte >= 0x20 && byte <= 0x3f) {
        if (this.#bodyLength < MAX_SEQUENCE) this.#body[this.#bodyLength++] = byte;
        else this.#overflow = true;
      } else if (byte >= 0x40 && byte <= 0x7e) {
        if (!this.#overflow) {
          for (const introducer of this.#introducer) out[written++] = introducer;
          const { end, count } = this.#rewrite(byte, cols, rows, out, written);
          written = end;
          out[written++] = byte;
          cost += this.#cost(byte, count, cols, rows);
        }
        this.#state = State.Ground;
        runStart = i + 1;
      } else if (byte < 0x20 && byte !== CAN && byte !== SUB && byte !== ESC) {
        // A C0 control acts at once inside a sequence: passing it first changes nothing.
        out[written++] = byte;
      } else if (byte !== DEL) {
        // CAN, SUB, ESC or a non-ASCII byte ends the sequence unfinished: it is dropped.
        this.#state = State.Ground;
        runStart = i;
        i--;
      }
    }
    if (this.#state === State.Ground) {
      out.set(data.subarray(runStart, i), written);
      written += i - runStart;
    }
    this.#parser.push(data.subarray(0, i));
    return { bytes: out.subarray(0, written), consumed: i };
  }

  /** About how many cells the emulator touches for a CSI sequence. */
  #cost(final: number, count: number, cols: number, rows: number): number {
    if (ROW_COUNTS.has(final)) return Math.max(1, count) * (cols + rows);
    if (final === 0x4a /* J */) return cols * rows;
    // REP prints its character again, each time as dearly as four cells of text (measured:
    // 90 ns a repeat, where a row's insertion or erasure costs 15-25 ns a cell).
    if (final === 0x62 /* b */) return 4 * Math.max(1, count);
    return COLUMN_COUNTS.has(final) || final === 0x4b /* K */ ? cols : 1;
  }

  /**
   * Writes the parameter bytes of the CSI sequence ending in `final` into `out` from `at`,
   * numbers clamped (never longer than they came); returns where they end, and its count.
   */
  #rewrite(
    final: number,
    cols: number,
    rows: number,
    out: Uint8Array,
    at: number,
  ): { end: number; count: number } {
    const body = this.#body, length = this.#bodyLength;
    let plain = length === 0 || body[0] < 0x3c;
    for (let k = 0; plain && k < length; k++) plain = body[k] >= 0x30;
    const countLimit = !plain
      ? MAX_NUMBER
      : ROW_COUNTS.has(final)
      ? rows
      : COLUMN_COUNTS.has(final)
      ? cols
      : MAX_NUMBER;
    let number = -1, first = true, count = 1;
    const emit = () => {
      if (number < 0) return;
      const value = Math.min(number, first ? countLimit : MAX_NUMBER);
      if (first) count = value;
      const digits = String(value);
      for (let k = 0; k < digits.length; k++) out[at++] = digits.charCodeAt(k);
      number = -1;
    };
    for (let k = 0; k < length; k++) {
      const byte = body[k];
      if (byte >= 0x30 && byte <= 0x39) {
        number = Math.min(MAX_NUMBER + 1, Math.max(0, number) * 10 + byte - 0x30);
        continue;
      }
      emit();
      if (byte === 0x3b || byte === 0x3a) first = false;
      out[at++] = byte;
    }
    emit();
    return { end: at, count };
  }
}

const enum Parser {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
  /** An OSC: ends with BEL or ST. */
  Osc,
  /** DCS, SOS, PM or APC: ends with ST. */
  ControlString,
}

const BEL = 0x07;

/**
 * Where xterm's parser stands in the output (its VT500 states, on code points from its UTF-8
 * decoder), as far as it matters here: at rest or not, and since which byte. A CSI sequence
 * ends at a non-ASCII character the way the filter ends it (dropped).
 */
class ParserPosition {
  #state = Parser.Ground;
  /** Bytes since the unfinished sequence or character began (0: at rest). */
  #length = 0;
  #introducer: number[] = [];
  /** The code point being decoded, and how many continuation bytes it still needs. */
  #codePoint = 0;
  #need = 0;
  #charBytes: number[] = [];

  get unfinished(): Unfinished {
    const introducer = this.#length > 0 ? this.#introducer : [];
    return { length: this.#length, introducer: Uint8Array.from(introducer) };
  }

  reset(): void {
    this.#state = Parser.Ground;
    this.#length = this.#need = 0;
    this.#introducer = [];
  }

  push(data: Uint8Array): void {
    for (let i = 0; i < data.length; i++) {
      if (this.#need === 0) {
        const from = i;
        i = this.#skip(data, i);
        if (this.#length > 0) this.#length += i - from;
        if (i >= data.length) return;
      }
      const byte = data[i];
      if (this.#need > 0 && (byte & 0xc0) !== 0x80) {
        // A broken character: the decoder forgets it and reads this byte afresh.
        this.#need = 0;
        if (this.#state === Parser.Ground) this.#length = 0;
        i--;
        continue;
      }
      if (this.#length > 0) this.#length++;
      if (this.#need > 0) {
        this.#codePoint = (this.#codePoint << 6) | (byte & 0x3f);
        this.#charBytes.push(byte);
        if (--this.#need === 0) this.#take(this.#codePoint, this.#charBytes);
      } else if (byte >= 0xc2 && byte <= 0xf4) {
        this.#need = byte >= 0xf0 ? 3 : byte >= 0xe0 ? 2 : 1;
        this.#codePoint = byte & (byte >= 0xf0 ? 0x07 : byte >= 0xe0 ? 0x0f : 0x1f);
        this.#charBytes = [byte];
        if (this.#length === 0) {
          this.#length = 1;
          this.#introducer = [byte];
        }
      } else {
        this.#take(byte < 0x80 ? byte : 0xfffd, [byte]);
      }
    }
  }

  /**
   * Where the next byte from `i` on is that may change the state: text at rest, a sequence's
   * parameters and a string's contents are passed over (the common cases, kept fast).
   */
  #skip(data: Uint8Array, i: number): number {
    const n = data.length;
    switch (this.#state) {
      case Parser.Ground:
        while (i < n) {
          const byte = data[i];
          if (byte < 0x80) {
            if (byte === ESC) return i;
            i++;
          } else if (byte >= 0xc3 && byte <= 0xf4) {
            // A whole character that is no C1 control is text; anything else is looked at.
            const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
            if (i + length > n) return i;
            for (let k = 1; k < length; k++) if ((data[i + k] & 0xc0) !== 0x80) return i;
            i += length;
          } else if (byte === 0xc2) {
            return i; // perhaps a C1 control
          } else {
            i++; // not UTF-8: the decoder drops it
          }
        }
        return i;
      case Parser.Csi:
        while (i < n && data[i] >= 0x20 && data[i] <= 0x3f) i++;
        return i;
      case Parser.Osc:
      case Parser.ControlString:
        while (i < n) {
          const byte = data[i];
          if (byte === BEL || byte === 0x18 || byte === 0x1a || byte === ESC || byte === 0xc2) {
            return i;
          }
          i++;
        }
        return i;
      default:
        return i;
    }
  }

  /** A whole code point (`bytes` its UTF-8 form) reaches the parser. */
  #take(code: number, bytes: number[]): void {
    // Controls that act in every state.
    if (code === 0x18 || code === 0x1a) return this.#rest();
    if (code === ESC) return this.#begin(Parser.Escape, bytes);
    if (code >= 0x80 && code <= 0x9f) {
      if (code === 0x9b) return this.#begin(Parser.Csi, bytes);
      if (code === 0x9d) return this.#begin(Parser.Osc, bytes);
      if (code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) {
        return this.#begin(Parser.ControlString, bytes);
      }
      return this.#rest(); // ST, or a C1 control executed at once
    }
    switch (this.#state) {
      case Parser.Ground:
        return this.#rest();
      case Parser.Escape:
      case Parser.EscapeIntermediate:
        if (code < 0x20 || code === DEL) return; // executed or ignored in place
        if (this.#introducer.length === 1 && code < 0x80) this.#introducer.push(code);
        if (this.#state === Parser.Escape) {
          if (code === 0x5b) return void (this.#state = Parser.Csi);
          if (code === 0x5d) return void (this.#state = Parser.Osc);
          if (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) {
            return void (this.#state = Parser.ControlString);
          }
        }
        if (code >= 0x20 && code <= 0x2f) return void (this.#state = Parser.EscapeIntermediate);
        return this.#rest();
      case Parser.Csi:
        if (code >= 0x80) {
          // The filter drops the sequence here; the character is text.
          this.#rest();
          return this.#take(code, bytes);
        }
        if (code >= 0x40 && code <= 0x7e) return this.#rest();
        return;
      case Parser.Osc:
        if (code === BEL) return this.#rest();
        return;
      case Parser.ControlString:
        return;
    }
  }

  /** A sequence begins with this code point. */
  #begin(state: Parser, bytes: number[]): void {
    this.#state = state;
    this.#length = bytes.length;
    this.#introducer = [...bytes];
  }

  /** The parser is at rest. */
  #rest(): void {
    this.#state = Parser.Ground;
    this.#length = 0;
  }
}
