/**
 * The HTTP application (Hono): what every request passes before it reaches MCP at /mcp or the
 * REST API at /api, in order:
 *
 * 1. Host and Origin allow-lists (DNS rebinding, cross-site calls): 403.
 * 2. CORS for configured origins only; a preflight from any other origin: 403.
 * 3. The public routes answer without a token: `GET /api/health`, the web view's page and
 *    scripts (no data in them), and its login (`POST /api/web/login`).
 * 4. The bearer token (compared in constant time): 401, and the connection is closed. A
 *    request with no Authorization header but the web view's session cookie is judged by
 *    the session's rules instead (web/sessions.ts: cookie, key, this server's own Origin).
 * 5. A body cap (413), bounds on the JSON's shape (json_shape.ts) and JSON parsing (400, or
 *    -32600 and -32700 on /mcp).
 *
 * Every answer says `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
 * Refusals use the error shape of the endpoint asked: JSON-RPC on /mcp, `{success: false,
 * error: {code, message, details}}` elsewhere. WebSocket upgrades go through the same app
 * (web/stream.ts), with `c.env.upgrade` set.
 *
 * @example
 * ```ts
 * import { createApp } from "./app.ts";
 * import { Guard } from "./security.ts";
 * import { WebSessions } from "./web/sessions.ts";
 * const token = "0123456789abcdef0123456789abcdef";
 * const app = createApp({
 *   guard: new Guard({ loopback: true, allowedHosts: [], corsOrigins: [] }),
 *   token,
 *   maxBodyBytes: 1 << 20,
 *   web: new WebSessions({ port: 3001, loginSeconds: 600, sessionHours: 12 }),
 *   // An endpoint behind every check; the body comes parsed.
 *   mount: (app) => app.post("/api/echo", (c) => c.json({ echoed: c.get("body") })),
 * });
 * const echo = (headers: Record<string, string>) =>
 *   app.request("/api/echo", {
 *     method: "POST",
 *     headers: { "content-type": "application/json", ...headers },
 *     body: '{"a":1}',
 *   });
 * (await echo({ host: "localhost:3001", authorization: `Bearer ${token}` })).status; // 200
 * (await echo({ host: "localhost:3001" })).status; // 401: no token
 * (await echo({ host: "evil.example:3001", authorization: `Bearer ${token}` })).status; // 403
 * ```
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { concatBytes } from "../bytes.ts";
import { batchProblem, jsonShape, jsonShapeProblem, roundedIds } from "../json_shape.ts";
import { log } from "../log.ts";
import { jsonRpcError } from "./mcp_sessions.ts";
import { type ErrorCode, restError } from "./rest.ts";
import type { Guard } from "./security.ts";
import { sameSecret, type WebSession, type WebSessions } from "./web/sessions.ts";
import type { UpgradeTicket } from "./web/stream.ts";

/** Who made a request: a client with the bearer token, or a browser logged in to the web view. */
export type Principal = { via: "token" } | { via: "web"; session: WebSession };

/**
 * What a handler finds in the context: the parsed JSON body of a POST or DELETE, and who
 * asked (unset on public routes); for a WebSocket handshake, the ticket its route fills in.
 */
export type AppEnv = {
  Variables: { body: unknown; roundedIds?: Map<number, string>; principal?: Principal };
  /** node:http's request and response (@hono/node-server's bindings), or a WebSocket ticket. */
  Bindings: { upgrade?: UpgradeTicket; incoming?: IncomingMessage; outgoing?: ServerResponse };
};

/** The application. */
export type App = Hono<AppEnv>;

/** What the application is made of. */
export interface AppOptions {
  guard: Guard;
  /** The bearer token. */
  token: string;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** The web view's logins. */
  web: WebSessions;
  /** Adds the endpoints (behind every check) to the app. */
  mount(app: App): void;
  /**
   * Called for each request that proved who it comes from (the token or a web session), before
   * its body is read: only such a request may hold a connection busy. Anyone may send one of the
   * public routes (a login) slowly; those connections stay idle, to be closed for a newcomer.
   */
  onAuthorized?(c: Context<AppEnv>): void;
}

