/**
 * From a program's bytes to UTF-8, one stream at a time, following the bytes rather than
 * choosing one encoding per stream: on Windows pipes one command's stream mixes programs that
 * write UTF-8 (deno, node, git, Rust and Go programs) with programs that write the console's
 * code page (cmd, legacy tools), in either order, and `chcp` changes the code page midway.
 * The code pages themselves are code_pages.ts's.
 *
 * A stream is read one of three ways ({@link StreamEncoding}):
 * - `utf-8`: the bytes are UTF-8 by construction (POSIX, a pseudoconsole): passed on as they are.
 * - `fixed`: one encoding for everything (UTF-16, or any label a caller insists on).
 * - `mixed`: UTF-8 where the bytes are UTF-8, the code page elsewhere, decided per run of
 *   non-ASCII bytes (ASCII reads the same in both and passes at once):
 *   1. A run that is valid UTF-8 from its start to the ASCII byte that ends it is UTF-8.
 *   2. A run that is not is read in the code page, character by character; where the code page
 *      has no character but a valid UTF-8 sequence starts, that sequence is UTF-8; U+FFFD only
 *      for a byte that neither reads.
 *   3. A run that has shown valid multi-byte UTF-8 worth {@link UTF8_EVIDENCE} points is UTF-8
 *      from there on without waiting for its end, as far as it stays valid (where it stops
 *      being valid, a new run starts). A sequence of 3 or 4 bytes is worth 4 points; one of 2
 *      bytes 2, or 1 when the code page is a double-byte one, whose text forms valid 2-byte UTF-8
 *      by chance (GBK's 系 is CF B5, UTF-8's ϵ) far more often than 3-byte sequences.
 *   4. On a double-byte code page, a run whose UTF-8 is 2-byte sequences only and which the
 *      code page reads whole (one or two GBK characters between ASCII: 系 alone is CF B5, the
 *      UTF-8 of ϵ; 系统 is CF B5 CD B3) is ambiguous: it follows the last run that was not
 *      (read in the code page after a run that was no UTF-8, as UTF-8 after one that had
 *      3- or 4-byte UTF-8, or none yet). A legacy program's line of GBK names then reads right
 *      once one of its runs has shown itself, and a UTF-8 writer's `ü` after its `中文` too.
 *   5. GB18030 (code page 54936) has four-byte characters whose second and fourth bytes are
 *      ASCII digits (81 30 81 30 is U+0080). An undecided run does not end at a digit that
 *      such a character starting at the run's last byte holds: the run is read in the code
 *      page (E4 80 81 30 81 30 is 䀀 and U+0080, where UTF-8 would read 䀁, 0 and a broken
 *      81 30). A run its evidence decided UTF-8 already (rule 3) ends at the digit as before.
 *   The rule's honest limit, by design: an ambiguous run before anything has shown which
 *   writer it comes from reads as UTF-8. And where UTF-8 and code-page
 *   text touch with no ASCII between, the run is code-page text from its first invalid byte's
 *   run start (rule 2). A stream that starts with a UTF-16 byte order mark, or with text whose
 *   every other byte is NUL (`x\0y\0`), is UTF-16 to its end.
 *
 * Each decision depends only on the bytes, never on how they were split into chunks. A run is
 * held until it is decided (its end, an invalid byte, or the evidence: a few bytes at most);
 * an incomplete character is carried to the next chunk, and {@link StreamDecoder.end} flushes
 * what is left (a byte that reads as nothing becomes U+FFFD).
 *
 * @example
 * ```ts
 * import { createDecoder } from "./decode.ts";
 * import { loadCodePages } from "./code_pages.ts";
 * await loadCodePages();
 * const decoder = createDecoder({ kind: "mixed", codePage: "cp936" });
 * // What comes out is UTF-8, whatever went in.
 * const text = (utf8: Uint8Array) => new TextDecoder().decode(utf8);
 * text(decoder.push(new Uint8Array([0x6f, 0x6b, 0x20, 0xd6]))); // "ok " at once; 0xd6 is held
 * text(decoder.push(new Uint8Array([0xd0, 0x0a]))); // "中\n": d6 d0 is no UTF-8, so GBK
 * text(decoder.push(new TextEncoder().encode("中\n"))); // "中\n": valid UTF-8
 * text(decoder.end()); // "": nothing left
 * ```
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import {
  CHAR_TEXT,
  CodePageChars,
  CodePageDecoder,
  isDoubleByte,
  isUtf16,
  isUtf8,
} from "./code_pages.ts";

export {
  codePageLabel,
  encodeText,
  EncodingError,
  loadCodePages,
  malformedText,
  MalformedTextError,
  parseEncoding,
  type SystemCodePages,
} from "./code_pages.ts";

/** How one stream's bytes are to be read (see the module documentation). */
export type StreamEncoding =
  | { kind: "utf-8" }
  | { kind: "fixed"; label: string }
  | { kind: "mixed"; codePage: string };

