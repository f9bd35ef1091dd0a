/**
 * The stream decoder: the same text whatever the chunk splits, nothing dropped at the end,
 * detection that is right for real UTF-8 and real code-page text, and `encoding` arguments.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import fc from "fast-check";
import iconv from "iconv-lite";
import { Buffer } from "node:buffer";
import { concatBytes } from "../../../src/bytes.ts";
import { CodePageChars } from "../../../src/engine/output/code_pages.ts";
import {
  codePageLabel,
  createDecoder,
  encodeText,
  EncodingError,
  loadCodePages,
  malformedText,
  parseEncoding,
  type StreamEncoding,
} from "../../../src/engine/output/decode.ts";

await loadCodePages();

const text = new TextDecoder();
const utf8 = new TextEncoder();

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Feeds `bytes` split at `cuts` and returns the decoded text. */
function decodeSplit(encoding: StreamEncoding, bytes: Uint8Array, cuts: number[]): string {
  const decoder = createDecoder(encoding);
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const point of [...points, bytes.length]) {
    parts.push(decoder.push(bytes.subarray(at, point)));
    at = point;
  }
  parts.push(decoder.end());
  return parts.map((part) => text.decode(part, { stream: true })).join("") + text.decode();
}

const CODE_PAGES = ["cp936", "gb18030", "cp950", "cp932", "cp949", "cp437", "cp850", "cp1252"];
/** Bytes biased to the hostile: high bytes, lead bytes, GB18030 digits, ASCII. */
const hostileBytes = fc.array(
  fc.oneof(
    fc.integer({ min: 0x80, max: 0xff }),
    fc.integer({ min: 0x30, max: 0x39 }),
    fc.integer({ min: 0, max: 0x7f }),
    fc.constantFrom(0x81, 0xa1, 0xd6, 0xe4, 0xf0, 0xfe, 0x5c, 0x40),
  ),
  { maxLength: 40 },
).map((values) => new Uint8Array(values));
const cuts = fc.array(fc.nat(), { maxLength: 8 });

Deno.test("every chunk split decodes to the same text as one piece (fixed code pages)", () => {
  fc.assert(
    fc.property(fc.constantFrom(...CODE_PAGES), hostileBytes, cuts, (label, bytes, splits) => {
      // As UTF-8 (what the decoder produces), iconv-lite's stray surrogate halves are U+FFFD.
      const whole = text.decode(utf8.encode(iconv.decode(Buffer.from(bytes), label)));
      assertEquals(decodeSplit({ kind: "fixed", label }, bytes, splits), whole);
    }),
    { numRuns: 3000 },
  );
});

/** A mixed stream's decoder (UTF-8 and a code page, run by run). */
const mixed = (codePage: string) => ({ kind: "mixed", codePage }) as const;

/** Feeds `bytes` split at each of `points` (sorted, distinct) and returns the decoded text. */
function decodeAt(encoding: StreamEncoding, bytes: Uint8Array, points: number[]): string {
  const decoder = createDecoder(encoding);
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const point of [...points, bytes.length]) {
    parts.push(decoder.push(bytes.slice(at, point)));
    at = point;
  }
  parts.push(decoder.end());
  return parts.map((part) => text.decode(part, { stream: true })).join("") + text.decode();
}

/** The runs of characters beyond ASCII in a text. */
function nonAsciiRuns(value: string): string[] {
  return value.match(/[^ -~\t\r\n]+/g) ?? [];
}

/** True when the bytes start with something that is no valid UTF-8 sequence. */
function startsInvalid(bytes: Uint8Array): boolean {
  for (let length = 1; length <= Math.min(4, bytes.length); length++) {
    if (isUtf8(bytes.subarray(0, length))) return false;
  }
  const first = bytes[0];
  const claimed = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return bytes.length >= claimed || !isUtf8Prefix(bytes);
}

