/**
 * Where the long control strings of a stream are: OSC, DCS, SOS, PM and APC strings (a
 * clipboard copy in base64, a title, an image) longer than `minLength` bytes, and CSI sequences
 * as long (thousands of parameters), found as the output arrives, so that a read cut inside one
 * starts after it instead of showing its payload as text. Shorter ones are found by looking
 * back from the cut (buffer.ts, `pastSequence`).
 *
 * A string begins with ESC `]` `P` `X` `^` `_` or their C1 forms (U+009D, U+0090, U+0098,
 * U+009E, U+009F, two bytes each in UTF-8), and ends where clean.ts ends it: at an ESC (ST is
 * ESC `\`), CAN, SUB, any C1 control, a line feed, or, for an OSC, BEL. The scan jumps from
 * one candidate byte to the next with `indexOf`, each byte value's next place found once per
 * chunk position ({@link NextByte}): a chunk costs a few linear searches, whatever it holds.
 *
 * @example
 * ```ts
 * import { LongControlStrings } from "./control_strings.ts";
 * const strings = new LongControlStrings(8);
 * const text = new TextEncoder().encode("a\x1b]52;c;" + "QUJD".repeat(10) + "\x07b");
 * strings.scan(text, 0);
 * strings.endOf(20); // 48: the BEL that ends the string; a read cut at 20 starts there
 * ```
 * @module
 */

import { indexOfEither } from "../../bytes.ts";

const ESC = 0x1b, BEL = 0x07, LF = 0x0a, CAN = 0x18, SUB = 0x1a, C2 = 0xc2;
/** The byte after ESC, and after C2, that opens a CSI sequence. */
const CSI = 0x5b, C1_CSI = 0x9b;
/** The byte after ESC that opens a string ( ] P X ^ _ ), and after C2 for a C1 one. */
const OPENERS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
const C1_OPENERS = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);
const OSC_OPENERS = new Set([0x5d, 0x9d]);

/**
 * A string being read: where it starts, whether BEL ends it (an OSC), whether it is a CSI
 * sequence (which ends otherwise, see `csiEnd`), and its span once it counts as long.
 */
interface Open {
  start: number;
  bel: boolean;
  csi: boolean;
  span?: Span;
}

/** A long string: [start, end), `end` Infinity while it is still open. */
interface Span {
  start: number;
  end: number;
}

/** See the module documentation. */
export class LongControlStrings {
  /** Long strings, oldest first. */
  #spans: Span[] = [];
  /** The string open at the newest byte, if any. */
  #open: Open | undefined;
  /** An ESC or C2 that ended the last chunk: its meaning depends on the next byte. */
  #pending: { offset: number; byte: number } | undefined;

  constructor(readonly minLength: number) {}

  /** Takes the next bytes of the stream, which start at absolute `offset`. */
  scan(data: Uint8Array, offset: number): void {
    if (data.length === 0) return;
    const next = new NextByte(data);
    let i = 0;
    if (this.#pending) {
      const { offset: at, byte } = this.#pending;
      this.#pending = undefined;
      // Inside a string only C2 waits: with a C1 after it, it ends the string, and may open
      // the next one, as outside.
      if (this.#open && data[0] >= 0x80 && data[0] <= 0x9f) this.#close(at);
      if (!this.#open && this.#opens(byte, data[0])) {
        this.#open = this.#opened(at, data[0]);
        i = 1;
      }
    }
    const end = offset + data.length;
    while (i < data.length) {
      if (this.#open?.csi) {
        const stop = csiEnd(data, i);
        if (stop < 0) break;
        this.#close(offset + stop);
        i = stop;
        continue;
      }
      if (this.#open) {
        const stop = this.#terminator(next, i, this.#open.bel);
        if (stop < 0) break;
        if (stop === data.length - 1 && data[stop] === C2) {
          this.#pending = { offset: offset + stop, byte: C2 };
          break;
        }
        this.#close(offset + stop);
        i = stop;
        continue;
      }
      const at = next.opener(i);
      if (at < 0) break;
      if (at === data.length - 1) {
        this.#pending = { offset: offset + at, byte: data[at] };
        break;
      }
      if (!this.#opens(data[at], data[at + 1])) {
        i = at + 1;
        continue;
      }
      if (data[at + 1] === CSI || data[at + 1] === C1_CSI) {
        // Most sequences are colours that end a few bytes on: no state for them.
        const stop = csiEnd(data, at + 2);
        if (stop >= 0) {
          if (stop - at > this.minLength) {
            this.#spans.push({ start: offset + at, end: offset + stop });
          }
          i = stop;
          continue;
        }
      }
      this.#open = this.#opened(offset + at, data[at + 1]);
      i = at + 2;
    }
    // Still open and long already: a read may be cut inside it before it ends.
    const open = this.#open;
    if (open && !open.span && end - open.start > this.minLength) {
      open.span = { start: open.start, end: Infinity };
      this.#spans.push(open.span);
    }
  }

  /**
   * Where the long string `at` falls inside ends (its terminator, or Infinity while it is
   * open), or undefined if `at` is inside none (a cut at a string's first byte is before it).
   */
  endOf(at: number): number | undefined {
    return endOf(this.#spans, at);
  }

  /**
   * The long strings as they stand now, unchanged by what comes later (a string still open
   * stays open in it): for a view of the output frozen now (buffer.ts, `freeze`).
   */
  snapshot(): { endOf(at: number): number | undefined } {
    const spans = this.#spans.map((span) => ({ ...span }));
    return { endOf: (at) => endOf(spans, at) };
  }

  /** Forgets the strings that end before `offset` (the buffer keeps nothing before it). */
  dropBefore(offset: number): void {
    let drop = 0;
    while (drop < this.#spans.length && this.#spans[drop].end <= offset) drop++;
    if (drop > 0) this.#spans.splice(0, drop);
  }

  #opens(first: number, second: number): boolean {
    return first === ESC
      ? OPENERS.has(second) || second === CSI
      : first === C2 && (C1_OPENERS.has(second) || second === C1_CSI);
  }

  #opened(start: number, second: number): Open {
    return { start, bel: OSC_OPENERS.has(second), csi: second === CSI || second === C1_CSI };
  }

  #close(at: number): void {
    const open = this.#open!;
    this.#open = undefined;
    if (open.span) {
      open.span.end = at;
      // Counted long with a C2 that turned out to end it: it was not.
      if (at - open.start <= this.minLength) this.#spans.pop();
    } else if (at - open.start > this.minLength) this.#spans.push({ start: open.start, end: at });
  }