/** A streaming converter of one stream to UTF-8. */
export interface StreamDecoder {
  /** Converts a chunk; what it returns is complete UTF-8 (possibly empty while held). */
  push(bytes: Uint8Array): Uint8Array;
  /** Flushes what is held or incomplete at the end of the stream. */
  end(): Uint8Array;
}

/** Evidence of valid multi-byte UTF-8 that makes the rest of a run UTF-8 without its end. */
export const UTF8_EVIDENCE = 8;

const EMPTY = new Uint8Array(0);
const utf8Encoder = new TextEncoder();

/** A decoder for one stream. */
export function createDecoder(encoding: StreamEncoding): StreamDecoder {
  switch (encoding.kind) {
    case "utf-8":
      return { push: (bytes) => bytes, end: () => EMPTY };
    case "fixed":
      return isUtf8(encoding.label)
        ? { push: (bytes) => bytes, end: () => EMPTY }
        : isUtf16(encoding.label)
        ? new Utf16Decoder(/be$/i.test(encoding.label) ? "utf-16be" : "utf-16le")
        : new CodePageDecoder(encoding.label);
    case "mixed":
      if (isUtf8(encoding.codePage)) return { push: (bytes) => bytes, end: () => EMPTY };
      return isUtf16(encoding.codePage)
        ? createDecoder({ kind: "fixed", label: encoding.codePage })
        : new MixedDecoder(encoding.codePage);
  }
}

/** UTF-16 text as UTF-8 (a byte order mark dropped; a character split by a chunk carried). */
class Utf16Decoder implements StreamDecoder {
  readonly #decoder: TextDecoder;

  constructor(label: "utf-16le" | "utf-16be") {
    this.#decoder = new TextDecoder(label);
  }