/** True when the bytes could still become valid UTF-8 with more bytes after them. */
function isUtf8Prefix(bytes: Uint8Array): boolean {
  for (const tail of [[0x80], [0x80, 0x80], [0x80, 0x80, 0x80]]) {
    if (isUtf8(new Uint8Array([...bytes, ...tail]))) return true;
  }
  return false;
}

/**
 * Text that a code page's writer would send, each run of non-ASCII characters showing at its
 * start that it is no UTF-8 (what the mixed decoder is sure of; runs that are valid UTF-8 are
 * UTF-8 by rule, tested apart).
 */
function codePageText(label: string, alphabet: string[]): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 12 })
    .map((chars) => chars.join(""))
    .filter((value) => {
      const runs = nonAsciiRuns(value);
      return runs.every((run) => startsInvalid(new Uint8Array(iconv.encode(run, label))));
    });
}

const GBK_CHARS = [
  "中",
  "文",
  "输",
  "入",
  "找",
  "不",
  "到",
  "指",
  "定",
  "丂",
  "表",
  "系",
  "统",
  "。",
];
const SJIS_CHARS = ["日", "本", "語", "表", "ソ", "能", "ｱ", "ｲ", "テ", "ス", "ト", "。", "ー"];
const CP437_CHARS = ["é", "ü", "ñ", "Ç", "à", "ÿ", "½", "░", "█", "╔", "═", "╗", "Σ", "µ"];
const ASCII_CHARS = ["a", "Z", "0", " ", "@", "\\", "~", "\r\n", "\n", "\t"];

/** A piece of a stream: text as one writer sends it, and the code page it writes in. */
interface Piece {
  text: string;
  label: "utf-8" | "cp936" | "cp932" | "cp437";
}

/**
 * Pieces a console's stream mixes: UTF-8 writers (any text) and one code page's writers, each
 * piece ending in ASCII (a line, a space: what separates two programs' output).
 */
function mixedPieces(label: Piece["label"]): fc.Arbitrary<Piece[]> {
  const alphabet = label === "cp936" ? GBK_CHARS : label === "cp932" ? SJIS_CHARS : CP437_CHARS;
  const ending = fc.constantFrom("\r\n", " ", "\n", "> ", ":");
  // A UTF-8 writer's first run beyond ASCII shows it is UTF-8 (a character of 3 or 4 bytes, or
  // bytes the code page does not read): an ambiguous one after code-page text follows that
  // text by rule (rule 4 in decode.ts), tested apart.
  const utf8Piece = fc.tuple(fc.string({ unit: "grapheme", maxLength: 16 }), ending)
    .filter(([value]) => {
      const first = nonAsciiRuns(value)[0];
      return first === undefined || !ambiguousIn(label, utf8.encode(first));
    })
    .map(([value, end]): Piece => ({ text: value + end, label: "utf-8" }));
  const pagePiece = fc.tuple(codePageText(label, [...alphabet, ...ASCII_CHARS]), ending)
    .map(([value, end]): Piece => ({ text: value + end, label }));
  return fc.array(fc.oneof(utf8Piece, pagePiece), { minLength: 1, maxLength: 6 });
}

/**
 * Whether UTF-8 bytes are ambiguous on a double-byte code page: 2-byte sequences only, every one
 * of which the code page reads too (see rule 4 of decode.ts).
 */
function ambiguousIn(label: string, bytes: Uint8Array): boolean {
  if (!["cp936", "cp932", "cp949", "cp950", "gb18030"].includes(label)) return false;
  if ([...text.decode(bytes)].some((char) => utf8.encode(char).length > 2)) return false;
  const chars = new CodePageChars(label);
  for (let at = 0; at < bytes.length;) {
    const found = chars.charAt(bytes, at, true);
    if (typeof found !== "object") return false;
    at += found.length;
  }
  return true;
}

function encodePiece(piece: Piece): Uint8Array {
  return piece.label === "utf-8"
    ? utf8.encode(piece.text)
    : new Uint8Array(iconv.encode(piece.text, piece.label));
}

