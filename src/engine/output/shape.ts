/**
 * Answer sizes. Every read of output is shaped to a budget counted in the bytes the text takes
 * in a JSON answer (UTF-8, with JSON's escapes: a control character such as ESC takes six
 * bytes), so that a budget holds whatever the program printed and whether or not the text is
 * cleaned. Cuts never split a character (a surrogate pair stays whole).
 *
 * @example
 * ```ts
 * import { cutHead, cutTail, jsonSize } from "./shape.ts";
 * jsonSize("a\n€");            // 6: "a", "\\n", three bytes of "€"
 * "hello world".slice(0, cutHead("hello world", 5));   // "hello"
 * "hello world".slice(cutTail("hello world", 5));      // "world"
 * ```
 * @module
 */

import type { Steps } from "../slices.ts";
import { textPieces } from "./utf8.ts";

/** The bytes one UTF-16 code unit takes in JSON (a surrogate pair counts 2 + 2). */
function unitSize(code: number, paired: boolean): number {
  if (code < 0x20) {
    // \b \t \n \f \r have two-character escapes; the other controls are \u00XX.
    return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
  }
  if (code === 0x22 || code === 0x5c) return 2; // \" and \\
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return paired ? 2 : 6; // a lone surrogate is \uXXXX
  return 3;
}

/** Whether the code unit at `i` is half of a surrogate pair. */
function isPaired(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff;
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const previous = text.charCodeAt(i - 1);
    return previous >= 0xd800 && previous <= 0xdbff;
  }
  return false;
}

/**
 * The bytes `text` (its code units [from, to)) takes inside a JSON string (without the quotes),
 * as JSON.stringify writes it.
 */
export function jsonSize(text: string, from = 0, to = text.length): number {
  let size = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    size += code < 0x80 && code >= 0x20 && code !== 0x22 && code !== 0x5c
      ? 1
      : unitSize(code, isPaired(text, i));
  }
  return size;
}

/**
 * The length of the longest prefix of `text` that takes at most `budget` bytes in JSON (of its
 * part from `from` on, which must not start inside a surrogate pair).
 */
export function cutHead(text: string, budget: number, from = 0): number {
  let size = 0;
  for (let i = from; i < text.length; i++) {
    const paired = isPaired(text, i);
    const step = paired ? 4 : unitSize(text.charCodeAt(i), false);
    if (size + step > budget) return i;
    size += step;
    if (paired) i++;
  }
  return text.length;
}

/**
 * Where the longest suffix of `text` that takes at most `budget` bytes in JSON begins (of its
 * part before `to`, which must not end inside a surrogate pair).
 */
export function cutTail(text: string, budget: number, to = text.length): number {
  let size = 0;
  for (let i = to - 1; i >= 0; i--) {
    const paired = isPaired(text, i);
    const step = paired ? 4 : unitSize(text.charCodeAt(i), false);
    if (size + step > budget) return i + 1;
    size += step;
    if (paired) i--;
  }
  return 0;
}

/** {@link jsonSize} of a whole text, as steps (see src/engine/slices.ts). */
export function* jsonSizeSteps(text: string): Steps<number> {
  let size = 0;
  for (const [from, to] of textPieces(text)) {
    size += jsonSize(text, from, to);
    yield;
  }
  return size;
}

/** {@link cutHead} as steps (see src/engine/slices.ts). */
export function* cutHeadSteps(text: string, budget: number): Steps<number> {
  let size = 0;
  for (const [from, to] of textPieces(text)) {
    const piece = jsonSize(text, from, to);
    if (size + piece > budget) return cutHead(text, budget - size, from);
    size += piece;
    yield;
  }
  return text.length;
}

/** {@link cutTail} as steps (see src/engine/slices.ts). */
export function* cutTailSteps(text: string, budget: number): Steps<number> {
  let size = 0;
  for (const [from, to] of textPieces(text, true)) {
    const piece = jsonSize(text, from, to);
    if (size + piece > budget) return cutTail(text, budget - size, to);
    size += piece;
    yield;
  }
  return 0;
}

/**
 * What one answer shows of output unless the caller asks for more: about 16 KiB (as JSON),
 * a few thousand tokens. Larger output is shown as its head and its tail with a marker between
 * (see ranges.ts `readShaped` and lines.ts `head-tail`).
 */
export const DEFAULT_ANSWER_BYTES = 16 * 1024;

/** Room a budget keeps for the markers an answer adds. */
export const MARKER_ROOM = 200;

/**
 * Something an answer left out, exactly: how many bytes of output (and lines, where the read
 * counts lines) lie between what it shows, and how to read them.
 */
export interface Omission {
  /** Bytes of raw output left out (as the program wrote them). */
  bytes: number;
  /** Whole lines left out, when the read counts lines. */
  lines?: number;
  /** A line is cut at the marker: the text next to it is part of a line, not all of it. */
  cut?: boolean;
  /** How to read what was left out, e.g. "read them with since=120". */
  hint?: string;
}

/** The marker line an answer shows in place of what it left out. */
export function omissionMarker(omission: Omission): string {
  const lines = omission.lines === undefined
    ? ""
    : `${omission.lines} line${omission.lines === 1 ? "" : "s"}${
      omission.cut ? " and part of a line" : ""
    }, `;
  const hint = omission.hint ? `; ${omission.hint}` : "";
  return `... [${lines}${omission.bytes} bytes omitted${hint}] ...\n`;
}

/** About four characters of English per token. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}
