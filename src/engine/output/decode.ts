/**
 * From a program's bytes to UTF-8, one stream at a time, and from text to the bytes a program
 * reads. Built on npm `iconv-lite` for every code page (936, 950, 932, 949, 437, 850, 1252, ...).
 *
 * A stream is read one of three ways ({@link StreamEncoding}):
 * - `utf-8`: the bytes are UTF-8 by construction (POSIX, a pseudoconsole): passed on as they are.
 * - `fixed`: the caller named the encoding: everything is decoded with it.
 * - `detect`: a program on Windows pipes writes UTF-8 (deno, node, git, Rust and Go programs) or
 *   its code page (cmd, legacy tools). Bytes before the first non-ASCII byte are passed on at
 *   once; from there on the stream is held until it has shown which it is: an invalid UTF-8
 *   sequence decides for the code page; valid multi-byte sequences worth {@link UTF8_EVIDENCE}
 *   points, or {@link HOLD_LIMIT} bytes held, or the end of the stream with everything valid,
 *   decide for UTF-8. A sequence of 3 or 4 bytes is worth 4 points; one of 2 bytes is worth 2,
 *   but only 1 when the code page is a double-byte one, whose text forms valid 2-byte UTF-8
 *   by chance (GBK's 系 is CF B5, UTF-8's ϵ) far more often than 3-byte sequences. The
 *   decision depends only on the bytes, never on how they were split into chunks, and is kept
 *   once made. (Valid UTF-8 stays UTF-8: a GBK text of one or two such characters alone is
 *   read as UTF-8; the `encoding` argument settles it.)
 *
 * No character is ever split or dropped at a chunk boundary: incomplete sequences are carried
 * to the next chunk, and {@link StreamDecoder.end} flushes what is left (an incomplete last
 * character becomes U+FFFD).
 *
 * @example
 * ```ts
 * import { createDecoder } from "./decode.ts";
 * const decoder = createDecoder({ kind: "detect", fallback: "cp936" });
 * decoder.push(new Uint8Array([0x6f, 0x6b, 0x20, 0xd6])); // "ok " at once; 0xd6 is held
 * decoder.push(new Uint8Array([0xd0])); // "中": d6 d0 is not UTF-8, so the stream is GBK
 * decoder.end(); // nothing left
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

/** How one stream's bytes are to be read (see the module documentation). */
export type StreamEncoding =
  | { kind: "utf-8" }
  | { kind: "fixed"; label: string }
  | { kind: "detect"; fallback: string };

/** A streaming converter of one stream to UTF-8. */
export interface StreamDecoder {
  /** Converts a chunk; what it returns is complete UTF-8 (possibly empty while held). */
  push(bytes: Uint8Array): Uint8Array;
  /** Flushes what is held or incomplete at the end of the stream. */
  end(): Uint8Array;
  /** The encoding decided on (`utf-8` or an iconv-lite label), or undefined while undecided. */
  readonly decided: string | undefined;
}

/** Evidence of valid multi-byte UTF-8 that decides a detected stream for UTF-8. */
export const UTF8_EVIDENCE = 8;
/** Bytes held at most (after the first non-ASCII byte) before a valid stream counts as UTF-8. */
export const HOLD_LIMIT = 1024;

const EMPTY = new Uint8Array(0);
const utf8Encoder = new TextEncoder();

/** A decoder for one stream. */
export function createDecoder(encoding: StreamEncoding): StreamDecoder {
  switch (encoding.kind) {
    case "utf-8":
      return { push: (bytes) => bytes, end: () => EMPTY, decided: "utf-8" };
    case "fixed":
      return isUtf8(encoding.label)
        ? { push: (bytes) => bytes, end: () => EMPTY, decided: "utf-8" }
        : new CodePageDecoder(encoding.label);
    case "detect":
      return new DetectingDecoder(encoding.fallback);
  }
}

