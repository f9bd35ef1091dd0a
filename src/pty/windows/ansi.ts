/**
 * The ANSI view of text: what a program sees that reads its command line, a path or its working
 * directory through the ANSI API (GetCommandLineA, a C runtime's `char` main, GetCurrentDirectoryA).
 * Windows converts the Unicode original into the system's ANSI code page (GetACP) with "best
 * fit" mappings: a character the code page lacks becomes a look-alike it has. Some look-alikes
 * are syntax: U+FF02 (＂) becomes `"` and U+FF3C (＼) `\` at 1252, U+00A5 (¥) `\` at 932, so an
 * argument that is one word in Unicode is several in the ANSI view, or a path climbs out of its
 * folder. This is the "WorstFit" family (Orange Tsai and Splitline, 2024: CVE-2024-4577 in
 * PHP-CGI, and others); characters with no look-alike become `?`.
 *
 * A text is safe when WideCharToMultiByte with WC_NO_BEST_FIT_CHARS does not use the default
 * character: then the ANSI view is the same text. Under a UTF-8 ANSI code page (65001, Windows'
 * "Beta: Use Unicode UTF-8" option) every well-formed text is.
 *
 * @module
 */
import { kernel32, wide } from "./kernel32.ts";

/** The first character of a text that the ANSI view changes. */
export interface AnsiMismatch {
  /** Its index in the text (UTF-16 code units). */
  index: number;
  /** The character. */
  char: string;
  /** What a program reading the ANSI view sees in its place. */
  seen: string;
  /** The ANSI code page. */
  codePage: number;
}

const WC_NO_BEST_FIT_CHARS = 0x400;
const CP_UTF8 = 65001;

/** The first character of `text` that the system's ANSI code page changes, if any (Windows). */
export function ansiMismatch(text: string): AnsiMismatch | undefined {
  if (Deno.build.os !== "windows") return undefined; // no ANSI view elsewhere
  // deno-lint-ignore no-control-regex -- ASCII, controls included, is the same in every ANSI code page
  if (/^[\x00-\x7f]*$/.test(text)) return undefined;
  const codePage = kernel32().GetACP();
  if (codePage === CP_UTF8) {
    if (text.isWellFormed()) return undefined;
    const index = [...text].findIndex((char) => !char.isWellFormed());
    return { index, char: text[index], seen: "\ufffd", codePage };
  }
  if (exact(text, codePage)) return undefined;
  let index = 0;
  for (const char of text) {
    if (!exact(char, codePage)) return { index, char, seen: bestFit(char, codePage), codePage };
    index += char.length;
  }
  return undefined; // (a change only the whole text shows: none is known)
}

/** True when the text converts to the code page without the default character. */
function exact(text: string, codePage: number): boolean {
  const k = kernel32();
  const out = new Uint8Array(text.length * 4 + 8);
  const used = new Int32Array(1);
  const written = k.WideCharToMultiByte(
    codePage,
    WC_NO_BEST_FIT_CHARS,
    wide(text),
    text.length,
    out,
    out.length,
    null,
    new Uint8Array(used.buffer),
  );
  return written > 0 && used[0] === 0;
}

/** What a character becomes in the code page and back, best fit allowed (as Windows does it). */
function bestFit(char: string, codePage: number): string {
  const k = kernel32();
  const bytes = new Uint8Array(8);
  const length = k.WideCharToMultiByte(codePage, 0, wide(char), char.length, bytes, 8, null, null);
  if (length <= 0) return "?";
  const units = new Uint16Array(8);
  const count = k.MultiByteToWideChar(codePage, 0, bytes, length, new Uint8Array(units.buffer), 8);
  return String.fromCharCode(...units.subarray(0, Math.max(0, count)));
}
