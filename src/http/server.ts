/**
 * The HTTP front end: one `Deno.serve` with MCP Streamable HTTP at /mcp and the REST API at
 * /api, secure by default: loopback only unless told otherwise (and then only with a token
 * configured), a bearer token on everything but `GET /api/health`, Host and Origin checked,
 * CORS off unless origins are configured, request bodies capped.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { Engine } from "../engine/mod.ts";
 * import { startHttp } from "./server.ts";
 * const { config } = parseConfig(["--http"], { WINTERM_TOKEN: "s3cret" });
 * const http = startHttp(new Engine(config), config.http!, "all");
 * await http.close();
 * ```
 * @module
 */
import type { HttpConfig, ToolProfile } from "../config.ts";
import type { Engine } from "../engine/mod.ts";
import { log } from "../log.ts";
import { toolsFor } from "../mcp/profiles.ts";
import { createMcpServer } from "../mcp/server.ts";
import { jsonRpcError, McpSessions } from "./mcp_sessions.ts";
import { RestApi, restError } from "./rest.ts";
import { BodyTooLarge, Guard, isLoopbackAddress, readBody } from "./security.ts";

/** A running HTTP front end. */
export interface HttpFrontEnd {
  /** The address it listens on, e.g. http://127.0.0.1:3001. */
  url: string;
  /** The token clients must send. */
  token: string;
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

/** Starts serving. Throws {@link UnsafeConfigError} for a public address without a configured token. */
export function startHttp(engine: Engine, config: HttpConfig, profile: ToolProfile): HttpFrontEnd {
  const loopback = isLoopbackAddress(config.host);
  if (!loopback && !config.token) {
    throw new UnsafeConfigError(
      `refusing to listen on ${config.host} without WINTERM_TOKEN set: anyone who can reach it could run ` +
        "commands. Set a long random WINTERM_TOKEN, or listen on 127.0.0.1.",
    );
  }
  const token = config.token ?? generateToken();
  if (!config.token) {
    // Printed once, on stderr, so the operator can hand it to clients.
    console.error(`winterm-mcp: HTTP bearer token (set WINTERM_TOKEN to choose one): ${token}`);
  }
  const guard = new Guard({
    token,
    loopback,
    allowedHosts: config.allowedHosts,
    corsOrigins: config.corsOrigins,
  });
  const sessions = new McpSessions(() => createMcpServer(toolsFor(profile, engine, "mcp-http")));
  const rest = new RestApi(engine);

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const isMcp = url.pathname === "/mcp" || url.pathname.startsWith("/mcp/");
    const refuse = (
      status: number,
      code: "UNAUTHORIZED" | "FORBIDDEN" | "INVALID_INPUT",
      message: string,
      headers = {},
    ) =>
      isMcp
        ? jsonRpcError(status, status === 401 ? -32001 : -32000, message, headers)
        : restError(status, code, message, {}, headers);
    if (!guard.hostAllowed(request.headers.get("host"))) {
      return refuse(403, "FORBIDDEN", `Host '${request.headers.get("host")}' is not allowed`);
    }
    const origin = request.headers.get("origin");
    if (!guard.originAllowed(origin)) {
      return refuse(403, "FORBIDDEN", `Origin '${origin}' is not allowed`);
    }
    if (request.method === "OPTIONS") {
      const cors = guard.corsHeaders(origin);
      return cors
        ? new Response(null, { status: 204, headers: cors })
        : refuse(403, "FORBIDDEN", "CORS is not enabled for this origin");
    }
    if (request.method === "GET" && url.pathname.replace(/\/+$/, "") === "/api/health") {
      return rest.health();
    }
    if (!guard.authorized(request.headers.get("authorization"))) {
      return refuse(
        401,
        "UNAUTHORIZED",
        "missing or wrong bearer token (Authorization: Bearer <token>)",
        {
          "www-authenticate": 'Bearer realm="winterm-mcp"',
        },
      );
    }
    let body: unknown;
    if (request.method === "POST" || request.method === "DELETE") {
      let text: string;
      try {
        text = await readBody(request, config.maxBodyBytes);
      } catch (error) {
        if (error instanceof BodyTooLarge) return refuse(413, "INVALID_INPUT", error.message);
        throw error;
      }
      if (text.trim() !== "") {
        try {
          body = JSON.parse(text);
        } catch (error) {
          return isMcp
            ? jsonRpcError(400, -32700, `Parse error: ${(error as Error).message}`)
            : restError(400, "INVALID_INPUT", `the body is not JSON: ${(error as Error).message}`);
        }
      }
    }
    if (isMcp) return await sessions.handle(request, body);
    if (url.pathname === "/api" || url.pathname.startsWith("/api/")) {
      return await rest.handle(request, url, body);
    }
    return restError(
      404,
      "INVALID_INPUT",
      `nothing at ${url.pathname}: the MCP endpoint is /mcp, the REST API /api`,
    );
  };

  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    onListen: () => {},
    onError: (error) => {
      log.error("HTTP request failed", { error, stack: (error as Error)?.stack });
      return restError(500, "INTERNAL_ERROR", "internal error");
    },
  }, async (request) => {
    const response = await handle(request);
    const cors = guard.corsHeaders(request.headers.get("origin"));
    if (cors) {
      for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
    }
    return response;
  });
  const address = server.addr as Deno.NetAddr;
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  const url = `http://${host}:${address.port}`;
  // Always said (whatever the log level): with --port 0 this is how the port becomes known.
  console.error(`winterm-mcp: serving MCP at ${url}/mcp and the REST API at ${url}/api`);
  return {
    url,
    token,
    async close() {
      await sessions.closeAll();
      await server.shutdown();
    },
  };
}

function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
