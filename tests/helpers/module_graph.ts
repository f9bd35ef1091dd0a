/**
 * A module graph as `deno info --json` gives it, and what a module reaches in it: what Deno
 * loads before a module runs (its static imports), or everything it may ever load.
 *
 * @module
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fileURLToPath } from "node:url";

interface Dependency {
  code?: { specifier?: string };
  isDynamic?: boolean;
}

/** `deno info --json` of one entry. */
export interface ModuleGraph {
  modules: { specifier: string; dependencies?: Dependency[] }[];
  redirects: Record<string, string>;
}

/** The graph of `entry`, as `deno info` sees it from `cwd` (whose deno.json applies). */
export async function moduleGraph(entry: string, cwd: URL): Promise<ModuleGraph> {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: fileURLToPath(cwd),
    stdout: "piped",
    stderr: "null",
  }).output();
  assertEquals(code, 0);
  return JSON.parse(new TextDecoder().decode(stdout));
}

/** The specifiers `from` reaches: through static imports only, or dynamic ones too. */
export function reachable(graph: ModuleGraph, from: string, dynamic: boolean): Set<string> {
  const modules = new Map(graph.modules.map((module) => [module.specifier, module]));
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const specifier = graph.redirects[stack.at(-1)!] ?? stack.at(-1)!;
    stack.pop();
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      const target = dependency.code?.specifier;
      if (target && (dynamic || !dependency.isDynamic)) stack.push(target);
    }
  }
  return seen;
}
