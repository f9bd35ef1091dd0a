/**
 * Long control strings found as output arrives (src/engine/output/control_strings.ts): against
 * a byte-at-a-time model of where clean.ts begins and ends them, whatever the chunks; and
 * through an output buffer, a read cut anywhere inside one never shows its payload.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { LongControlStrings } from "../../../src/engine/output/control_strings.ts";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";
import { cleanTerminalText } from "../../../src/engine/output/clean.ts";
import { StreamOutput } from "../../../src/engine/output/stream.ts";

const ESC = 0x1b, C2 = 0xc2;
const OPENERS = [0x5d, 0x50, 0x58, 0x5e, 0x5f], C1_OPENERS = [0x9d, 0x90, 0x98, 0x9e, 0x9f];

/** Where each byte's long string ends (Infinity: open at the end), by the model. */
function model(bytes: Uint8Array, minLength: number): Map<number, number> {
  const inside = new Map<number, number>();
  const spans: [number, number][] = [];
  let open: { start: number; bel: boolean; csi: boolean } | undefined;
  for (let i = 0; i < bytes.length;) {
    const [b, next] = [bytes[i], bytes[i + 1]];
    if (!open) {
      if (
        (b === ESC && (OPENERS.includes(next) || next === 0x5b)) ||
        (b === C2 && (C1_OPENERS.includes(next) || next === 0x9b))
      ) {
        open = {
          start: i,
          bel: next === 0x5d || next === 0x9d,
          csi: next === 0x5b || next === 0x9b,
        };
        i += 2;
      } else i++;
      continue;
    }
    if (open.csi) {
      // Parameters, intermediates and C0 controls but ESC, CAN and SUB go on; a final byte
      // ends it and belongs to it; anything else ends it and is looked at again.
      if ((b >= 0x20 && b <= 0x3f) || (b < 0x20 && b !== ESC && b !== 0x18 && b !== 0x1a)) {
        i++;
        continue;
      }
      const end = b >= 0x40 && b <= 0x7e ? i + 1 : i;
      if (end - open.start > minLength) spans.push([open.start, end]);
      open = undefined;
      i = end;
      continue;
    }
    const ends = b === ESC || b === 0x0a || b === 0x18 || b === 0x1a ||
      (open.bel && b === 0x07) || (b === C2 && next >= 0x80 && next <= 0x9f);
    if (ends) {
      if (i - open.start > minLength) spans.push([open.start, i]);
      open = undefined; // the terminator is looked at again, outside
    } else i++;
  }
  if (open && bytes.length - open.start > minLength) spans.push([open.start, Infinity]);
  for (const [start, end] of spans) {
    for (let at = start + 1; at < Math.min(end, bytes.length + 1); at++) inside.set(at, end);
  }
  return inside;
}

const byte = (...values: number[]) => fc.constantFrom(...values.map((v) => [v]));
/** Streams built of strings' parts: openers, payload runs, every terminator, stray bytes. */
const hostile = fc.array(
  fc.oneof(
    fc.constantFrom(
      ...[...OPENERS, 0x5b].map((b) => [ESC, b]),
      ...[...C1_OPENERS, 0x9b].map((b) => [C2, b]),
    ),
    fc.integer({ min: 0, max: 30 }).map((n) => Array.from({ length: n }, (_, i) => 0x30 + i % 12)),
    fc.integer({ min: 0, max: 40 }).map((n) => Array(n).fill(0x61)),
    fc.constantFrom([ESC, 0x5c], [0x07], [0x0a], [0x18], [0x1a], [C2, 0x9c], [C2, 0x80]),
    byte(0x61, 0x5c, ESC, C2, 0x9d, 0xa0, 0xe4, 0x07, 0x5d, 0x6d, 0x7f, 0x20, 0x09, 0x5b),
  ),
  { maxLength: 40 },
).map((parts) => new Uint8Array(parts.flat()));