Deno.test("mixed streams: every piece right, split at every position (UTF-8 with GBK, Shift-JIS, cp437)", () => {
  for (const label of ["cp936", "cp932", "cp437"] as const) {
    fc.assert(
      fc.property(mixedPieces(label), (pieces) => {
        const bytes = concatBytes(pieces.map(encodePiece));
        const expected = pieces.map((piece) => piece.text).join("");
        assertEquals(decodeAt(mixed(label), bytes, []), expected);
        for (let cut = 0; cut <= bytes.length; cut++) {
          assertEquals(decodeAt(mixed(label), bytes, [cut]), expected, `cut at ${cut}`);
        }
        // One byte at a time.
        const everywhere = Array.from({ length: bytes.length }, (_, i) => i);
        assertEquals(decodeAt(mixed(label), bytes, everywhere), expected);
      }),
      { numRuns: 300 },
    );
  }
});

Deno.test("mixed streams: the issue's lines in either order, at 936, 932 and 437", () => {
  for (
    const [label, native] of [["cp936", "中文"], ["cp932", "日本語"], ["cp437", "café ü"]] as const
  ) {
    const deno = utf8.encode(`deno ${native} ü\r\n`);
    const cmd = new Uint8Array(iconv.encode(`cmd ${native}\r\n`, label));
    const expected = [`deno ${native} ü\r\n`, `cmd ${native}\r\n`];
    assertEquals(
      decodeAt(mixed(label), concatBytes([deno, cmd]), [deno.length]),
      expected.join(""),
    );
    assertEquals(decodeAt(mixed(label), concatBytes([cmd, deno]), []), expected.reverse().join(""));
  }
});

/** The UTF-16 a stream's start shows (a byte order mark, or `x\0y\0`): decode.ts reads it all so. */
function utf16Start(bytes: Uint8Array): "utf-16le" | "utf-16be" | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  const ascii = (at: number) => bytes[at] > 0 && bytes[at] < 0x80;
  return bytes.length >= 4 && ascii(0) && bytes[1] === 0 && ascii(2) && bytes[3] === 0
    ? "utf-16le"
    : undefined;
}

/**
 * Rule 5's limit (decode.ts): a GB18030 four-byte character (lead, digit, lead, digit) whose
 * lead ends a valid UTF-8 sequence. An undecided run is read in the code page there (tested
 * apart); one that its evidence decided UTF-8 already is not, and the broken rest reads U+FFFD.
 */
function fourByteAfterUtf8(bytes: Uint8Array): boolean {
  const digit = (at: number) => bytes[at] >= 0x30 && bytes[at] <= 0x39;
  for (let at = 1; at + 2 < bytes.length; at++) {
    if (!digit(at) || bytes[at - 1] < 0x81 || bytes[at + 1] < 0x81 || !digit(at + 2)) continue;
    if ([2, 3, 4].some((length) => at >= length && isUtf8(bytes.subarray(at - length, at)))) {
      return true;
    }
  }
  return false;
}

