import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { isContinuation } from "../../src/engine/output/utf8.ts";
import { forAll, type Random, TEXT_PIECES } from "../helpers/random.ts";

const encoder = new TextEncoder();

/** The reference: everything ever appended, line starts and arrival times, never dropped. */
class Model {
  bytes: number[] = [];
  lineStarts: number[] = [];
  chunks: { offset: number; time: number }[] = [];
  append(data: Uint8Array, time: number) {
    for (const byte of data) {
      if (this.bytes.length === 0 || this.bytes[this.bytes.length - 1] === 10) {
        this.lineStarts.push(this.bytes.length);
      }
      this.bytes.push(byte);
    }
    if (data.length) this.chunks.push({ offset: this.bytes.length - data.length, time });
  }
}

function randomChunk(random: Random): Uint8Array {
  switch (random.int(0, 3)) {
    case 0:
      return new Uint8Array(0);
    case 1: // text with newlines
      return encoder.encode(random.string([...TEXT_PIECES, "\n", "\r\n"], random.int(1, 60)));
    case 2: // big binary
      return Uint8Array.from({ length: random.int(1000, 5000) }, () => random.int(0, 255));
    default: // a few bytes, possibly splitting characters
      return Uint8Array.from(
        { length: random.int(1, 8) },
        () => random.pick([10, 0x41, 0xe4, 0xb8, 0xad, 0xf0, 0x9f]),
      );
  }
}

Deno.test("OutputBuffer matches a never-dropping model under random appends and limits", () => {
  forAll(60, (random) => {
    const maxBytes = random.pick([1, 7, 100, 4096, 20_000, 1 << 20]);
    const maxLines = random.pick([0, 0, 1, 3, 50]);
    const buffer = new OutputBuffer({ maxBytes, maxLines });
    const model = new Model();
    let time = 1000;
    for (let step = 0; step < 80; step++) {
      time += random.int(0, 3);
      const chunk = randomChunk(random);
      model.append(chunk, time);
      buffer.append(chunk, time);
      const end = model.bytes.length;
      assertEquals(buffer.end, end);
      assertEquals(buffer.lineCount, model.lineStarts.length);
      // Start: the byte limit, pushed further by the line limit.
      let start = Math.max(0, end - maxBytes);
      if (maxLines > 0 && model.lineStarts.length > maxLines) {
        start = Math.max(start, model.lineStarts[model.lineStarts.length - maxLines]);
      }
      // Both limits only ever move the start forward, so the current one is exact.
      assertEquals(buffer.start, start);
      const kept = buffer.start;
      // Random reads give the model's bytes, and report what was dropped.
      for (let probe = 0; probe < 4; probe++) {
        const from = random.int(0, end + 2);
        const to = random.int(from, end + 2);
        const read = buffer.read(from, to);
        const expectedStart = Math.min(Math.max(from, kept), Math.min(to, end));
        assertEquals(read.start, expectedStart);
        assertEquals(read.end, Math.min(to, end));
        assertEquals([...read.bytes], model.bytes.slice(expectedStart, Math.min(to, end)));
        assertEquals(read.dropped, Math.max(0, Math.min(Math.min(to, end), kept) - from));
      }
      // Lines: numbers are stable, starts clamp to what is kept.
      // The first line is the one holding the kept start; lines wholly before it are gone.
      const first = buffer.firstLine;
      assertEquals(first, Math.max(0, model.lineStarts.findLastIndex((s) => s <= kept)));
      assertEquals(buffer.lineAt(kept), first);
      for (let n = first; n < buffer.lineCount; n += 1 + random.int(0, 5)) {
        assertEquals(buffer.lineStart(n), Math.max(kept, model.lineStarts[n]));
        assertEquals(buffer.lineAt(model.lineStarts[n]), n);
      }
      // Times: the first byte after t is where the first chunk after t began (or kept start).
      const t = time - random.int(0, 6);
      const after = model.chunks.find((c) => c.time > t);
      assertEquals(buffer.offsetAfter(t), after ? Math.max(kept, after.offset) : end);
      if (end > kept) {
        const offset = random.int(kept, end - 1);
        assertEquals(buffer.timeAt(offset), model.chunks.findLast((c) => c.offset <= offset)!.time);
      }
    }
  });
});

Deno.test("readText never splits a character and reports dropped bytes", () => {
  forAll(200, (random) => {
    const text = random.string(TEXT_PIECES, random.int(0, 200));
    const bytes = encoder.encode(text);
    const buffer = new OutputBuffer({ maxBytes: random.int(1, bytes.length + 5) });
    // Appended in random pieces that cut characters apart.
    for (let at = 0; at < bytes.length;) {
      const size = random.int(1, 7);
      buffer.append(bytes.slice(at, at + size));
      at += size;
    }
    const from = random.int(0, bytes.length);
    const to = random.int(from, bytes.length);
    const final = random.chance(0.5);
    const range = buffer.readText(from, to, final);
    const onBoundary = (i: number) => i >= bytes.length || !isContinuation(bytes[i]);
    if (range.text !== "") {
      // (A range wholly dropped, or wholly inside one character, is empty.)
      assertEquals(onBoundary(range.start), true);
      if (!(final && to === bytes.length)) assertEquals(onBoundary(range.end), true);
    }
    assertEquals(range.text, new TextDecoder().decode(bytes.subarray(range.start, range.end)));
    assertEquals(range.dropped, Math.max(0, Math.min(to, buffer.start) - from));
    assertEquals(range.text.includes("\ufffd"), false);
  });
});

Deno.test("readText holds back an incomplete last character until it completes", () => {
  const buffer = new OutputBuffer();
  const euro = encoder.encode("a€");
  buffer.append(euro.slice(0, 3));
  const first = buffer.readText(0);
  assertEquals(first, { text: "a", start: 0, end: 1, dropped: 0 });
  buffer.append(euro.slice(3));
  assertEquals(buffer.readText(first.end).text, "€");
});

Deno.test("an offset from before the drop gets what is left and how much was missed", () => {
  const buffer = new OutputBuffer({ maxBytes: 8 });
  buffer.append(encoder.encode("hello\nworld\n"));
  assertEquals(buffer.readText(0), { text: "o\nworld\n", start: 4, end: 12, dropped: 4 });
  assertEquals(buffer.firstLine, 0);
  assertEquals(buffer.lineStart(1), 6);
});

Deno.test("a line limit drops whole lines and keeps numbering", () => {
  const buffer = new OutputBuffer({ maxLines: 2 });
  buffer.append(encoder.encode("one\ntwo\nthree\nfour"));
  assertEquals(buffer.firstLine, 2);
  assertEquals(buffer.lineCount, 4);
  assertEquals(buffer.readText().text, "three\nfour");
});
