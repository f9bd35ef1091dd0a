/**
 * Builds the web view into `src/generated/web_assets.ts`: the page (client/index.html),
 * its script (client/app.ts with @xterm/xterm, its fit addon and asciinema-player, bundled
 * and minified by `deno bundle`) and its styles (xterm's, the player's and client/app.css),
 * each gzip-compressed and base64-encoded, so that the server (and the compiled executable)
 * carries them and reads no file at run time.
 *
 * ```sh
 * deno task build:web           # rebuild after changing client/ or the packages' versions
 * deno task build:web --check   # exit 1 if the generated file is not what the sources give
 * ```
 * @module
 */
import { fileURLToPath } from "node:url";
import type { Asset } from "../src/http/web/page.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CLIENT = `${ROOT}src/http/web/client/`;
const OUTPUT = `${ROOT}src/generated/web_assets.ts`;
/** Styles, in cascade order: the packages' first, the page's own last (a file URL on every OS). */
const STYLES = [
  "@xterm/xterm/css/xterm.css",
  "asciinema-player/dist/bundle/asciinema-player.css",
  new URL("../src/http/web/client/app.css", import.meta.url).href,
];

async function bundle(entry: string, out: string): Promise<void> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--config",
      `${ROOT}deno.json`,
      "--platform",
      "browser",
      "--minify",
      "-o",
      out,
      entry,
    ],
    env: { DENO_TLS_CA_STORE: "system,mozilla", NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`deno bundle ${entry} failed: ${new TextDecoder().decode(stderr)}`);
  }
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

async function etag(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
  return `"${Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

/** The built files, uncompressed. */
export async function buildFiles(): Promise<Record<string, { type: string; bytes: Uint8Array }>> {
  const dir = await Deno.makeTempDir({ prefix: "winterm-web-" });
  try {
    const styles = `${dir}/styles.ts`;
    await Deno.writeTextFile(
      styles,
      STYLES.map((specifier) => `import ${JSON.stringify(specifier)};\n`).join(""),
    );
    await bundle(`${CLIENT}app.ts`, `${dir}/app.js`);
    await bundle(styles, `${dir}/styles.js`);
    return {
      "index.html": {
        type: "text/html; charset=utf-8",
        bytes: await Deno.readFile(`${CLIENT}index.html`),
      },
      "app.js": {
        type: "text/javascript; charset=utf-8",
        bytes: await Deno.readFile(`${dir}/app.js`),
      },
      "app.css": {
        type: "text/css; charset=utf-8",
        bytes: await Deno.readFile(`${dir}/styles.css`),
      },
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function gunzip(base64Text: string): Promise<Uint8Array> {
  const bytes = Uint8Array.from(atob(base64Text), (char) => char.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The names of the files the generated module holds otherwise than `built` gives them: another
 * type, another ETag, or other bytes once decompressed (not the compressed text itself, which
 * another Deno's gzip may write differently), and those it holds that are not built or built
 * that it lacks. Empty when the module is up to date.
 */
export async function staleAssets(
  built: Record<string, { type: string; bytes: Uint8Array }>,
): Promise<string[]> {
  let held: Record<string, Asset> = {};
  try {
    held = (await import("../src/generated/web_assets.ts")).ASSETS;
  } catch {
    // Missing or broken: every file is stale.
  }
  const names = new Set([...Object.keys(built), ...Object.keys(held)]);
  const stale: string[] = [];
  for (const name of names) {
    const [file, asset] = [built[name], held[name]];
    const same = file !== undefined && asset !== undefined && asset.type === file.type &&
      asset.etag === await etag(file.bytes) &&
      (await gunzip(asset.gzip)).join() === file.bytes.join();
    if (!same) stale.push(name);
  }
  return stale;
}

if (import.meta.main) {
  const files = await buildFiles();
  if (Deno.args.includes("--check")) {
    const stale = await staleAssets(files);
    if (stale.length) {
      console.error(`stale: ${stale.join(", ")}; run deno task build:web`);
      Deno.exit(1);
    }
    console.error("the web view's assets are up to date");
  } else {
    const assets: Record<string, Asset> = {};
    for (const [name, { type, bytes }] of Object.entries(files)) {
      assets[name] = { type, etag: await etag(bytes), gzip: base64(await gzip(bytes)) };
    }
    const lines = Object.entries(assets).map(([name, asset]) =>
      `  ${JSON.stringify(name)}: {\n    type: ${JSON.stringify(asset.type)},\n    etag: ${
        JSON.stringify(asset.etag)
      },\n    gzip: ${JSON.stringify(asset.gzip)},\n  },`
    );
    await Deno.writeTextFile(
      OUTPUT,
      "// Generated by scripts/build_web.ts (deno task build:web) from src/http/web/client/ and\n" +
        "// the packages it bundles. Do not edit.\n\n" +
        "/** The web view's files (each an `Asset` of src/http/web/page.ts): gzip, base64. */\n" +
        `export const ASSETS = {\n${lines.join("\n")}\n};\n`,
    );
    for (const [name, { bytes }] of Object.entries(files)) {
      console.error(`${name}: ${bytes.length} bytes, gzip ${atob(assets[name].gzip).length}`);
    }
  }
}
