/**
 * The web view's page and its scripts, served from memory: `scripts/build_web.ts` bundles the
 * page (client/), @xterm/xterm with its fit addon, and asciinema-player into
 * `assets.generated.ts` (gzip, base64), which is imported on the first request for them, so
 * that a server nobody watches never loads them (start-up stays fast). Nothing is read from
 * disk at run time: the compiled executable carries them.
 *
 * @example
 * ```ts
 * import { servePageAsset } from "./page.ts";
 * const answer = await servePageAsset("index.html", new Headers({ "accept-encoding": "gzip" }));
 * answer?.status; // 200
 * ```
 * @module
 */

/** One built file. */
export interface Asset {
  type: string;
  /** The gzip-compressed bytes, base64. */
  gzip: string;
  /** A strong ETag from the uncompressed bytes' SHA-256. */
  etag: string;
}

/**
 * What the page may do: its own scripts and styles (inline styles: the player and xterm set
 * them), WebAssembly (the player's terminal), connections to this server only; no framing
 * (a take-over must not be clickjacked), no forms or base elsewhere.
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

let assets: Promise<Record<string, Asset>> | undefined;

function load(): Promise<Record<string, Asset>> {
  assets ??= import("./assets.generated.ts").then((module) => module.ASSETS);
  return assets;
}

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const decoded = new Map<string, Uint8Array>();

/**
 * The answer for a built file (`index.html`, `app.js`, `app.css`), compressed when the client
 * accepts gzip; undefined for a name that was not built.
 */
export async function servePageAsset(
  name: string,
  headers: Headers,
): Promise<Response | undefined> {
  const asset = Object.hasOwn(await load(), name) ? (await load())[name] : undefined;
  if (!asset) return undefined;
  const common: Record<string, string> = {
    "content-type": asset.type,
    etag: asset.etag,
    "cache-control": "no-cache",
    vary: "accept-encoding",
    "x-frame-options": "DENY",
    "content-security-policy": PAGE_POLICY,
  };
  if (headers.get("if-none-match") === asset.etag) {
    return new Response(null, { status: 304, headers: common });
  }
  let gzip = decoded.get(name);
  if (!gzip) decoded.set(name, gzip = decodeBase64(asset.gzip));
  if (/\bgzip\b/.test(headers.get("accept-encoding") ?? "")) {
    return new Response(gzip.slice(), { headers: { ...common, "content-encoding": "gzip" } });
  }
  const plain = new Blob([gzip.slice()]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(plain, { headers: common });
}
