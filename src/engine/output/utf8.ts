/**
 * UTF-8 character boundaries, so that no read, cut or truncation ever splits a character.
 *
 * @example
 * ```ts
 * import { boundaryAtOrAfter, completePrefixLength } from "./utf8.ts";
 * const bytes = new TextEncoder().encode("a€"); // 61 e2 82 ac
 * boundaryAtOrAfter(bytes, 2); // 4: offset 2 is inside "€"
 * completePrefixLength(bytes.subarray(0, 3)); // 1: "€" is not complete yet
 * ```
 * @module
 */
import type { Steps } from "../slices.ts";

/** True for a continuation byte (10xxxxxx). */
export function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** The length a sequence starting with this lead byte claims (1 for invalid leads). */
export function sequenceLength(lead: number): number {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  if (lead < 0xf8) return 4;
  return 1;
}

/**
 * The first character boundary at or after `index`: skips at most three continuation bytes
 * (more than that cannot belong to one character, so the bytes are invalid and kept).
 */
export function boundaryAtOrAfter(bytes: Uint8Array, index: number): number {
  let i = index;
  while (i < bytes.length && i - index < 3 && isContinuation(bytes[i])) i++;
  return i < bytes.length && isContinuation(bytes[i]) ? index : i;
}

/**
 * Where a read that starts at `index` of `bytes` starts its text, the bytes before it being the
 * stream's (all of them, or up to three before it that include a byte that is no continuation
 * byte): past the continuation bytes there that the decoder takes with a lead byte before
 * `index` (the rest of a character the start cuts); at `index` itself when none does, for
 * continuation bytes on their own are invalid, and decode as U+FFFD.
 */
export function startAfterCut(bytes: Uint8Array, index: number): number {
  for (let i = index - 1; i >= 0 && i >= index - 3; i--) {
    if (isContinuation(bytes[i])) continue;
    return Math.max(index, i + decoderStep(bytes, i).length);
  }
  return index;
}

/**
 * The length of the longest prefix of `bytes` that does not end inside an incomplete
 * character: a trailing lead byte whose continuation bytes have not all arrived is left out.
 */
export function completePrefixLength(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let i = end - 1; i >= 0 && i >= end - 3; i--) {
    if (isContinuation(bytes[i])) continue;
    return i + sequenceLength(bytes[i]) > end ? i : end;
  }
  return end;
}

/**
 * How many of `bytes` decode (as TextDecoder does, invalid bytes as U+FFFD) to the first `chars`
 * UTF-16 units of their text: the byte offset of a position in `new TextDecoder().decode(bytes)`.
 * Unlike {@link utf8Length} of that text, right where invalid bytes stand in for fewer or more.
 */
export function bytesOfDecodedPrefix(bytes: Uint8Array, chars: number): number {
  let units = 0, i = 0;
  while (i < bytes.length && units < chars) {
    const step = decoderStep(bytes, i);
    units += step.units;
    i += step.length;
  }
  return i;
}

/**
 * The number of UTF-8 bytes of a string (of its code units [from, to), which must not split a
 * surrogate pair), without encoding it.
 */
export function utf8Length(text: string, from = 0, to = text.length): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * One step of the decoder (WHATWG UTF-8) at `i`, a byte that starts one: the bytes it takes and
 * the UTF-16 units it yields. A character; or one U+FFFD for an invalid lead byte, or for a lead
 * and the continuation bytes that fit it before one that did not (or before the end).
 */
function decoderStep(bytes: Uint8Array, i: number): { length: number; units: number } {
  const lead = bytes[i];
  if (lead < 0xc2 || lead > 0xf4) return { length: 1, units: 1 };
  const need = lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : 3;
  let lower = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  let upper = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  let seen = 0;
  for (; seen < need && i + 1 + seen < bytes.length; seen++) {
    const byte = bytes[i + 1 + seen];
    if (byte < lower || byte > upper) break;
    [lower, upper] = [0x80, 0xbf];
  }
  return { length: 1 + seen, units: seen === need && need === 3 ? 2 : 1 };
}

/** Code units of text in one piece of {@link textPieces}. */
export const PIECE_UNITS = 64 * 1024;

/**
 * `[from, to)` pieces of `text`, in order (or from its end, `backward`), of about
 * {@link PIECE_UNITS} code units, none splitting a surrogate pair: for work on a long text done
 * in slices (see src/engine/slices.ts).
 */
export function* textPieces(text: string, backward = false): Generator<[number, number]> {
  const paired = (i: number) =>
    (text.charCodeAt(i - 1) & 0xfc00) === 0xd800 && (text.charCodeAt(i) & 0xfc00) === 0xdc00;
  if (!backward) {
    for (let from = 0; from < text.length;) {
      let to = Math.min(text.length, from + PIECE_UNITS);
      if (to < text.length && paired(to)) to++;
      yield [from, to];
      from = to;
    }
    return;
  }
  for (let to = text.length; to > 0;) {
    let from = Math.max(0, to - PIECE_UNITS);
    if (from > 0 && paired(from)) from--;
    yield [from, to];
    to = from;
  }
}

/** {@link utf8Length} of a whole text, as steps (see src/engine/slices.ts). */
export function* utf8LengthSteps(text: string): Steps<number> {
  let bytes = 0;
  for (const [from, to] of textPieces(text)) {
    bytes += utf8Length(text, from, to);
    yield;
  }
  return bytes;
}
