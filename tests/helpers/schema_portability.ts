/**
 * The MCP Inspector's schema portability rules (its "Schema portability" findings, added in
 * modelcontextprotocol/inspector#2121), applied to the schemas of `tools/list` as a client
 * receives them: spellings that are legal JSON Schema but that some clients refuse or misread.
 *
 * - `untyped-schema`: a schema with no keyword that constrains a value (only annotations, or
 *   nothing: `{}`), the object spelling of `true`. Issue 39's six warnings were this: `_meta`
 *   sent as `patternProperties: {"^(.*)$": {}}`.
 * - `boolean-schema`: a bare `true` or `false` where a schema is expected (except as
 *   `additionalProperties` and its kin, which every client reads).
 * - `type-union`: `type` as a list (`["string", "null"]`); clients that read one string drop it.
 * - `remote-ref`: a `$ref` outside the schema (no client fetches one).
 * - `non-object-root`: an inputSchema whose root is not `type: "object"` (the Inspector's rule);
 *   here outputSchemas too, which the TypeScript SDK 1.x's clients parse with the same rule.
 *
 * And one of our own, which a client resolving references trips on: `dangling-ref`, a local
 * `$ref` that points at nothing in the schema.
 *
 * @module
 */

/** A rule's name. */
export type PortabilityRule =
  | "untyped-schema"
  | "boolean-schema"
  | "type-union"
  | "remote-ref"
  | "non-object-root"
  | "dangling-ref";

/** One spelling found, where. */
export interface PortabilityFinding {
  rule: PortabilityRule;
  tool: string;
  /** `inputSchema` or `outputSchema`, then the path inside it. */
  path: string;
}

/** A tool as `tools/list` lists it, as far as its schemas go. */
export interface ListedTool {
  name: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/** Keywords that constrain a value (anything else only annotates it). */
const CONSTRAINING = new Set([
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "format",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
  "items",
  "prefixItems",
  "contains",
  "additionalItems",
  "unevaluatedItems",
  "properties",
  "patternProperties",
  "additionalProperties",
  "propertyNames",
  "unevaluatedProperties",
  "dependentSchemas",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
]);

/** Keywords whose value may be a bare boolean: every client reads them so. */
const BOOLEAN_ALLOWED = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
]);

/** Keywords holding one schema. */
const ONE = [
  "items",
  "contains",
  "not",
  "propertyNames",
  "if",
  "then",
  "else",
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "contentSchema",
];
/** Keywords holding a list of schemas. */
const LISTS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Keywords holding a map of names to schemas. */
const MAPS = [
  "properties",
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "$defs",
  "definitions",
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The schema a local `$ref` ("#/$defs/x") points at in `root`, or undefined. */
function resolve(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function walk(
  root: unknown,
  node: unknown,
  path: string,
  keyword: string | undefined,
  found: (rule: PortabilityRule, path: string) => void,
  depth = 0,
): void {
  if (depth > 64) return;
  if (typeof node === "boolean") {
    if (keyword === undefined || !BOOLEAN_ALLOWED.has(keyword)) found("boolean-schema", path);
    return;
  }
  if (!isRecord(node)) return;
  if (Array.isArray(node.type)) found("type-union", path);
  if (typeof node.$ref === "string") {
    if (!node.$ref.startsWith("#")) found("remote-ref", path);
    else if (resolve(root, node.$ref) === undefined) found("dangling-ref", path);
  }
  const constrains = Object.keys(node).some((key) => CONSTRAINING.has(key)) ||
    ("if" in node && ("then" in node || "else" in node));
  if (!constrains && keyword !== "not") found("untyped-schema", path);
  for (const key of MAPS) {
    const map = node[key];
    if (!isRecord(map)) continue;
    for (const [name, child] of Object.entries(map)) {
      // `dependencies` may also map a name to a list of names: no schema there.
      if (key === "dependencies" && Array.isArray(child)) continue;
      walk(root, child, `${path}.${key}.${name}`, key, found, depth + 1);
    }
  }
  for (const key of LISTS) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    list.forEach((child, index) =>
      walk(root, child, `${path}.${key}[${index}]`, key, found, depth + 1)
    );
  }
  for (const key of ONE) {
    if (key in node && !Array.isArray(node[key])) {
      walk(root, node[key], `${path}.${key}`, key, found, depth + 1);
    }
  }
}

/** What the rules find in `tools`' schemas (none: every client reads them as meant). */
export function schemaPortability(tools: readonly ListedTool[]): PortabilityFinding[] {
  const findings: PortabilityFinding[] = [];
  for (const tool of tools) {
    for (const kind of ["inputSchema", "outputSchema"] as const) {
      const schema = tool[kind];
      if (schema === undefined) continue;
      const found = (rule: PortabilityRule, path: string) =>
        findings.push({ rule, tool: tool.name, path });
      if (!isRecord(schema) || schema.type !== "object") found("non-object-root", kind);
      walk(schema, schema, kind, undefined, found);
    }
  }
  return findings;
}
