import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import {
  batchProblem,
  jsonShape,
  jsonShapeProblem,
  MAX_JSON_DEPTH,
  MAX_JSON_SEPARATORS,
  messageId,
  roundedIds,
} from "../src/json_shape.ts";
import { fc } from "./helpers/arbitraries.ts";

/** What is wrong with the shape of `text`. */
const problem = (text: string) => jsonShapeProblem(jsonShape(text));

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
      const ids = (batch ? all : [all[0]]).flatMap((m, item) =>
        typeof m.id === "number" ? [{ item, written: JSON.stringify(m.id) }] : []
      );
      assertEquals(jsonShape(text).numberIds.map(({ item, written }) => ({ item, written })), ids);
    }),
    { numRuns: 1000 },
  );
});

Deno.test("json shape: a lone message's id is known unread when it is exact; else none", () => {
  const id = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    hostileString,
    fc.string({ minLength: 990, maxLength: 1010 }),
    fc.constant(null),
  );
  fc.assert(
    fc.property(id, hostileJson, fc.boolean(), (id, params, last) => {
      // The message's own id, before or after params that hold ids of their own.
      const inner = { id: "inner", nested: [{ id: 7 }, params] };
      const message = last
        ? { jsonrpc: "2.0", method: "x", params: inner, id }
        : { jsonrpc: "2.0", id, method: "x", params: inner };
      const shape = jsonShape(JSON.stringify(message));
      const exact = typeof id === "string"
        ? JSON.stringify(id).length - 2 <= 1000
        : typeof id === "number" && /^-?(?:0|[1-9][0-9]{0,14})$/.test(JSON.stringify(id));
      assertEquals(messageId(shape), exact ? JSON.parse(JSON.stringify(id)) : undefined); // -0 is read as 0
      assertEquals(messageId(jsonShape(JSON.stringify([message]))), undefined);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("json shape: no id is taken from what the parser would read otherwise", () => {
  const deep = "[".repeat(70) + "]".repeat(70);
  const cases: [string, string | number | undefined][] = [
    [`{"jsonrpc":"2.0","id":"a1","method":"x","params":${deep}}`, "a1"],
    // The parser keeps the last of a key given twice.
    [`{"id":"a1","id":null,"method":"x","params":${deep}}`, undefined],
    [`{"id":"a1","id":{"x":1},"method":"x","params":${deep}}`, undefined],
    [`{"id":"a1","id":true,"method":"x","params":${deep}}`, undefined],
    [`{"id":true,"id":7,"method":"x","params":${deep}}`, 7],
    // No one message: a bracket that closes nothing, or more after it.
    [`]{"a":{"id":99,"method":"x","params":${deep}}}`, undefined],
    [`{"id":5,"method":"x","params":${deep}} {"id":6}`, undefined],
    // A response is never answered; nor is a value "id" or "method" a key.
    [`{"id":"a16","result":${deep}}`, undefined],
    [`{"id":3,"result":"method","params":${deep}}`, undefined],
    [`{"method":"x","name":"id","params":${deep}}`, undefined],
  ];
  for (const [text, id] of cases) assertEquals(messageId(jsonShape(text)), id, text);
});

Deno.test("json shape: an unclosed string ends the counting, and the bounds still hold", () => {
  for (const text of ['{"a":"b', '"\\"', '["x\\\\\\"]']) {
    assertEquals(jsonShape(text).unclosed, true, text);
    assertEquals(problem(text), undefined, text);
  }
  // Found by an attack helper: 10 MiB of brackets and a quote were parsed whole (2-4 s, 1 GB).
  assertEquals(
    problem("[".repeat(100_000) + '"'),
    "it nests objects and arrays 100000 deep, more than 64",
  );
  match(problem(`[${"0,".repeat(150_000)}"`)!, /^it has 150000 commas and colons/);
});

Deno.test("json shape: the bounds, exactly", () => {
  // An array of n + 1 items has n commas.
  const items = (commas: number) => `[${"0,".repeat(commas)}0]`;
  assertEquals(problem(items(MAX_JSON_SEPARATORS)), undefined);
  match(problem(items(MAX_JSON_SEPARATORS + 1))!, /^it has 100001 commas and colons/);
  // The message that blocked the server: 600,000 keys (n colons and n - 1 commas).
  const keys = "{" + Array.from({ length: 600_000 }, (_, i) => `"k${i}":0`).join(",") + "}";
  match(problem(keys)!, /^it has 1199999 commas and colons outside strings/);
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
  assertEquals(problem(nested(MAX_JSON_DEPTH)), undefined);
  assertEquals(
    problem(nested(MAX_JSON_DEPTH + 1)),
    `it nests objects and arrays ${MAX_JSON_DEPTH + 1} deep, more than ${MAX_JSON_DEPTH}`,
  );
  // Separators and brackets inside strings are text, however many.
  assertEquals(problem(JSON.stringify({ text: ",:[{".repeat(1_000_000) })), undefined);
});

Deno.test("json shape: the messages whose ids a double does not hold exactly, each with why", () => {
  const rounded = roundedIds(
    jsonShape(
      '[{"id":1},{"id":1.0000000000000001},{"id":"x"},{"id":-0},{"id":9007199254740993},' +
        '{"id":0.1e1},{"id":3.5},{"id":1e-400},{"id":9007199254740992},{"id":1e400}]',
    ),
  );
  // 9007199254740992 (2^53) is held exactly, but past 2^53 - 1 it is written back otherwise.
  assertEquals([...rounded.keys()], [1, 4, 7, 8, 9]);
  match(rounded.get(8)!, /is beyond 2\^53 - 1: it would be written back as another number/);
  assertEquals(
    rounded.get(1),
    "its 'id' 1.0000000000000001 is read as the nearest double, 1, another number: an id must " +
      "be a string, or an integer of at most 9007199254740991 (or a number a double holds exactly)",
  );
  match(rounded.get(9)!, /^its 'id' 1e400 is no number a double holds/);
  for (const key of ["\\u0069d", "i\\u0064", "\\u0069\\u0064"]) {
    assertEquals([...roundedIds(jsonShape(`{"${key}" : 1e-400}`)).keys()], [0], key);
  }
  // Keys with escapes that are no "id" (a bad one among them) are not taken for it.
  assertEquals(
    roundedIds(jsonShape('{"\\qq":1e-400,"\\u0049d":1e-400,"\\u0069D":1e-400}')).size,
    0,
  );
  assertEquals(roundedIds(jsonShape('{"id":7,"params":{"id":0.1}}')).size, 0);
});

Deno.test("json shape: an id is served when a double holds it exactly (and an integer one up to 2^53 - 1)", () => {
  const held = (written: string) => roundedIds(jsonShape(`{"id":${written}}`)).size === 0;
  // n / 2^k, written out in full, is a double's value; one more digit, 1, at its end is not.
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1 << 20 }), fc.integer({ min: 1, max: 20 }), (n, k) => {
      const digits = (BigInt(n) * 5n ** BigInt(k)).toString().padStart(k + 1, "0");
      const written = `${digits.slice(0, -k)}.${digits.slice(-k)}`;
      assertEquals([held(written), held(written + "1")], [true, false], written);
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }), (integer) => {
      const written = String(integer);
      const safe = integer <= BigInt(Number.MAX_SAFE_INTEGER) &&
        integer >= -BigInt(Number.MAX_SAFE_INTEGER);
      assertEquals(held(written), safe, written);
    }),
    { numRuns: 2000 },
  );
  // JavaScript writes the shortest text that reads back as the double, not its value.
  assertEquals([held("5e-324"), held("0.1"), held("1e-5"), held("0.5"), held("-0")], [
    false,
    false,
    false,
    true,
    true,
  ]);
});

Deno.test("json shape: a batch of more than 100 messages is refused before its ids are looked at", () => {
  const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i })));
  assertEquals(batchProblem(jsonShape(batch(100))), undefined);
  assertEquals(batchProblem(jsonShape(batch(101))), "a batch of 101 messages, more than 100");
  assertEquals(batchProblem(jsonShape('{"id":1}')), undefined);
  assertEquals(batchProblem(jsonShape("[]")), undefined);
});
