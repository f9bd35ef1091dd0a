import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { indexOfEither, seekLineFeed } from "../src/bytes.ts";
import { fc } from "./helpers/arbitraries.ts";
import { generatedByteScans } from "../scripts/build_wasm.ts";

/** Bytes where line feeds, their neighbours in value (0x0B, 0x09, 0x8A) and 0x00/0xFF abound. */
const hostileBytes = fc.array(
  fc.oneof(
    fc.constantFrom(10, 11, 9, 0x8a, 0, 0xff, 0x7f, 0x80, 0x8b),
    fc.integer({ min: 0, max: 255 }),
  ),
  { maxLength: 300 },
);

/** What seekLineFeed must answer, one byte at a time. */
function naive(values: number[], from: number, to: number, limit: number): number {
  let count = 0;
  for (let index = from; index < to; index++) {
    if (values[index] === 10 && ++count === limit) return index;
  }
  return -1 - count;
}

Deno.test("seekLineFeed finds the limit-th line feed or counts them, at any alignment and range", () => {
  fc.assert(
    fc.property(
      hostileBytes,
      fc.nat(7),
      fc.nat(7),
      fc.tuple(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
      ),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (values, before, after, [a, b], which) => {
        // A view into a larger buffer of line feeds: its ends fall anywhere within a word.
        const whole = new Uint8Array(before + values.length + after).fill(10);
        whole.set(values, before);
        const data = whole.subarray(before, before + values.length);
        const [from, to] = [a, b].map((f) => Math.floor(f * values.length)).sort((x, y) => x - y);
        // Any of the line feeds in range, or one more than there are.
        const inRange = values.slice(from, to).filter((value) => value === 10).length;
        const limit = 1 + Math.floor(which * (inRange + 1));
        assertEquals(seekLineFeed(data, from, to, limit), naive(values, from, to, limit));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("seekLineFeed on nothing, on only line feeds, and with line feeds in every byte of a word", () => {
  assertEquals(seekLineFeed(new Uint8Array(0), 0, 0, 1), -1);
  const feeds = new Uint8Array(17).fill(10).subarray(1);
  assertEquals(seekLineFeed(feeds, 0, 16, 16), 15);
  assertEquals(seekLineFeed(feeds, 0, 16, 17), -17);
  assertEquals(seekLineFeed(feeds, 3, 11, 5), 7);
});

Deno.test("seekLineFeed over long ranges (window after window) and with limits no count equals", () => {
  fc.assert(
    fc.property(
      // Long runs of one byte, line feeds among them: ranges cross the 64 KiB windows.
      fc.array(fc.tuple(fc.constantFrom(10, 97, 0x8a), fc.integer({ min: 1, max: 40_000 })), {
        maxLength: 12,
      }),
      fc.tuple(fc.nat(), fc.nat()),
      fc.oneof(
        fc.integer({ min: 1, max: 200_000 }),
        fc.constantFrom(0, -1, 0.5, 2.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 32 + 1),
      ),
      (runs, [a, b], limit) => {
        const values = runs.flatMap(([value, length]) => new Array(length).fill(value));
        const [from, to] = [a % (values.length + 1), b % (values.length + 1)].sort((x, y) => x - y);
        assertEquals(
          seekLineFeed(Uint8Array.from(values), from, to, limit),
          naive(values, from, to, limit),
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("src/generated/byte_scans.ts is what src/byte_scans.wat compiles to", async () => {
  // After a change to the .wat file: deno task build:wasm, and commit both.
  assertEquals(
    Deno.readTextFileSync(new URL("../src/generated/byte_scans.ts", import.meta.url)),
    await generatedByteScans(),
  );
});

Deno.test("indexOfEither finds the first of two byte values as a byte-at-a-time search does", () => {
  // Ranges from a few bytes to past several windows, the values sparse or dense, at any offset.
  const data = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.tuple(fc.integer({ min: 0, max: 200_000 }), fc.nat(255), fc.nat(255), fc.nat(1000)).map(
      ([length, fill, other, every]) => {
        const bytes = new Uint8Array(length).fill(fill);
        if (every > 0) { for (let i = every; i < length; i += every) bytes[i] = other; }
        return bytes;
      },
    ),
  );
  fc.assert(
    fc.property(
      data,
      fc.nat(255),
      fc.nat(255),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (bytes, a, b, f, t) => {
        const from = Math.floor(f * bytes.length);
        const to = from + Math.floor(t * (bytes.length - from));
        let expected = -1;
        for (let i = from; i < to; i++) {
          if (bytes[i] === a || bytes[i] === b) {
            expected = i;
            break;
          }
        }
        assertEquals(indexOfEither(bytes, a, b, from, to), expected);
      },
    ),
    { numRuns: 300 },
  );
});
