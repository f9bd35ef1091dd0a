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
 *   whatIsWrong(error as Error, { jsonrpc: "2.0", id: 1, method: 7 });
 *   // "'method': expected string, received number"
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

/** An issue where it sits: its whole path, dotted (each part cut), and how deep. */
interface Leaf {
  path: string;
  depth: number;
  issue: SchemaIssue;
}

/** Longest part of a path, and of the rule, put in an answer (a client's key may be 1 MB). */
const MOST_PART = 60, MOST_RULE = 200;

function clip(text: string, most: number): string {
  return text.length > most ? `${text.slice(0, most)}…` : text;
}

function deepestOf(leaves: Leaf[]): number {
  return leaves.reduce((most, leaf) => Math.max(most, leaf.depth), -1);
}

/**
 * The issues that say what is wrong. Within a union: when every alternative failed at one and
 * the same field only (a string or a number), all of them, to be told together; else those of
 * the alternative that came closest: the fewest issues, then the deepest (a message with a
 * `method` is a request or a notification that went wrong, not a response missing `result`).
 */
function leavesOf(issues: SchemaIssue[], prefix: PropertyKey[]): Leaf[] {
  const leaves: Leaf[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(Array.isArray(issue.path) ? issue.path : [])];
    if (issue.code !== "invalid_union" || !Array.isArray(issue.errors)) {
      const parts = path.map((part) => clip(String(part), MOST_PART));
      leaves.push({ path: parts.join("."), depth: path.length, issue });
      continue;
    }
    // Each alternative's own issues (how many there are says how close it came), as leaves.
    const branches = issue.errors.filter(Array.isArray).map((branch) => ({
      issues: branch.length,
      leaves: leavesOf(branch, path),
    }));
    const first = branches[0]?.leaves[0]?.path;
    const oneField = branches.length > 0 &&
      branches.every(({ leaves }) => leaves.length === 1 && leaves[0].path === first);
    if (oneField) {
      leaves.push(...branches.flatMap((branch) => branch.leaves));
      continue;
    }
    let closest: (typeof branches)[number] | undefined;
    for (const branch of branches) {
      if (
        !closest || branch.issues < closest.issues ||
        (branch.issues === closest.issues && deepestOf(branch.leaves) > deepestOf(closest.leaves))
      ) closest = branch;
    }
    leaves.push(...closest?.leaves ?? []);
  }
  return leaves;
}

/**
 * What is wrong with a message, as `'field.path': rule`, at most a few hundred characters: the
 * deepest field of the alternative that came closest, with what each way of being right wanted
 * there (`'params._meta.progressToken': expected string or number, received object`), instead
 * of the check's whole nested report (a 3 KB dump of every union branch for one wrong field,
 * or every one of a client's 40,000 unknown keys).
 */
export function whatIsWrong(error: Error, message: unknown): string {
  // The check's union reports a bad id as a notification's unknown key: said plainly instead.
  const id = (message as { id?: unknown } | null)?.id;
  if (id !== undefined && typeof id !== "string" && !Number.isSafeInteger(id)) {
    return `'id': expected a string or an integer, received ${clip(JSON.stringify(id) ?? "", 40)}`;
  }
  const issues = (error as { issues?: unknown }).issues;
  if (!Array.isArray(issues)) return clip(error.message, MOST_RULE);
  const leaves = leavesOf(issues as SchemaIssue[], []);
  if (leaves.length === 0) return clip(error.message, MOST_RULE);
  const depth = deepestOf(leaves);
  const path = leaves.find((leaf) => leaf.depth === depth)!.path;
  const here = leaves.filter((leaf) => leaf.path === path).map((leaf) => leaf.issue);
  const expected = [...new Set(here.map((issue) => issue.expected).filter(Boolean))];
  const received = here[0].message?.match(/received (\w+)/)?.[1];
  const got = received === "undefined" ? ", missing" : received ? `, received ${received}` : "";
  const rule = here.every((issue) => issue.code === "invalid_type") && expected.length > 0
    ? `expected ${expected.join(" or ")}${got}`
    : [...new Set(here.map((issue) => issue.message ?? issue.code))].join(" or ");
  return `'${clip(path, MOST_RULE) || "(the message)"}': ${clip(rule, MOST_RULE)}`;
}
