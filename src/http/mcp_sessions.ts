/**
 * MCP Streamable HTTP at /mcp: one SDK transport and one MCP server per session
 * (`Mcp-Session-Id`), created by an initialize request, ended by DELETE, by going unused for
 * the idle time, by shutdown, or, when the table is full, by a newer client: the least
 * recently used session with no request in flight makes room (a client whose session is gone
 * gets 404 and initializes again, as the protocol says). A session's standing event stream
 * (GET) is no request in flight: it never ends, and 256 clients keeping theirs left no session
 * to close, nor (counted as busy connections) any connection for a request; closing the session
 * ends the stream cleanly, and the SDK's tries to reopen it get 404. The engine behind them is
 * shared.
 *
 * @example
 * ```ts
 * import { McpSessions } from "./mcp_sessions.ts";
 * import { createMcpServer } from "../mcp/server.ts";
 * const sessions = new McpSessions(() => createMcpServer([], "remote"), {
 *   idleMs: 3_600_000,
 *   maxSessions: 256,
 * });
 * // What the app hands over for a POST to /mcp: the request, and its body parsed.
 * const initialize = {
 *   jsonrpc: "2.0",
 *   id: 1,
 *   method: "initialize",
 *   params: {
 *     protocolVersion: "2025-06-18",
 *     capabilities: {},
 *     clientInfo: { name: "demo", version: "1.0.0" },
 *   },
 * };
 * const answer = await sessions.handle(
 *   new Request("http://localhost:3001/mcp", {
 *     method: "POST",
 *     headers: {
 *       "content-type": "application/json",
 *       accept: "application/json, text/event-stream",
 *     },
 *     body: JSON.stringify(initialize),
 *   }),
 *   initialize,
 * );
 * answer.headers.get("mcp-session-id"); // the new session's id, for the client's next requests
 * await sessions.closeAll(); // at shutdown
 * ```
 * @module
 */
