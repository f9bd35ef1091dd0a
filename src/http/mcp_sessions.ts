/**
 * MCP Streamable HTTP at /mcp: one SDK transport and one MCP server per session
 * (`Mcp-Session-Id`), created by an initialize request, ended by DELETE, by the client going
 * quiet for an hour, or by shutdown. The engine behind them is shared.
 *
 * @module
 */
import { log } from "../log.ts";
import { type Server, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";
import { isInitializeRequest } from "../mcp/sdk.ts";

/** Sessions idle this long are closed. */
const SESSION_IDLE_MS = 60 * 60 * 1000;
/** Sessions open at once; more initialize requests are refused. */
const MAX_SESSIONS = 256;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

/** A JSON-RPC error response (for failures before a transport is involved). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: HeadersInit = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

/** See the module documentation. */
export class McpSessions {
  #sessions = new Map<string, Session>();
  #sweeper: ReturnType<typeof setInterval>;

  /** `createServer` makes the MCP server for a new session. */
  constructor(private readonly createServer: () => Server) {
    this.#sweeper = setInterval(() => this.#sweep(), 60_000);
    Deno.unrefTimer(this.#sweeper);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Answers a request to /mcp; `body` is the parsed JSON body of a POST. */
  async handle(request: Request, body: unknown): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const session = this.#sessions.get(id);
      if (!session) return jsonRpcError(404, -32001, "Session not found: initialize a new one");
      session.lastSeen = Date.now();
      return await session.transport.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== "POST" || !isInitializeRequest(body)) {
      return jsonRpcError(
        400,
        -32000,
        "Bad Request: no Mcp-Session-Id header, and not an initialize request",
      );
    }
    if (this.#sessions.size >= MAX_SESSIONS) {
      return jsonRpcError(503, -32000, `${MAX_SESSIONS} MCP sessions are open, the most allowed`);
    }
    const server = this.createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.#sessions.set(sessionId, { transport, server, lastSeen: Date.now() });
        log.info("MCP session opened", { sessionId });
      },
      onsessionclosed: (sessionId) => this.#forget(sessionId),
    });
    transport.onclose = () => transport.sessionId && this.#forget(transport.sessionId);
    await server.connect(transport);
    return await transport.handleRequest(request, { parsedBody: body });
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map(({ server }) => server.close().catch(() => {})));
  }

  #forget(sessionId: string): void {
    if (this.#sessions.delete(sessionId)) log.info("MCP session closed", { sessionId });
  }

  #sweep(): void {
    const oldest = Date.now() - SESSION_IDLE_MS;
    for (const [sessionId, session] of this.#sessions) {
      if (session.lastSeen < oldest) {
        this.#forget(sessionId);
        session.server.close().catch(() => {});
      }
    }
  }
}
