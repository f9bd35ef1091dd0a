/**
 * The asciicast v2 recorder against hostile output: any bytes in any chunking, resizes, tiny
 * bounds. Properties: every line is JSON, times never go back, the output events joined are
 * exactly the bytes recorded (decoded once, as a whole), no event splits a character, the
 * size never passes the bound, and a stopped recording says so in one marker at its end.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { EVENT_OVERHEAD, Recording } from "../../../src/engine/output/recording.ts";
import { OutputBudget } from "../../../src/engine/output/budget.ts";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";

const decoder = new TextDecoder();

/** Chunks of hostile bytes: split characters, escapes, invalid sequences, big and empty chunks. */
const chunk = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.constantFrom(
    new Uint8Array([0xe4]),
    new Uint8Array([0xb8, 0xad]),
    new Uint8Array([0xf0, 0x9f, 0x98]),
    new Uint8Array([0x80, 0x80, 0x80, 0x80]),
    new TextEncoder().encode("\x1b[?1049h\x1b[31m中文\r\n"),
  ),
  fc.uint8Array({ minLength: 500, maxLength: 3000 }),
);

type Step = { kind: "output"; data: Uint8Array; gap: number } | {
  kind: "resize";
  cols: number;
  rows: number;
  gap: number;
};

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("output" as const),
      data: chunk,
      gap: fc.integer({ min: 0, max: 20 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("resize" as const),
      cols: fc.integer({ min: 1, max: 500 }),
      rows: fc.integer({ min: 1, max: 200 }),
      gap: fc.integer({ min: 0, max: 20 }),
    }),
  },
);

function record(
  steps: Step[],
  maxBytes: number,
): { recording: Recording; lines: unknown[][]; header: Record<string, unknown> } {
  const recording = new Recording({ cols: 80, rows: 24, maxBytes, command: "sh -c 'x'" });
  let at = performance.now();
  for (const s of steps) {
    at += s.gap;
    if (s.kind === "output") recording.output(s.data, at);
    else recording.resize(s.cols, s.rows, at);
  }
  recording.end(at);
  const [first, ...rest] = [...recording.lines()];
  ok(
    first.endsWith("\n") &&
      rest.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n")),
  );
  return { recording, header: JSON.parse(first), lines: rest.map((line) => JSON.parse(line)) };
}

