import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { LINE_MODES, readLines } from "../../src/engine/output/lines.ts";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { forAll } from "../helpers/random.ts";

const encoder = new TextEncoder();
const line = (n: number) => `line ${n} ✓\n`;

Deno.test("line reads: since, modes and limits against known line numbers", () => {
  forAll(400, (random) => {
    const count = random.int(0, 120);
    const partial = random.chance(0.3) ? "partial ▶" : "";
    const keep = random.pick([0, 0, 5, 40, 1000]);
    const buffer = new OutputBuffer({ maxLines: keep });
    // Written in random chunks, cutting lines (and characters) anywhere.
    const bytes = encoder.encode(
      Array.from({ length: count }, (_, n) => line(n)).join("") + partial,
    );
    for (let at = 0; at < bytes.length;) {
      const size = random.int(1, 30);
      buffer.append(bytes.slice(at, at + size));
      at += size;
    }
    const total = count + (partial ? 1 : 0);
    const first = keep > 0 ? Math.max(0, total - keep) : 0;
    const text = (n: number) => n === count ? partial : line(n);
    const since = random.chance(0.3) ? undefined : random.int(0, total + 2);
    const mode = random.pick(LINE_MODES);
    const headLines = random.int(0, 30),
      tailLines = random.int(0, 30),
      maxLines = random.int(1, 60);
    const final = random.chance(0.3);
    const read = readLines(buffer, { since, mode, headLines, tailLines, maxLines, final });

    const from = Math.min(Math.max(since ?? first, first), total);
    const dropped = Math.max(0, first - (since ?? first));
    const available = total - from;
    const range = (a: number, b: number) =>
      Array.from({ length: Math.max(0, b - a) }, (_, i) => text(a + i)).join("");
    const settled = final || !partial ? total : total - 1;
    let output: string, shown: number, next = Math.max(from, settled), hasMore = false;
    if (mode === "full") {
      const end = Math.min(total, from + maxLines);
      [output, shown, hasMore, next] = [
        range(from, end),
        end - from,
        end < total,
        Math.min(end, Math.max(from, settled)),
      ];
    } else if (mode === "head") {
      shown = Math.min(headLines, available);
      output = range(from, from + shown);
    } else if (mode === "tail") {
      shown = Math.min(tailLines, available);
      output = range(total - shown, total);
    } else if (headLines + tailLines >= available) {
      [output, shown] = [range(from, total), available];
    } else {
      shown = headLines + tailLines;
      const omitted = available - shown;
      const head = range(from, from + headLines);
      output = head + `... [${omitted} line${omitted === 1 ? "" : "s"} omitted] ...\n` +
        range(total - tailLines, total);
    }
    assertEquals(read, {
      output,
      totalLines: total,
      nextReadFrom: next,
      hasMore,
      truncated: dropped + available - shown > 0,
      linesShown: shown,
      linesOmitted: available - shown + dropped,
    });
  });
});

Deno.test("reading on from nextReadFrom shows every line exactly once (a growing line again when complete)", () => {
  forAll(100, (random) => {
    const buffer = new OutputBuffer();
    let next = 0;
    const seen: string[] = [];
    let written = "";
    for (let step = 0; step < 30; step++) {
      const chunk = random.string(["a", "b", "\n", "中"], random.int(0, 12));
      written += chunk;
      buffer.append(encoder.encode(chunk));
      const read = readLines(buffer, { since: next, maxLines: random.int(1, 5) });
      // Lines before nextReadFrom are settled: keep them; the rest will be read again.
      const shownLines = read.output.split(/(?<=\n)/).filter(Boolean);
      seen.push(...shownLines.slice(0, read.nextReadFrom - next));
      next = read.nextReadFrom;
    }
    const final = readLines(buffer, { since: next, maxLines: 100_000, final: true });
    seen.push(final.output);
    assertEquals(seen.join(""), written);
  });
});
