/**
 * What `tools/list` sends for a schema (src/mcp/wire_schema.ts) against what the server
 * accepts (the TypeBox schema, compiled as validation.ts compiles it), judged by Ajv (a client's
 * validator) on random schemas and hostile values: said shorter, it allows the same values;
 * with ACP's extras left out, no value the server refuses; with the size bounds left out, every
 * value the server accepts.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
// @ts-types="ajv/dist/2020.d.ts"
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { type TSchema, Type } from "../../src/typebox.ts";
import { TypeCompiler } from "../../src/typebox_compiler.ts";
import { CString, literals, nullable } from "../../src/schema.ts";
import { sizeShown, unadvertised } from "../../src/schema_marks.ts";
import { wireSchema } from "../../src/mcp/wire_schema.ts";

const ajv = new Ajv2020({ strict: false, allErrors: false });

/** Names and words the schemas and the values share, so that values hit the schemas' cases. */
const WORDS = ["a", "b", "on", "off", "", "a\u0000", "long-word"] as const;
const NAMES = ["x", "y", "z", "_meta", "__proto__x"] as const;

interface Options {
  /** Size bounds and the NUL-free pattern, which the wire leaves out. */
  sizes: boolean;
  /** `unadvertised` marks (nulls, hidden properties), which the wire leaves out. */
  marks: boolean;
}

/** A random TypeBox schema, as the front ends build theirs. */
function schemas({ sizes, marks }: Options): fc.Arbitrary<TSchema> {
  const bound = fc.option(fc.nat(4), { nil: undefined });
  const leaf: fc.Arbitrary<TSchema> = fc.oneof(
    fc.subarray([...WORDS], { minLength: 1 }).map((words) =>
      literals(words, { description: "d" }) as TSchema
    ),
    sizes
      ? fc.record({ maxLength: bound, minLength: bound, nul: fc.boolean(), shown: fc.boolean() })
        .map(({ maxLength, minLength, nul, shown }) => {
          const schema = Type.String({
            ...(maxLength === undefined ? {} : { maxLength }),
            ...(minLength === undefined ? {} : { minLength }),
          });
          const string = nul ? { ...CString, ...schema, pattern: CString.pattern } : schema;
          return shown ? sizeShown(string) : string;
        })
      : fc.constant(Type.String()),
    fc.record({
      minimum: fc.integer({ min: -2, max: 2 }),
      maximum: fc.integer({ min: -2, max: 5 }),
    })
      .map((range) => Type.Integer(range)),
    fc.constant(Type.Boolean()),
    fc.constant(Type.Null()),
    fc.constant(Type.Object({})),
  );
  const { tree } = fc.letrec<{ tree: TSchema }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.tuple(tie("tree"), bound).map(([item, maxItems]) =>
        Type.Array(item, sizes && maxItems !== undefined ? { maxItems } : {})
      ),
      fc.tuple(tie("tree"), tie("tree"), fc.constantFrom({}, { description: "u" }), fc.boolean())
        .map(([a, b, outer, hidden]) =>
          Type.Union([a, marks && hidden ? unadvertised(b) : b], outer)
        ),
      fc.tuple(
        fc.uniqueArray(
          fc.tuple(
            fc.constantFrom(...NAMES),
            tie("tree"),
            fc.constantFrom(
              ...(marks
                ? ["required", "optional", "nullable", "hidden", "hidden-nullable"] as const
                : ["required", "optional"] as const),
            ),
          ),
          { selector: ([name]) => name, maxLength: 3 },
        ),
        fc.boolean(),
      ).map(([properties, closed]) =>
        Type.Object(
          Object.fromEntries(
            properties.map(([name, schema, kind]) => [name, property(schema, kind)]),
          ),
          closed ? { additionalProperties: false } : {},
        )
      ),
    ),
  }));
  return tree;
}

function property(schema: TSchema, kind: string): TSchema {
  switch (kind) {
    case "optional":
      return Type.Optional(schema);
    case "nullable":
      return nullable(schema);
    case "hidden":
      return unadvertised(Type.Optional(schema));
    case "hidden-nullable":
      return unadvertised(nullable(schema));
    default:
      return schema;
  }
}

/** Values that hit the schemas' cases: their words and names, nulls, NULs, long strings. */
const values: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(...WORDS, null, true, false, 0, 1, -1, 3, 1.5, "xxxxxx"),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie("value"), { maxKeys: 4 }),
  ),
})).value;

function check(options: Options, property: (sent: boolean, accepted: boolean) => boolean) {
  fc.assert(
    fc.property(schemas(options), fc.array(values, { maxLength: 8 }), (schema, samples) => {
      const sent = ajv.compile(wireSchema(schema));
      const accepted = TypeCompiler.Compile(schema);
      for (const sample of samples) {
        const verdicts = [sent(sample), accepted.Check(sample)] as const;
        if (!property(...verdicts)) {
          throw new Error(
            `sent ${verdicts[0]}, accepted ${verdicts[1]}: ${JSON.stringify(sample)} for ` +
              JSON.stringify(wireSchema(schema)),
          );
        }
      }
    }),
    { numRuns: 600 },
  );
}

Deno.test("wire schema: said shorter, it allows exactly what the server accepts", () => {
  check({ sizes: false, marks: false }, (sent, accepted) => sent === accepted);
});

Deno.test("wire schema: with ACP's extras left out, it allows nothing the server refuses", () => {
  check({ sizes: false, marks: true }, (sent, accepted) => !sent || accepted);
});

Deno.test("wire schema: with size bounds left out, it allows all the server accepts", () => {
  check({ sizes: true, marks: false }, (sent, accepted) => !accepted || sent);
});

Deno.test("wire schema: what it leaves out, and what it keeps", () => {
  const schema = Type.Object({
    mode: literals(["head", "tail"], { default: "tail" }),
    cols: nullable(Type.Integer({ minimum: 1 })),
    command: sizeShown(Type.String({ minLength: 1, maxLength: 1000 })),
    args: Type.Optional(Type.Array(CString, { maxItems: 1000 })),
    sessionId: unadvertised(nullable(Type.String({ maxLength: 1000 }))),
    _meta: unadvertised(nullable(Type.Object({}))),
    env: Type.Optional(Type.Union([
      Type.Object({}),
      unadvertised(Type.Array(Type.Object({ name: Type.String() }))),
    ], { description: "e" })),
  }, { additionalProperties: false });
  assertEquals(wireSchema(schema), {
    type: "object",
    properties: {
      mode: { default: "tail", type: "string", enum: ["head", "tail"] },
      cols: { minimum: 1, type: "integer" },
      command: { minLength: 1, maxLength: 1000, type: "string" },
      args: { type: "array", items: { type: "string" } },
      env: { description: "e", type: "object" },
    },
    required: ["mode", "command"],
    additionalProperties: false,
  });
  // A union's constraining keyword stays beside its one branch: taken over by the branch,
  // `additionalProperties` would see the branch's `properties` (the checker ignores it, but a
  // client's validator does not).
  const guarded = Type.Union([
    Type.Object({ a: Type.Integer() }),
    unadvertised(Type.Null()),
  ], { additionalProperties: false });
  assertEquals(wireSchema(guarded), {
    additionalProperties: false,
    anyOf: [{ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }],
  });
  // An open object cannot leave a property out: that would allow it any value.
  const open = Type.Object({ hidden: unadvertised(Type.Optional(Type.Integer())) });
  ok("hidden" in (wireSchema(open).properties as object));
});
