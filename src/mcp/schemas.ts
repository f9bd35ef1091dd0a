/**
 * Schema pieces shared by the tool sets.
 *
 * @module
 */
import { type SchemaOptions, type TLiteral, type TUnion, Type } from "@sinclair/typebox";

/** Environment variables to add or override: names without `=` or NUL. */
export const Env = Type.Record(
  Type.String({ pattern: "^[^=\\u0000]+$" }),
  Type.String({ maxLength: 32768 }),
  {
    additionalProperties: false,
    maxProperties: 500,
    description: "Environment variables to set (they override the server's).",
  },
);

/** A union of string literals (an enum, as JSON Schema `anyOf` of `const`s). */
export function literals<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((value) => Type.Literal(value)), options);
}
