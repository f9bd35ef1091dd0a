/**
 * Output read in slices (src/engine/slices.ts) on a view frozen at the read's start
 * (OutputBuffer.freeze, StreamOutput.freeze): whatever arrives between two slices, the view
 * reads as the buffer did when it was frozen, and an answer built in slices is the answer built
 * at once then. Once the buffer has to drop what the view reads, the view says so (Overtaken)
 * and the answer is built again at once. Each is checked against a twin buffer that got only
 * what came before the freeze.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import { HOLD_SLACK, OutputBuffer, type OutputReader } from "../../../src/engine/output/buffer.ts";
import { LINE_MODES } from "../../../src/engine/output/lines.ts";
import { StreamOutput } from "../../../src/engine/output/stream.ts";
import { inSlices, Overtaken, type Steps } from "../../../src/engine/slices.ts";
import { fc, hostileOutput, stringOf, TEXT_PIECES } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();

/** Output of every kind, some of it long: lines edited in place, long control strings, bytes. */
const chunk: fc.Arbitrary<Uint8Array> = fc.oneof(
  hostileOutput.map((text) => encoder.encode(text)),
  stringOf([...TEXT_PIECES, "\n", "\r\n"], 60, 1).map((text) => encoder.encode(text)),
  fc.integer({ min: 1, max: 400 }).map((n) => new Uint8Array(n).fill(10)),
  fc.uint8Array({ minLength: 1, maxLength: 300 }),
  // A control string long enough to be tracked as it arrives, ended or not.
  fc.tuple(fc.integer({ min: 60, max: 5000 }), fc.constantFrom("\x07", "\x1b\\", "", "\n"))
    .map(([n, end]) => encoder.encode("\x1b]52;c;" + "QUJD".repeat(n / 4) + end)),
  // Lines edited in place, many of them: reads of them take several slices.
  fc.integer({ min: 1, max: 3000 }).map((n) =>
    encoder.encode("x 10%\r\x1b[Kitem: 55%\x1b[3D99%\x1b[2P\x1b[1@ ok\x1b[K\n".repeat(n))
  ),
);

const limits = fc.record({
  maxBytes: fc.constantFrom(50, 300, 4096, 100_000, 10 << 20),
  maxLines: fc.constantFrom(0, 0, 2, 40),
});

/** Where to look, as fractions of the output. */
const probes = fc.array(
  fc.tuple(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.double({ min: 0, max: 1, noNaN: true }),
  ),
  { minLength: 1, maxLength: 6 },
);

/** Every read of `view` equals the same read of `twin`, at the places `probes` says. */
function sameReads(view: OutputReader, twin: OutputReader, probes: [number, number][]): void {
  const facts = (reader: OutputReader) => [
    reader.start,
    reader.end,
    reader.firstLine,
    reader.lineCount,
    reader.firstLineCut,
    reader.endsWithNewline,
  ];
  assertEquals(facts(view), facts(twin));
  const end = twin.end;
  for (const [x, y] of probes) {
    const from = Math.floor(x * (end + 2)), to = from + Math.floor(y * (end + 2 - from));
    const read = (reader: OutputReader) => {
      const { bytes, ...range } = reader.read(from, to);
      return { ...range, bytes: [...bytes] };
    };
    assertEquals(read(view), read(twin), `read(${from}, ${to})`);
    for (const final of [false, true]) {
      const text = view.readText(from, to, final);
      assertEquals(text, twin.readText(from, to, final), `readText(${from}, ${to}, ${final})`);
      assertEquals(
        view.bytesOfText(text.start, text.text),
        twin.bytesOfText(text.start, text.text),
      );
    }
    assertEquals(view.readText(), twin.readText());
    const line = Math.floor(x * (twin.lineCount + 2));
    assertEquals(view.lineStart(line), twin.lineStart(line), `lineStart(${line})`);
    assertEquals(view.lineAt(from), twin.lineAt(from), `lineAt(${from})`);
    assertEquals(view.lineAt(end), twin.lineAt(end), `lineAt(${end})`);
    assertEquals(view.pastSequence(from), twin.pastSequence(from), `pastSequence(${from})`);
    assertEquals(view.longStringEnd(from), twin.longStringEnd(from), `longStringEnd(${from})`);
  }
}

