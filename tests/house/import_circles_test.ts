import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { moduleGraph } from "../helpers/module_graph.ts";

/**
 * No module under src/ reaches itself through what loads at run time (static and dynamic
 * imports, as `deno info` sees them): a circle is a handshake between modules that each wait
 * for the other to be evaluated (the old pty/supervision.ts <-> pty/posix/supervisor.ts, which
 * traded a state directory and a shutdown hook through module globals).
 */
const ROOT = new URL("../../", import.meta.url);
const SRC = new URL("src/", ROOT);

/** Every module file under `dir`. */
function modulesUnder(dir: URL): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) found.push(...modulesUnder(url));
    else if (/\.(ts|tsx|js)$/.test(entry.name)) found.push(url.href);
  }
  return found;
}

/** The run-time imports among src/'s modules: from main.ts, and from whatever it never reaches. */
async function sourceImports(): Promise<Map<string, string[]>> {
  const imports = new Map<string, string[]>();
  for (const file of ["main.ts", ...modulesUnder(SRC)]) {
    if (imports.has(file)) continue;
    const graph = await moduleGraph(file.startsWith("file:") ? new URL(file).pathname : file, ROOT);
    for (const module of graph.modules) {
      if (!module.specifier.startsWith(ROOT.href)) continue;
      const targets = (module.dependencies ?? []).map((dependency) => dependency.code?.specifier)
        .filter((target) => target !== undefined).map((target) => graph.redirects[target] ?? target)
        .filter((target) => target.startsWith(SRC.href));
      imports.set(module.specifier, targets);
    }
  }
  return imports;
}

/** The strongly connected groups of more than one module (Tarjan), or of one importing itself. */
function circles(imports: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (module: string) => {
    index.set(module, index.size);
    low.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const target of imports.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(module, Math.min(low.get(module)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(module, Math.min(low.get(module)!, index.get(target)!));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member.slice(ROOT.href.length));
    } while (member !== module);
    if (group.length > 1 || imports.get(module)!.includes(module)) found.push(group);
  };
  for (const module of imports.keys()) if (!index.has(module)) visit(module);
  return found;
}

Deno.test("no import circle among src/'s modules", async () => {
  const imports = await sourceImports();
  ok(imports.has(new URL("pty/supervision/mod.ts", SRC).href), "src/ was read");
  assertEquals(circles(imports), []);
});

Deno.test("the circle finder finds circles", () => {
  const at = (name: string) => new URL(name, SRC).href;
  const imports = new Map([
    [at("a.ts"), [at("b.ts")]],
    [at("b.ts"), [at("c.ts")]],
    [at("c.ts"), [at("a.ts")]],
    [at("d.ts"), [at("d.ts")]],
    [at("e.ts"), [at("a.ts")]],
  ]);
  assertEquals(circles(imports).map((group) => group.sort()), [
    ["src/a.ts", "src/b.ts", "src/c.ts"],
    ["src/d.ts"],
  ]);
});
