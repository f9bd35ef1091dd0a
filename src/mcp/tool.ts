/**
 * How a tool is defined (TypeBox schemas for input and output, annotations, a handler) and
 * how a call is checked: arguments are validated before the handler runs, and a failure is
 * answered with a message that names the field and the rule it broke.
 *
 * @example
 * ```ts
 * import { Type } from "@sinclair/typebox";
 * import { defineTool } from "./tool.ts";
 * const echo = defineTool({
 *   name: "echo",
 *   title: "Echo",
 *   description: "Returns its text.",
 *   input: Type.Object({ text: Type.String({ maxLength: 100 }) }),
 *   output: Type.Object({ text: Type.String() }),
 *   annotations: { readOnlyHint: true },
 *   handler: ({ text }) => Promise.resolve({ text }),
 * });
 * ```
 * @module
 */
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { ValueError } from "@sinclair/typebox/errors";
import type { LoggingMessageNotification, ToolAnnotations } from "./sdk.ts";

/** What a handler can do besides computing its answer. */
export interface ToolContext {
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Reports progress, if the caller asked for it (a no-op otherwise). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message notification to this client (MCP logging). */
  log(params: LoggingMessageNotification["params"]): Promise<void>;
}

/** A tool. */
export interface ToolDefinition<I extends TObject = TObject, O extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  handler(args: Static<I>, context: ToolContext): Promise<Static<O>>;
}

/** Identity, for type inference of a tool's handler from its schemas. */
export function defineTool<I extends TObject, O extends TObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The problems with `args`, as messages naming each field; empty when they are valid. */
export function validationErrors(schema: TObject, args: unknown): string[] {
  let checker = checkers.get(schema);
  if (!checker) {
    checker = TypeCompiler.Compile(schema);
    checkers.set(schema, checker);
  }
  if (checker.Check(args)) return [];
  const messages: string[] = [];
  const seen = new Set<string>();
  for (const error of checker.Errors(args)) {
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    messages.push(describe(error, schema));
    if (messages.length === 5) break;
  }
  return messages;
}

/** The field named by an error path: "/env/HOME" is "env.HOME". */
function fieldName(path: string): string {
  return path.replace(/^\//, "").split("/").map((part) =>
    part.replaceAll("~1", "/").replaceAll("~0", "~")
  )
    .join(".") || "arguments";
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
}

function describe(error: ValueError, root: TObject): string {
  const field = fieldName(error.path);
  const schema = error.schema as Record<string, unknown>;
  if (error.message === "Unexpected property") {
    const known = Object.keys(root.properties).join(", ");
    return error.path.split("/").length > 2
      ? `'${field}' is not allowed here (${describeKeyRule(schema)})`
      : `'${field}' is not a known argument (known: ${known})`;
  }
  if (error.message === "Expected required property") return `'${field}' is required`;
  const anyOf = schema.anyOf as { const?: unknown }[] | undefined;
  if (anyOf?.every((option) => option.const !== undefined)) {
    return `'${field}' must be one of ${
      anyOf.map((option) => show(option.const)).join(", ")
    } (got ${show(error.value)})`;
  }
  return `'${field}' must be ${expectation(schema)} (got ${show(error.value)})`;
}

/** What a schema accepts, in words: "an integer from 1 to 3600". */
function expectation(schema: Record<string, unknown>): string {
  const { type, minimum, maximum, minLength, maxLength, maxItems, pattern } = schema;
  const range = (low: unknown, high: unknown, unit = "") =>
    low !== undefined && high !== undefined
      ? ` of ${low} to ${high}${unit}`
      : low !== undefined
      ? ` of at least ${low}${unit}`
      : high !== undefined
      ? ` of at most ${high}${unit}`
      : "";
  switch (type) {
    case "integer":
    case "number": {
      const noun = type === "integer" ? "an integer" : "a number";
      if (minimum !== undefined && maximum !== undefined) {
        return `${noun} from ${minimum} to ${maximum}`;
      }
      if (minimum !== undefined) return `${noun} >= ${minimum}`;
      return maximum !== undefined ? `${noun} <= ${maximum}` : noun;
    }
    case "string":
      return `a string${range(minLength, maxLength, " characters")}${
        pattern ? ` matching ${pattern}` : ""
      }`;
    case "array":
      return `an array${range(undefined, maxItems, " items")}`;
    case "boolean":
      return "true or false";
    case "object":
      return "an object";
    default:
      return "valid";
  }
}

function describeKeyRule(schema: Record<string, unknown>): string {
  const patterns = Object.keys((schema.patternProperties as object | undefined) ?? {});
  return patterns.length ? `names must match ${patterns.join(" or ")}` : "unknown name";
}

/** How often a long wait tells the client it is still alive. */
const PROGRESS_INTERVAL_MS = 2000;

/**
 * Awaits `promise` (which must end on its own: a wait with a timeout), sending progress every
 * few seconds meanwhile, so that clients which reset their request timeout on progress keep
 * waiting.
 */
export async function withProgress<T>(
  promise: Promise<T>,
  context: ToolContext,
  what: string,
): Promise<T> {
  const started = performance.now();
  const timer = setInterval(() => {
    const elapsed = Math.round(performance.now() - started);
    context.progress(elapsed, undefined, `waiting for ${what}: ${Math.round(elapsed / 1000)} s`);
  }, PROGRESS_INTERVAL_MS);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}