Deno.test("long control strings: found as the model finds them, however the stream is cut", () => {
  fc.assert(
    fc.property(
      hostile,
      fc.oneof(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
        fc.constant("every byte" as const),
      ),
      fc.integer({ min: 0, max: 12 }),
      (bytes, cuts, minLength) => {
        const strings = new LongControlStrings(minLength);
        const at = cuts === "every byte"
          ? Array.from({ length: bytes.length + 1 }, (_, i) => i)
          : [...cuts.map((f) => Math.floor(f * bytes.length)), bytes.length].sort((a, b) => a - b);
        let start = 0;
        for (const cut of at) {
          strings.scan(bytes.subarray(start, cut), start);
          start = cut;
        }
        const expected = model(bytes, minLength);
        for (let offset = 0; offset <= bytes.length; offset++) {
          assertEquals(strings.endOf(offset), expected.get(offset), `offset ${offset}`);
        }
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("a read cut anywhere inside a long OSC shows none of its payload", () => {
  // A clipboard copy (OSC 52) of 60 KB between two lines: cut inside it, reads showed 8-16 KB
  // of its base64 as text.
  const payload = "QUJDREVGR0g".repeat(6000);
  const text = `before\n\x1b]52;c;${payload}\x07after\n`;
  const buffer = new OutputBuffer();
  const bytes = new TextEncoder().encode(text);
  for (let at = 0; at < bytes.length; at += 4093) buffer.append(bytes.subarray(at, at + 4093));
  for (const cut of [20, 5000, 30_000, 60_000]) {
    const from = buffer.pastSequence(cut);
    const shown = cleanTerminalText(buffer.readText(from, buffer.end).text);
    ok(!shown.includes("QUJD"), `cut at ${cut}: ${shown.slice(0, 80)}`);
    assertEquals(shown, "after\n");
  }
  // Trimmed inside it, the buffer keeps none of it either.
  const small = new OutputBuffer({ maxBytes: 30_000 });
  small.append(bytes);
  assertEquals(cleanTerminalText(small.readText(small.start, small.end).text), "after\n");
});

Deno.test("a read cut inside a CSI sequence of thousands of parameters shows none of them", () => {
  const text = `before\n\x1b[${"1;".repeat(6000)}mafter\n`;
  const buffer = new OutputBuffer();
  buffer.append(new TextEncoder().encode(text));
  for (const cut of [10, 5000, 11_000]) {
    const shown = cleanTerminalText(buffer.readText(buffer.pastSequence(cut), buffer.end).text);
    assertEquals(shown, "after\n", `cut at ${cut}`);
  }
});

Deno.test("pages read on from offsets never start or stop inside a long string", () => {
  // query_command_status from offset 0 stopped at 16384, inside a 60 KB OSC 52, and the next
  // page from there showed its base64; so did any offset given inside it.
  const output = new StreamOutput({ maxBytes: 1 << 20 });
  const text = `aa-visible \x1b]52;c;${"QUJD".repeat(15_000)}\x07 bb-visible\n`;
  output.append(new TextEncoder().encode(text));
  output.finish();
  let shown = "";
  for (let offset = 0, pages = 0; offset < output.end && pages < 20; pages++) {
    const page = output.readFrom(offset, 16_384, { budget: 16_384, final: true });
    shown += page.text;
    ok(page.end > offset, `no progress at ${offset}`);
    offset = page.end;
  }
  assertEquals(shown, "aa-visible  bb-visible\n");
  for (const offset of [20, 30_000, 59_000]) {
    const page = output.readFrom(offset, 2000, { budget: 2000, final: true });
    ok(!page.text.includes("QUJD"), `from ${offset}: ${page.text.slice(0, 60)}`);
  }
});

Deno.test("a page read from an offset inside a short sequence starts after it; raw, at the offset", () => {
  // query_command_status with stdout_offset inside ESC[31m showed "[31mred", "31mred", "1mred"
  // (found by an attack helper).
  const output = new StreamOutput({ maxBytes: 1 << 20 });
  const text = "AAAA\x1b[31mred\x1b[0m\n\x1b]0;title\x07tail\n";
  const bytes = new TextEncoder().encode(text);
  output.append(bytes);
  output.finish();
  for (let offset = 0; offset < bytes.length; offset++) {
    const page = output.readFrom(offset, 1000, { budget: 1000, final: true });
    // What it shows is a suffix of the whole text's cleaned form: never a sequence's rest.
    ok("AAAAred\ntail\n".endsWith(page.text), `from ${offset}: ${JSON.stringify(page.text)}`);
    const raw = output.readFrom(offset, 1000, { budget: 1000, final: true, raw: true });
    assertEquals(raw.text, text.slice(offset), `raw from ${offset}`);
  }
});
