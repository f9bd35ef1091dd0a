/**
 * Browser logins for the web view, without the bearer token ever reaching the page:
 *
 * - A one-time login code, printed on stderr at start inside the link `http://HOST:PORT/#login=CODE`
 *   (the code is in the fragment, which browsers never send: no server, proxy or history
 *   entry sees it in a request). The page posts it to `POST /api/web/login`; it works once,
 *   within `loginSeconds`. The bearer token itself, typed into the page's form, logs in too,
 *   and `POST /api/web/links` (with the token) makes a fresh link.
 * - A login answers with two secrets: the session id, in an HttpOnly SameSite=Strict cookie
 *   named after the port (cookies are shared by every port of a host), and a key the page
 *   keeps in its origin's storage and sends as the `X-Winterm-Key` header (as the
 *   `winterm.key.KEY` WebSocket subprotocol for streams). A request needs both, and an
 *   Origin of this very server when it changes anything or opens a stream. So another site
 *   (even one on another port of localhost, which counts as the same site and gets the
 *   cookie) can neither forge requests (CSRF) nor use a cookie it was sent.
 * - Sessions end after `sessionHours` unused, or on logout; at most {@link MAX_SESSIONS} exist
 *   (the least recently used goes first).
 *
 * @example
 * ```ts
 * import { WebSessions } from "./sessions.ts";
 * const sessions = new WebSessions({ port: 3001, loginSeconds: 600, sessionHours: 12 });
 * const code = sessions.newLoginCode();
 * const login = sessions.login({ code }); // the session ({ id, key, lastUsed }) and its cookie
 * login?.cookie; // "winterm_session_3001=...; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict"
 * sessions.login({ code }); // undefined: a code logs in once
 * ```
 * @module
 */
import { generateCookie } from "hono/cookie";
// hono/cookie's getCookie reads a Hono context; its parser, from the same module, reads a header.
import { parse as parseCookies } from "hono/utils/cookie";
import { sameOrigin } from "../security.ts";

/** Sessions kept at once. */
export const MAX_SESSIONS = 64;
/** One-time login codes pending at once (the oldest is dropped beyond this). */
export const MAX_LOGIN_CODES = 16;
/** The header carrying the session key. */
export const KEY_HEADER = "x-winterm-key";
/** The WebSocket subprotocol the server answers with; the key travels as `winterm.key.KEY`. */
export const STREAM_PROTOCOL = "winterm";
const KEY_PROTOCOL_PREFIX = "winterm.key.";

/** How sessions and links behave. */
export interface WebSessionsOptions {
  /** The port served (names the cookie). */
  port: number;
  /** How long a one-time code is valid. */
  loginSeconds: number;
  /** A session unused this long ends. */
  sessionHours: number;
}

/** A logged-in browser. */
export interface WebSession {
  id: string;
  key: string;
  lastUsed: number;
}

/** A successful login: the session, and the Set-Cookie header that carries its id. */
export interface Login {
  session: WebSession;
  cookie: string;
}

/** Why a request's session was refused. */
export type SessionVerdict =
  | { ok: true; session: WebSession }
  | { ok: false; status: 401 | 403; message: string };

/** 32 random bytes, base64url: 256 bits. */
function secret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

const encoder = new TextEncoder();

/** Whether two strings are equal, in a time that depends on `expected`'s length only. */
export function sameSecret(given: string, expected: string): boolean {
  const a = encoder.encode(given), b = encoder.encode(expected);
  let difference = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) difference |= b[i] ^ (a[i] ?? 0);
  return difference === 0;
}

/** The value of cookie `name` in a Cookie header (Hono's parser: the first of that name). */
export function cookieValue(header: string | null, name: string): string | undefined {
  return header ? parseCookies(header, name)[name] : undefined;
}