Deno.test("a recording holds exactly the output, in order, within its bound", () => {
  fc.assert(
    fc.property(
      fc.array(step, { maxLength: 60 }),
      fc.integer({ min: 0, max: 20_000 }),
      (steps, maxBytes) => {
        const { recording, header, lines } = record(steps, maxBytes);
        assertEquals([header.version, header.width, header.height], [2, 80, 24]);
        let last = 0;
        for (const [time, code, data] of lines) {
          ok(typeof time === "number" && time >= last, "times never go back");
          last = time as number;
          ok(code === "o" || code === "r" || code === "m");
          if (code === "r") ok(/^\d+x\d+$/.test(data as string));
        }
        if (maxBytes === 0) return assertEquals(lines.length, 0);
        const stopped = recording.stopped !== undefined;
        const markers = lines.filter(([, code]) => code === "m");
        assertEquals(markers.length, stopped ? 1 : 0);
        if (stopped) assertEquals(lines[lines.length - 1][1], "m");
        ok(recording.size <= maxBytes || stopped, "within the bound");
        // Output, joined, is the recorded bytes decoded as a whole: no character split by an event.
        const all: Uint8Array[] = [];
        for (const s of steps) if (s.kind === "output") all.push(s.data);
        const joined = lines.filter(([, code]) => code === "o").map(([, , data]) => data).join("");
        const bytes = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of all) {
          bytes.set(c, at);
          at += c.length;
        }
        const expected = decoder.decode(bytes);
        if (!stopped) assertEquals(joined, expected);
        else {ok(
            expected.startsWith(joined.replace(/\uFFFD$/, "")),
            "a stopped recording keeps the beginning",
          );}
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("bursts become one event; a pause starts a new one", () => {
  const recording = new Recording({ cols: 10, rows: 5, maxBytes: 1 << 20, command: "x" });
  const t = performance.now();
  for (let i = 0; i < 1000; i++) recording.output(new Uint8Array([0x61]), t + i * 0.001);
  recording.output(new Uint8Array([0x62]), t + 500);
  const events = [...recording.lines()].slice(1).map((line) => JSON.parse(line));
  assertEquals(events.map(([, code, data]) => [code, data]), [["o", "a".repeat(1000)], ["o", "b"]]);
  ok(events[1][0] - events[0][0] >= 0.49);
});

Deno.test("the bound: counted with the per-event overhead; the marker names the setting", () => {
  const recording = new Recording({
    cols: 10,
    rows: 5,
    maxBytes: 100 + EVENT_OVERHEAD,
    command: "x",
  });
  const t = performance.now();
  recording.output(new Uint8Array(100).fill(0x61), t);
  recording.output(new Uint8Array(1).fill(0x62), t + 100);
  recording.output(new Uint8Array(1).fill(0x63), t + 200);
  const events = [...recording.lines()].slice(1).map((line) => JSON.parse(line));
  assertEquals(events.length, 2);
  assertEquals(events[1][1], "m");
  ok(String(events[1][2]).includes("WINTERM_RECORDING_MAX_BYTES"));
});

Deno.test("the bound: output joining an open event counts that event's overhead", () => {
  // 10 bytes open an event (42 counted); 60 more within COALESCE_MS join it: 102 > 100, so the
  // recording stops instead (the property found this, a coalesced event passing the bound by up
  // to EVENT_OVERHEAD bytes).
  const recording = new Recording({ cols: 10, rows: 5, maxBytes: 100, command: "x" });
  recording.output(new Uint8Array(10).fill(0x61), 0);
  recording.output(new Uint8Array(60).fill(0x62), 1);
  ok(recording.stopped !== undefined, "stopped at the bound");
  const events = [...recording.lines()].slice(1).map((line) => JSON.parse(line));
  assertEquals(events.map(([, code]) => code), ["o", "m"]);
  assertEquals(events[0][2], "a".repeat(10));
  // Exactly at the bound is kept: 10 + 58 + 32 = 100.
  const exact = new Recording({ cols: 10, rows: 5, maxBytes: 100, command: "x" });
  exact.output(new Uint8Array(10).fill(0x61), 0);
  exact.output(new Uint8Array(58).fill(0x62), 1);
  assertEquals([exact.stopped, exact.size], [undefined, 100]);
});

Deno.test("a recording counts against the output budget: the budget's account is exact, and a recording dropped for it says so", () => {
  fc.assert(
    fc.property(
      fc.array(step, { maxLength: 60 }),
      fc.integer({ min: 1, max: 20_000 }),
      fc.boolean(),
      (steps, limit, withBuffer) => {
        const budget = new OutputBudget(limit);
        const recording = new Recording({
          cols: 80,
          rows: 24,
          maxBytes: 1 << 20,
          command: "x",
          budget,
        });
        const buffer = withBuffer ? new OutputBuffer({ budget }) : undefined;
        let at = 0;
        for (const next of steps) {
          at += next.gap;
          if (next.kind === "output") {
            recording.output(next.data, at);
            buffer?.append(next.data);
          } else recording.resize(next.cols, next.rows, at);
          assertEquals(budget.used, recording.retained + (buffer?.retained ?? 0));
          ok(budget.used <= limit, `${budget.used} bytes kept, over ${limit}`);
        }
        recording.end(at);
        const lines = [...recording.lines()];
        if (recording.stopped?.startsWith("recording dropped")) {
          // Header, and the marker unless the budget could not hold even that.
          ok(lines.length <= 2, JSON.stringify(lines));
          if (lines.length === 2) ok(lines[1].includes("output budget"), lines[1]);
        }
        recording.release();
        buffer?.release();
        assertEquals(budget.used, 0);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("forty recordings of floods stay within the budget the buffers share", () => {
  // Before, recordings were outside it: 40 flooding terminals held 175 MB more than the budget.
  const budget = new OutputBudget(1 << 20);
  const recordings = Array.from(
    { length: 40 },
    () => new Recording({ cols: 80, rows: 24, maxBytes: 4 << 20, command: "yes", budget }),
  );
  const line = new TextEncoder().encode("y\r\n".repeat(1000));
  for (let round = 0; round < 100; round++) {
    for (const recording of recordings) recording.output(line, round * 10);
  }
  ok(budget.used <= 1 << 20, `${budget.used} bytes kept`);
  ok(recordings.some((recording) => recording.stopped?.startsWith("recording dropped")));
});