  /**
   * The first byte from `from` that ends a string (see the module documentation), -1 if none;
   * a C2 as the chunk's last byte is returned too (the caller waits for the byte after it).
   */
  #terminator(next: NextByte, from: number, bel: boolean): number {
    const data = next.data;
    const best = next.first(bel ? STRING_ENDS_OSC : STRING_ENDS, from);
    for (let at = next.at(C2, from); at >= 0 && (best < 0 || at < best);) {
      if (at === data.length - 1 || (data[at + 1] >= 0x80 && data[at + 1] <= 0x9f)) return at;
      at = next.at(C2, at + 1);
    }
    return best;
  }
}

const STRING_ENDS = [ESC, LF, CAN, SUB], STRING_ENDS_OSC = [...STRING_ENDS, BEL];

/** See {@link LongControlStrings.endOf}; `spans` oldest first. */
function endOf(spans: Span[], at: number): number | undefined {
  let [low, high] = [0, spans.length - 1];
  while (low <= high) {
    const middle = (low + high) >> 1;
    const span = spans[middle];
    if (at <= span.start) high = middle - 1;
    else if (at >= span.end) low = middle + 1;
    else return span.end;
  }
  return undefined;
}

/**
 * Where a CSI sequence's body ends from `from`: after its final byte (0x40-0x7E), or at a byte
 * that cuts it short (ESC, CAN, SUB, anything from 0x7F up); -1 if the chunk ends first.
 * Parameters, intermediates and C0 controls (which act inside a CSI without ending it) go on.
 * Never later than clean.ts ends it, so no text is ever taken for a sequence.
 */
function csiEnd(data: Uint8Array, from: number): number {
  for (let at = from; at < data.length; at++) {
    const byte = data[at];
    if (byte >= 0x20 && byte <= 0x3f) continue;
    if (byte < 0x20 && byte !== ESC && byte !== CAN && byte !== SUB) continue;
    return byte >= 0x40 && byte <= 0x7e ? at + 1 : at;
  }
  return -1;
}

/**
 * The next place of byte values in one chunk, each searched for again only once the scan has
 * passed it (the scan only moves forward): a chunk of a megabyte with a hundred thousand
 * escapes costs a few searches through it, not one per escape.
 */
class NextByte {
  /** Per byte value: its next index found, -1 for none after, -2 not searched yet. */
  #found = new Int32Array(256).fill(-2);
  /** The next ESC or C2 found (see {@link opener}), as in `#found`. */
  #opener = -2;

  constructor(readonly data: Uint8Array) {}

  /** The first index from `from` holding `byte`, -1 if none. */
  at(byte: number, from: number): number {
    let found = this.#found[byte];
    if (found === -2 || (found >= 0 && found < from)) {
      found = this.data.indexOf(byte, from);
      this.#found[byte] = found;
    }
    return found;
  }

  /**
   * The first index from `from` holding an ESC or a C2, where a string may begin, -1 if none:
   * the search all output goes through, both bytes in one pass (bytes.ts, `indexOfEither`).
   */
  opener(from: number): number {
    if (this.#opener === -2 || (this.#opener >= 0 && this.#opener < from)) {
      this.#opener = indexOfEither(this.data, ESC, C2, from);
    }
    return this.#opener;
  }

  /** The first index from `from` holding any of `bytes`, -1 if none. */
  first(bytes: number[], from: number): number {
    let best = -1;
    for (const byte of bytes) {
      const at = this.at(byte, from);
      if (at >= 0 && (best < 0 || at < best)) best = at;
    }
    return best;
  }
}
