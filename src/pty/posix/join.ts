/**
 * node:path's POSIX `join`, for the ledger's paths: node:path brings in a good part of Deno's
 * Node layer (about 3 MiB of an idle server's memory), which the supervision, loaded at start,
 * needs for nothing else. tests/pty/posix/join_test.ts compares the two.
 *
 * @module
 */

/** Joins `parts` with `/` and normalizes the result, exactly as `posix.join` of node:path. */
export function joinPosix(...parts: string[]): string {
  const path = parts.filter((part) => part !== "").join("/");
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") segments.push(segment);
    else if (segments.length > 0 && segments.at(-1) !== "..") segments.pop();
    else if (!absolute) segments.push("..");
  }
  const joined = segments.join("/");
  const trailing = path.endsWith("/") && joined !== "" ? "/" : "";
  if (absolute) return `/${joined}${trailing}`;
  return joined === "" ? (path.endsWith("/") ? "./" : ".") : `${joined}${trailing}`;
}
