import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { Type } from "../../src/typebox.ts";
import { Env } from "../../src/schema.ts";
import { validationErrors } from "../../src/validation.ts";

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
