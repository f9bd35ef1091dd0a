/**
 * The HTTP front end: MCP Streamable HTTP at /mcp and the REST API at /api, secure by default
 * (loopback only unless told otherwise, and then only with a token configured; a token of at
 * least 32 characters on everything but `GET /api/health`; Host and Origin checked; CORS off
 * unless origins are configured; bodies capped) and hard to exhaust:
 *
 * - our accept loop ({@link ConnectionFront}) caps connections, evicts idle ones for
 *   newcomers, and survives EMFILE; a fatal listener error settles {@link HttpFrontEnd.failed};
 * - `node:http` parses requests and enforces the header, request (body) and keep-alive
 *   timeouts (Deno.serve has none); `@hono/node-server` hands the requests to the Hono app
 *   ({@link createApp}) as web Requests, one at a time per connection (answer_queue.ts: no
 *   pipelined answers pile up);
 * - what waits to be sent is bounded over all connections, and a client that reads nothing of
 *   its answer is cut after the write timeout (socket.ts, send_budget.ts);
 * - MCP sessions expire when unused, and a full table makes room for a new client; a session's
 *   standing event stream counts neither as a busy connection nor as a request in flight;
 * - the web view (web/): a page at `/`, a login link printed on stderr, WebSocket streams
 *   upgraded from node:http's `upgrade` event after the same checks as any request.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { createEngine, layGroundwork } from "../engine/mod.ts";
 * import { startHttp } from "./server.ts";
 * const { config } = parseConfig(["--http"], { WINTERM_TOKEN: "0123456789abcdef0123456789abcdef" });
 * const http = startHttp(await createEngine(config, await layGroundwork(config)), config.http!, "all");
 * await http.close();
 * ```
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import type { Context } from "hono";
import type { HttpConfig, ToolProfile } from "../config.ts";
import type { Engine } from "../engine/mod.ts";
import { log } from "../log.ts";
import { toolsFor } from "../mcp/profiles.ts";
import { createMcpServer } from "../mcp/server.ts";
import { AnswerQueue } from "./answer_queue.ts";
import { type App, type AppEnv, createApp, isMcpPath } from "./app.ts";
import { ConnectionFront, rawErrorResponse } from "./listener.ts";
import { McpSessions } from "./mcp_sessions.ts";
import { RestApi, restError } from "./rest.ts";
import { Guard, isLoopbackAddress, tokenProblem } from "./security.ts";
import { loginLink, webRoutes } from "./web/routes.ts";
import { sameSecret, WebSessions } from "./web/sessions.ts";
import { StreamHub } from "./web/stream.ts";

/** A running HTTP front end. */
export interface HttpFrontEnd {
  /** The address it listens on, e.g. http://127.0.0.1:3001. */
  url: string;
  /** The token clients must send. */
  token: string;
  /** Settles, with the error, only if the listener fails for good (the server is then deaf). */
  failed: Promise<Error>;
  /**
   * Settles once every request being answered has been (an MCP event stream of its own,
   * `GET /mcp`, is no answer: it never ends), or after `timeoutMs`. A stop waits for it, so
   * that the calls its end of the processes ended are answered with how they ended.
   */
  answered(timeoutMs: number): Promise<void>;
  /** Stops accepting connections and closes the MCP sessions (the engine is the caller's). */
  close(): Promise<void>;
}

/** A configuration the server refuses to start with. */
export class UnsafeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeConfigError";
  }
}

/**
 * Starts serving. Throws {@link UnsafeConfigError} for a token that is too weak, or a public
 * address without a configured token.
 */