/** The key offered in a WebSocket handshake's subprotocols, if any. */
export function keyFromProtocols(header: string | null): string | undefined {
  for (const protocol of (header ?? "").split(",")) {
    const name = protocol.trim();
    if (name.startsWith(KEY_PROTOCOL_PREFIX)) return name.slice(KEY_PROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** See the module documentation. */
export class WebSessions {
  /** The cookie's name (with the port: cookies are not kept apart by port). */
  readonly cookieName: string;
  /** Pending one-time codes and when each expires (ms since the epoch). */
  #codes = new Map<string, number>();
  /** Sessions by id, least recently used first. */
  #sessions = new Map<string, WebSession>();

  constructor(private readonly options: WebSessionsOptions) {
    this.cookieName = `winterm_session_${options.port}`;
  }

  /** A new one-time login code, valid for `loginSeconds`. */
  newLoginCode(): string {
    this.#dropExpiredCodes();
    while (this.#codes.size >= MAX_LOGIN_CODES) {
      this.#codes.delete(this.#codes.keys().next().value!);
    }
    const code = secret();
    this.#codes.set(code, Date.now() + this.options.loginSeconds * 1000);
    return code;
  }

  /**
   * Logs a browser in with a one-time code (used up by this) or the bearer token; undefined
   * when neither is right.
   */
  login(credentials: { code?: string; token?: string }, bearerToken?: string): Login | undefined {
    this.#dropExpiredCodes();
    let valid = false;
    if (credentials.code !== undefined) {
      for (const code of this.#codes.keys()) {
        if (sameSecret(credentials.code, code)) {
          this.#codes.delete(code);
          valid = true;
        }
      }
    } else if (credentials.token !== undefined && bearerToken !== undefined) {
      valid = sameSecret(credentials.token, bearerToken);
    }
    if (!valid) return undefined;
    while (this.#sessions.size >= MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.keys().next().value!);
    }
    const session: WebSession = { id: secret(), key: secret(), lastUsed: Date.now() };
    this.#sessions.set(session.id, session);
    return { session, cookie: this.#cookie(session.id, this.options.sessionHours * 3600) };
  }

  /** Ends the session (if any) and returns the Set-Cookie header that clears the cookie. */
  logout(session: WebSession | undefined): string {
    if (session) this.#sessions.delete(session.id);
    return this.#cookie("", 0);
  }

  /**
   * Whether a Cookie header names a live session (nothing else is checked, nothing changes):
   * enough to tell a logged-in browser's requests from anyone's before they are answered.
   */
  knows(cookieHeader: string | null | undefined): boolean {
    const id = cookieValue(cookieHeader ?? null, this.cookieName);
    const session = id === undefined ? undefined : this.#sessions.get(id);
    return session !== undefined &&
      Date.now() - session.lastUsed <= this.options.sessionHours * 3_600_000;
  }

  /** Whether a request carries this server's session cookie at all. */
  hasCookie(headers: Headers): boolean {
    return cookieValue(headers.get("cookie"), this.cookieName) !== undefined;
  }

  /**
   * Checks a request that carries the session cookie: the session must exist and be fresh,
   * the key must come with it (header, or subprotocol for a stream), and the request must come
   * from this server's own page (Origin, and Sec-Fetch-Site where the browser sends it); an
   * Origin is required for anything but GET and HEAD.
   */
  check(headers: Headers, method: string, stream: boolean): SessionVerdict {
    const id = cookieValue(headers.get("cookie"), this.cookieName);
    const session = id === undefined ? undefined : this.#sessions.get(id);
    const now = Date.now();
    if (!session || now - session.lastUsed > this.options.sessionHours * 3_600_000) {
      if (session) this.#sessions.delete(session.id);
      return { ok: false, status: 401, message: "the web session has ended: log in again" };
    }
    const origin = headers.get("origin");
    const safe = (method === "GET" || method === "HEAD") && !stream;
    if (origin ? !sameOrigin(origin, headers.get("host")) : !safe) {
      return {
        ok: false,
        status: 403,
        message: "a web session is accepted only from this server's own page (Origin)",
      };
    }
    const site = headers.get("sec-fetch-site");
    if (site !== null && site !== "same-origin" && site !== "none") {
      return {
        ok: false,
        status: 403,
        message: "a web session is accepted only from this server's own page (Sec-Fetch-Site)",
      };
    }
    const key = stream ? keyFromProtocols(headers.get("sec-websocket-protocol")) : headers.get(
      KEY_HEADER,
    );
    if (!key || !sameSecret(key, session.key)) {
      return {
        ok: false,
        status: 401,
        message: `a web session needs its key (the ${KEY_HEADER} header) besides the cookie`,
      };
    }
    session.lastUsed = now;
    // Most recently used last.
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, session);
    return { ok: true, session };
  }

  #cookie(value: string, maxAgeSeconds: number): string {
    return generateCookie(this.cookieName, value, {
      path: "/",
      maxAge: maxAgeSeconds,
      httpOnly: true,
      sameSite: "Strict",
    });
  }

  #dropExpiredCodes(): void {
    const now = Date.now();
    for (const [code, expires] of this.#codes) if (expires < now) this.#codes.delete(code);
  }
}