Deno.test("mixed streams: hostile bytes decode the same whatever the chunk splits, U+FFFD only where nothing reads", () => {
  const bytesOf = fc.oneof(
    hostileBytes,
    fc.string({ unit: "grapheme", maxLength: 30 }).map((s) => utf8.encode(s)),
    fc.array(fc.oneof(hostileBytes, fc.string({ maxLength: 8 }).map((s) => utf8.encode(s))))
      .map((parts) => concatBytes(parts)),
  );
  fc.assert(
    fc.property(fc.constantFrom(...CODE_PAGES), bytesOf, cuts, (codePage, bytes, splits) => {
      const whole = decodeAt(mixed(codePage), bytes, []);
      const points = [...new Set(splits.map((cut) => cut % (bytes.length + 1)))].sort((a, b) =>
        a - b
      );
      assertEquals(decodeAt(mixed(codePage), bytes, points), whole);
      // U+FFFD stands for bytes that neither encoding reads: none when one of them reads all
      // the bytes, and never more than the bytes at which neither has a character.
      // (A U+FFFD the bytes themselves hold, EF BF BD, is read, not put in for unreadable bytes.)
      const literal = String.fromCharCode(...bytes).split("\xef\xbf\xbd").length - 1;
      const replaced = [...whole].filter((char) => char === "\ufffd").length - literal;
      const strict = text.decode(utf8.encode(iconv.decode(Buffer.from(bytes), codePage)));
      const utf16 = utf16Start(bytes);
      if (utf16) return assertEquals(whole, new TextDecoder(utf16).decode(bytes));
      if (isUtf8(bytes)) assertEquals(whole, text.decode(bytes));
      else if (
        !strict.includes("\ufffd") && !text.decode(bytes).includes("\ufffd\ufffd") &&
        !(codePage === "gb18030" && fourByteAfterUtf8(bytes))
      ) {
        assertEquals(replaced, 0);
      }
      const chars = new CodePageChars(codePage);
      let unreadable = 0;
      for (let at = 0; at < bytes.length; at++) {
        if (bytes[at] < 0x80 || typeof chars.charAt(bytes, at, true) === "object") continue;
        const utf8Lengths = [2, 3, 4].filter((length) => isUtf8(bytes.subarray(at, at + length)));
        if (utf8Lengths.length === 0) unreadable++;
      }
      if (replaced > unreadable) {
        throw new Error(
          `${replaced} U+FFFD for ${JSON.stringify([...bytes])}: ${unreadable} unreadable bytes`,
        );
      }
    }),
    { numRuns: 3000 },
  );
  for (let cut = 0; cut <= 12; cut++) {
    // Every split of bytes that are each other's trap: UTF-8 中 then GBK 中 with no ASCII between.
    const bytes = new Uint8Array([0xe4, 0xb8, 0xad, 0xd6, 0xd0, 0x0a, 0xff, 0x80, 0x0a, 0xe4]);
    assertEquals(
      decodeAt(mixed("cp936"), bytes, [cut % 11]),
      decodeAt(mixed("cp936"), bytes, []),
    );
  }
});

Deno.test("GB18030: a run not yet decided does not end at a digit that a four-byte character holds", () => {
  // E4 80 81 is valid UTF-8 (䀁), but 81 30 81 30 is GB18030's U+0080: read as UTF-8, the
  // run would end at the digit and leave 81 30 broken.
  for (const hex of ["e4 80 81 30 81 30", "c3 a9 e4 80 81 30 81 30 0a"]) {
    const bytes = new Uint8Array(hex.split(" ").map((byte) => parseInt(byte, 16)));
    const expected = iconv.decode(Buffer.from(bytes), "gb18030");
    for (let cut = 0; cut <= bytes.length; cut++) {
      assertEquals(decodeAt(mixed("gb18030"), bytes, [cut]), expected);
    }
  }
  // A digit after a lead byte that starts no four-byte character still ends the run.
  const bytes = utf8.encode("中1中");
  assertEquals(decodeAt(mixed("gb18030"), bytes, []), "中1中");
});

Deno.test("valid UTF-8 passes through byte for byte, whatever the code page", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), cuts, (value, splits) => {
      for (const codePage of CODE_PAGES) {
        assertEquals(decodeSplit(mixed(codePage), utf8.encode(value), splits), value);
      }
    }),
  );
});

Deno.test("code-page text whose runs are no UTF-8 is decoded in the code page", () => {
  const chinese = fc.string({
    unit: fc.constantFrom("中", "文", "输", "入", "找", "不", "到", "指", "定", "a", " ", "\r\n"),
    minLength: 1,
    maxLength: 40,
  }).filter((s) => [...s].some((char) => char.charCodeAt(0) > 0x7f));
  fc.assert(
    fc.property(chinese, cuts, (value, splits) => {
      const bytes = new Uint8Array(iconv.encode(value, "cp936"));
      const runs = nonAsciiRuns(value);
      if (runs.some((run) => isUtf8(new Uint8Array(iconv.encode(run, "cp936"))))) return;
      assertEquals(decodeSplit(mixed("cp936"), bytes, splits), value);
    }),
  );
  for (const [label, value] of [["cp437", "café ü ñ"], ["cp850", "Größe"], ["cp1252", "naïve €"]]) {
    const bytes = new Uint8Array(iconv.encode(value, label));
    assertEquals(decodeSplit(mixed(label), bytes, [1, 3, 5]), value);
  }
});

