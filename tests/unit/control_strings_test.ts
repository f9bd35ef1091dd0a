/**
 * Long control strings found as output arrives (src/engine/output/control_strings.ts): against
 * a byte-at-a-time model of where clean.ts begins and ends them, whatever the chunks; and
 * through an output buffer, a read cut anywhere inside one never shows its payload.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { LongControlStrings } from "../../src/engine/output/control_strings.ts";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";

const ESC = 0x1b, C2 = 0xc2;
const OPENERS = [0x5d, 0x50, 0x58, 0x5e, 0x5f], C1_OPENERS = [0x9d, 0x90, 0x98, 0x9e, 0x9f];

/** Where each byte's long string ends (Infinity: open at the end), by the model. */
function model(bytes: Uint8Array, minLength: number): Map<number, number> {
  const inside = new Map<number, number>();
  const spans: [number, number][] = [];
  let open: { start: number; bel: boolean } | undefined;
  for (let i = 0; i < bytes.length;) {
    const [b, next] = [bytes[i], bytes[i + 1]];
    if (!open) {
      if (
        (b === ESC && OPENERS.includes(next)) || (b === C2 && C1_OPENERS.includes(next))
      ) {
        open = { start: i, bel: next === 0x5d || next === 0x9d };
        i += 2;
      } else i++;
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
    fc.constantFrom(...OPENERS.map((b) => [ESC, b]), ...C1_OPENERS.map((b) => [C2, b])),
    fc.integer({ min: 0, max: 40 }).map((n) => Array(n).fill(0x61)),
    fc.constantFrom([ESC, 0x5c], [0x07], [0x0a], [0x18], [0x1a], [C2, 0x9c], [C2, 0x80]),
    byte(0x61, 0x5c, ESC, C2, 0x9d, 0xa0, 0xe4, 0x07, 0x5d),
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
