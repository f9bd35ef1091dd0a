import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { existsSync } from "node:fs";
import { moduleGraph, reachable } from "../helpers/module_graph.ts";

/**
 * What `deno run main.ts` loads before it can answer `initialize`: the modules main.ts reaches
 * through static imports. Everything else (the engine, the tools and their schemas, the output
 * pipeline's libraries, HTTP) is imported when needed, so it must not be reachable that way.
 */
const ROOT = new URL("../../", import.meta.url);
const graph = () => moduleGraph("main.ts", ROOT);

Deno.test("start-up: main.ts loads no npm package and no Node module", async () => {
  const info = await graph();
  const loaded = [...reachable(info, new URL("main.ts", ROOT).href, false)];
  const foreign = loaded.filter((specifier) => !specifier.startsWith(ROOT.href));
  assertEquals(foreign, []);
  for (const late of ["src/engine/engine.ts", "src/http/server.ts", "src/schema.ts"]) {
    ok(existsSync(new URL(late, ROOT)), `${late} is no file: a stale name would pass unseen`);
    ok(!loaded.includes(new URL(late, ROOT).href), `${late} is loaded before initialize`);
  }
});

Deno.test("idle: the groundwork, the tools and their schemas load no npm package, no Node module, no engine, no checker, no supervisor", async () => {
  // What an idle stdio server has loaded: main.ts, then what it imports once `initialize` is
  // answered. npm packages there (re2js, TypeBox from npm) held megabytes of idle memory, and
  // so did Deno's Node layer, which any Node module brings in; the engine loads with the first
  // tool call.
  const info = await graph();
  const idle = new Set<string>();
  for (
    const entry of ["main.ts", "src/engine/groundwork.ts", "src/mcp/profiles.ts", "src/schema.ts"]
  ) {
    for (const specifier of reachable(info, new URL(entry, ROOT).href, false)) idle.add(specifier);
  }
  assertEquals([...idle].filter((specifier) => !specifier.startsWith(ROOT.href)), []);
  // Nor the argument checker's compiler, nor the supervisor (the process table, the reactor):
  // they load with the first tool call (the supervisor at once if ledgers are left to end).
  for (
    const late of [
      "src/engine/engine.ts",
      "src/engine/terminal/terminal.ts",
      "src/engine/command/command.ts",
      "src/pty/mod.ts",
      "src/validation.ts",
      "src/generated/typebox_compiler.js",
      "src/pty/supervision/posix.ts",
      "src/pty/posix/reactor.ts",
      // The sandbox: its Worker, its proxy, the engine's side (with the first sandboxed start).
      "src/pty/posix/sandbox/worker.ts",
      "src/pty/posix/sandbox/linux.ts",
      "src/engine/launching/sandbox.ts",
      "src/engine/launching/proxy.ts",
    ]
  ) {
    ok(existsSync(new URL(late, ROOT)), `${late} is no file: a stale name would pass unseen`);
    ok(!idle.has(new URL(late, ROOT).href), `${late} is loaded by an idle server`);
  }
});

Deno.test("start-up: Deno loads a dynamic import's modules when it runs, not before", async () => {
  // Without lazy-dynamic-imports, `deno run` reads every module a literal import() reaches (the
  // HTTP front end, its assets) before it starts, and holds them: 2 MiB of idle memory.
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  ok(config.unstable?.includes("lazy-dynamic-imports"));
});

Deno.test("start-up: test and benchmark libraries are nowhere in the server's graph", async () => {
  const info = await graph();
  const everything = [...reachable(info, new URL("main.ts", ROOT).href, true)];
  for (const name of ["fast-check", "@lydell/node-pty", "@agentclientprotocol/sdk"]) {
    assertEquals(everything.filter((specifier) => specifier.includes(name)), [], name);
  }
});