Deno.test("GBK that looks like UTF-8 for a while is still GBK once its run shows otherwise", () => {
  for (const value of ["系统找不到指定的文件。", "系统系统系统系中", "系统 文件 系统中"]) {
    const bytes = new Uint8Array(iconv.encode(value, "cp936"));
    const expected = value === "系统 文件 系统中" ? "ϵͳ 文件 系统中" : value;
    assertEquals(decodeSplit(mixed("cp936"), bytes, [1, 2, 5]), expected);
  }
  // The rule's honest limit: a run that is valid UTF-8 as a whole ("系" is CF B5) is UTF-8.
  assertEquals(decodeSplit(mixed("cp936"), new Uint8Array([0xcf, 0xb5]), []), "ϵ");
  assertEquals(
    decodeSplit({ kind: "fixed", label: "cp936" }, new Uint8Array([0xcf, 0xb5]), []),
    "系",
  );
});

Deno.test("Shift-JIS trail bytes that are ASCII (表 is 95 5C) stay with their character", () => {
  const value = "表示 ソフト 能力\\path";
  const bytes = new Uint8Array(iconv.encode(value, "cp932"));
  for (let cut = 0; cut <= bytes.length; cut++) {
    assertEquals(decodeAt(mixed("cp932"), bytes, [cut]), value);
  }
});

Deno.test("UTF-16 output: with a byte order mark, or NUL-interleaved, from the stream's start", () => {
  const le = (value: string) => new Uint8Array(iconv.encode(value, "utf-16le"));
  const bom = concatBytes([new Uint8Array([0xff, 0xfe]), le("中文 ok\r\n")]);
  const be = concatBytes([
    new Uint8Array([0xfe, 0xff]),
    new Uint8Array(iconv.encode("é", "utf-16be")),
  ]);
  const bare = le("Caption\r\nMicrosoft Windows 中文\r\n");
  for (
    const [bytes, expected] of [[bom, "中文 ok\r\n"], [be, "é"], [
      bare,
      "Caption\r\nMicrosoft Windows 中文\r\n",
    ]] as const
  ) {
    for (let cut = 0; cut <= bytes.length; cut++) {
      assertEquals(decodeAt(mixed("cp437"), bytes, [cut]), expected, `cut at ${cut}`);
    }
  }
  // Not UTF-16: a NUL where text goes on, and FF FE later in the stream.
  assertEquals(decodeAt(mixed("cp437"), new Uint8Array([0x61, 0x00, 0x62, 0x63]), [1, 2]), "a\0bc");
  assertEquals(decodeAt(mixed("cp437"), new Uint8Array([0x61, 0xff, 0xfe]), []), "a\u00a0■");
  assertEquals(decodeAt({ kind: "fixed", label: "utf-16le" }, le("x中"), [1]), "x中");
});

Deno.test("the issue's examples: UTF-8 writers and GBK files both come out right", () => {
  const writer = "中文 ü é 😀";
  assertEquals(decodeSplit(mixed("cp936"), utf8.encode(writer), []), writer);
  assertEquals(decodeSplit(mixed("cp437"), utf8.encode(writer), []), writer);
  const gbk = new Uint8Array(iconv.encode("GBK文本", "cp936"));
  assertEquals(decodeSplit(mixed("cp936"), gbk, [4]), "GBK文本");
});