export function startHttp(engine: Engine, config: HttpConfig, profile: ToolProfile): HttpFrontEnd {
  const token = chooseToken(config);
  const sessions = new McpSessions(
    () => createMcpServer(toolsFor(profile, () => Promise.resolve(engine), "mcp-http"), "remote"),
    { idleMs: config.sessionIdleSeconds * 1000, maxSessions: config.maxSessions },
  );
  const listener = Deno.listen({ hostname: config.host, port: config.port });
  const web = new WebSessions({
    port: (listener.addr as Deno.NetAddr).port,
    loginSeconds: config.webLoginSeconds,
    sessionHours: config.webSessionHours,
  });
  const streams = new StreamHub({
    maxStreams: config.maxStreams,
    maxBufferedBytes: config.streamMaxBufferedBytes,
    pingIntervalMs: config.streamPingSeconds * 1000,
  });
  const app = createApp({
    guard: new Guard({
      loopback: isLoopbackAddress(config.host),
      allowedHosts: config.allowedHosts,
      corsOrigins: config.corsOrigins,
    }),
    token,
    maxBodyBytes: config.maxBodyBytes,
    web,
    // A connection with an authorized request in flight is busy: never closed to make room (nor
    // is a stream). One whose request proved nothing (a login, sent slowly) is not.
    onAuthorized(c) {
      const { incoming, outgoing } = c.env ?? {};
      if (!incoming || !outgoing) return;
      const socket = incoming.socket;
      front.busy(socket);
      outgoing.once("close", () => front.idle(socket));
    },
    mount: (app) => mountRoutes(app, { engine, sessions, web, token, config, front: () => front }),
  });
  const parser = createParser(app, config, token, web);
  const front = new ConnectionFront(
    listener,
    {
      maxConnections: config.maxConnections,
      maxQueuedBytes: config.maxQueuedBytes,
      writeTimeoutMs: config.writeTimeoutMs,
      onConnection: (socket) => parser.emit("connection", socket),
    },
  );
  wireParser(parser, { config, app, streams, front });
  const answering = new AnswersInFlight(parser);
  // node:http keeps connections alive and checks deadlines only while it believes it listens;
  // the listening socket is ours, so tell it.
  let serving = true;
  Object.defineProperty(parser, "listening", { get: () => serving });
  parser.emit("listening");
  const url = announce(front.addr, config, web);
  return {
    url,
    token,
    failed: front.failed,
    answered: (timeoutMs) => answering.settled(timeoutMs),
    async close() {
      serving = false;
      streams.closeAll();
      await sessions.closeAll();
      await front.close();
      parser.close();
    },
  };
}

/** What {@link wireParser} hands node:http's events to. */
interface ParserWiring {
  config: HttpConfig;
  app: App;
  streams: StreamHub;
  front: ConnectionFront;
}

/**
 * node:http's events: a request it could not take is answered naming the rule, an upgrade goes
 * to the stream hub, and an answered request frees its connection for the accept loop.
 */
function wireParser(parser: ReturnType<typeof createParser>, wiring: ParserWiring): void {
  const { config, app, streams, front } = wiring;
  parser.on("clientError", (error: Error & { code?: string }, socket: Duplex) => {
    const answer = clientErrorAnswer(error, config);
    if (answer && socket.writable) socket.end(answer);
    else socket.destroy();
  });
  // A stream is busy once it is let in (a refused upgrade, 401 say, is not: it is closing).
  parser.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Uint8Array) => {
    socket.on("error", () => {});
    streams.upgrade(
      request,
      socket,
      head,
      (webRequest, env) => Promise.resolve(app.fetch(webRequest, env)),
      () => front.busy(socket),
    )
      .catch((error) => {
        log.error("stream upgrade failed", { error });
        socket.destroy();
      });
  });
  parser.on("request", (request: IncomingMessage, response: ServerResponse) => {
    response.once("close", () => front.answered(request.socket));
  });
}

/** The token clients must send: the configured one, checked, or a new one printed on stderr. */
function chooseToken(config: HttpConfig): string {
  if (!isLoopbackAddress(config.host) && !config.token) {
    throw new UnsafeConfigError(
      `refusing to listen on ${config.host} without WINTERM_TOKEN set: anyone who can reach it could run ` +
        "commands. Set a long random WINTERM_TOKEN, or listen on 127.0.0.1.",
    );
  }
  const problem = config.token === undefined ? undefined : tokenProblem(config.token);
  if (problem) throw new UnsafeConfigError(problem);
  if (config.token) return config.token;
  const token = generateToken();
  // Printed once, on stderr, so the operator can hand it to clients.
  console.error(`winterm-mcp: HTTP bearer token (set WINTERM_TOKEN to choose one): ${token}`);
  return token;
}

/** What the routes are served from. */
interface Routes {
  engine: Engine;
  sessions: McpSessions;
  web: WebSessions;
  token: string;
  config: HttpConfig;
  /** The accept loop (made after the app, so asked for when a request comes). */
  front: () => ConnectionFront;
}

/** MCP at /mcp, the web view at /, the REST API at /api. */
function mountRoutes(app: App, routes: Routes): void {
  const { engine, sessions, web, token, config } = routes;
  const mcp = async (c: Context<AppEnv>) => {
    const response = await sessions.handle(c.req.raw, c.get("body"), c.get("roundedIds"));
    // A session's standing event stream leaves the connection cap (the session table bounds
    // them), and its connection serves nothing else: closed when the stream ends.
    const socket = c.env?.incoming?.socket;
    if (c.req.method === "GET" && response.status === 200 && socket) {
      routes.front().stand(socket);
      response.headers.set("connection", "close");
    }
    return response;
  };
  app.all("/mcp", mcp);
  app.all("/mcp/*", mcp);
  app.route("/", webRoutes({ engine, sessions: web, token, loginSeconds: config.webLoginSeconds }));
  app.route("/api", new RestApi(engine).routes());
}

