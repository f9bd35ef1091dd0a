/**
 * The stream decoder: the same text whatever the chunk splits, nothing dropped at the end,
 * detection that is right for real UTF-8 and real code-page text, and `encoding` arguments.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import fc from "fast-check";
import iconv from "iconv-lite";
import { Buffer } from "node:buffer";
import {
  codePageLabel,
  createDecoder,
  encodeText,
  EncodingError,
  HOLD_LIMIT,
  loadCodePages,
  parseEncoding,
  type StreamEncoding,
} from "../../src/engine/output/decode.ts";

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

Deno.test("detection gives the same text whatever the chunk splits", () => {
  const mixed = fc.oneof(
    hostileBytes,
    fc.string({ unit: "grapheme", maxLength: 30 }).map((s) => utf8.encode(s)),
    fc.string({ unit: fc.constantFrom("中", "文", "a", " ", "é", "\n") }).map((s) =>
      new Uint8Array(iconv.encode(s, "cp936"))
    ),
  );
  fc.assert(
    fc.property(fc.constantFrom(...CODE_PAGES), mixed, cuts, (fallback, bytes, splits) => {
      const encoding = { kind: "detect", fallback } as const;
      assertEquals(decodeSplit(encoding, bytes, splits), decodeSplit(encoding, bytes, []));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("valid UTF-8 is detected as UTF-8 and passes through byte for byte", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), cuts, (value, splits) => {
      for (const fallback of CODE_PAGES) {
        assertEquals(decodeSplit({ kind: "detect", fallback }, utf8.encode(value), splits), value);
      }
    }),
  );
});

Deno.test("code-page text that is not UTF-8 is decoded in the code page", () => {
  const chinese = fc.string({
    // (Not 系 CF B5 or 统 CD B3: valid UTF-8 too; see the next test.)
    unit: fc.constantFrom("中", "文", "输", "入", "找", "不", "到", "指", "定", "a", " ", "\r\n"),
    minLength: 1,
    maxLength: 40,
  }).filter((s) => [...s].some((char) => char.charCodeAt(0) > 0x7f));
  fc.assert(
    fc.property(chinese, cuts, (value, splits) => {
      const bytes = new Uint8Array(iconv.encode(value, "cp936"));
      if (isUtf8(bytes)) return; // valid UTF-8 too ("系" is CF B5): UTF-8 by rights
      assertEquals(decodeSplit({ kind: "detect", fallback: "cp936" }, bytes, splits), value);
    }),
  );
  for (const [label, value] of [["cp437", "café ü ñ"], ["cp850", "Größe"], ["cp1252", "naïve €"]]) {
    const bytes = new Uint8Array(iconv.encode(value, label));
    assertEquals(decodeSplit({ kind: "detect", fallback: label }, bytes, [1, 3, 5]), value);
  }
});

Deno.test("GBK that looks like UTF-8 for a while is still GBK once it shows otherwise", () => {
  const fallback = { kind: "detect", fallback: "cp936" } as const;
  for (const value of ["系统找不到指定的文件。", "系统系统系统系中", "系统 系统 系统 文"]) {
    const bytes = new Uint8Array(iconv.encode(value, "cp936"));
    assertEquals(decodeSplit(fallback, bytes, [1, 2, 5]), value);
  }
  // The rule's honest limit: "系" alone (CF B5) is valid UTF-8, and valid UTF-8 stays UTF-8.
  assertEquals(decodeSplit(fallback, new Uint8Array([0xcf, 0xb5]), []), "ϵ");
  assertEquals(
    decodeSplit({ kind: "fixed", label: "cp936" }, new Uint8Array([0xcf, 0xb5]), []),
    "系",
  );
});

Deno.test("the issue's examples: UTF-8 writers and GBK files both come out right", () => {
  const writer = "中文 ü é 😀";
  assertEquals(decodeSplit({ kind: "detect", fallback: "cp936" }, utf8.encode(writer), []), writer);
  assertEquals(decodeSplit({ kind: "detect", fallback: "cp437" }, utf8.encode(writer), []), writer);
  const gbk = new Uint8Array(iconv.encode("GBK文本", "cp936"));
  assertEquals(decodeSplit({ kind: "detect", fallback: "cp936" }, gbk, [4]), "GBK文本");
});

Deno.test("a multi-byte character as the very last bytes is flushed at the end", () => {
  for (const fallback of ["cp936", "cp437"]) {
    const gbk = new Uint8Array(iconv.encode("end 中", "cp936"));
    const decoder = createDecoder({ kind: "fixed", label: "cp936" });
    assertEquals(text.decode(decoder.push(gbk.subarray(0, gbk.length - 1))), "end ");
    assertEquals(text.decode(decoder.end()), "\ufffd"); // a lead byte alone at the end
    assertEquals(decodeSplit({ kind: "fixed", label: "cp936" }, gbk, [gbk.length - 1]), "end 中");
    // Detected: the last character arrives whole, and is not held back forever.
    const utf = utf8.encode("end 中");
    assertEquals(decodeSplit({ kind: "detect", fallback }, utf, [utf.length - 1]), "end 中");
  }
});

Deno.test("ASCII passes at once; a held stream is released by evidence or by the hold limit", () => {
  const decoder = createDecoder({ kind: "detect", fallback: "cp936" });
  assertEquals(text.decode(decoder.push(utf8.encode("plain ascii\n"))), "plain ascii\n");
  assertEquals(decoder.decided, undefined);
  assertEquals(decoder.push(utf8.encode("é")).length, 0); // held: one 2-byte sequence
  assertEquals(decoder.push(utf8.encode("中")).length, 0); // 1 + 4 points
  assertEquals(text.decode(decoder.push(utf8.encode("文"))), "é中文"); // 1 + 4 + 4 points
  assertEquals(decoder.decided, "utf-8");
  const sparse = createDecoder({ kind: "detect", fallback: "cp1252" });
  assertEquals(sparse.push(utf8.encode("é" + "x".repeat(HOLD_LIMIT - 3))).length, 0);
  assertEquals(text.decode(sparse.push(utf8.encode("x"))), "é" + "x".repeat(HOLD_LIMIT - 2));
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