Deno.test("a multi-byte character as the very last bytes is flushed at the end", () => {
  const gbk = new Uint8Array(iconv.encode("end 中", "cp936"));
  const decoder = createDecoder({ kind: "fixed", label: "cp936" });
  assertEquals(text.decode(decoder.push(gbk.subarray(0, gbk.length - 1))), "end ");
  assertEquals(text.decode(decoder.end()), "\ufffd"); // a lead byte alone at the end
  assertEquals(decodeSplit({ kind: "fixed", label: "cp936" }, gbk, [gbk.length - 1]), "end 中");
  for (const codePage of ["cp936", "cp437"]) {
    assertEquals(decodeSplit(mixed("cp936"), gbk, [gbk.length - 1]), "end 中");
    const utf = utf8.encode("end 中");
    assertEquals(decodeSplit(mixed(codePage), utf, [utf.length - 1]), "end 中");
  }
  // An incomplete UTF-8 sequence at the end reads in the code page where it can (E4 B8 is GBK).
  assertEquals(decodeSplit(mixed("cp936"), new Uint8Array([0x61, 0xe4, 0xb8]), []), "a涓");
});

Deno.test("ASCII passes at once; a run is held until its end or its evidence", () => {
  const decoder = createDecoder(mixed("cp936"));
  assertEquals(text.decode(decoder.push(utf8.encode("plain ascii\n"))), "plain ascii\n");
  assertEquals(decoder.push(utf8.encode("é")).length, 0); // held: one 2-byte sequence
  assertEquals(decoder.push(utf8.encode("中")).length, 0); // 1 + 4 points
  assertEquals(text.decode(decoder.push(utf8.encode("文"))), "é中文"); // 1 + 4 + 4 points
  assertEquals(text.decode(decoder.push(utf8.encode("字"))), "字"); // the run is UTF-8 now
  assertEquals(text.decode(decoder.push(new Uint8Array([0xd6]))), ""); // a new run, held
  assertEquals(text.decode(decoder.push(new Uint8Array([0xd0]))), "中"); // GBK: no UTF-8 there
  assertEquals(text.decode(decoder.push(utf8.encode(" x"))), " x");
  // A run ended by ASCII is decided then (this one after UTF-8: see rule 4).
  assertEquals(text.decode(decoder.push(utf8.encode("中 ü"))), "中 ");
  assertEquals(text.decode(decoder.push(utf8.encode("\n"))), "ü\n");
});

Deno.test("a run that reads the same both ways on a double-byte code page follows the last that did not", () => {
  const gbk = (value: string) => new Uint8Array(iconv.encode(value, "cp936"));
  // 系统 is CF B5 CD B3, valid UTF-8 (ϵͳ); 文件 is no UTF-8.
  const cases: [Uint8Array[], string][] = [
    // A legacy program's line: once one run has shown it, the ambiguous ones after it are GBK.
    [[gbk("文件 系统 系\r\n")], "文件 系统 系\r\n"],
    // Before anything showed, it reads as UTF-8: the honest limit.
    [[gbk("系统 文件\r\n")], "ϵͳ 文件\r\n"],
    // A UTF-8 writer after the legacy one: its 3-byte characters show it, then ü is UTF-8.
    [[gbk("文件\r\n"), utf8.encode("deno 中文 ü\r\n")], "文件\r\ndeno 中文 ü\r\n"],
    // The last run of the stream, at its end.
    [[gbk("文件 系统")], "文件 系统"],
    // Many pairs in one run after GBK: not held on to the end of the run, and GBK all the same.
    [[gbk("文件 " + "系统".repeat(20))], "文件 " + "系统".repeat(20)],
  ];
  for (const [parts, expected] of cases) {
    const bytes = concatBytes(parts);
    for (let cut = 0; cut <= bytes.length; cut++) {
      assertEquals(decodeAt(mixed("cp936"), bytes, [cut]), expected, `cut at ${cut}`);
    }
  }
  // Not on a single-byte code page: C3 BC there is ü in UTF-8 (Ã¼ would be mojibake).
  const latin = concatBytes([new Uint8Array(iconv.encode("café ", "cp437")), utf8.encode("ü")]);
  assertEquals(decodeAt(mixed("cp437"), latin, []), "café ü");
});

