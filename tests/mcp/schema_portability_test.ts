/**
 * The MCP Inspector's portability rules as tests/helpers/schema_portability.ts applies them:
 * each finds its spelling, and issue 39's `_meta` is one of them (and no longer).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Type } from "../../src/typebox.ts";
import { wireSchema } from "../../src/mcp/wire_schema.ts";
import { schemaPortability } from "../helpers/schema_portability.ts";

const rules = (inputSchema: unknown, outputSchema?: unknown) =>
  schemaPortability([{ name: "t", inputSchema, outputSchema }]).map(({ rule, path }) =>
    `${rule} ${path}`
  );

Deno.test("schema portability: each rule finds its spelling", () => {
  assertEquals(
    rules({
      type: "object",
      properties: {
        any: {},
        described: { description: "only an annotation" },
        yes: true,
        open: { type: "object", additionalProperties: true },
        nullable: { type: ["string", "null"] },
        remote: { $ref: "https://example.com/schema.json" },
        dangling: { $ref: "#/$defs/missing" },
        local: { $ref: "#/$defs/name" },
        never: { not: {} },
      },
      $defs: { name: { type: "string" } },
    }, { type: "string" }),
    [
      "untyped-schema inputSchema.properties.any",
      "untyped-schema inputSchema.properties.described",
      "boolean-schema inputSchema.properties.yes",
      "type-union inputSchema.properties.nullable",
      "remote-ref inputSchema.properties.remote",
      "dangling-ref inputSchema.properties.dangling",
      "non-object-root outputSchema",
    ],
  );
  assertEquals(rules({ type: "array", items: { type: "string" } }), [
    "non-object-root inputSchema",
  ]);
});

Deno.test("schema portability: ACP's _meta as a record of anything is untyped; as an object, not", () => {
  const record = Type.Object({ _meta: Type.Record(Type.String(), Type.Unknown()) });
  assertEquals(rules(wireSchema(record)), [
    "untyped-schema inputSchema.properties._meta.patternProperties.^(.*)$",
  ]);
  assertEquals(rules(wireSchema(Type.Object({ _meta: Type.Object({}) }))), []);
});