/**
 * node:http as the request parser: it enforces the header, request and keep-alive timeouts,
 * and hands each request to the app through the answer queue (one answer at a time on each
 * connection: answer_queue.ts).
 */
function createParser(app: App, config: HttpConfig, token: string, web: WebSessions) {
  const answers = new AnswerQueue(
    getRequestListener(app.fetch, {
      overrideGlobalObjects: false,
      // A request the adapter cannot turn into a web Request (no Host, a bad absolute URL).
      errorHandler: (error) =>
        restError(400, "INVALID_INPUT", `malformed request: ${(error as Error).message}`),
    }),
    {
      // The app judges every request; this only says whose answers need not take turns.
      trusted: (request) =>
        sameSecret(/^bearer +(.*)$/i.exec(request.headers.authorization ?? "")?.[1] ?? "", token) ||
        web.knows(request.headers.cookie),
    },
  );
  return createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.idleTimeoutMs,
      // How often node:http looks for requests past their deadline.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, config.headersTimeoutMs / 4)),
      maxHeaderSize: MAX_HEADER_BYTES,
      // A missing Host is refused by the app, in the API's error shape.
      requireHostHeader: false,
    },
    (request, response) => answers.admit(request, response),
  );
}

/**
 * The requests being answered, for a stop that waits for them ({@link HttpFrontEnd.answered}).
 * An MCP event stream of its own (`GET /mcp`) is no answer: it never ends.
 */
class AnswersInFlight {
  readonly #answering = new Set<ServerResponse>();
  readonly #waiting: (() => void)[] = [];

  constructor(parser: ReturnType<typeof createServer>) {
    parser.on("request", (request: IncomingMessage, response: ServerResponse) => {
      if (request.method === "GET" && isMcpPath((request.url ?? "").split("?")[0])) return;
      this.#answering.add(response);
      response.once("close", () => {
        this.#answering.delete(response);
        if (this.#answering.size === 0) {
          for (const resolve of this.#waiting.splice(0)) resolve();
        }
      });
    });
  }

  /** Settles once none is being answered, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void> {
    if (this.#answering.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Says on stderr where the server listens and how to log in to the web view; the URL. */
function announce(addr: Deno.NetAddr, config: HttpConfig, web: WebSessions): string {
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const url = `http://${host}:${addr.port}`;
  // Always said (whatever the log level): with --port 0 this is how the port becomes known.
  console.error(`winterm-mcp: serving MCP at ${url}/mcp and the REST API at ${url}/api`);
  // The code is in the fragment, which no request carries: it never reaches a log, ours or a
  // proxy's. On an unspecified address (0.0.0.0, ::) the link names the first allowed host.
  const unspecified = addr.hostname === "0.0.0.0" || addr.hostname === "::";
  const webUrl = unspecified ? `http://${config.allowedHosts[0] ?? "localhost"}:${addr.port}` : url;
  console.error(
    `winterm-mcp: web view: ${loginLink(webUrl, web.newLoginCode())} (this link logs one browser ` +
      `in, once, within ${config.webLoginSeconds} s; the token logs in too)`,
  );
  return url;
}

/** The largest request head (request line and headers) accepted. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * The answer to a request node:http could not take (malformed, too large a head, too slow),
 * naming the rule it broke; undefined when the peer is gone and there is nobody to answer.
 */
function clientErrorAnswer(
  error: Error & { code?: string },
  config: HttpConfig,
): Uint8Array | undefined {
  switch (error.code) {
    case "ECONNRESET":
    case "EPIPE":
      return undefined;
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return rawErrorResponse(
        408,
        "INVALID_INPUT",
        `the request was not received in time: headers within ${config.headersTimeoutMs} ms ` +
          `(WINTERM_HTTP_HEADERS_TIMEOUT_MS), the whole request within ${config.requestTimeoutMs} ` +
          "ms (WINTERM_HTTP_REQUEST_TIMEOUT_MS)",
      );
    case "HPE_HEADER_OVERFLOW":
      return rawErrorResponse(
        431,
        "INVALID_INPUT",
        `the request line and headers are larger than ${MAX_HEADER_BYTES} bytes`,
      );
    default:
      return rawErrorResponse(
        400,
        "INVALID_INPUT",
        `malformed HTTP request (${error.code ?? error.message})`,
        {
          reason: error.code ?? "unknown",
        },
      );
  }
}

function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
