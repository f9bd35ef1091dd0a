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
  fc.constantFrom('"', "\\", "\\\\", '\\"', ",", ":", "[", "]", "{", "}", "a", "中", "😀", "\n"),
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
      assertEquals(jsonShape(text), expectedShape(value));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("json shape: an unclosed string is left to the parser", () => {
  for (const text of ['{"a":"b', '"\\"', '["x\\\\\\"]']) {
    assertEquals(jsonShape(text), undefined, text);
    assertEquals(jsonShapeProblem(text), undefined, text);
  }
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
