import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";
import { readBackward, readForward } from "../../src/engine/output/ranges.ts";
import { jsonSize } from "../../src/engine/output/shape.ts";
import { fc, hostileOutput, stringOf, TEXT_PIECES } from "../helpers/arbitraries.ts";

const encoder = new TextEncoder();

function bufferOf(text: string, chunk: number): OutputBuffer {
  const buffer = new OutputBuffer();
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.length; at += chunk) buffer.append(bytes.slice(at, at + chunk));
  return buffer;
}

/** Lines of text with colours, titles and links: sequences that never move the cursor. */
const colouredLines = fc.array(
  stringOf(
    [...TEXT_PIECES, "\x1b[1;31m", "\x1b[0m", "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\"],
    12,
  ),
  { maxLength: 40 },
).map((lines) => lines.map((line) => line + "\r\n").join(""));

const sizes = fc.record({
  budget: fc.integer({ min: 64, max: 4000 }),
  maxBytes: fc.integer({ min: 1, max: 5000 }),
  chunk: fc.integer({ min: 1, max: 64 }),
});

Deno.test("raw forward reads, going on from each end, give every byte once, each within budget", () => {
  fc.assert(
    fc.property(hostileOutput, sizes, (text, { budget, maxBytes, chunk }) => {
      const buffer = bufferOf(text, chunk);
      let offset = 0, joined = "";
      while (offset < buffer.end) {
        const read = readForward(buffer, offset, maxBytes, { raw: true, final: true, budget });
        ok(read.end > offset, "no progress");
        ok(jsonSize(read.text) <= budget);
        assertEquals(read.end - read.start, encoder.encode(read.text).length);
        joined += read.text;
        offset = read.end;
      }
      assertEquals(joined, text);
    }),
    { numRuns: 300 },
  );
});

Deno.test("cleaned forward reads never cut a sequence into text: the pieces are the whole", () => {
  fc.assert(
    fc.property(colouredLines, sizes, (text, { budget, maxBytes, chunk }) => {
      const buffer = bufferOf(text, chunk);
      let offset = 0, joined = "";
      while (offset < buffer.end) {
        const read = readForward(buffer, offset, maxBytes, { final: true, budget });
        ok(read.end > offset, "no progress");
        ok(jsonSize(read.text) <= budget);
        joined += read.text;
        offset = read.end;
      }
      assertEquals(joined, cleanTerminalText(text));
    }),
    { numRuns: 300 },
  );
});

Deno.test("backward reads are the newest output that fits, from a line start when they can", () => {
  fc.assert(
    fc.property(colouredLines, sizes, fc.boolean(), (text, { budget, chunk }, raw) => {
      const buffer = bufferOf(text, chunk);
      const read = readBackward(buffer, 0, { raw, final: true, budget });
      ok(jsonSize(read.text) <= budget);
      assertEquals(read.end, buffer.end);
      const rest = new TextDecoder().decode(encoder.encode(text).subarray(read.start));
      assertEquals(read.text, raw ? rest : cleanTerminalText(rest));
      // Cleaned reads start at a line start unless even the last line does not fit.
      const atLine = buffer.lineStart(buffer.lineAt(read.start)) === read.start;
      ok(raw || atLine || !read.text.slice(0, -1).includes("\n"));
    }),
    { numRuns: 300 },
  );
});

Deno.test("output that cleans to far more than it is (cursor moves, REP) is read within budget", () => {
  const buffer = bufferOf("x\x1b[999b\n".repeat(10_000), 4096);
  const forward = readForward(buffer, 0, 1 << 20, { final: true, budget: 100_000 });
  ok(jsonSize(forward.text) <= 100_000 && forward.end > 0 && forward.end < buffer.end);
  const backward = readBackward(buffer, 0, { final: true, budget: 100_000 });
  ok(jsonSize(backward.text) <= 100_000 && backward.text.endsWith("x".repeat(1000) + "\n"));
});
