/**
 * The bundle the executables are compiled from (scripts/compile.ts). Only the bundle: `deno
 * compile` downloads its runtime, which a test cannot count on.
 */
import { ok } from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import config from "../../deno.json" with { type: "json" };
import { bundle } from "../../scripts/compile.ts";
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