/** Headers every answer carries (one written straight to the connection, too). */
export const ALWAYS_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** True for the routes anyone may ask for: health, the web view's page and scripts, its login. */
export function isPublicRoute(method: string, path: string): boolean {
  const route = path.replace(/\/+$/, "") || "/";
  if (method === "POST") return route === "/api/web/login";
  if (method !== "GET" && method !== "HEAD") return false;
  return route === "/api/health" || route === "/" || /^\/assets\/[\w.-]+$/.test(route);
}

const CORS_HEADERS = [
  "authorization",
  "content-type",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
];

/** True for the MCP endpoint's paths (their errors are JSON-RPC). */
export function isMcpPath(path: string): boolean {
  return path === "/mcp" || path.startsWith("/mcp/");
}

/** An error answer in the shape of the endpoint asked. */
export function refusal(
  c: Context,
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  if (!isMcpPath(c.req.path)) return restError(status, code, message, {}, headers);
  const rpcCode = status === 401 ? -32001 : status === 413 ? -32600 : -32000;
  return jsonRpcError(status, rpcCode, message, headers);
}

/** Builds the application. */
export function createApp(options: AppOptions): App {
  const { guard, web } = options;
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(ALWAYS_HEADERS)) c.res.headers.set(name, value);
  });
  app.use(async (c, next) => {
    const host = c.req.header("host") ?? null;
    if (host === null) return refusal(c, 400, "INVALID_INPUT", "a Host header is required");
    if (!guard.hostAllowed(host)) {
      return refusal(c, 403, "FORBIDDEN", `Host '${host}' is not allowed`);
    }
    const origin = c.req.header("origin") ?? null;
    if (!guard.originAllowed(origin, host)) {
      return refusal(c, 403, "FORBIDDEN", `Origin '${origin}' is not allowed`);
    }
    if (c.req.method === "OPTIONS" && !guard.corsAllowed(origin)) {
      return refusal(c, 403, "FORBIDDEN", "CORS is not enabled for this origin");
    }
    await next();
  });
  // Without configured origins there is no CORS at all: not even its headers.
  if (guard.corsEnabled) {
    app.use(cors({
      origin: (origin) => guard.corsAllowed(origin) ? origin : null,
      allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
      allowHeaders: CORS_HEADERS,
      exposeHeaders: ["mcp-session-id"],
      maxAge: 600,
    }));
  }
  const requireToken = authenticate(options.token);
  app.use(async (c, next) => {
    if (isPublicRoute(c.req.method, c.req.path)) return await next();
    const headers = c.req.raw.headers;
    if (!headers.has("authorization") && web.hasCookie(headers)) {
      const verdict = web.check(headers, c.req.method, c.env?.upgrade !== undefined);
      if (!verdict.ok) {
        return refusal(
          c,
          verdict.status,
          verdict.status === 401 ? "UNAUTHORIZED" : "FORBIDDEN",
          verdict.message,
        );
      }
      c.set("principal", { via: "web", session: verdict.session });
      options.onAuthorized?.(c);
      return await next();
    }
    c.set("principal", { via: "token" });
    return await requireToken(c, () => {
      options.onAuthorized?.(c);
      return next();
    });
  });
  app.use(jsonBody(options.maxBodyBytes));
  options.mount(app);
  app.notFound((c) =>
    refusal(
      c,
      404,
      "NOT_FOUND",
      `nothing at ${c.req.path}: the MCP endpoint is /mcp, the REST API /api, the web view /`,
    )
  );
  app.onError((error, c) => {
    // The middleware's own refusals (the token's) arrive as exceptions carrying their answer.
    if (error instanceof HTTPException) return error.getResponse();
    log.error("HTTP request failed", { path: c.req.path, error, stack: error.stack });
    return refusal(
      c,
      500,
      "INTERNAL_ERROR",
      "the request failed unexpectedly (the server log has the detail)",
    );
  });
  return app;
}

