/**
 * The web view's routes: the page at `/` and its scripts at `/assets/*` (public, no data in
 * them), its login and session (`/api/web/*`), and the WebSocket streams
 * (`/api/terminals/:id/stream`, `/api/commands/:token/stream`). The checks in app.ts run
 * before all of them.
 *
 * | route | does |
 * |---|---|
 * | `GET /`, `GET /assets/:name` | the page, its script and styles |
 * | `POST /api/web/login` | `{code}` (the one-time link's) or `{token}` → the session cookie and `{key}` |
 * | `GET /api/web/session` | who is logged in: `{via}` |
 * | `POST /api/web/logout` | ends the session, clears the cookie |
 * | `POST /api/web/links` | (token only) a new one-time login link `{url, expiresInSeconds}` |
 *
 * @module
 */
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import { type Engine, EngineError } from "../../engine/mod.ts";
import { ALWAYS_HEADERS, type AppEnv } from "../app.ts";
import { engineError, restError } from "../rest.ts";
import { pageAnswer } from "./page.ts";
import { sameOrigin } from "../security.ts";
import type { WebSessions } from "./sessions.ts";

/** What the routes need. */
export interface WebRoutesOptions {
  engine: Engine;
  sessions: WebSessions;
  token: string;
  /** How long a one-time link is valid. */
  loginSeconds: number;
}

/** The link that logs a browser in once. */
export function loginLink(url: string, code: string): string {
  return `${url}/#login=${code}`;
}

/** See the module documentation. */
export function webRoutes(options: WebRoutesOptions): Hono<AppEnv> {
  const { engine, sessions } = options;
  const web = new Hono<AppEnv>({ strict: false });
  web.get("/", (c) => serveAsset(c, "index.html"));
  web.get("/assets/:name", (c) => serveAsset(c, c.req.param("name")));
  web.post("/api/web/login", (c) => logIn(c, options));
  web.get("/api/web/session", (c) => {
    const principal = c.get("principal");
    return Response.json({ success: true, data: { via: principal?.via } }, {
      headers: { "cache-control": "no-store" },
    });
  });
  web.post("/api/web/logout", (c) => {
    const principal = c.get("principal");
    const cookie = sessions.logout(principal?.via === "web" ? principal.session : undefined);
    return Response.json({ success: true, message: "logged out" }, {
      headers: { "set-cookie": cookie },
    });
  });
  web.post("/api/web/links", (c) => {
    if (c.get("principal")?.via !== "token") {
      return restError(403, "FORBIDDEN", "only a client with the bearer token makes login links");
    }
    return Response.json({
      success: true,
      data: {
        // The address the client used (its Host passed the allow-list).
        url: loginLink(`http://${c.req.header("host")}`, sessions.newLoginCode()),
        expiresInSeconds: options.loginSeconds,
      },
    }, { headers: { "cache-control": "no-store" } });
  });
  web.get(
    "/api/terminals/:id/stream",
    streamRoute((id) => ({ terminal: engine.terminals.get(id) })),
  );
  web.get(
    "/api/commands/:id/stream",
    streamRoute((id) => {
      const command = engine.commands.get(id);
      if (!command) {
        throw new EngineError("not_found", `no command ${id} (never started, or expired)`, "token");
      }
      return { command };
    }),
  );
  return web;
}

/** The page or one of its files. */
async function serveAsset(c: Context<AppEnv>, name: string) {
  const answer = await pageAnswer(name, c.req.raw.headers);
  if (!answer) return restError(404, "NOT_FOUND", `no such file: ${c.req.path}`);
  const headers = { ...answer.headers, ...ALWAYS_HEADERS };
  const outgoing = c.env?.outgoing;
  // Without node:http (tests of the app alone) a Response, which copies the bytes.
  if (!outgoing) {
    return new Response(answer.body?.slice() ?? null, { status: answer.status, headers });
  }
  // The shared bytes go to the connection as they are.
  outgoing.writeHead(answer.status, headers);
  outgoing.end(answer.body ?? undefined);
  return RESPONSE_ALREADY_SENT;
}

/** `POST /api/web/login`: a one-time code or the token for a session cookie. */
function logIn(c: Context<AppEnv>, options: WebRoutesOptions): Response {
  // Only this server's own page logs in (a login forced from elsewhere is refused too).
  if (!sameOrigin(c.req.header("origin") ?? null, c.req.header("host") ?? null)) {
    return restError(403, "FORBIDDEN", "log in from this server's own page (Origin)");
  }
  const body = c.get("body") as { code?: unknown; token?: unknown } | undefined;
  const code = typeof body?.code === "string" ? body.code : undefined;
  const token = typeof body?.token === "string" ? body.token : undefined;
  if ((code === undefined) === (token === undefined)) {
    return restError(400, "INVALID_INPUT", "send {code} (from the login link) or {token}");
  }
  const login = options.sessions.login({ code, token }, options.token);
  if (!login) {
    return restError(
      401,
      "UNAUTHORIZED",
      code === undefined
        ? "wrong token"
        : "the login link was already used or has expired: use the token, or ask for a new " +
          "link (POST /api/web/links with the token)",
    );
  }
  return Response.json({ success: true, data: { key: login.session.key } }, {
    headers: { "set-cookie": login.cookie, "cache-control": "no-store" },
  });
}

/**
 * A stream route: accepts a WebSocket upgrade for what `find` names (the stream hub upgrades
 * only what a route accepted, stream.ts); anything else is refused as an API request is.
 */
function streamRoute(
  find: (id: string) => { terminal: EngineTerminal } | { command: EngineCommand },
) {
  return (c: Context<AppEnv>) => {
    let target;
    try {
      target = find(c.req.param("id") ?? "");
    } catch (error) {
      if (error instanceof EngineError) return engineError(error, "INTERNAL_ERROR");
      throw error;
    }
    const ticket = c.env?.upgrade;
    if (!ticket || c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      return restError(
        426,
        "INVALID_INPUT",
        "this is a WebSocket endpoint: connect with ws://",
        {},
        {
          upgrade: "websocket",
        },
      );
    }
    ticket.target = target;
    ticket.via = c.get("principal")?.via === "web" ? "web" : "stream";
    return new Response(null, { status: 204 });
  };
}

type EngineTerminal = ReturnType<Engine["terminals"]["get"]>;
type EngineCommand = NonNullable<ReturnType<Engine["commands"]["get"]>>;
