/**
 * `deno task compile`: the single executables, in dist/. The entry point is first bundled
 * (npm packages included) into a main module and chunks that load when first imported, then
 * compiled for each target with the permissions the server needs baked in. Split, because a
 * single file hoists every Node built-in any module imports to its top (node:http, node:module,
 * node:stream...), and those cost 40 ms before `initialize` can be answered; the chunks keep the
 * start-up path as short as main.ts's, and what loads later loads faster than from npm. The
 * bundle is the same wherever it is made: it names npm modules by package
 * (`npm:ws@8.23.0/lib/websocket.js`), not by where the builder's Deno cache keeps them, and its
 * chunks by their content.
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
 * How esbuild gives CommonJS modules (iconv-lite, ws) their `require`: made at load, in the chunk
 * of helpers that every chunk imports, main.js too. So the bundle loaded Deno's Node layer before
 * it could answer `initialize`: 30-40 ms, and 5-6 MiB of an idle server's memory. And a
 * `require` made by `createRequire` looks for a bare name in every node_modules folder beside
 * and above the bundle (an executable's is under the temp folder), and runs what it finds: ws
 * asks for `bufferutil` with its first stream.
 */
const EAGER_REQUIRE = `import { createRequire as __deno_internal_createRequire } from "node:module";
var __require = __deno_internal_createRequire(import.meta.url);
`;
/**
 * The `require` the bundle gets instead: Node's built-in modules only, each loaded when first
 * asked for; any other name is not found, as ws expects of its optional native add-ons.
 */
const BUILTIN_REQUIRE = `var __require = (id) => {
  const builtin = id.startsWith("node:") ? globalThis.process.getBuiltinModule(id) : undefined;
  if (builtin === undefined) {
    throw Object.assign(
      new Error(\`Cannot find module '\${id}': winterm-mcp's bundle loads only Node's built-in modules\`),
      { code: "MODULE_NOT_FOUND" },
    );
  }
  return builtin;
};
`;
/** What the bundled npm code may ask `require` for apart from `node:` modules: ws's optional add-ons. */
const NOT_BUNDLED = new Set(["bufferutil", "utf-8-validate"]);

/**
 * `code` with {@link EAGER_REQUIRE} replaced by {@link BUILTIN_REQUIRE}. Throws if anything else
 * imports node:module at load, uses `require` as other than a call with a string, or asks it for
 * a module that is neither built in nor in {@link NOT_BUNDLED}: none of those would work.
 */
function withBuiltinRequire(code: string, file: string): string {
  const replaced = code.replace(EAGER_REQUIRE, BUILTIN_REQUIRE);
  const problem = (what: string) =>
    new Error(`${file} ${what}: see EAGER_REQUIRE in scripts/compile.ts`);
  if (/from\s*["']node:module["']/.test(replaced)) throw problem("imports node:module at load");
  if (/typeof\s+__require\b|\b__require\s*[.[]|\b__require\(\s*[^"'\s]/.test(replaced)) {
    throw problem("uses require as other than a call with a module's name");
  }
  for (const [, id] of replaced.matchAll(/\b__require\(\s*["']([^"']*)["']/g)) {
    if (!id.startsWith("node:") && !NOT_BUNDLED.has(id)) throw problem(`requires ${id}`);
  }
  return replaced;
}

/**
 * Modules started as Workers (`new Worker(new URL("./name.ts", import.meta.url))`): esbuild
 * leaves such a URL as it is, naming a source file the bundle does not have. Each is bundled on
 * its own, whole, as `name.js` beside main.js (in main.js's chunks, a worker's packages loaded
 * on the server's thread too: xterm, 1-2 MiB), and the URL made to name that; the executable
 * includes it.
 */
export const WORKERS = ["src/engine/output/screen_worker.ts"];

/** A worker's bundle's file name (see {@link WORKERS}). */
export function workerBundle(worker: string): string {
  return worker.slice(worker.lastIndexOf("/") + 1).replace(/\.ts$/, ".js");
}

/** `code` with each worker's URL (see {@link WORKERS}) naming its bundle; throws if one is not found. */
function withWorkerUrls(code: Map<string, string>): void {
  for (const worker of WORKERS) {
    const url = `new URL("./${worker.slice(worker.lastIndexOf("/") + 1)}", import.meta.url)`;
    const files = [...code.keys()].filter((file) => code.get(file)!.includes(url));
    if (files.length !== 1) {
      throw new Error(`${url} is in ${files.length} files of the bundle, not one: see WORKERS`);
    }
    const file = files[0];
    code.set(
      file,
      code.get(file)!.replace(url, `new URL("./${workerBundle(worker)}", import.meta.url)`),
    );
  }
}

/** A chunk's file name: what esbuild named it after, a dash, and a hash of its content. */
const CHUNK = /^(.+)-[A-Z0-9]{8}\.js$/;

/** `text` with each of `names`' keys replaced by its value, in one pass. */
function renamed(text: string, names: Map<string, string>): string {
  if (names.size === 0) return text;
  const escaped = [...names.keys()].map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return text.replace(new RegExp(escaped.join("|"), "g"), (name) => names.get(name)!);
}

/**
 * New names for the chunks in `code` (file name to content). esbuild's names hash the content it
 * wrote, cache paths included; these hash the content as it is now, with the names of the
 * chunks it imports left out (they change too, and chunks may import each other).
 */
async function chunkNames(code: Map<string, string>): Promise<Map<string, string>> {
  const chunks = [...code.keys()].filter((name) => CHUNK.test(name));
  const unnamed = new Map(chunks.map((name) => [name, name.replace(CHUNK, "$1.js")]));
  const names = new Map<string, string>();
  for (const name of chunks) {
    const content = new TextEncoder().encode(renamed(code.get(name)!, unnamed));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", content));
    const hash = [...digest.slice(0, 4)].map((byte) => byte.toString(16).padStart(2, "0"));
    names.set(name, name.replace(CHUNK, `$1-${hash.join("").toUpperCase()}.js`));
  }
  if (new Set(names.values()).size !== names.size) {
    throw new Error("two chunks differ only in the chunks they import: they cannot be named");
  }
  return names;
}

/**
 * Bundles main.ts and everything it imports into `outDir`: main.js and the chunks it imports,
 * naming npm modules by package ({@link withoutCachePaths}) and chunks by content
 * ({@link chunkNames}), and each of {@link WORKERS} beside them. Returns main.js's path.
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
  for (const worker of WORKERS) {
    await deno([
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--output",
      `${outDir}/${workerBundle(worker)}`,
      worker,
    ]);
  }
  const dirs = await denoDirs();
  const code = new Map<string, string>();
  for (const file of Deno.readDirSync(outDir)) {
    if (!file.isFile || !file.name.endsWith(".js")) continue;
    const text = Deno.readTextFileSync(`${outDir}/${file.name}`);
    code.set(file.name, withBuiltinRequire(withoutCachePaths(text, dirs), file.name));
    Deno.removeSync(`${outDir}/${file.name}`);
  }
  withWorkerUrls(code);
  const names = await chunkNames(code);
  for (const [name, text] of code) {
    Deno.writeTextFileSync(`${outDir}/${names.get(name) ?? name}`, renamed(text, names));
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
      ...WORKERS.flatMap((worker) => ["--include", `${ROOT}/dist/bundle/${workerBundle(worker)}`]),
      "--target",
      target,
      "--output",
      `dist/${TARGETS[target]}`,
      bundled,
    ]);
    console.log(`dist/${TARGETS[target]}`);
  }
}
