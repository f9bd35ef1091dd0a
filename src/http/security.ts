/**
 * What stands between an HTTP request and the engine: the bearer token, the Host and Origin
 * checks that defeat DNS rebinding and cross-site requests, CORS (off unless origins are
 * configured), and a cap on request bodies.
 *
 * @example
 * ```ts
 * import { Guard } from "./security.ts";
 * const guard = new Guard({ token: "s3cret", loopback: true, allowedHosts: [], corsOrigins: [] });
 * guard.hostAllowed("localhost:3001");        // true
 * guard.hostAllowed("evil.example.com:3001"); // false
 * guard.authorized("Bearer s3cret");          // true
 * ```
 * @module
 */

/** The loopback host names, as they appear in Host headers and URLs. */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** True for an address that only this machine can reach. */
export function isLoopbackAddress(host: string): boolean {
  const name = host.toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}

/** What a {@link Guard} enforces. */
export interface GuardOptions {
  token: string;
  /** The server listens on a loopback address only. */
  loopback: boolean;
  /** Host names accepted besides the loopback ones. */
  allowedHosts: string[];
  /** Origins allowed to call from a browser. */
  corsOrigins: string[];
}

const encoder = new TextEncoder();

/** See the module documentation. */
export class Guard {
  #token: Uint8Array;
  #allowedHosts: Set<string>;
  #corsOrigins: Set<string>;

  constructor(private readonly options: GuardOptions) {
    this.#token = encoder.encode(options.token);
    this.#allowedHosts = new Set(options.allowedHosts.map((host) => host.toLowerCase()));
    this.#corsOrigins = new Set(options.corsOrigins);
  }

  /**
   * Whether a Host header names this server: a loopback name when listening on loopback (so
   * a page on evil.example.com resolving to 127.0.0.1 is refused), or a configured name. A
   * server on a public address with no names configured relies on its token alone.
   */
  hostAllowed(host: string | null): boolean {
    if (host === null) return false;
    const name = hostName(host);
    if (this.#allowedHosts.has(name)) return true;
    if (this.options.loopback) return isLoopbackAddress(name);
    return this.#allowedHosts.size === 0;
  }

  /** Whether an Origin header (sent by browsers) may call: a configured CORS origin or this server itself. */
  originAllowed(origin: string | null): boolean {
    if (origin === null) return true;
    if (this.#corsOrigins.has(origin)) return true;
    try {
      return this.hostAllowed(new URL(origin).host);
    } catch {
      return false;
    }
  }

  /** The CORS headers for a response to `origin`, if it is a configured CORS origin. */
  corsHeaders(origin: string | null): Record<string, string> | undefined {
    if (origin === null || !this.#corsOrigins.has(origin)) return undefined;
    return {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
      "access-control-allow-headers":
        "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id",
      "access-control-expose-headers": "mcp-session-id",
      "access-control-max-age": "600",
      vary: "origin",
    };
  }

  /** Whether an Authorization header carries the token (compared in constant time). */
  authorized(header: string | null): boolean {
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) return false;
    const given = encoder.encode(match[1]);
    let difference = given.length ^ this.#token.length;
    for (let i = 0; i < this.#token.length; i++) difference |= this.#token[i] ^ (given[i] ?? 0);
    return difference === 0;
  }
}

/** The host name of a Host header ("[::1]:3001" is "[::1]", "Example.com:80" "example.com"). */
function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith("[")) return lower.slice(0, lower.indexOf("]") + 1);
  const colon = lower.lastIndexOf(":");
  return colon >= 0 ? lower.slice(0, colon) : lower;
}

/** A body that is larger than allowed. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = "BodyTooLarge";
  }
}

/** Reads a request body as text, refusing more than `limit` bytes (before reading them all). */
export async function readBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw new BodyTooLarge(limit);
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge(limit);
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}
