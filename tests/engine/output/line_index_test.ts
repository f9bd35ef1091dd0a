import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { LineIndex } from "../../../src/engine/output/line_index.ts";
import { fc } from "../../helpers/arbitraries.ts";

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

/**
 * An index over `bytes` (held whole), fed them as the buffer does: in chunks, here cut at
 * `cuts` (fractions of the whole).
 */
function indexOver(bytes: Uint8Array, cuts: number[] = []): LineIndex {
  const index = new LineIndex(function* (from, to) {
    yield bytes.subarray(from, to);
  });
  const ends = [...cuts.map((cut) => Math.floor(cut * bytes.length)).sort((a, b) => a - b)];
  let at = 0;
  for (const end of [...ends, bytes.length]) {
    index.append(bytes.subarray(at, end), at);
    at = Math.max(at, end);
  }
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
/** Where the bytes are cut into appended chunks, or dropped up to (fractions of the whole). */
const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 });

Deno.test("every line's start and every offset's line are the naive index's, before and after drops", () => {
  fc.assert(
    fc.property(lengths, fractions, fractions, (lengths, chunks, cuts) => {
      // The last line feed starts a line only once a byte follows it, as in the buffer.
      const { bytes, starts } = linesOf(lengths);
      const index = indexOver(bytes, chunks);
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

Deno.test("a flood of line feeds: a million lines found, each look reading at most 4 KiB and 1,024 lines", () => {
  const { bytes, starts } = linesOf(new Array(1 << 20).fill(0));
  let read = 0;
  const index = new LineIndex(function* (from, to) {
    read = Math.max(read, to - from);
    yield bytes.subarray(from, to);
  });
  index.append(bytes, 0);
  assertEquals(index.start(starts.length - 1), starts.length - 1);
  assertEquals(index.lineAt(bytes.length - 1), starts.length - 1);
  ok(read <= 4096, `one look read ${read} bytes`);
  // A line a byte: finding an offset's line counts at most 1,024 line feeds (a checkpoint
  // every 1,024 lines), so reads at most that many bytes.
  read = 0;
  for (let offset = 0; offset < bytes.length; offset += 997) {
    assertEquals(index.lineAt(offset), offset);
  }
  ok(read <= 1024, `one look counted through ${read} line feeds`);
});

Deno.test("however the bytes are cut into appends, the index keeps the same checkpoints", () => {
  fc.assert(
    fc.property(lengths, fractions, (lengths, chunks) => {
      const { bytes, starts } = linesOf(lengths);
      /** Where each line's look-up starts reading: its checkpoint. */
      const lookups = (cuts: number[]) => {
        let from = -1;
        const index = new LineIndex(function* (start, to) {
          from = start;
          yield bytes.subarray(start, to);
        });
        const ends = cuts.map((cut) => Math.floor(cut * bytes.length)).sort((a, b) => a - b);
        let at = 0;
        for (const end of [...ends, bytes.length]) {
          index.append(bytes.subarray(at, end), at);
          at = Math.max(at, end);
        }
        return starts.map((_, line) => (from = -1, index.start(line), from));
      };
      assertEquals(lookups(chunks), lookups([]));
    }),
    { numRuns: 100 },
  );
});
