/**
 * Schema pieces shared by the front ends (MCP tools and the REST API), as TypeBox schemas;
 * validation.ts checks arguments against them.
 *
 * @example
 * ```ts
 * import { Type } from "./typebox.ts";
 * import { CString, literals } from "./schema.ts";
 * const Input = Type.Object({ command: CString, shell: literals(["bash", "sh"]) });
 * ```
 * @module
 */
import { type SchemaOptions, type TLiteral, type TSchema, type TUnion, Type } from "./typebox.ts";

/**
 * An argument or an environment value: text a C string can carry (no NUL), so a bad one is
 * refused naming its field rather than as a failure to start the program.
 */
export const CString = Type.String({ maxLength: 32768, pattern: "^[^\\u0000]*$" });

/** Environment variables to add or override: names without `=` or NUL. */
export const Env = Type.Record(
  Type.String({ pattern: "^[^=\\u0000]+$" }),
  CString,
  {
    additionalProperties: false,
    maxProperties: 500,
    description: "Environment variables to set (they override the server's).",
  },
);

/** How a program's bytes are read and its input written (the `encoding` argument). */
export const Encoding = Type.String({
  minLength: 1,
  maxLength: 40,
  description: "The program's character encoding: utf-8, oem, ansi (Windows code pages), a " +
    "code page number (936, 65001) or a label (gbk, big5, shift_jis, cp850, windows-1252). " +
    "Default: detected (Windows pipes: UTF-8 if the bytes are UTF-8, else the console code " +
    "page; terminals: UTF-8). A cmd or PowerShell shell is switched to it (chcp).",
});

/** An optional field that may also be `null` (which means the same as leaving it out). */
export function nullable<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/** `args` without its `null` fields (they mean "not given"), for handlers that expect none. */
export function withoutNulls<T extends object>(args: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null)) as {
    [K in keyof T]: Exclude<T[K], null>;
  };
}

/** A union of string literals (an enum, as JSON Schema `anyOf` of `const`s). */
export function literals<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((value) => Type.Literal(value)), options);
}
