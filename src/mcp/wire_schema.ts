/**
 * A tool's schema as `tools/list` sends it: plain JSON (TypeBox's symbol keys left behind), as
 * short as it can be without teaching less, since every client pays for every byte of the list
 * in every conversation. The server validates with the TypeBox schema itself, unchanged.
 *
 * - Said shorter, the same values: a union of constants of one type, as TypeBox writes it
 *   (`anyOf` of `{const, type}`), is sent as one `enum` (`{"type": "string", "enum": ["a",
 *   "b"]}`, a third the size); a union left with one branch is that branch; an empty
 *   `properties` below the root (an open object) is left out.
 * - Accepted, not taught (what is sent allows less): what is marked `unadvertised`
 *   (schema_marks.ts), the `null` that ACP clients send for a field they leave out, their
 *   `sessionId` and `_meta`, their list form of `env`. Such a property is left out only from an
 *   object that refuses unknown names, and such a branch only from an `anyOf`, so nothing the
 *   schema refuses is allowed by leaving it out.
 * - Enforced, not sent (what is sent allows more): the bounds on a string's length and on the
 *   size of a list or a map (`maxLength`, `minLength`, `maxItems`, `minItems`, `maxProperties`,
 *   `minProperties`) and the pattern of a string without NUL. They keep hostile input bounded,
 *   far past what a caller needs, and a refusal names them. A bound a caller can reach is
 *   marked `sizeShown` and sent (run_command's `command`, at most 1,000 characters).
 *
 * @example
 * ```ts
 * import { Type } from "../typebox.ts";
 * import { literals, nullable } from "../schema.ts";
 * import { wireSchema } from "./wire_schema.ts";
 * wireSchema(Type.Object({ mode: literals(["head", "tail"]), cols: nullable(Type.Integer()) }));
 * // {type: "object", properties: {mode: {type: "string", enum: ["head", "tail"]},
 * //   cols: {type: "integer"}}, required: ["mode"]}
 * ```
 * @module
 */
import { isSizeShown, isUnadvertised, NUL_FREE } from "../schema_marks.ts";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** `schema` as `tools/list` sends it (see the module's doc). */
export function wireSchema(schema: object): JsonObject {
  return compact(schema as Record<string, unknown>, true);
}

/** The size bounds of strings, lists and maps (see the module's doc). */
const SIZE_BOUNDS = new Set([
  "maxLength",
  "minLength",
  "maxItems",
  "minItems",
  "maxProperties",
  "minProperties",
]);
/** Keywords that only annotate: a union's own, which its one branch can take over. */
const ANNOTATIONS = new Set(["title", "description", "default", "examples", "$comment"]);
/** Keywords whose value is a map of names to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);
/** Keywords whose value is a schema. */
const SCHEMAS = new Set(["items", "additionalProperties", "not", "propertyNames", "contains"]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);

function compact(node: Record<string, unknown>, root: boolean): JsonObject {
  let out: JsonObject = {};
  const sizeShown = isSizeShown(node);
  const closed = node.additionalProperties === false;
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined) continue;
    if (!sizeShown && (SIZE_BOUNDS.has(key) || (key === "pattern" && value === NUL_FREE))) continue;
    if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      const hides = key === "properties" && closed;
      out[key] = Object.fromEntries(
        Object.entries(value).filter(([, child]) => !(hides && isUnadvertised(child)))
          .map(([name, child]) => [name, schemaOf(child)]),
      );
    } else if (SCHEMAS.has(key) && isRecord(value)) {
      out[key] = compact(value, false);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      const kept = key === "anyOf" ? value.filter((child) => !isUnadvertised(child)) : value;
      // Every branch unadvertised: nothing is taught, so nothing is allowed.
      out[key] = kept.length ? kept.map(schemaOf) : [{ not: {} }];
    } else {
      out[key] = JSON.parse(JSON.stringify(value));
    }
  }
  if (Array.isArray(out.required) && isRecord(out.properties)) {
    const properties = out.properties;
    out.required = out.required.filter((name) => typeof name === "string" && name in properties);
    if (out.required.length === 0) delete out.required;
  }
  if (!root && isRecord(out.properties) && Object.keys(out.properties).length === 0) {
    delete out.properties;
  }
  if (Array.isArray(out.anyOf) && out.anyOf.length === 1 && isRecord(out.anyOf[0])) {
    const { anyOf: [branch], ...outer } = out;
    const annotationsOnly = Object.keys(outer).every((key) => ANNOTATIONS.has(key));
    const clash = Object.keys(branch as JsonObject).some((key) => key in outer);
    if (annotationsOnly && !clash) out = { ...outer, ...(branch as JsonObject) };
  }
  return asEnum(out);
}

function schemaOf(value: unknown): Json {
  return isRecord(value) ? compact(value, false) : JSON.parse(JSON.stringify(value));
}

/** `{anyOf: [{const: a, type: T}, {const: b, type: T}]}` as `{type: T, enum: [a, b]}`. */
function asEnum(node: JsonObject): JsonObject {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length === 0 || "type" in node || "enum" in node) {
    return node;
  }
  const first = options[0];
  const type = isRecord(first) ? first.type : undefined;
  if (typeof type !== "string") return node;
  const constants: Json[] = [];
  for (const option of options) {
    if (!isRecord(option) || option.type !== type || !("const" in option)) return node;
    if (Object.keys(option).length !== 2) return node;
    constants.push(option.const as Json);
  }
  const { anyOf: _, ...rest } = node;
  return { ...rest, type, enum: constants };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