Deno.test("a frozen view reads as the buffer did when frozen, whatever arrives after", () => {
  fc.assert(
    fc.property(
      limits,
      fc.array(chunk, { maxLength: 8 }),
      fc.array(chunk, { maxLength: 8 }),
      probes,
      ({ maxBytes, maxLines }, before, after, probes) => {
        const buffer = new OutputBuffer({ maxBytes, maxLines });
        const twin = new OutputBuffer({ maxBytes, maxLines });
        for (const bytes of before) {
          buffer.append(bytes);
          twin.append(bytes);
        }
        const view = buffer.freeze();
        for (const bytes of after) buffer.append(bytes);
        sameReads(view, twin, probes);
        view.release();
        // What the view held back is dropped once it is released.
        ok(buffer.retained <= maxBytes, `${buffer.retained} bytes kept, at most ${maxBytes}`);
        if (maxLines > 0) ok(buffer.lineCount - buffer.firstLine <= maxLines + 1);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("a frozen view is overtaken when the buffer must drop what it reads after all", () => {
  // The server-wide budget takes bytes.
  const budgeted = new OutputBuffer({ maxBytes: 1000 });
  budgeted.append(encoder.encode("line\n".repeat(100)));
  const first = budgeted.freeze();
  budgeted.dropOldest(10);
  throws(() => first.readText(), Overtaken);
  throws(() => first.lineStart(3), Overtaken);
  first.release();
  // More arrives than the buffer keeps beyond its limits for a view.
  const flooded = new OutputBuffer({ maxBytes: 1000 });
  flooded.append(encoder.encode("line\n".repeat(100)));
  const second = flooded.freeze();
  flooded.append(new Uint8Array(HOLD_SLACK - 1000).fill(0x61));
  assertEquals(second.readText().text, "line\n".repeat(100), "within the slack it reads on");
  flooded.append(new Uint8Array(2000).fill(0x62));
  throws(() => second.end, Overtaken);
  second.release();
  assertEquals(flooded.retained <= 1000, true);
  // A view used after its release is a bug, said at once.
  throws(() => second.end, /after its release/);
});

/** Runs `steps` to their end, `between` called between every two of them. */
function stepping<T>(steps: Steps<T>, between: () => void): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    between();
  }
}

/** Every way a stream is read for an answer, as steps on a frozen stream. */
const reads = fc.oneof(
  fc.record({
    kind: fc.constant("shaped" as const),
    offset: fc.double({ min: 0, max: 1, noNaN: true }),
    budget: fc.constantFrom(300, 5000, 100_000, 2 << 20),
    raw: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("newest" as const),
    offset: fc.double({ min: 0, max: 1, noNaN: true }),
    budget: fc.constantFrom(300, 5000, 100_000, 2 << 20),
    raw: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("from" as const),
    offset: fc.double({ min: 0, max: 1, noNaN: true }),
    budget: fc.constantFrom(300, 5000, 100_000, 2 << 20),
    raw: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("lines" as const),
    offset: fc.double({ min: 0, max: 1, noNaN: true }),
    budget: fc.constantFrom(300, 5000, 100_000, 2 << 20),
    raw: fc.boolean(),
    mode: fc.constantFrom(...LINE_MODES),
    count: fc.constantFrom(1, 10, 1000),
  }),
);

Deno.test("a read in slices, with output arriving and dropped between them, is the read at once when it began", () => {
  fc.assert(
    fc.property(
      limits,
      fc.array(chunk, { minLength: 1, maxLength: 8 }),
      fc.array(chunk, { minLength: 1, maxLength: 4 }),
      reads,
      fc.boolean(),
      ({ maxBytes, maxLines }, before, after, read, final) => {
        const options = { maxBytes, maxLines, columns: 80 };
        const output = new StreamOutput(options), twin = new StreamOutput(options);
        for (const bytes of before) {
          output.append(bytes);
          twin.append(bytes);
        }
        const offset = Math.floor(read.offset * output.end);
        const range = { budget: read.budget, raw: read.raw, final };
        const answer = (view: ReturnType<StreamOutput["freeze"]>): Steps<unknown> => {
          switch (read.kind) {
            case "shaped":
              return view.readShaped(offset, { ...range, hint: (at) => `from ${at}` });
            case "newest":
              return view.readNewest(offset, range);
            case "from":
              return view.readFrom(offset, read.budget, range);
            case "lines":
              return view.readLines({
                ...range,
                since: view.lineAt(offset),
                mode: read.mode,
                headLines: read.count,
                tailLines: read.count,
                maxLines: read.count,
              });
          }
        };
        const atOnce = twin.freeze();
        const expected = stepping(answer(atOnce), () => {});
        atOnce.release();
        const frozen = output.freeze();
        let next = 0;
        const sliced = stepping(answer(frozen), () => {
          output.append(after[next++ % after.length]);
        });
        frozen.release();
        assertEquals(sliced, expected);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("an answer overtaken in slices is read again at once, from the output as it is then", async () => {
  // A megabyte of lines edited in place: cleaning it takes many slices.
  const output = new StreamOutput({ maxBytes: 1 << 20 });
  output.append(encoder.encode("x 10%\r\x1b[Kitem 55%\x1b[3D99%\n".repeat(40_000)));
  let runs = 0;
  const answer = inSlices(function* () {
    runs++;
    const view = output.freeze();
    try {
      // Its head, then its tail: the tail is read from the buffer after the flood.
      return yield* view.readShaped(0, { budget: 200_000, hint: () => "", final: true });
    } finally {
      view.release();
    }
  });
  // While it reads, the output floods past what the buffer holds back for it.
  output.append(new Uint8Array(HOLD_SLACK + 100_000).fill(0x61));
  const read = await answer;
  assertEquals(runs, 2);
  // The read done again is of the output as it was then: the flood's newest bytes.
  assertEquals(read.end, output.end);
  ok(read.text.endsWith("a"));
});