  push(bytes: Uint8Array): Uint8Array {
    return utf8Encoder.encode(this.#decoder.decode(bytes, { stream: true }));
  }

  end(): Uint8Array {
    return utf8Encoder.encode(this.#decoder.decode());
  }
}

/** Where a {@link MixedDecoder} is: between runs, or in one (see the module documentation). */
const Mode = {
  /** Between runs: ASCII passes. */
  Between: 0,
  /** In a run that is valid UTF-8 so far and not yet decided. */
  Open: 1,
  /** In a run decided UTF-8 by its evidence. */
  Utf8: 2,
  /** In a run read in the code page. */
  CodePage: 3,
} as const;
type Mode = typeof Mode[keyof typeof Mode];

/** What the start of a stream has shown of UTF-16 (see {@link MixedDecoder}). */
type Sniff =
  | { state: "start" }
  | { state: "bom"; first: number }
  | { state: "nul"; seen: number[] }
  | { state: "done" };

/** UTF-8 and a code page, per run (see the module documentation). */
class MixedDecoder implements StreamDecoder {
  readonly #chars: CodePageChars;
  /** Points for a valid 2-byte sequence. */
  readonly #pairPoints: number;
  /** Double-byte code page: its text forms 2-byte UTF-8 by chance (rule 4). */
  readonly #doubleByte: boolean;
  /** What the last run decided by its bytes was (rule 4): `true` for the code page. */
  #lastWasCodePage = false;
  #mode: Mode = Mode.Between;
  /** The undecided bytes: the open run, or an incomplete character. */
  #held: Uint8Array = EMPTY;
  #sniff: Sniff = { state: "start" };
  #utf16: Utf16Decoder | undefined;

  constructor(codePage: string) {
    this.#chars = CodePageChars.of(codePage);
    this.#doubleByte = isDoubleByte(codePage);
    this.#pairPoints = this.#doubleByte ? 1 : 2;
  }

  push(bytes: Uint8Array): Uint8Array {
    if (this.#utf16) return this.#utf16.push(bytes);
    if (this.#sniff.state !== "done") return this.#sniffing(bytes);
    if (this.#mode === Mode.Between && isAscii(bytes)) return bytes;
    return this.#run(bytes, false);
  }

  end(): Uint8Array {
    if (this.#utf16) return this.#utf16.end();
    const sniffed = this.#sniff.state === "done" ? EMPTY : this.#stopSniffing(EMPTY);
    return concatBytes([sniffed, this.#run(EMPTY, true)]);
  }

  /**
   * The first bytes of the stream, looked at for UTF-16: FF FE or FE FF (a byte order mark), or
   * two characters of ASCII each followed by a NUL. The first byte of the second kind passes
   * at once (it is the same character either way), the rest is held until it is decided.
   */
  #sniffing(bytes: Uint8Array): Uint8Array {
    const out: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      const sniff = this.#sniff;
      if (sniff.state === "start") {
        if (byte === 0xff || byte === 0xfe) this.#sniff = { state: "bom", first: byte };
        else if (byte > 0 && byte < 0x80) {
          out.push(bytes.slice(i, i + 1));
          this.#sniff = { state: "nul", seen: [byte] };
        } else return concatBytes([...out, this.#stopSniffing(bytes.subarray(i))]);
      } else if (sniff.state === "bom") {
        const bom = sniff.first === 0xff && byte === 0xfe
          ? "utf-16le"
          : sniff.first === 0xfe && byte === 0xff
          ? "utf-16be"
          : undefined;
        if (!bom) return concatBytes([...out, this.#stopSniffing(bytes.subarray(i))]);
        this.#sniff = { state: "done" };
        this.#utf16 = new Utf16Decoder(bom);
        return concatBytes([...out, this.#utf16.push(bytes.subarray(i + 1))]);
      } else if (sniff.state === "nul") {
        const at = sniff.seen.length; // 1..3: NUL, ASCII, NUL expected
        const fits = at % 2 === 1 ? byte === 0 : byte > 0 && byte < 0x80;
        if (!fits) return concatBytes([...out, this.#stopSniffing(bytes.subarray(i))]);
        sniff.seen.push(byte);
        if (sniff.seen.length === 4) {
          this.#sniff = { state: "done" };
          this.#utf16 = new Utf16Decoder("utf-16le");
          out.push(Uint8Array.of(sniff.seen[2]), this.#utf16.push(bytes.subarray(i + 1)));
          return concatBytes(out);
        }
      }
    }
    return concatBytes(out);
  }

  /** The stream is not UTF-16: what the sniffing held goes through the decoder, then `rest`. */
  #stopSniffing(rest: Uint8Array): Uint8Array {
    const sniff = this.#sniff;
    this.#sniff = { state: "done" };
    const held = sniff.state === "bom" ? [sniff.first] : sniff.state === "nul"
      ? sniff.seen.slice(1) // the first byte was passed on
      : [];
    if (held.length === 0) return rest.length === 0 ? EMPTY : this.#run(rest, false);
    return this.#run(concatBytes([Uint8Array.from(held), rest]), false);
  }

  /**
   * Runs the bytes held and `bytes` through the modes; what stays undecided is held again.
   * `final`: the end of the stream, where nothing more can come.
   *
   * One loop of about 100 lines, on purpose: every byte a program prints goes through it, and
   * the modes hand each other the run's state (where it starts, its evidence, whether it held
   * only pairs) from one byte to the next; split into a method per mode, that state would go
   * through fields on every byte, and each rule would be read across four places.
   */
  #run(bytes: Uint8Array, final: boolean): Uint8Array {
    const data = this.#held.length === 0 ? bytes : concatBytes([this.#held, bytes]);
    this.#held = EMPTY;
    const n = data.length;
    const out = new Utf8Output(n);
    const chars = this.#chars;
    let mode = this.#mode;
    /** Where the current run (Open, Utf8) or character (CodePage) starts. */
    let start = 0;
    let i = 0;
    /** Open: the run's evidence so far, and whether its sequences were all of 2 bytes. */
    let evidence = 0;
    let onlyPairs = true;
    /** Rule 4: an open run that ends here is read in the code page instead of as UTF-8. */
    const inCodePage = (end: number) =>
      onlyPairs && this.#doubleByte && this.#lastWasCodePage && chars.readsWhole(data, start, end);
    for (;;) {
      if (i >= n) {
        // The stream's last run ends here: as at ASCII (rule 4).
        if (!(final && mode === Mode.Open && inCodePage(n))) break;
        [mode, i] = [Mode.CodePage, start];
      }
      if (mode === Mode.Between) {
        let j = i;
        while (j < n && data[j] < 0x80) j++;
        out.copy(data, i, j);
        start = i = j;
        if (j === n) break;
        mode = Mode.Open;
        evidence = 0;
        onlyPairs = true;
      } else if (mode === Mode.Open || mode === Mode.Utf8) {
        if (data[i] < 0x80) {
          const across = mode === Mode.Open ? this.#fourByteAcross(data, start, i, final) : -1;
          if (across === 0) break; // held: the run, until the bytes that tell have come
          if (mode === Mode.Open && (across > 0 || inCodePage(i))) {
            // A GB18030 character across the digit (rule 5), or ambiguous after code-page
            // text (rule 4): the run is read in the code page.
            if (across > 0) this.#lastWasCodePage = true;
            mode = Mode.CodePage;
            i = start;
            continue;
          }
          // The run ends: valid UTF-8 from its start (Open), or since the last copy (Utf8).
          out.copy(data, start, i);
          mode = Mode.Between;
          continue;
        }
        const length = utf8SequenceAt(data, i, final);
        if (length > 0) {
          i += length;
          if (mode === Mode.Open) {
            onlyPairs &&= length === 2;
            if (!onlyPairs) this.#lastWasCodePage = false;
            evidence += length === 2 ? this.#pairPoints : 4;
            if (evidence >= UTF8_EVIDENCE) {
              // Pairs only, after code-page text: as at the run's end (rule 4), not held on.
              if (inCodePage(i)) [mode, i] = [Mode.CodePage, start];
              else mode = Mode.Utf8;
            }
          }
        } else if (length === 0) {
          if (mode === Mode.Utf8) out.copy(data, start, start = i);
          break; // held from `start`: a character (Utf8) or the run (Open) still arriving
        } else if (mode === Mode.Open) {
          mode = Mode.CodePage; // no UTF-8 run: read from its start in the code page
          this.#lastWasCodePage = true;
          i = start;
        } else {
          // UTF-8 ends here; a new run starts with this byte.
          out.copy(data, start, i);
          mode = Mode.Between;
        }
      } else {
        if (data[i] < 0x80) {
          mode = Mode.Between;
          continue;
        }
        const length = chars.lengthAt(data, i, final);
        if (length > 0) {
          if (chars.code === CHAR_TEXT) out.text(chars.text);
          else out.codePoint(chars.code);
          i += length;
          continue;
        }
        // No character of the code page (or not yet): a UTF-8 one, if one starts here.
        const utf8 = length === 0 ? 0 : utf8SequenceAt(data, i, final);
        if (utf8 === 0) {
          start = i;
          break; // held: a character still arriving
        }
        if (utf8 > 0) out.copy(data, i, i + utf8);
        else out.codePoint(0xfffd);
        i += Math.abs(utf8);
      }
    }
    if (i === n && mode === Mode.Utf8) out.copy(data, start, start = n);
    if (i === n && mode === Mode.Open && final) out.copy(data, start, start = n);
    // Held: a character still arriving, or a run not decided yet (its bytes all valid UTF-8).
    if (start < n && (i < n || mode === Mode.Open)) this.#held = data.slice(start);
    this.#mode = mode;
    return out.done();
  }

  /**
   * Rule 5: whether a GB18030 four-byte character starts at the run's last byte and holds the
   * ASCII digit at `at` (4), may (0: its bytes are still to come), or not (-1).
   */
  #fourByteAcross(data: Uint8Array, start: number, at: number, final: boolean): number {
    if (at === start || data[at] < 0x30 || data[at] > 0x39) return -1;
    const length = this.#chars.lengthAt(data, at - 1, final);
    return length === 4 ? 4 : length === 0 ? 0 : -1;
  }
}

/** True when every byte is ASCII. */
function isAscii(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0x80) return false;
  return true;
}

/**
 * The length of the valid UTF-8 sequence at `bytes[at]` (a byte of 0x80 or more): positive when
 * there is one, 0 when it may be but more bytes are needed (never once `final`), -1 when not.
 * Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
function utf8SequenceAt(bytes: Uint8Array, at: number, final: boolean): number {
  const lead = bytes[at];
  let length: number, low = 0x80, high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
  } else return -1;
  for (let k = 1; k < length; k++) {
    if (at + k >= bytes.length) return final ? -1 : 0;
    const byte = bytes[at + k];
    if (byte < low || byte > high) return -1;
    low = 0x80;
    high = 0xbf;
  }
  return length;
}

/** UTF-8 output written into one buffer (input bytes copied: they may be lent). */
class Utf8Output {
  #buffer: Uint8Array;
  #length = 0;

  /** `inputLength`: the bytes to be decoded (each gives at most 3 bytes of UTF-8, mostly). */
  constructor(inputLength: number) {
    this.#buffer = new Uint8Array(inputLength * 3 + 16);
  }

  copy(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.#room(to - from);
    this.#buffer.set(bytes.subarray(from, to), this.#length);
    this.#length += to - from;
  }

  codePoint(code: number): void {
    this.#room(4);
    const buffer = this.#buffer;
    let at = this.#length;
    if (code < 0x80) buffer[at++] = code;
    else if (code < 0x800) {
      buffer[at++] = 0xc0 | code >> 6;
      buffer[at++] = 0x80 | code & 0x3f;
    } else if (code < 0x10000) {
      buffer[at++] = 0xe0 | code >> 12;
      buffer[at++] = 0x80 | code >> 6 & 0x3f;
      buffer[at++] = 0x80 | code & 0x3f;
    } else {
      buffer[at++] = 0xf0 | code >> 18;
      buffer[at++] = 0x80 | code >> 12 & 0x3f;
      buffer[at++] = 0x80 | code >> 6 & 0x3f;
      buffer[at++] = 0x80 | code & 0x3f;
    }
    this.#length = at;
  }

  text(text: string): void {
    const bytes = utf8Encoder.encode(text);
    this.#room(bytes.length);
    this.#buffer.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  done(): Uint8Array {
    return this.#length === 0 ? EMPTY : this.#buffer.subarray(0, this.#length);
  }

  #room(more: number): void {
    if (this.#length + more <= this.#buffer.length) return;
    const bigger = new Uint8Array(Math.max(this.#buffer.length * 2, this.#length + more));
    bigger.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = bigger;
  }
}
