import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import {
  jsonShape,
  jsonShapeProblem,
  MAX_JSON_DEPTH,
  MAX_JSON_SEPARATORS,
} from "../../src/json_shape.ts";
import { fc } from "../helpers/arbitraries.ts";

/** The shape of a value as its JSON shows it, counted from the value itself. */
function expectedShape(value: unknown): { separators: number; depth: number } {
  if (typeof value !== "object" || value === null) return { separators: 0, depth: 0 };
  const children = Object.values(value);
  const own = Array.isArray(value)
    ? Math.max(0, children.length - 1)
    : children.length + Math.max(0, children.length - 1);
  const inner = children.map(expectedShape);
  return {
    separators: own + inner.reduce((sum, shape) => sum + shape.separators, 0),
    depth: 1 + inner.reduce((most, shape) => Math.max(most, shape.depth), 0),
  };
}

/** Strings made to trip a scanner: quotes, runs of backslashes, separators and brackets. */
const hostileString = fc.array(
  fc.constantFrom(
    '"',
    "\\",
    "\\\\",
    '\\"',
    ",",
    ":",
    "[",
    "]",
    "{",
    "}",
    "a",
    "id",
    "中",
    "😀",
    "\n",
  ),
  { maxLength: 40 },
).map((pieces) => pieces.join(""));

const hostileJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString,
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 6 }),
  ),
})).value;

Deno.test("json shape: commas and colons outside strings, and depth, as the value has them", () => {
  fc.assert(
    fc.property(hostileJson, fc.constantFrom(undefined, 2, "\t"), (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      const { separators, depth, unclosed } = jsonShape(text);
      assertEquals({ separators, depth, unclosed }, { ...expectedShape(value), unclosed: false });
    }),
    { numRuns: 2000 },
  );
});

Deno.test("json shape: the ids written as numbers are the messages' own, as written", () => {
  const id = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    hostileString,
    fc.constant(null),
  );
  const message = fc.record({ id, params: hostileJson }).map(({ id, params }) => // An "id" inside params is no message's id.
  ({ jsonrpc: "2.0", id, method: "x", params: { id: 1.5, nested: { id: params } } }));
  fc.assert(
    fc.property(fc.array(message, { minLength: 1, maxLength: 3 }), fc.boolean(), (all, batch) => {
      const text = JSON.stringify(batch ? all : all[0]);
      const ids = (batch ? all : [all[0]]).map((m) => m.id).filter((i) => typeof i === "number");
      assertEquals(jsonShape(text).numberIds, ids.map((i) => JSON.stringify(i)));
    }),
    { numRuns: 1000 },
  );
});

Deno.test("json shape: an unclosed string ends the counting, and the bounds still hold", () => {
  for (const text of ['{"a":"b', '"\\"', '["x\\\\\\"]']) {
    assertEquals(jsonShape(text).unclosed, true, text);
    assertEquals(jsonShapeProblem(text), undefined, text);
  }
  // Found by an attack helper: 10 MiB of brackets and a quote were parsed whole (2-4 s, 1 GB).
  assertEquals(
    jsonShapeProblem("[".repeat(100_000) + '"'),
    "it nests objects and arrays 100000 deep, more than 64",
  );
  match(jsonShapeProblem(`[${"0,".repeat(150_000)}"`)!, /^it has 150000 commas and colons/);
});

Deno.test("json shape: the bounds, exactly", () => {
  // An array of n + 1 items has n commas.
  const items = (commas: number) => `[${"0,".repeat(commas)}0]`;
  assertEquals(jsonShapeProblem(items(MAX_JSON_SEPARATORS)), undefined);
  match(jsonShapeProblem(items(MAX_JSON_SEPARATORS + 1))!, /^it has 100001 commas and colons/);
  // The message that blocked the server: 600,000 keys (n colons and n - 1 commas).
  const keys = "{" + Array.from({ length: 600_000 }, (_, i) => `"k${i}":0`).join(",") + "}";
  match(jsonShapeProblem(keys)!, /^it has 1199999 commas and colons outside strings/);
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
  assertEquals(jsonShapeProblem(nested(MAX_JSON_DEPTH)), undefined);
  assertEquals(
    jsonShapeProblem(nested(MAX_JSON_DEPTH + 1)),
    `it nests objects and arrays ${MAX_JSON_DEPTH + 1} deep, more than ${MAX_JSON_DEPTH}`,
  );
  // Separators and brackets inside strings are text, however many.
  assertEquals(jsonShapeProblem(JSON.stringify({ text: ",:[{".repeat(1_000_000) })), undefined);
});