import { log } from "../log.ts";
import { answerableId, whatIsWrong } from "../mcp/refusal.ts";
import { sendLargeAnswersInSlices, type StreamBookkeeping, streamRooms } from "./sse_answers.ts";
import { setCallRooms } from "../mcp/server.ts";
import {
  deserializeMessage,
  isInitializeRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "../mcp/sdk.ts";

/** The limits of a session table. */
export interface SessionLimits {
  /** Sessions unused this long are closed. */
  idleMs: number;
  /** Sessions open at once. */
  maxSessions: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
  /** Requests whose answers are still being sent (an SSE stream counts until it ends; the
   * standing GET stream does not). */
  inFlight: number;
  /** The answer stream of each request not answered yet, by the request's id. */
  posts: Map<RequestId, Post>;
}

type RequestId = string | number;

/** A POST's answer stream: the requests it carried, as far as they are answered or cancelled. */
interface Post {
  unanswered: Set<RequestId>;
  cancelled: RequestId[];
}

/** A JSON-RPC error response (for failures before a transport is involved). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: HeadersInit = {},
  id: string | number | null = null,
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id }, { status, headers });
}

/**
 * The answer to a POST body holding a message the SDK's schema refuses, or undefined when every
 * message is one. -32600 with the field and the rule (the SDK's transport says only "Parse
 * error: Invalid JSON-RPC message", -32700, id null, for JSON that parsed). In a batch, every
 * request gets its answer: the refused ones why, the others that they were not run, so that no
 * client waits for an id that will never be answered.
 */
function refusal(
  body: unknown,
  rounded: Map<number, string>,
  inFlight: (id: RequestId) => boolean,
): Response | undefined {
  // As over stdio, and as JSON-RPC answers it (the SDK's transport said 202, and nothing).
  if (Array.isArray(body) && body.length === 0) {
    return jsonRpcError(400, -32600, "Invalid Request: an empty batch");
  }
  const messages = Array.isArray(body) ? body : [body];
  /** Messages whose id another request holds: answered with id null, not to answer that one. */
  const taken = new Set<number>();
  const ids = new Set<RequestId>();
  const reasons = messages.map((message, index) => {
    if (rounded.has(index)) return `Invalid Request: ${rounded.get(index)}; it was not read`;
    try {
      deserializeMessage(JSON.stringify(message));
    } catch (error) {
      return `Invalid Request: ${whatIsWrong(error as Error, message)}`;
    }
    const [id] = requestIds(message);
    if (id === undefined) return undefined;
    const earlier = ids.has(id);
    ids.add(id);
    if (!earlier && !inFlight(id)) return undefined;
    const json = JSON.stringify(id);
    taken.add(index);
    return `Invalid Request: id ${json.length > 40 ? `${json.slice(0, 40)}…` : json} is taken ` +
      (earlier
        ? "by another request of this batch"
        : "by a request of this session not answered yet");
  });
  const refused = reasons.findIndex((reason) => reason !== undefined);
  if (refused < 0) return undefined;
  // An id read as another number is not given back: null, as JSON-RPC answers an unknown id.
  const idOf = (message: unknown, index: number) =>
    rounded.has(index) || taken.has(index) ? null : answerableId(message);
  if (!Array.isArray(body)) return jsonRpcError(400, -32600, reasons[0]!, {}, idOf(body, 0));
  const answers = messages.flatMap((message, index) => {
    const id = idOf(message, index);
    if (reasons[index] === undefined && (id === null || !("method" in message))) return [];
    const why = reasons[index] ?? `not run: item ${refused + 1} of its batch was refused`;
    return [{ jsonrpc: "2.0", error: { code: -32600, message: why }, id }];
  });
  return Response.json(answers, { status: 400 });
}

/** See the module documentation. */
export class McpSessions {
  /** Least recently used first. */
  #sessions = new Map<string, Session>();
  #sweeper: ReturnType<typeof setInterval>;

  /** `createServer` makes the MCP server for a new session. */
  constructor(private readonly createServer: () => Server, private readonly limits: SessionLimits) {
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, limits.idleMs / 2));
    Deno.unrefTimer(this.#sweeper);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Answers a request to /mcp; `body` is the parsed JSON body of a POST, `rounded` its messages
   * whose ids would be read as other numbers (json_shape.ts).
   */
  async handle(
    request: Request,
    body: unknown,
    rounded: Map<number, string> = new Map(),
  ): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    const known = id === null ? undefined : this.#sessions.get(id);
    const refused = request.method === "POST"
      ? refusal(body, rounded, (requestId) => known?.posts.has(requestId) ?? false)
      : undefined;
    if (refused) return refused;
    if (id !== null) {
      const session = known;
      if (!session) return jsonRpcError(404, -32001, "Session not found: initialize a new one");
      this.#sessions.delete(id);
      this.#sessions.set(id, session);
      return await this.#track(
        session,
        () => session.transport.handleRequest(request, { parsedBody: body }),
        requestIds(body),
        // The standing event stream is no request: it never ends, and its session stays idle
        // (closed when unused, or to make room for a new client, the stream ending cleanly).
        request.method !== "GET",
      );
    }
    if (request.method !== "POST" || !isInitializeRequest(body)) {
      return jsonRpcError(
        400,
        -32000,
        "Bad Request: no Mcp-Session-Id header, and not an initialize request",
      );
    }
    if (this.#sessions.size >= this.limits.maxSessions && !this.#evictOne()) {
      return jsonRpcError(
        503,
        -32000,
        `all ${this.limits.maxSessions} MCP sessions are busy with requests, the most allowed ` +
          "(WINTERM_MCP_MAX_SESSIONS); retry shortly",
        { "retry-after": "1" },
      );
    }
    const server = this.createServer();
    const session: Session = {
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sessionId) => {
          this.#sessions.set(sessionId, session);
          log.info("MCP session opened", { sessionId, open: this.#sessions.size });
        },
        onsessionclosed: (sessionId) => this.#forget(sessionId),
      }),
      server,
      lastSeen: Date.now(),
      inFlight: 0,
      posts: new Map(),
    };
    const { transport } = session;
    transport.onclose = () => transport.sessionId && this.#forget(transport.sessionId);
    await server.connect(transport);
    sendLargeAnswersInSlices(transport);
    setCallRooms(server, streamRooms(transport));
    watchAnswers(session);
    return await this.#track(
      session,
      () => transport.handleRequest(request, { parsedBody: body }),
      requestIds(body),
    );
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map(({ server }) => server.close().catch(() => {})));
  }

  /**
   * Counts a request as in flight until its answer (a stream, perhaps) has been sent or dropped.
   * Dropped (the client went away): the requests it carried (`ids`) are cancelled, as if the
   * client had said so. Without a store of events no client can ever have their answers, and a
   * `terminal_wait` went on for up to 10 minutes, 1,000 of them holding 86 MB.
   */
  async #track(
    session: Session,
    answer: () => Promise<Response>,
    ids: (string | number)[],
    counted = true,
  ): Promise<Response> {
    if (counted) session.inFlight++;
    session.lastSeen = Date.now();
    // Before the transport hands the requests on: a quick answer may be sent before it returns.
    const post: Post = { unanswered: new Set(ids), cancelled: [] };
    for (const id of ids) session.posts.set(id, post);
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (counted) session.inFlight--;
      session.lastSeen = Date.now();
    };
    const forgetPost = () => {
      for (const id of post.unanswered) {
        if (session.posts.get(id) === post) session.posts.delete(id);
      }
    };
    let response: Response;
    try {
      response = await answer();
    } catch (error) {
      forgetPost();
      finish();
      throw error;
    }
    // Refused before any request ran (or no request in it): nothing will be answered on a stream.
    if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
      forgetPost();
    }
    if (!response.body) {
      finish();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        for (const requestId of ids) {
          session.transport.onmessage?.({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId, reason: "the HTTP client went away before the answer" },
          });
        }
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  /** Closes the least recently used session with nothing in flight; false if every one is busy. */
  #evictOne(): boolean {
    for (const [sessionId, session] of this.#sessions) {
      if (session.inFlight > 0) continue;
      log.info("MCP session table full: closing the least recently used session", { sessionId });
      this.#close(sessionId, session);
      return true;
    }
    return false;
  }

  #close(sessionId: string, session: Session): void {
    this.#forget(sessionId);
    session.server.close().catch(() => {});
  }

  #forget(sessionId: string): void {
    if (this.#sessions.delete(sessionId)) log.info("MCP session closed", { sessionId });
  }

  #sweep(): void {
    const oldest = Date.now() - this.limits.idleMs;
    for (const [sessionId, session] of this.#sessions) {
      if (session.inFlight === 0 && session.lastSeen < oldest) this.#close(sessionId, session);
    }
  }
}