function isUtf8(label: string): boolean {
  return /^utf-?8$/i.test(label);
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

/** Text from a code page, as UTF-8 bytes, with no character split between chunks. */
class CodePageDecoder implements StreamDecoder {
  readonly decided: string;
  #streaming: IconvDecoder | undefined;
  #pending: Uint8Array = EMPTY;
  /** A high surrogate whose low half has not been decoded yet. */
  #surrogate = "";

  constructor(label: string) {
    this.decided = label;
    const probe = codePages().iconv.getDecoder(label) as unknown as IconvDecoder;
    if (!Array.isArray(probe.prevBytes)) this.#streaming = probe;
  }

  push(bytes: Uint8Array): Uint8Array {
    if (bytes.length === 0) return EMPTY;
    const { iconv, Buffer } = codePages();
    if (this.#streaming) return this.#utf8(this.#streaming.write(Buffer.from(bytes)));
    const decoder = iconv.getDecoder(this.decided) as unknown as IconvDecoder;
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
      const decoder = iconv.getDecoder(this.decided) as unknown as IconvDecoder;
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

/** UTF-8 or the fallback code page, decided from the bytes (see the module documentation). */
class DetectingDecoder implements StreamDecoder {
  #decoder: StreamDecoder | undefined;
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  #validator = new Utf8Validator();
  #evidence = 0;
  /** Points for a valid 2-byte sequence. */
  readonly #pairPoints: number;

  constructor(private readonly fallback: string) {
    this.#pairPoints = isDoubleByte(fallback) ? 1 : 2;
  }

  get decided(): string | undefined {
    return this.#decoder?.decided;
  }

  push(bytes: Uint8Array): Uint8Array {
    if (this.#decoder) return this.#decoder.push(bytes);
    let start = 0;
    if (this.#heldBytes === 0) {
      // Nothing is held: ASCII reads the same in UTF-8 and every code page, so it goes on now.
      while (start < bytes.length && bytes[start] < 0x80) start++;
      if (start === bytes.length) return bytes;
    }
    const passed = bytes.subarray(0, start);
    for (let i = start; i < bytes.length; i++) {
      const verdict = this.#validator.next(bytes[i]);
      if (verdict === "invalid") {
        return concatBytes([passed, this.#decide(this.fallback, bytes, start)]);
      }
      if (verdict > 1) this.#evidence += verdict === 2 ? this.#pairPoints : 4;
      if (this.#evidence >= UTF8_EVIDENCE || this.#heldBytes + (i - start) + 1 >= HOLD_LIMIT) {
        return concatBytes([passed, this.#decide("utf-8", bytes, start)]);
      }
    }
    this.#held.push(bytes.slice(start));
    this.#heldBytes += bytes.length - start;
    return passed;
  }

  end(): Uint8Array {
    if (!this.#decoder) {
      if (this.#heldBytes === 0) return EMPTY;
      const label = this.#validator.complete ? "utf-8" : this.fallback;
      return concatBytes([this.#decide(label, EMPTY, 0), this.#decoder!.end()]);
    }
    return this.#decoder.end();
  }

  /** Decides, and converts what was held plus `bytes` from `start` on. */
  #decide(label: string, bytes: Uint8Array, start: number): Uint8Array {
    this.#decoder = createDecoder({ kind: "fixed", label });
    const held = concatBytes([...this.#held, bytes.subarray(start)]);
    this.#held = [];
    this.#heldBytes = 0;
    return this.#decoder.push(held);
  }
}

/**
 * A byte-at-a-time check of strict UTF-8 (no overlong forms, no surrogates, nothing above
 * U+10FFFF). `next` answers "invalid", 0 while a sequence is incomplete, or the length of the
 * sequence the byte completed.
 */
class Utf8Validator {
  #needed = 0;
  #length = 0;
  #low = 0x80;
  #high = 0xbf;

  /** True when no sequence is open. */
  get complete(): boolean {
    return this.#needed === 0;
  }

  next(byte: number): "invalid" | number {
    if (this.#needed > 0) {
      if (byte < this.#low || byte > this.#high) return "invalid";
      this.#low = 0x80;
      this.#high = 0xbf;
      return --this.#needed === 0 ? this.#length : 0;
    }
    if (byte < 0x80) return 1;
    if (byte >= 0xc2 && byte <= 0xdf) this.#open(1, 0x80, 0xbf);
    else if (byte === 0xe0) this.#open(2, 0xa0, 0xbf);
    else if (byte === 0xed) this.#open(2, 0x80, 0x9f);
    else if (byte >= 0xe1 && byte <= 0xef) this.#open(2, 0x80, 0xbf);
    else if (byte === 0xf0) this.#open(3, 0x90, 0xbf);
    else if (byte >= 0xf1 && byte <= 0xf3) this.#open(3, 0x80, 0xbf);
    else if (byte === 0xf4) this.#open(3, 0x80, 0x8f);
    else return "invalid";
    return 0;
  }

  #open(needed: number, low: number, high: number): void {
    this.#needed = needed;
    this.#length = needed + 1;
    this.#low = low;
    this.#high = high;
  }
}

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
function isDoubleByte(label: string): boolean {
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
  return /^utf-?16(le|be)?$/i.test(label) || codec.decodeBuf !== undefined ||
    codec.decodeTables !== undefined;
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
 * Text as a program reads it in `label`. Throws {@link EncodingError} naming the first
 * character that the encoding cannot represent (rather than sending a `?` in its place).
 */
export function encodeText(text: string, label: string): Uint8Array {
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
