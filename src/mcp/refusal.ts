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

/**
 * The id to answer a refused message with: its own if it can be given back as sent (a string,
 * or a finite number that is not an integer beyond 2^53 - 1, see {@link inexactId}), else null.
 */
export function answerableId(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  if (typeof id === "string") return id;
  return typeof id === "number" && Number.isFinite(id) && !inexactId(message) ? id : null;
}

/**
 * Why a message's id cannot be answered, or undefined when it can: JSON numbers are read as
 * doubles, so an integer id beyond 2^53 - 1 arrives rounded (9007199254740993 is read as
 * ...992), and an answer with it would answer another id. The SDK's schema refuses such ids;
 * this says why, and {@link answerableId} answers them with null.
 */
export function inexactId(message: unknown): string | undefined {
  const id = (message as { id?: unknown } | null)?.id;
  if (typeof id !== "number" || !Number.isInteger(id) || Number.isSafeInteger(id)) return undefined;
  return `'id': an integer beyond ${Number.MAX_SAFE_INTEGER} arrives rounded and cannot be ` +
    "answered exactly; use a string or a smaller integer";
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
  const inexact = inexactId(message);
  if (inexact) return inexact;
  if (id !== undefined && typeof id !== "string" && !Number.isSafeInteger(id)) {
    // JSON has no Infinity: a number too large for a double (1e400) is read as one.
    const received = id === Infinity || id === -Infinity
      ? "a number too large to read"
      : clip(JSON.stringify(id) ?? "", 40);
    return `'id': expected a string or an integer, received ${received}`;
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
