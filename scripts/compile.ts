/**
 * `deno task compile`: the single executables, in dist/. The entry point is first bundled
 * (npm packages included) into a main module and chunks that load when first imported, then
 * compiled for each target with the permissions the server needs baked in. Split, because a
 * single file hoists every Node built-in any module imports to its top (node:http, node:module,
 * node:stream...), and those cost 40 ms before `initialize` can be answered; the chunks keep the
 * start-up path as short as main.ts's, and what loads later loads faster than from npm. The
 * bundle names npm modules by package (`npm:ws@8.23.0/lib/websocket.js`), not by where the
 * builder's Deno cache keeps them.
 *
 * `deno compile` downloads its runtime for each target; run this where Deno's download
 * server is reachable (a developer machine, GitHub Actions).
 *
 *   deno task compile                      # every target
 *   deno task compile x86_64-pc-windows-msvc
 *
 * @module
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import config from "../deno.json" with { type: "json" };

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Target triple and the file it produces. */
export const TARGETS: Record<string, string> = {
  "x86_64-pc-windows-msvc": "winterm-mcp.exe",
  "x86_64-unknown-linux-gnu": "winterm-mcp-x86_64-linux",
  "aarch64-apple-darwin": "winterm-mcp-aarch64-macos",
  "x86_64-apple-darwin": "winterm-mcp-x86_64-macos",
};
/** The permissions and V8 flags of `deno task start`. */
const PERMISSIONS = config.tasks.start.split(" ").filter((word) =>
  word.startsWith("--allow") || word.startsWith("--v8-flags")
);

async function deno(args: string[]): Promise<void> {
  const { code } = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdin: "null" })
    .spawn().status;
  if (code !== 0) throw new Error(`deno ${args.join(" ")} failed (exit ${code})`);
}

/** Where Deno keeps its caches, and its npm packages (`deno info --json`). */
async function denoDirs(): Promise<{ denoDir: string; npmCache: string }> {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    cwd: ROOT,
    stdin: "null",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`deno info --json failed (exit ${code})`);
  return JSON.parse(new TextDecoder().decode(stdout));
}

/** A package's folder in the npm cache: registry, name (maybe scoped), version. */
const PACKAGE_FOLDER = /^[^/]+\/((?:@[^/]+\/)?[^/]+)\/([^/]+)\//;

/**
 * esbuild names each npm module by its path from here into Deno's npm cache, in a comment and
 * as the key of its CommonJS wrapper (`../../home/me/.cache/deno/npm/registry.npmjs.org/ws/
 * 8.23.0/lib/websocket.js`): the builder's home, and a bundle that differs by machine. Named by
 * package instead (`npm:ws@8.23.0/lib/websocket.js`); a wrapper's key is only its name, what
 * runs is the same.
 */
function withoutCachePaths(
  code: string,
  { denoDir, npmCache }: { denoDir: string; npmCache: string },
): string {
  // esbuild writes paths relative to the working directory, with forward slashes everywhere.
  const here = Deno.realPathSync(ROOT);
  const [before, ...after] = code.split(relative(here, npmCache).replaceAll("\\", "/") + "/");
  const named = before + after.map((path) => {
    if (!PACKAGE_FOLDER.test(path)) {
      throw new Error(`not a package in the npm cache: ${path.slice(0, 100)}`);
    }
    return path.replace(PACKAGE_FOLDER, "npm:$1@$2/");
  }).join("");
  // Anything else from the cache (a remote module, say) would need a name too.
  const left = [denoDir, relative(here, denoDir)].map((dir) => dir.replaceAll("\\", "/"))
    .find((dir) => dir && named.includes(dir));
  if (left) throw new Error(`the bundle still names Deno's cache: ${left}`);
  return named;
}

/**
 * Bundles main.ts and everything it imports into `outDir`: main.js and the chunks it imports,
 * naming npm modules by package ({@link withoutCachePaths}). Returns main.js's path.
 */
export async function bundle(outDir: string): Promise<string> {
  await deno([
    "bundle",
    "--quiet",
    "--platform",
    "deno",
    "--code-splitting",
    "--outdir",
    outDir,
    "main.ts",
  ]);
  const dirs = await denoDirs();
  for (const file of Deno.readDirSync(outDir)) {
    if (!file.isFile || !file.name.endsWith(".js")) continue;
    const path = `${outDir}/${file.name}`;
    Deno.writeTextFileSync(path, withoutCachePaths(Deno.readTextFileSync(path), dirs));
  }
  return `${outDir}/main.js`;
}

if (import.meta.main) {
  const targets = Deno.args.length ? Deno.args : Object.keys(TARGETS);
  const unknown = targets.filter((target) => !(target in TARGETS));
  if (unknown.length) {
    console.error(
      `unknown target(s): ${unknown.join(", ")}; known: ${Object.keys(TARGETS).join(", ")}`,
    );
    Deno.exit(2);
  }
  await Deno.remove(`${ROOT}/dist/bundle`, { recursive: true }).catch(() => {});
  const bundled = await bundle(`${ROOT}/dist/bundle`);
  for (const target of targets) {
    await deno([
      "compile",
      "--quiet",
      ...PERMISSIONS,
      "--target",
      target,
      "--output",
      `dist/${TARGETS[target]}`,
      bundled,
    ]);
    console.log(`dist/${TARGETS[target]}`);
  }
}
