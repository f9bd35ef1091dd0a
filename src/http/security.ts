/**
 * The rules that stand between an HTTP request and the engine: the Host and Origin checks that
 * defeat DNS rebinding and cross-site requests, CORS (off unless origins are configured), and
 * what makes a bearer token acceptable. The middleware that applies them is in app.ts.
 *
 * @example
 * ```ts
 * import { Guard, tokenProblem } from "./security.ts";
 * const guard = new Guard({ loopback: true, allowedHosts: [], corsOrigins: [] });
 * guard.hostAllowed("localhost:3001");        // true
 * guard.hostAllowed("evil.example.com:3001"); // false
 * tokenProblem("s3cret");                     // "WINTERM_TOKEN is 6 characters long: ..."
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
  /** The server listens on a loopback address only. */
  loopback: boolean;
  /** Host names accepted besides the loopback ones. */
  allowedHosts: string[];
  /** Origins allowed to call from a browser. */
  corsOrigins: string[];
}

/** The shortest token accepted: 32 characters of a random hex string carry 128 bits. */
export const MIN_TOKEN_LENGTH = 32;

/** RFC 6750's b64token: the characters a bearer token may hold. */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~+\/-]+=*$/;

/** How to make a good token, on each platform. */
export const TOKEN_RECIPE = "make one with `openssl rand -hex 24`, or " +
  "`deno eval \"console.log(crypto.randomUUID().replaceAll('-', ''))\"`, or in PowerShell " +
  "`$b = [byte[]]::new(24); [Security.Cryptography.RandomNumberGenerator]::Create().GetBytes($b); " +
  "-join ($b | % { $_.ToString('x2') })`";

/** Why a token is refused (too short, or characters a bearer token cannot carry); undefined if it is fine. */
export function tokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH) {
    return `WINTERM_TOKEN is ${token.length} characters long: at least ${MIN_TOKEN_LENGTH} are ` +
      `needed, so that it cannot be guessed; ${TOKEN_RECIPE}`;
  }
  if (!TOKEN_PATTERN.test(token)) {
    return "WINTERM_TOKEN may only hold the characters A-Z a-z 0-9 - . _ ~ + / (and = at the " +
      `end), as a bearer token must (RFC 6750); ${TOKEN_RECIPE}`;
  }
  return undefined;
}

/** See the module documentation. */
export class Guard {
  #allowedHosts: Set<string>;
  #corsOrigins: Set<string>;

  constructor(private readonly options: GuardOptions) {
    this.#allowedHosts = new Set(options.allowedHosts.map((host) => host.toLowerCase()));
    this.#corsOrigins = new Set(
      options.corsOrigins.map((origin) => canonicalOrigin(origin) ?? origin),
    );
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

  /**
   * Whether an Origin header (sent by browsers) may call: a configured CORS origin, or this
   * server itself: the scheme (http, or https behind a proxy that keeps Host), host and port of
   * the request's Host, which names this server. A page of this host on another port (another
   * program's, on localhost) is another origin, refused.
   */
  originAllowed(origin: string | null, host: string | null): boolean {
    if (origin === null) return true;
    if (this.corsAllowed(origin)) return true;
    return this.hostAllowed(host) && sameOrigin(origin, host);
  }

  /** Whether any CORS origin is configured. */
  get corsEnabled(): boolean {
    return this.#corsOrigins.size > 0;
  }

  /** Whether `origin` is a configured CORS origin (one a page elsewhere may call from). */
  corsAllowed(origin: string | null): boolean {
    return origin !== null && this.#corsOrigins.has(canonicalOrigin(origin) ?? origin);
  }
}

/**
 * Whether `origin` is the origin of the server a request with this `Host` header reached: the
 * same host and port (the scheme http, or https behind a proxy that keeps Host); a Host of the
 * scheme's default port may write it or not ("http://localhost" is "localhost:80").
 */
export function sameOrigin(origin: string | null, host: string | null): boolean {
  if (!origin || !host) return false;
  try {
    const url = new URL(origin);
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    // As browsers write an origin: a scheme, a host and a port unless the scheme's own, nothing
    // else (letter case aside).
    if (url.origin !== origin.toLowerCase()) return false;
    return url.host === new URL(`${url.protocol}//${host.trim()}`).host;
  } catch {
    return false;
  }
}

/** An origin as URL writes it ("HTTP://Example.com:80" is "http://example.com"), if it is one. */
function canonicalOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/** The host name of a Host header ("[::1]:3001" is "[::1]", "Example.com:80" "example.com"). */
function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith("[")) return lower.slice(0, lower.indexOf("]") + 1);
  const colon = lower.lastIndexOf(":");
  return colon >= 0 ? lower.slice(0, colon) : lower;
}