/**
 * Watches a session's answers and cancellations, so that the answer stream of a POST whose
 * requests are all answered or cancelled ends. The SDK sends no answer for a cancelled request,
 * and ends a stream only once each of its requests has one: a cancelled call's stream stayed
 * open with keep-alives for good, and so did its connection (about 260 cancelled calls held
 * the 256 connections the server allows). The SDK's record of those requests goes too.
 */
function watchAnswers(session: Session): void {
  const { transport } = session;
  const settle = (id: RequestId, cancelled: boolean) => {
    const post = session.posts.get(id);
    if (!post) return;
    session.posts.delete(id);
    post.unanswered.delete(id);
    if (cancelled) post.cancelled.push(id);
    if (post.unanswered.size > 0 || post.cancelled.length === 0) return;
    const kept = transport as unknown as StreamBookkeeping;
    const stream = kept._requestToStreamMapping.get(id);
    if (stream === undefined) return;
    transport.closeSSEStream(id);
    for (const [requestId, of] of kept._requestToStreamMapping) {
      if (of !== stream) continue;
      kept._requestToStreamMapping.delete(requestId);
      kept._requestResponseMap.delete(requestId);
    }
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      if ("id" in message && ("result" in message || "error" in message)) {
        settle(message.id as RequestId, false);
      }
    }
  };
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    deliver?.(message, extra);
    if ("method" in message && message.method === "notifications/cancelled" && !("id" in message)) {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === "string" || typeof requestId === "number") settle(requestId, true);
    }
  };
}

/** The ids of the requests in a POST's body (a message, or a batch of them). */
function requestIds(body: unknown): (string | number)[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((message) => {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    return typeof method === "string" && (typeof id === "string" || typeof id === "number")
      ? [id]
      : [];
  });
}
