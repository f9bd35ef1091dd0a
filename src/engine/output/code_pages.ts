/**
 * Windows code pages, through npm `iconv-lite` (936, 950, 932, 949, 437, 850, 1252, ...): the
 * tables loaded on demand, `encoding` arguments read, text encoded for a program's input, a
 * whole stream decoded in one code page ({@link CodePageDecoder}), and one character at a time
 * ({@link CodePageChars}), which the mixed-stream decoder (decode.ts) reads runs with.
 *
 * @example
 * ```ts
 * import { CodePageChars, loadCodePages } from "./code_pages.ts";
 * await loadCodePages();
 * const gbk = CodePageChars.of("cp936");
 * gbk.charAt([0xd6, 0xd0], 0, true); // { length: 2, text: "中" }
 * gbk.charAt([0xd6], 0, false); // "incomplete": a lead byte whose trail is still to come
 * ```
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import type { Buffer as NodeBuffer } from "node:buffer";

type Iconv = typeof import("iconv-lite");
/** iconv-lite and Node's Buffer, once {@link loadCodePages} has loaded them. */
let loaded: { iconv: Iconv; Buffer: typeof NodeBuffer } | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the code page tables (iconv-lite, with Node's Buffer), which a server that only ever
 * sees UTF-8 (POSIX, a pseudoconsole) need not pay for (3 MiB of an idle server's memory,
 * measured). Everything here but UTF-8 needs them loaded first; later calls return at once.
 */
export function loadCodePages(): Promise<void> {
  return loading ??= Promise.all([import("iconv-lite"), import("node:buffer")]).then(
    ([module, node]) => void (loaded = { iconv: module.default, Buffer: node.Buffer }),
  );
}

/** iconv-lite and Buffer; a use before {@link loadCodePages} is a bug in the caller. */
function codePages(): { iconv: Iconv; Buffer: typeof NodeBuffer } {
  if (!loaded) throw new Error("code pages used before loadCodePages() finished");
  return loaded;
}

/** True for a label that names UTF-8. */
export function isUtf8(label: string): boolean {
  return /^utf-?8$/i.test(label);
}

/** True for a label that names UTF-16 (little or big endian). */
export function isUtf16(label: string): boolean {
  return /^utf-?16(le|be)?$/i.test(label);
}

/**
 * iconv-lite's streaming decoder for double-byte code pages loses output when a chunk starts
 * inside a character (its output buffer is sized from the new chunk alone): each chunk is
 * therefore decoded by a fresh decoder, with the bytes the previous one left pending in front.
 */
interface IconvDecoder {
  write(bytes: NodeBuffer): string;
  end(): string | undefined;
  prevBytes?: number[];
}

const EMPTY = new Uint8Array(0);
const utf8Encoder = new TextEncoder();

/** A whole stream in one code page, as UTF-8 bytes, with no character split between chunks. */
export class CodePageDecoder {
  readonly label: string;
  #streaming: IconvDecoder | undefined;
  #pending: Uint8Array = EMPTY;
  /** A high surrogate whose low half has not been decoded yet. */
  #surrogate = "";

  constructor(label: string) {
    this.label = label;
    const probe = codePages().iconv.getDecoder(label) as unknown as IconvDecoder;
    if (!Array.isArray(probe.prevBytes)) this.#streaming = probe;
  }

  push(bytes: Uint8Array): Uint8Array {
    if (bytes.length === 0) return EMPTY;
    const { iconv, Buffer } = codePages();
    if (this.#streaming) return this.#utf8(this.#streaming.write(Buffer.from(bytes)));
    const decoder = iconv.getDecoder(this.label) as unknown as IconvDecoder;
    const text = decoder.write(Buffer.from(concatBytes([this.#pending, bytes])));
    this.#pending = Uint8Array.from(decoder.prevBytes ?? []);
    return this.#utf8(text);
  }

  end(): Uint8Array {
    let text: string;
    if (this.#streaming) {
      text = this.#streaming.end() ?? "";
    } else {
      const { iconv, Buffer } = codePages();
      const decoder = iconv.getDecoder(this.label) as unknown as IconvDecoder;
      text = decoder.write(Buffer.from(this.#pending)) + (decoder.end() ?? "");
      this.#pending = EMPTY;
    }
    const out = utf8Encoder.encode(this.#surrogate + text);
    this.#surrogate = "";
    return out;
  }

  #utf8(text: string): Uint8Array {
    let whole = this.#surrogate + text;
    this.#surrogate = "";
    const last = whole.charCodeAt(whole.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#surrogate = whole.slice(-1);
      whole = whole.slice(0, -1);
    }
    return whole.length === 0 ? EMPTY : utf8Encoder.encode(whole);
  }
}

/** A table entry not looked up yet. */
const UNKNOWN = -1;
/** No character: an invalid byte or pair. */
const INVALID = -2;
/** A byte that starts a character of two bytes or more; a pair that starts one of four. */
const LONGER = -3;
/** A character that is not one code point: see the table of texts. */
const TEXT = -4;

/**
 * One character of a code page at a time: {@link charAt} says whether the bytes at a position
 * are a whole character (and which), the start of one whose rest is still to come, or none.
 * Answers come from iconv-lite's own decoder and are remembered in tables (a byte's kind; a
 * pair's character): a long stream asks iconv-lite about each byte and pair once.
 */
export class CodePageChars {
  /** One reader per code page, shared by every stream (its tables take up to 256 KiB). */
  static #shared = new Map<string, CodePageChars>();

  /** The shared reader of a code page. */
  static of(label: string): CodePageChars {
    let chars = CodePageChars.#shared.get(label);
    if (!chars) CodePageChars.#shared.set(label, chars = new CodePageChars(label));
    return chars;
  }

  readonly label: string;
  /**
   * The code point of the last character {@link lengthAt} found (TEXT: see {@link text}); read
   * it right after the call (the reader is shared).
   */
  code = 0;
  /** The text of the last character {@link lengthAt} found, when it is not one code point. */
  text = "";
  /** Per byte: a code point, LONGER, INVALID or UNKNOWN. */
  readonly #single = new Int32Array(256).fill(UNKNOWN);
  /** Per pair: a code point, LONGER (a GB18030 four-byte start), INVALID, TEXT or UNKNOWN. */
  #pairs: Int32Array | undefined;
  readonly #texts = new Map<number, string>();

  constructor(label: string) {
    this.label = label;
  }

  /** Whether the bytes from `start` to `end` read as characters of the code page, every one. */
  readsWhole(bytes: Uint8Array, start: number, end: number): boolean {
    const part = bytes.subarray(start, end);
    for (let at = 0; at < part.length;) {
      if (part[at] < 0x80) {
        at++;
        continue;
      }
      const length = this.lengthAt(part, at, true);
      if (length <= 0) return false;
      at += length;
    }
    return true;
  }

  /**
   * The character at `bytes[at]` (a byte of 0x80 or more): its length (its code point in
   * {@link code}, or TEXT and its text in {@link text}); 0 when more bytes are needed to tell
   * (none can come once `final`: then -1); -1 when the code page has no character there.
   */
  lengthAt(bytes: ArrayLike<number>, at: number, final: boolean): number {
    const lead = bytes[at];
    let single = this.#single[lead];
    if (single === UNKNOWN) single = this.#single[lead] = this.#kindOf(lead);
    if (single >= 0) {
      this.code = single;
      return 1;
    }
    if (single === INVALID) return -1;
    if (at + 1 >= bytes.length) return final ? -1 : 0;
    const key = lead << 8 | bytes[at + 1];
    const pairs = this.#pairs ??= new Int32Array(65536).fill(UNKNOWN);
    let pair = pairs[key];
    if (pair === UNKNOWN) pair = pairs[key] = this.#entry(key, [lead, bytes[at + 1]]);
    if (pair === INVALID) return -1;
    if (pair === TEXT) this.text = this.#texts.get(key)!;
    if (pair !== LONGER) {
      this.code = pair;
      return 2;
    }
    // GB18030's four-byte characters: rare enough to ask about each.
    if (at + 3 >= bytes.length) return final ? -1 : 0;
    const four = this.#decode([lead, bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if (!four) return -1;
    this.code = [...four].length === 1 ? four.codePointAt(0)! : TEXT;
    this.text = four;
    return 4;
  }

  /** {@link lengthAt}, answered as the character's length and text. */
  charAt(
    bytes: ArrayLike<number>,
    at: number,
    final: boolean,
  ): { length: number; text: string } | "incomplete" | "invalid" {
    const length = this.lengthAt(bytes, at, final);
    if (length === 0) return "incomplete";
    if (length < 0) return "invalid";
    return { length, text: this.code === TEXT ? this.text : String.fromCodePoint(this.code) };
  }

  #kindOf(byte: number): number {
    const decoder = codePages().iconv.getDecoder(this.label) as unknown as IconvDecoder;
    const text = decoder.write(codePages().Buffer.from([byte]));
    if (text === "" && decoder.prevBytes?.length === 1) return LONGER;
    return text === "" || text.includes("\ufffd") || [...text].length !== 1
      ? INVALID
      : text.codePointAt(0)!;
  }

  #entry(key: number, bytes: number[]): number {
    const text = this.#decode(bytes);
    if (text === null) return INVALID;
    if (text === "") return LONGER;
    if ([...text].length === 1) return text.codePointAt(0)!;
    this.#texts.set(key, text);
    return TEXT;
  }

  /** The text of these bytes as one character; "" while incomplete; null if they are not one. */
  #decode(bytes: number[]): string | null {
    const decoder = codePages().iconv.getDecoder(this.label) as unknown as IconvDecoder;
    const text = decoder.write(codePages().Buffer.from(bytes));
    const pending = decoder.prevBytes?.length ?? 0;
    if (text === "" && pending === bytes.length) return "";
    // (iconv-lite answers a GB18030 sequence past U+10FFFF with halves of no character.)
    return text === "" || pending > 0 || text.includes("\ufffd") || !text.isWellFormed()
      ? null
      : text;
  }
}

/** The code point value {@link CodePageChars.code} takes for a character of several. */
export const CHAR_TEXT = TEXT;

/** The Windows code pages of the system: OEM (console programs) and ANSI (GUI programs). */
export interface SystemCodePages {
  oem: number;
  ansi: number;
}

/** An `encoding` argument that names nothing usable. */
export class EncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EncodingError";
  }
}

/** An {@link EncodingError} for text that is no text in any encoding (see {@link malformedText}). */
export class MalformedTextError extends EncodingError {}

/** Code pages with a name of their own in iconv-lite rather than `cpNNN`. */
const CODE_PAGE_LABELS: Record<number, string> = {
  65001: "utf-8",
  1200: "utf-16le",
  1201: "utf-16be",
  20866: "koi8-r",
  21866: "koi8-u",
  28591: "iso-8859-1",
  54936: "gb18030",
};

/** The iconv-lite label of a Windows code page, or undefined when iconv-lite has none. */
export function codePageLabel(codePage: number): string | undefined {
  const candidates = [CODE_PAGE_LABELS[codePage], `cp${codePage}`, `windows-${codePage}`];
  return candidates.find((label) => label !== undefined && supported(label));
}

/** True for a double-byte code page (936, 950, 932, 949, GB18030). */
export function isDoubleByte(label: string): boolean {
  const { iconv } = codePages();
  try {
    return (iconv.getCodec(label) as { decodeTables?: unknown }).decodeTables !== undefined;
  } catch {
    return false;
  }
}

/** True for labels this module decodes: UTF-8, UTF-16, and iconv-lite's code page tables. */
function supported(label: string): boolean {
  if (isUtf8(label)) return true;
  const { iconv } = codePages();
  let codec: { decodeBuf?: unknown; decodeTables?: unknown };
  try {
    codec = iconv.getCodec(label) as typeof codec;
  } catch {
    return false;
  }
  return isUtf16(label) || codec.decodeBuf !== undefined || codec.decodeTables !== undefined;
}

/**
 * Reads an `encoding` argument: `utf-8`, `oem`, `ansi` (Windows: the system's code pages), a
 * code page number (`936`, `65001`), or a label (`gbk`, `cp850`, `windows-1252`, `shift_jis`).
 * Returns the iconv-lite label (`utf-8` for UTF-8) and the Windows code page where there is one.
 * Throws {@link EncodingError} with the reason.
 */
export function parseEncoding(
  text: string,
  system: SystemCodePages | undefined,
): { label: string; codePage?: number } {
  const name = text.trim().toLowerCase();
  if (name === "oem" || name === "ansi") {
    if (!system) throw new EncodingError(`'${text}' names a Windows code page: use it on Windows`);
    return withCodePage(system[name], text);
  }
  const number = name.match(/^(?:cp|windows-|ibm)?(\d{3,5})$/);
  if (number) return withCodePage(Number(number[1]), text);
  if (isUtf8(name)) return { label: "utf-8", codePage: 65001 };
  if (!supported(name)) {
    throw new EncodingError(
      `unknown encoding '${text}' (use utf-8, oem, ansi, a code page number such as 936, ` +
        "or a label such as gbk, big5, shift_jis, cp850, windows-1252)",
    );
  }
  return { label: name, codePage: KNOWN_CODE_PAGES[name] };
}

function withCodePage(codePage: number, text: string): { label: string; codePage: number } {
  const label = codePageLabel(codePage);
  if (!label) throw new EncodingError(`code page ${codePage} ('${text}') is not supported`);
  return { label, codePage };
}

/** Labels that name a Windows code page (so that cmd can be switched to it with `chcp`). */
const KNOWN_CODE_PAGES: Record<string, number> = {
  gbk: 936,
  gb2312: 936,
  gb18030: 54936,
  big5: 950,
  shift_jis: 932,
  sjis: 932,
  "euc-kr": 949,
  "utf-16le": 1200,
  "utf-16be": 1201,
  "koi8-r": 20866,
  "koi8-u": 21866,
  "iso-8859-1": 28591,
  latin1: 28591,
};

/**
 * Why `text` is no text (undefined when it is): the first lone surrogate, half of a UTF-16 pair
 * without its other half, which is no character in any encoding (a UTF-8 encoder writes U+FFFD
 * in its place). JSON can carry one (`"\ud800"`).
 */
export function malformedText(text: string): string | undefined {
  if (text.isWellFormed()) return undefined;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    const hex = unit.toString(16).toUpperCase();
    return `a lone surrogate (U+${hex}) at index ${i} (UTF-16 code units): half of a pair ` +
      "without its other half is no character; nothing was sent";
  }
  return undefined;
}

/**
 * Text as a program reads it in `label`. Throws {@link EncodingError} naming the first
 * character that the encoding cannot represent (rather than sending a `?` in its place), or
 * the first lone surrogate (see {@link malformedText}; rather than a U+FFFD in its place).
 */
export function encodeText(text: string, label: string): Uint8Array {
  const malformed = malformedText(text);
  if (malformed !== undefined) throw new MalformedTextError(malformed);
  if (isUtf8(label)) return utf8Encoder.encode(text);
  const { iconv, Buffer } = codePages();
  const bytes = new Uint8Array(iconv.encode(text, label));
  const back = iconv.decode(Buffer.from(bytes), label);
  if (back !== text) {
    const chars = [...text], backChars = [...back];
    const at = chars.findIndex((char, i) => char !== backChars[i]);
    throw new EncodingError(
      `'${chars[at] ?? text}' cannot be written in ${label}, the encoding the program reads`,
    );
  }
  return bytes;
}
