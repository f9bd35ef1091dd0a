import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { LineIndex } from "../../src/engine/output/line_index.ts";
import { fc } from "../helpers/arbitraries.ts";

/** Bytes of lines of these lengths (line feeds not counted), with the line starts they make. */
function linesOf(lengths: number[]): { bytes: Uint8Array; starts: number[] } {
  const bytes = new Uint8Array(lengths.reduce((sum, length) => sum + length + 1, 0)).fill(0x78);
  const starts: number[] = [];
  let at = 0;
  for (const length of lengths) {
    starts.push(at);
    at += length;
    bytes[at++] = 10;
  }
  return { bytes, starts };
}

/** An index over `bytes` (held whole) fed `starts`, as the buffer feeds it. */
function indexOver(bytes: Uint8Array, starts: number[]): LineIndex {
  const index = new LineIndex(function* (from, to) {
    yield bytes.subarray(from, to);
  });
  for (const start of starts) index.add(start);
  return index;
}

/** The line holding `offset`, by the definition: the last start at or before it. */
function lineHolding(starts: number[], offset: number, first: number): number {
  return Math.max(first, starts.findLastIndex((start) => start <= offset));
}

// Hostile line lengths: bare line feeds in floods, lines just under, at and over the index's
// 4 KiB stride (where a start is and is not a checkpoint), and ordinary ones.
const length = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 4090, max: 4100 }),
  fc.integer({ min: 0, max: 200 }),
  fc.integer({ min: 4101, max: 9000 }),
);
const lengths = fc.array(fc.oneof(length, fc.constant(0)), { minLength: 1, maxLength: 700 });

Deno.test("every line's start and every offset's line are the naive index's, before and after drops", () => {
  fc.assert(
    fc.property(lengths, fc.array(fc.double({ min: 0, max: 1, noNaN: true })), (lengths, cuts) => {
      // The last line feed starts a line only once a byte follows it, as in the buffer.
      const { bytes, starts } = linesOf(lengths);
      const index = indexOver(bytes, starts);
      assertEquals(index.count, starts.length);
      let kept = 0;
      for (const cut of [0, ...cuts.sort()]) {
        const start = Math.floor(kept + cut * (bytes.length - kept));
        index.dropBefore(start);
        kept = start;
        const first = lineHolding(starts, start, 0);
        assertEquals(index.first, first);
        for (let line = first; line < starts.length; line++) {
          assertEquals(index.start(line), Math.max(start, starts[line]), `start of ${line}`);
          for (const offset of [starts[line] - 1, starts[line], starts[line] + 1]) {
            if (offset < start || offset > bytes.length) continue;
            assertEquals(index.lineAt(offset), lineHolding(starts, offset, first), `at ${offset}`);
          }
        }
      }
    }),
    { numRuns: 40 },
  );
});

Deno.test("a flood of line feeds: a million lines found, each look reading at most 4 KiB", () => {
  const { bytes, starts } = linesOf(new Array(1 << 20).fill(0));
  let read = 0;
  const index = new LineIndex(function* (from, to) {
    read = Math.max(read, to - from);
    yield bytes.subarray(from, to);
  });
  for (const start of starts) index.add(start);
  assertEquals(index.start(starts.length - 1), starts.length - 1);
  assertEquals(index.lineAt(bytes.length - 1), starts.length - 1);
  ok(read <= 4096, `one look read ${read} bytes`);
});
