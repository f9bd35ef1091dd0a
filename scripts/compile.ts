/**
 * `deno task compile`: the single executables, in dist/. The entry point is first bundled
 * (npm packages included) into a main module and chunks that load when first imported, then
 * compiled for each target with the permissions the server needs baked in. Split, because a
 * single file hoists every Node built-in any module imports to its top (node:http, node:module,
 * node:stream...), and those cost 40 ms before `initialize` can be answered; the chunks keep the
 * start-up path as short as main.ts's, and what loads later loads faster than from npm.
 *
 * `deno compile` downloads its runtime for each target; run this where Deno's download
 * server is reachable (a developer machine, GitHub Actions).
 *
 *   deno task compile                      # every target
 *   deno task compile x86_64-pc-windows-msvc
 *
 * @module
 */
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

/**
 * Bundles main.ts and everything it imports into `outDir`: main.js and the chunks it imports.
 * Returns main.js's path.
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