Deno.test("a lone surrogate half is never emitted between chunks (GB18030 astral characters)", () => {
  const bytes = new Uint8Array(iconv.encode("a\u{20000}b", "gb18030"));
  for (let cut = 0; cut <= bytes.length; cut++) {
    const decoder = createDecoder({ kind: "fixed", label: "gb18030" });
    const first = decoder.push(bytes.subarray(0, cut));
    new TextDecoder("utf-8", { fatal: true }).decode(first); // throws on an encoded lone surrogate
    const rest = text.decode(decoder.push(bytes.subarray(cut))) + text.decode(decoder.end());
    assertEquals(text.decode(first) + rest, "a\u{20000}b");
  }
});

Deno.test("encoding arguments: names, numbers, oem and ansi", () => {
  const system = { oem: 437, ansi: 1252 };
  assertEquals(parseEncoding("UTF-8", system), { label: "utf-8", codePage: 65001 });
  assertEquals(parseEncoding("65001", system), { label: "utf-8", codePage: 65001 });
  assertEquals(parseEncoding("oem", system), { label: "cp437", codePage: 437 });
  assertEquals(parseEncoding("ansi", system), { label: "cp1252", codePage: 1252 });
  assertEquals(parseEncoding("936", system), { label: "cp936", codePage: 936 });
  assertEquals(parseEncoding("gbk", system), { label: "gbk", codePage: 936 });
  assertEquals(parseEncoding("windows-1251", system).codePage, 1251);
  assertEquals(parseEncoding("shift_jis", system).codePage, 932);
  assertEquals(parseEncoding("cp850", undefined), { label: "cp850", codePage: 850 });
  throws(() => parseEncoding("oem", undefined), EncodingError);
  throws(() => parseEncoding("base64", system), /unknown encoding 'base64'/);
  throws(() => parseEncoding("99999", system), /code page 99999/);
  assertEquals(codePageLabel(54936), "gb18030");
});

Deno.test("input with a lone surrogate is refused at the first one, in every encoding, never sent as U+FFFD", () => {
  // UTF-16 code units, surrogate halves and whole pairs weighted in.
  const unit = fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
    fc.constantFrom("😀", "a", "中", "\ud83d\ude00"),
  );
  fc.assert(
    fc.property(
      fc.array(unit, { maxLength: 30 }).map((units) => units.join("")),
      fc.constantFrom("utf-8", ...CODE_PAGES),
      (value, label) => {
        const reason = malformedText(value);
        assertEquals(reason === undefined, value.isWellFormed());
        if (reason === undefined) return;
        const index = Number(reason.match(/ at index (\d+) /)![1]);
        // The one it names is a lone half, and none stands before it.
        ok(value.slice(0, index).isWellFormed() && !value.slice(0, index + 2).isWellFormed());
        throws(() => encodeText(value, label), (error: Error) => error.message === reason);
      },
    ),
  );
  throws(
    () => encodeText("ok\ud800", "utf-8"),
    /^EncodingError: a lone surrogate \(U\+D800\) at index 2 \(UTF-16 code units\)/,
  );
});

Deno.test("input is encoded in the program's code page, or refused when it cannot be", () => {
  assertEquals([...encodeText("中文输入", "cp936")], [
    0xd6,
    0xd0,
    0xce,
    0xc4,
    0xca,
    0xe4,
    0xc8,
    0xeb,
  ]);
  assertEquals([...encodeText("café", "cp437")], [0x63, 0x61, 0x66, 0x82]);
  assertEquals(encodeText("中", "utf-8"), utf8.encode("中"));
  throws(() => encodeText("ok 中", "cp437"), /'中' cannot be written in cp437/);
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", maxLength: 20 }),
      fc.constantFrom(...CODE_PAGES),
      (value, label) => {
        let bytes: Uint8Array;
        try {
          bytes = encodeText(value, label);
        } catch (error) {
          if (error instanceof EncodingError) return;
          throw error;
        }
        assertEquals(iconv.decode(Buffer.from(bytes), label), value);
      },
    ),
  );
});
