/**
 * Validation of arguments against the front ends' TypeBox schemas (schema.ts): a compiled
 * checker per schema, and failures described in words that name the field and the rule
 * ("'timeout' must be an integer from 1 to 3600 (got 0)"). The checker's compiler loads with
 * the first call that needs it, not with the schemas (about 1 MiB of an idle server).
 *
 * @example
 * ```ts
 * import { Type } from "./typebox.ts";
 * import { validationErrors } from "./validation.ts";
 * validationErrors(Type.Object({ n: Type.Integer({ minimum: 1 }) }), { n: 0 });
 * // ["'n' must be an integer >= 1 (got 0)"]
 * ```
 * @module
 */
import type { TObject, TSchema } from "./typebox.ts";
import { type TypeCheck, TypeCompiler, type ValueError } from "./typebox_compiler.ts";

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Problems named in a refusal; the rest are counted (up to {@link MOST_COUNTED}). */
const MOST_NAMED = 5, MOST_COUNTED = 10_000;

/**
 * The problems with `args`, as messages naming each field (the first {@link MOST_NAMED}, then
 * how many more); empty when they are valid. A `__proto__` key anywhere (or an object whose
 * prototype was replaced by one on its way here) is refused like any unknown key: it would
 * otherwise slip past the key checks.
 */
export function validationErrors(schema: TObject, args: unknown): string[] {
  const smuggled = prototypeKeys(args, "");
  if (smuggled.length) {
    return named(
      smuggled.slice(0, MOST_NAMED).map((path) =>
        path === "__proto__"
          ? `'__proto__' is not a known argument (${knownArguments(schema)})`
          : `'${path.split(".").map(clip).join(".")}' is not allowed here (unknown name)`
      ),
      smuggled.length,
    );
  }
  let checker = checkers.get(schema);
  if (!checker) {
    checker = TypeCompiler.Compile(schema);
    checkers.set(schema, checker);
  }
  if (checker.Check(args)) return [];
  const messages: string[] = [];
  const seen = new Set<string>();
  for (const error of checker.Errors(args)) {
    const inside = failuresInside(error);
    for (const each of inside.length > 0 ? inside : [error]) {
      if (seen.has(each.path)) continue;
      seen.add(each.path);
      if (messages.length < MOST_NAMED) messages.push(describe(each, schema));
    }
    if (seen.size > MOST_COUNTED) break;
  }
  return named(messages, seen.size);
}

/** The messages named, and a last one counting the `found` problems they leave out. */
function named(messages: string[], found: number): string[] {
  const rest = found - messages.length;
  if (rest <= 0) return messages;
  const count = found > MOST_COUNTED ? `at least ${MOST_COUNTED - messages.length}` : rest;
  return [...messages, `and ${count} more ${rest === 1 ? "problem" : "problems"}`];
}

/** The field named by an error path: "/env/HOME" is "env.HOME". */
function fieldName(path: string): string {
  return path.replace(/^\//, "").split("/").map((part) =>
    clip(part.replaceAll("~1", "/").replaceAll("~0", "~"))
  )
    .join(".") || "arguments";
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : clip(text);
}

/**
 * Text from the client as a message shows it: a long one cut (a 1 MB name is not echoed), and
 * control characters written as escapes (a NUL in a name is not put in the message).
 */
function clip(text: string): string {
  const shown = text.length > 60 ? text.slice(0, 57) + "..." : text;
  // deno-lint-ignore no-control-regex
  return shown.replace(/[\u0000-\u001f\u007f]/g, (char) => JSON.stringify(char).slice(1, -1));
}

/** The arguments a tool takes, as an unknown argument's refusal lists them. */
function knownArguments(schema: TObject): string {
  const known = Object.keys(schema.properties);
  return known.length ? `known: ${known.join(", ")}` : "it takes no arguments";
}

