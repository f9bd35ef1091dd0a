/**
 * How a transport refuses a message that is JSON but no JSON-RPC message the SDK's schema takes
 * (-32600, Invalid Request): with the field and the rule, and the id where one can be read.
 *
 * @example
 * ```ts
 * import { deserializeMessage } from "./sdk.ts";
 * import { whatIsWrong } from "./refusal.ts";
 * try {
 *   deserializeMessage('{"jsonrpc":"2.0","id":1,"method":7}');
 * } catch (error) {
 *   whatIsWrong(error as Error); // "'method': expected string, received number"
 * }
 * ```
 * @module
 */

/** The id to answer a refused message with: its own if usable (a string or finite number), else null. */
export function answerableId(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/** An issue of the SDK's schema check (Zod's shape): unions hold each alternative's issues. */
interface SchemaIssue {
  code?: string;
  path?: PropertyKey[];
  message?: string;
  expected?: string;
  errors?: SchemaIssue[][];
}

/**
 * What is wrong with a message, as `'field.path': rule`: the deepest field the schema check
 * reached, with what each alternative wanted there (`'params._meta.progressToken': expected
 * string or number, received object`), instead of the check's whole nested report (a 3 KB
 * dump of every union branch for one wrong field).
 */
export function whatIsWrong(error: Error): string {
  const issues = (error as { issues?: unknown }).issues;
  if (!Array.isArray(issues)) return error.message;
  const leaves: { path: string; depth: number; issue: SchemaIssue }[] = [];
  const collect = (list: SchemaIssue[], prefix: PropertyKey[]) => {
    for (const issue of list) {
      const path = [...prefix, ...(Array.isArray(issue.path) ? issue.path : [])];
      if (issue.code === "invalid_union" && Array.isArray(issue.errors)) {
        for (const branch of issue.errors) if (Array.isArray(branch)) collect(branch, path);
      } else leaves.push({ path: path.map(String).join("."), depth: path.length, issue });
    }
  };
  collect(issues as SchemaIssue[], []);
  if (leaves.length === 0) return error.message;
  const depth = Math.max(...leaves.map((leaf) => leaf.depth));
  const deepest = leaves.filter((leaf) => leaf.depth === depth);
  const path = deepest[0].path;
  const here = deepest.filter((leaf) => leaf.path === path).map((leaf) => leaf.issue);
  const expected = [...new Set(here.map((issue) => issue.expected).filter(Boolean))];
  const received = here[0].message?.match(/received (\w+)/)?.[1];
  const got = received === "undefined" ? ", missing" : received ? `, received ${received}` : "";
  const rule = here.every((issue) => issue.code === "invalid_type") && expected.length > 0
    ? `expected ${expected.join(" or ")}${got}`
    : [...new Set(here.map((issue) => issue.message ?? issue.code))].join(" or ");
  return `'${path || "(the message)"}': ${rule}`;
}