const UNAUTHORIZED = "missing or wrong bearer token (Authorization: Bearer <token>)";

/**
 * Accepts a request that carries the token. Refusals close the connection: whoever has no
 * token gets no keep-alive and no chance to trickle a body.
 */
function authenticate(token: string): MiddlewareHandler<AppEnv> {
  const refuse = (status: 400 | 401, message: string) => (c: Context) =>
    refusal(c, status, status === 400 ? "INVALID_INPUT" : "UNAUTHORIZED", message, {
      connection: "close",
    });
  return bearerAuth({
    // Hono's own comparison hashes both tokens with SHA-256 on every request, a third of the
    // server's time under load here; this loop is constant-time without it.
    verifyToken: (given) => sameSecret(given, token),
    realm: "winterm-mcp",
    noAuthenticationHeader: { message: refuse(401, UNAUTHORIZED) },
    invalidToken: { message: refuse(401, UNAUTHORIZED) },
    invalidAuthenticationHeader: {
      message: refuse(
        400,
        "the Authorization header must be 'Bearer <token>' (RFC 6750 token characters)",
      ),
    },
  });
}

/** A body larger than allowed. */
class BodyTooLarge extends Error {}

/**
 * Reads the body of a POST or DELETE (refusing more than `limit` bytes, declared or sent,
 * before reading them all) and parses it as JSON into the context's `body`. Hono's body-limit
 * middleware cannot be used here: it rebuilds the request with the global Request class,
 * which the node:http adapter's requests are not.
 */
function jsonBody(limit: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== "POST" && c.req.method !== "DELETE") return await next();
    let text: string;
    try {
      text = await readLimited(c.req.raw, limit);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        return refusal(c, 413, "INVALID_INPUT", `the request body is larger than ${limit} bytes`, {
          connection: "close",
        });
      }
      if (error instanceof NotUtf8) {
        // JSON text is UTF-8: bytes that are not would be read as U+FFFD and typed so.
        const why = "the request body is not UTF-8 (JSON text is); it was not read";
        return isMcpPath(c.req.path)
          ? jsonRpcError(400, -32700, `Parse error: ${why}`)
          : restError(400, "INVALID_INPUT", why);
      }
      // The client went away or was cut off mid-body (the request timeout): nobody to answer.
      log.debug("request body unreadable", { path: c.req.path, error });
      return refusal(c, 400, "INVALID_INPUT", "the request body could not be read");
    }
    if (text.trim() === "") {
      c.set("body", undefined);
      return await next();
    }
    const shape = jsonShape(text);
    const mcp = isMcpPath(c.req.path);
    const problem = jsonShapeProblem(shape) ?? (mcp ? batchProblem(shape) : undefined);
    if (problem) {
      return mcp
        ? jsonRpcError(400, -32600, `Invalid Request: ${problem}; it was not read`)
        : restError(400, "INVALID_INPUT", `the body is refused unread: ${problem}`);
    }
    // JSON-RPC ids that would be read as other numbers: the messages are refused one by one.
    if (mcp) c.set("roundedIds", roundedIds(shape));
    try {
      c.set("body", JSON.parse(text));
    } catch (error) {
      const reason = (error as Error).message;
      return mcp
        ? jsonRpcError(400, -32700, `Parse error: ${reason}`)
        : restError(400, "INVALID_INPUT", `the body is not JSON: ${reason}`);
    }
    await next();
  };
}

async function readLimited(request: Request, limit: number): Promise<string> {
  if (Number(request.headers.get("content-length") ?? "0") > limit) throw new BodyTooLarge();
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(concatBytes(chunks));
  } catch {
    throw new NotUtf8();
  }
}

/** A request body whose bytes are no UTF-8. */
class NotUtf8 extends Error {}
