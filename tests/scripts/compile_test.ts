/**
 * The bundle the executables are compiled from (scripts/compile.ts). Only the bundle: `deno
 * compile` downloads its runtime, which a test cannot count on.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { cpSync } from "node:fs";
import { dirname, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import config from "../../deno.json" with { type: "json" };
import { bundle } from "../../scripts/compile.ts";
import { withBundle } from "../helpers/bundle.ts";
import { moduleGraph, reachable } from "../helpers/module_graph.ts";
import { tempDir } from "../helpers/process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("the bundle names no path of the machine that made it", async () => {
  const out = tempDir("winterm-compile-");
  try {
    await bundle(out);
    const { stdout } = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] })
      .output();
    const { denoDir } = JSON.parse(new TextDecoder().decode(stdout));
    const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE");
    const machine = [
      denoDir,
      relative(Deno.realPathSync(ROOT), denoDir), // esbuild's paths are relative
      ...(home && home !== "/" ? [home + "/"] : []),
      "/root/",
    ].map((path) => path.replaceAll("\\", "/"));
    let named = false;
    for (const file of Deno.readDirSync(out)) {
      const code = Deno.readTextFileSync(`${out}/${file.name}`);
      for (const path of machine) ok(!code.includes(path), `${file.name} names ${path}`);
      named ||= code.includes(`// ${config.imports["iconv-lite"]}/lib/index.js\n`);
    }
    ok(named, "npm modules are named by package");
  } finally {
    Deno.removeSync(out, { recursive: true });
  }
});

/** Every file in `dir`: its name and content. */
function contents(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const file of Deno.readDirSync(dir)) {
    files.set(file.name, Deno.readTextFileSync(`${dir}/${file.name}`));
  }
  return files;
}

Deno.test("the bundle is the same wherever it is made", async () => {
  // A checkout elsewhere reaches the same cache by another path (esbuild writes them relative);
  // so does another cache, which a test cannot make cheaply.
  const scratch = tempDir("winterm-compile-");
  try {
    const elsewhere = `${scratch}/a/b/c/winterm-mcp`;
    for (const path of ["main.ts", "deno.json", "deno.lock", "src", "scripts/compile.ts"]) {
      cpSync(`${ROOT}${path}`, `${elsewhere}/${path}`, { recursive: true });
    }
    const compileThere: typeof import("../../scripts/compile.ts") = await import(
      pathToFileURL(`${elsewhere}/scripts/compile.ts`).href
    );
    await bundle(`${scratch}/here`);
    await compileThere.bundle(`${scratch}/there`);
    const [here, there] = [contents(`${scratch}/here`), contents(`${scratch}/there`)];
    assertEquals([...there.keys()].sort(), [...here.keys()].sort());
    for (const [name, code] of here) ok(there.get(name) === code, `${name} differs`);
  } finally {
    Deno.removeSync(scratch, { recursive: true });
  }
});

Deno.test("the bundle, idle, has loaded no Node module and nothing from outside itself", async () => {
  // As tests/house/startup_graph_test.ts holds main.ts: main.js and the chunks an idle server
  // imports (the groundwork, the tools and their schemas) reach only chunks by static imports.
  // esbuild's helpers chunk, which every chunk imports, made CommonJS's `require` at load from
  // node:module: Deno's Node layer before the `initialize` answer (30-40 ms, 5-6 MiB).
  await withBundle(async (main) => {
    const dir = dirname(main);
    const idle = new Set<string>();
    for (const file of Deno.readDirSync(dir)) {
      if (!/^(main|groundwork-.*|profiles-.*)\.js$/.test(file.name)) continue;
      const entry = pathToFileURL(`${dir}/${file.name}`).href;
      for (
        const specifier of reachable(await moduleGraph(entry, pathToFileURL(ROOT)), entry, false)
      ) {
        idle.add(specifier);
      }
    }
    ok(idle.size > 3, `only ${[...idle]}`);
    const inside = pathToFileURL(dir).href + "/";
    assertEquals([...idle].filter((specifier) => !specifier.startsWith(inside)), []);
  });
});
