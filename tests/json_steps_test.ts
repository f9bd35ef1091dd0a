/**
 * `JSON.stringify` in steps (src/json_steps.ts): for any value, hostile ones too (lone
 * surrogates and pairs across every piece boundary, `toJSON` that reads its key, boxed
 * primitives, sparse arrays, null prototypes, `__proto__` keys, values JSON drops), the text
 * and the bytes are `JSON.stringify`'s, and a cycle or a BigInt throws as it does.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import fc from "fast-check";
import { jsonBytesSteps, jsonSteps, jsonTextSteps } from "../src/json_steps.ts";
import { concatBytes } from "../src/bytes.ts";

/** Runs steps to their end, counting the pauses. */
function run<T>(steps: Generator<void, T, void>): { value: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { value: step.value, pauses };
    pauses++;
  }
}

/** A string of any UTF-16 code units: lone surrogates, pairs, controls, quotes, backslashes. */
const hostileString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom("\ud83d", "\ude00", '"', "\\", "\u0000", "\n", "a", "é"),
    maxLength: 40,
  }),
);

/** An object whose `toJSON` tells its key apart: called with a wrong key, the text differs. */
const keyed = fc.constantFrom(null, 1, "x").map((tag) => ({
  toJSON(key: string) {
    return { key, tag };
  },
}));

const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    hostileString,
    fc.anything({
      withBoxedValues: true,
      withNullPrototype: true,
      withSparseArray: true,
      withDate: true,
      maxDepth: 2,
    }),
    keyed,
    fc.constantFrom(undefined, () => 1, Symbol("s"), NaN, -0, Infinity),
  ),
  node: fc.oneof(
    { depthSize: "small" },
    tie("leaf"),
    fc.array(tie("node"), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constant("__proto__")), tie("node"), { maxKeys: 5 }),
  ),
})).node;

Deno.test("the text is JSON.stringify's for any value, whatever the piece size", () => {
  fc.assert(
    fc.property(value, fc.integer({ min: 1, max: 9 }), (input, piece) => {
      const expected = JSON.stringify(input);
      assertEquals(run(jsonTextSteps(input, piece)).value, expected);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("the bytes are the UTF-8 of prefix, JSON.stringify's text and suffix", () => {
  const encoder = new TextEncoder();
  fc.assert(
    fc.property(value, fc.integer({ min: 1, max: 9 }), (input, piece) => {
      const text = JSON.stringify(input) ?? "";
      const { value: chunks } = run(jsonBytesSteps(input, "data: ", "\n\n", piece));
      assertEquals(concatBytes(chunks), encoder.encode(`data: ${text}\n\n`));
    }),
    { numRuns: 1000 },
  );
});

Deno.test("a long string never splits a surrogate pair: no pair is escaped as two halves", () => {
  const text = "😀".repeat(50_000) + "a" + "😀".repeat(50_000);
  const { value: json, pauses } = run(jsonTextSteps({ output: text }));
  assertEquals(json, JSON.stringify({ output: text }));
  ok(!json.includes("\\ud83d"));
  ok(pauses >= 6, `a string of 200,001 code units pauses ${pauses} times`);
});

Deno.test("megabytes pause between pieces; long arrays between items", () => {
  const answer = {
    output: "x".repeat(2 * 1024 * 1024),
    lines: Array.from({ length: 5000 }, String),
  };
  const { value: text, pauses } = run(jsonTextSteps(answer));
  assertEquals(text, JSON.stringify(answer));
  ok(pauses >= 64 + 9, `paused ${pauses} times`);
});

Deno.test("a cycle and a BigInt throw as JSON.stringify does; undefined gives nothing", () => {
  const cyclic: Record<string, unknown> = { a: [1] };
  (cyclic.a as unknown[]).push({ back: cyclic });
  throws(() => run(jsonTextSteps(cyclic)), TypeError);
  throws(() => run(jsonTextSteps({ n: 1n })), TypeError);
  const parts: string[] = [];
  assertEquals(run(jsonSteps(undefined, (text) => parts.push(text))).value, false);
  assertEquals(parts, []);
  assertEquals(run(jsonTextSteps(undefined)).value, undefined);
});