function describe(error: ValueError, root: TObject): string {
  const field = fieldName(error.path);
  const schema = error.schema as Record<string, unknown>;
  if (error.message === "Unexpected property") {
    return error.path.split("/").length > 2
      ? `'${field}' is not allowed here (${describeKeyRule(schema)})`
      : `'${field}' is not a known argument (${knownArguments(root)})`;
  }
  if (error.message === "Expected required property") return `'${field}' is required`;
  const anyOf = schema.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf?.every((option) => option.const !== undefined)) {
    return `'${field}' must be one of ${
      anyOf.map((option) => show(option.const)).join(", ")
    } (got ${show(error.value)})`;
  }
  if (anyOf) {
    // An option that took the value's shape but failed inside it names the field at fault.
    const [inner] = failuresInside(error);
    if (inner) return describe(inner, root);
    const options = anyOf.filter((option) => option.type !== "null");
    const orNull = options.length < anyOf.length ? " or null" : "";
    // The size, where the option of the value's kind has a rule on it.
    const sized = options.find((option) =>
      Array.isArray(error.value) ? option.type === "array" : option.type === "object"
    );
    return `'${field}' must be ${options.map(optionExpectation).join(", or ")}${orNull} (got ${
      shown(sized ?? {}, error.value)
    })`;
  }
  return `'${field}' must be ${expectation(schema)} (got ${shown(schema, error.value)})`;
}

/** The value a rule refused, as the refusal shows it: its size where the rule is on its size. */
function shown(schema: Record<string, unknown>, value: unknown): string {
  if (Array.isArray(value) && schema.maxItems !== undefined) return `${value.length} items`;
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    schema.maxProperties !== undefined
  ) {
    return `${Object.keys(value).length} entries`;
  }
  return show(value);
}

/**
 * The failures below a union's own field, of the first of its options that has any (the one
 * that took the value's shape): each is named or counted, not only the first. None if no option
 * got that far. (A union's options are read once: their errors are iterators.)
 */
function failuresInside(error: ValueError): ValueError[] {
  for (const option of error.errors ?? []) {
    const below: ValueError[] = [];
    for (const inner of option) {
      if (inner.path.length > error.path.length) below.push(inner);
      else below.push(...failuresInside(inner));
    }
    if (below.length > 0) return below;
  }
  return [];
}

/** What one option of a union accepts: "one of "a", "b"" for an enum, else as any schema. */
function optionExpectation(schema: Record<string, unknown>): string {
  const anyOf = schema.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf?.every((option) => option.const !== undefined)) {
    return `one of ${anyOf.map((option) => show(option.const)).join(", ")}`;
  }
  return anyOf ? anyOf.map(optionExpectation).join(", or ") : expectation(schema);
}

/** What a schema accepts, in words: "an integer from 1 to 3600". */
function expectation(schema: Record<string, unknown>): string {
  const { type, minimum, maximum, minLength, maxLength, maxItems, maxProperties, pattern } = schema;
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
      return `an object${range(undefined, maxProperties, " entries")}`;
    default:
      return "valid";
  }
}

function describeKeyRule(schema: Record<string, unknown>): string {
  const patterns = Object.keys((schema.patternProperties as object | undefined) ?? {});
  return patterns.length ? `names must match ${patterns.join(" or ")}` : "unknown name";
}

/** Paths ("env.__proto__") of `__proto__` keys, own or smuggled in as a replaced prototype. */
function prototypeKeys(value: unknown, path: string, depth = 0): string[] {
  if (typeof value !== "object" || value === null || depth > 32) return [];
  const here = path ? `${path}.__proto__` : "__proto__";
  const prototype = Object.getPrototypeOf(value);
  const plain = Array.isArray(value)
    ? prototype === Array.prototype
    : prototype === Object.prototype || prototype === null;
  const found = !plain || Object.hasOwn(value, "__proto__") ? [here] : [];
  for (const [key, item] of Object.entries(value)) {
    if (key === "__proto__") continue;
    found.push(...prototypeKeys(item, path ? `${path}.${key}` : key, depth + 1));
  }
  return found;
}
