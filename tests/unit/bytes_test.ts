import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { forEachLineFeed } from "../../src/bytes.ts";
import { fc } from "../helpers/arbitraries.ts";

/** Bytes where line feeds, their neighbours in value (0x0B, 0x09, 0x8A) and 0x00/0xFF abound. */
const hostileBytes = fc.array(
  fc.oneof(
    fc.constantFrom(10, 11, 9, 0x8a, 0, 0xff),
    fc.integer({ min: 0, max: 255 }),
  ),
  { maxLength: 300 },
);

Deno.test("forEachLineFeed finds exactly the line feeds, in order, at any alignment", () => {
  fc.assert(
    fc.property(hostileBytes, fc.nat(7), fc.nat(7), (values, before, after) => {
      // A view into a larger buffer: its start and end fall anywhere within a word.
      const whole = new Uint8Array(before + values.length + after).fill(10);
      whole.set(values, before);
      const data = whole.subarray(before, before + values.length);
      const found: number[] = [];
      forEachLineFeed(data, (index) => found.push(index));
      assertEquals(found, values.flatMap((value, index) => value === 10 ? [index] : []));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("forEachLineFeed on nothing and on a buffer of only line feeds", () => {
  const none: number[] = [];
  forEachLineFeed(new Uint8Array(0), (index) => none.push(index));
  assertEquals(none.length, 0);
  const found: number[] = [];
  forEachLineFeed(new Uint8Array(9).fill(10).subarray(1), (index) => found.push(index));
  assertEquals(found, [0, 1, 2, 3, 4, 5, 6, 7]);
});
