import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { Type } from "../src/typebox.ts";
import { Env } from "../src/schema.ts";
import { validationErrors } from "../src/validation.ts";

const schema = Type.Object({ n: Type.Integer({ minimum: 1 }), env: Type.Optional(Env) }, {
  additionalProperties: false,
});

Deno.test("refusals name the field and the rule", () => {
  assertEquals(validationErrors(schema, { n: 0 }), ["'n' must be an integer >= 1 (got 0)"]);
  assertEquals(validationErrors(schema, { n: 1 }), []);
});

Deno.test("a client's long names are cut in refusals, not echoed whole", () => {
  const name = "k".repeat(1_000_000);
  for (
    const args of [
      { n: 1, [name]: 1 },
      { n: 1, env: { [`${name}=`]: "x" } },
      JSON.parse(`{"n": 1, "env": {"${name}": {"__proto__": {}}}}`),
      JSON.parse(`{"n": 1, "${name}": {"__proto__": {}}}`),
    ]
  ) {
    const messages = validationErrors(schema, args);
    ok(messages.length > 0);
    for (const message of messages) {
      ok(message.length < 400, `${message.length} characters: ${message.slice(0, 100)}`);
      ok(message.includes("kkk..."), message.slice(0, 200));
    }
  }
});

Deno.test("a rule on a size says so, with the size given", () => {
  const env = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`K${i}`, "v"]));
  assertEquals(validationErrors(schema, { n: 1, env }), [
    "'env' must be an object of at most 500 entries (got 501 entries)",
  ]);
  // An array against an object's size rule: shown as it is, not as a count of entries.
  assertEquals(validationErrors(schema, { n: 1, env: [{ name: "A", value: "b" }] }), [
    `'env' must be an object of at most 500 entries (got [{"name":"A","value":"b"}])`,
  ]);
});

Deno.test("past the first five problems, the rest are counted", () => {
  const unknown = (count: number) =>
    Object.fromEntries([["n", 1], ...Array.from({ length: count }, (_, i) => [`x${i}`, 1])]);
  assertEquals(validationErrors(schema, unknown(6)).slice(5), ["and 1 more problem"]);
  const messages = validationErrors(schema, unknown(12));
  assertEquals(messages.length, 6);
  assertEquals(messages[0], "'x0' is not a known argument (known: n, env)");
  assertEquals(messages[5], "and 7 more problems");
  assertEquals(validationErrors(schema, unknown(20_000))[5], "and at least 9995 more problems");
  assertEquals(validationErrors(schema, unknown(5)).length, 5);
});

Deno.test("a name's control characters are shown as escapes, not put in the message", () => {
  assertEquals(validationErrors(schema, { n: 1, env: { "C\u0000": "y" } }), [
    "'env.C\\u0000' is not allowed here (names must match ^[^=\\u0000]+$)",
  ]);
});

Deno.test("a union's size rule shows the size of the value given", () => {
  const either = Type.Object({
    env: Type.Union([Env, Type.Array(Type.String(), { maxItems: 2 })]),
  });
  assertEquals(validationErrors(either, { env: ["a", "b", "c"] }), [
    "'env' must be an object of at most 500 entries, or an array of at most 2 items (got 3 items)",
  ]);
});

Deno.test("inside a union, each failure of the option that took the value's shape is named or counted", () => {
  const pairs = Type.Array(
    Type.Object({ name: Type.String(), value: Type.String() }, { additionalProperties: false }),
  );
  const either = Type.Object({ env: Type.Union([Env, pairs]) });
  assertEquals(
    validationErrors(either, {
      env: [{ name: 1, value: 2 }, { name: "A" }, { value: "x" }, "str", null, { extra: 1 }],
    }),
    [
      "'env.0.name' must be a string (got 1)",
      "'env.0.value' must be a string (got 2)",
      "'env.1.value' is required",
      "'env.2.name' is required",
      `'env.3' must be an object (got "str")`,
      "and 4 more problems",
    ],
  );
});
