/**
 * The web view's page and its scripts, served from memory: `scripts/build_web.ts` bundles the
 * page (client/), @xterm/xterm with its fit addon, and asciinema-player into
 * `src/generated/web_assets.ts` (gzip, base64), which is imported on the first request for
 * them, so that a server nobody watches never loads them (start-up stays fast). Nothing is read from
 * disk at run time: the compiled executable carries them. Each file's bytes are made once, gzip
 * and plain, and every answer shares them: a flood of requests for the 614 KB script costs no
 * memory per request (a copy and a decompression per request took a server to 2 GB).
 *
 * @example
 * ```ts
 * import { pageAnswer } from "./page.ts";
 * const answer = await pageAnswer("index.html", new Headers({ "accept-encoding": "gzip" }));
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
  assets ??= import("../../generated/web_assets.ts").then((module) => module.ASSETS);
  return assets;
}

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Each file's bytes, gzip and plain, made once (on first use) and shared by every answer. */
const bytes = new Map<string, { gzip: Uint8Array; plain?: Promise<Uint8Array> }>();

function bytesOf(name: string, asset: Asset): { gzip: Uint8Array; plain?: Promise<Uint8Array> } {
  let made = bytes.get(name);
  if (!made) bytes.set(name, made = { gzip: decodeBase64(asset.gzip) });
  return made;
}

async function plainBytes(name: string, asset: Asset): Promise<Uint8Array> {
  const made = bytesOf(name, asset);
  made.plain ??= new Response(
    new Blob([made.gzip as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
      new DecompressionStream("gzip"),
    ),
  ).bytes();
  return await made.plain;
}

/**
 * The answer for a built file: its status, headers and bytes. The bytes are shared by every
 * answer (never copied per request, nor decompressed per request): whoever writes them must not
 * change them.
 */
export interface PageAnswer {
  status: 200 | 304;
  headers: Record<string, string>;
  /** Null for 304. */
  body: Uint8Array | null;
}

/**
 * The answer for a built file (`index.html`, `app.js`, `app.css`), compressed when the client
 * accepts gzip; undefined for a name that was not built.
 */
export async function pageAnswer(
  name: string,
  headers: Headers,
): Promise<PageAnswer | undefined> {
  const all = await load();
  const asset = Object.hasOwn(all, name) ? all[name] : undefined;
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
    return { status: 304, headers: common, body: null };
  }
  const gzip = /\bgzip\b/.test(headers.get("accept-encoding") ?? "");
  const body = gzip ? bytesOf(name, asset).gzip : await plainBytes(name, asset);
  return {
    status: 200,
    headers: {
      ...common,
      ...(gzip ? { "content-encoding": "gzip" } : {}),
      "content-length": String(body.length),
    },
    body,
  };
}
