/**
 * Schema pieces shared by the front ends (MCP tools and the REST API), as TypeBox schemas;
 * validation.ts checks arguments against them.
 *
 * @example
 * ```ts
 * import { Type } from "./typebox.ts";
 * import { CString, literals } from "./schema.ts";
 * import { validationErrors } from "./validation.ts";
 * const Input = Type.Object({ command: CString, shell: literals(["bash", "sh"]) });
 * validationErrors(Input, { command: "ls\0", shell: "fish" });
 * // 'command' must be a string of at most 32768 characters matching ^[^\u0000]*$ (got "ls\u0000")
 * // 'shell' must be one of "bash", "sh" (got "fish")
 * ```
 * @module
 */
import { type SchemaOptions, type TLiteral, type TSchema, type TUnion, Type } from "./typebox.ts";
import { MAX_CONTEXT_LINES, SANDBOX_MODES } from "./engine/vocabulary.ts";
import { NUL_FREE, unadvertised } from "./schema_marks.ts";

/**
 * An argument or an environment value: text a C string can carry (no NUL), so a bad one is
 * refused naming its field rather than as a failure to start the program.
 */
export const CString = Type.String({ maxLength: 32768, pattern: NUL_FREE });

/** Environment variables to add or override: names without `=` or NUL. */
export const Env = Type.Record(
  Type.String({ pattern: "^[^=\\u0000]+$" }),
  CString,
  { additionalProperties: false, maxProperties: 500 },
);

/** How a program's bytes are read and its input written (the `encoding` argument). */
export const Encoding = Type.String({
  minLength: 1,
  maxLength: 40,
  description: "Default: detected. E.g. gbk, 936, oem.",
});

/** The opt-in past the WorstFit check (`allow_ansi_mismatch`, `allowAnsiMismatch`). */
export const AllowAnsiMismatch = Type.Boolean({
  default: false,
  description: "Windows: run even if the ANSI code page alters the command line.",
});

/** A search of the kept output (`grep`): the same patterns as waits, and their limit. */
export const Grep = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: "Only the lines matching this RE2 regex, numbered, and a count.",
});

/** Lines shown around each match of a search (`context_lines`, `contextLines`). */
export const ContextLines = Type.Integer({
  minimum: 0,
  maximum: MAX_CONTEXT_LINES,
  description: "Lines shown around each match.",
});

/**
 * An optional field that may also be `null` (which means the same as leaving it out, as ACP
 * clients do): advertised without the `null`.
 */
export function nullable<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Union([schema, unadvertised(Type.Null())]));
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

/** A call's sandbox (run_command, terminal_create, REST): it can only tighten the server's. */
export const Sandbox = Type.Object({
  mode: Type.Optional(literals(SANDBOX_MODES, {
    description: "workspace-write: writes only in cwd, TMPDIR, writable.",
  })),
  network: Type.Optional(Type.Union([
    literals(["off", "on"] as const),
    Type.Object({
      allow: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
        minItems: 1,
        maxItems: 100,
      }),
    }, { additionalProperties: false }),
  ], { description: "Default off; allow: hosts, via a proxy." })),
  writable: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
    maxItems: 64,
  })),
}, {
  additionalProperties: false,
  description: "Confine it (Linux, macOS): credentials hidden, writes and network as given.",
});

/**
 * What an answer says about a sandboxed process (`mode`, `network`, `backend`, `writable`,
 * `unenforced`, `refused`, `refusedCount`: docs/security.md), declared as an object only: it is
 * in five tools' outputSchemas, where its fields cost 2.5 KB of every `tools/list`.
 */
export const SandboxInfo = Type.Object({});
