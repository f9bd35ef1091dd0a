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
    "Default: followed (Windows pipes: UTF-8 where the bytes are UTF-8, else the console code " +
    "page; terminals: UTF-8). A cmd or PowerShell shell is switched to it (chcp).",
});

/** The opt-in past the WorstFit check (`allow_ansi_mismatch`, `allowAnsiMismatch`). */
export const AllowAnsiMismatch = Type.Boolean({
  default: false,
  description: "Windows: start even though the program path, an argument, the command or the " +
    "working directory holds characters the system's ANSI code page cannot represent exactly " +
    "(refused by default: a program that reads its command line as ANSI sees look-alikes, a " +
    'fullwidth ＂ as ", the WorstFit argument injection). Only for programs known to read ' +
    "Unicode.",
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

/** A call's sandbox (run_command, terminal_create, REST): it can only tighten the server's. */
export const Sandbox = Type.Object({
  mode: Type.Optional(literals(SANDBOX_MODES, {
    description: "off | workspace-write (writes only under the working directory, the temporary " +
      "directory given to it (TMPDIR) and `writable`) | read-only (writes nowhere). Default: the " +
      "server's mode, or workspace-write when the server's is off.",
  })),
  network: Type.Optional(Type.Union([
    literals(["off", "on"] as const),
    Type.Object({
      allow: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
        minItems: 1,
        maxItems: 100,
        description: "Hosts it may reach through the server's proxy (HTTP_PROXY is set): " +
          "api.example.com, *.example.org, an IP address; each may end in :port.",
      }),
    }, { additionalProperties: false }),
  ], {
    description: "off (default: no network but unix sockets) | on | { allow: [hosts] }. At most " +
      "what the server allows.",
  })),
  writable: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
    maxItems: 64,
    description: "Directories it may also write under (workspace-write): within the server's " +
      "writable paths (WINTERM_SANDBOX_WRITABLE) when the server sandboxes.",
  })),
}, {
  additionalProperties: false,
  description: "Confine what runs (Linux: Landlock and seccomp; macOS: Seatbelt; refused on " +
    "Windows): reads everywhere but credentials (~/.ssh, ~/.aws, ...), writes and network as " +
    "given. The server's setting is the default and the most a call gets; a call can only " +
    "tighten it. Answers say what applied (sandbox).",
});

/** What an answer says about a sandboxed process. */
export const SandboxInfo = Type.Object({
  mode: literals(["read-only", "workspace-write"] as const),
  network: Type.Union([
    literals(["off", "on"] as const),
    Type.Object({ allow: Type.Array(Type.String()) }),
  ]),
  backend: Type.String({ description: "landlock+seccomp (Linux) or seatbelt (macOS)." }),
  writable: Type.Optional(Type.Array(Type.String(), { description: "Where it may write." })),
  unenforced: Type.Optional(Type.Array(Type.String(), {
    description: "What this kernel cannot enforce.",
  })),
  refused: Type.Optional(Type.Array(
    Type.Object({ host: Type.String(), port: Type.Integer(), reason: Type.String() }),
    { description: "Connections its network proxy refused (the last 20)." },
  )),
  refusedCount: Type.Optional(Type.Integer()),
}, { description: "The sandbox it runs in." });
