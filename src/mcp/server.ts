/**
 * The MCP server: lists the tools it is given and answers calls through them. Translation
 * only: validation failures and engine errors become `isError` results that say what was
 * wrong; an unknown tool or a structurally invalid request is a protocol error (-32602) with
 * a readable message. Engine errors carry local detail (paths searched, the server's PATH):
 * shown to the local user of a stdio server, never to a remote one.
 *
 * @example
 * ```ts
 * import { Type } from "../typebox.ts";
 * import { createMcpServer } from "./server.ts";
 * import { StdioTransport } from "./stdio.ts";
 * import { defineTool } from "./tool.ts";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   title: "Echo",
 *   description: "Returns its text.",
 *   input: Type.Object({ text: Type.String() }),
 *   output: Type.Object({ text: Type.String() }),
 *   annotations: { readOnlyHint: true },
 *   handler: ({ text }) => Promise.resolve({ text }),
 * });
 * // "local": the stdio client is the machine's own user, shown engine errors' local detail.
 * const server = createMcpServer([echo], "local");
 * await server.connect(new StdioTransport());
 * ```
 * @module
 */
import { log } from "../log.ts";
import { EngineError, inSlices } from "../engine/mod.ts";
import { jsonTextSteps } from "../json_steps.ts";
import { NAME, VERSION } from "../version.ts";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type RequestHandlerExtra,
  Server,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "./sdk.ts";
import type { ToolContext, ToolDefinition } from "./tool.ts";
import { mcpWording } from "./wording.ts";
import { wireSchema } from "./wire_schema.ts";

const INSTRUCTIONS = "Real terminals for agents. One-shot commands: run_command with wait_ms " +
  "answers status, exit code and output in one call (output over 16 KiB shows its first and last " +
  "lines with a marker saying how to read the rest; tail_lines gives just the end). Persistent " +
  "terminals (shells, REPLs, servers): terminal_create, then terminal_write with a wait (pattern, " +
  "idleMs or exit) to type and see the answer in one call; terminal_read with since=nextReadFrom " +
  "or mode tail for more; terminal_release when done.";

/**
 * Who reads the errors: `local`, the user who started the server (stdio), sees the detail of
 * engine errors; `remote` (HTTP) sees what names the field and the rule, nothing of the
 * server's environment.
 */
export type Audience = "local" | "remote";

/** The tools, once loaded, by name and as `tools/list` describes them. */
interface LoadedTools {
  byName: Map<string, ToolDefinition>;
  listed: Tool[];
}

/**
 * Creates a server offering `tools` to `audience`. `tools` may be a loader, called on the first
 * tool request: the server answers `initialize` without them. The argument checker (TypeBox's
 * compiler, validation.ts) is imported with the first tool call: listing needs only schemas.
 */
export function createMcpServer(
  tools: ToolDefinition[] | (() => Promise<ToolDefinition[]>),
  audience: Audience,
): Server {
  const server = new Server(
    { name: NAME, version: VERSION },
    {
      capabilities: { tools: {}, logging: {} },
      instructions: INSTRUCTIONS,
    },
  );
  let loaded: Promise<LoadedTools> | undefined;
  const ready = () =>
    loaded ??= Promise.resolve(typeof tools === "function" ? tools() : tools).then((list) => ({
      byName: new Map(list.map((tool) => [tool.name, tool])),
      listed: list.map(describeTool),
    }));
  // The argument checker comes with the first call: listing the tools needs only their schemas.
  let checker: Promise<typeof import("../validation.ts")> | undefined;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await ready()).listed }));
  const received = new WeakMap<object, unknown>();
  const answered = watchAnswers(server);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    // The arguments as they arrived: the SDK's parse silently drops a `__proto__` key, which
    // must be refused like any other unknown argument.
    const args = (received.get(extra) as { arguments?: Record<string, unknown> } | undefined)
      ?.arguments ?? request.params.arguments ?? {};
    const [{ byName }, { validationErrors }] = await Promise.all([
      ready(),
      checker ??= import("../validation.ts"),
    ]);
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const problems = validationErrors(tool.input, args);
    if (problems.length > 0) {
      return failure(`Invalid arguments for ${name}: ${problems.join("; ")}`);
    }
    try {
      const result = await tool.handler(args, toolContext(server, extra, answered(extra)));
      // An answer of megabytes is serialized in slices (see src/json_steps.ts).
      const text = await inSlices(() => jsonTextSteps(result), extra.signal);
      return {
        content: [{ type: "text", text }],
        structuredContent: result,
      };
    } catch (error) {
      // Cancelled by the client (its answer is not sent): no failure of the tool's.
      if (extra.signal.aborted) {
        log.debug("tool call cancelled by the client", { tool: name });
        return failure(`${name}: cancelled by the client`);
      }
      return failure(explain(tool, error, audience));
    }
  });
  checkRequestsFirst(server, received);
  cancelEveryId(server);
  return server;
}

/** Where each server's answers go, as far as room goes: see {@link setCallRooms}. */
const answerRooms = new WeakMap<Server, CallRoom>();

/** See {@link setCallRooms}. */
export type CallRoom = (requestId: string | number, answered: Promise<void>) => Promise<void>;

/**
 * Gives `server`'s calls a room (ToolContext.room): `room(requestId, answered)` settles once the
 * place that request's answer goes can take one more; `answered` settles once that answer is
 * handed over (or none will be). Set by a transport whose answers could pile up unread
 * (Streamable HTTP's event streams); stdio has one room for all (setAnswerRoom in the engine).
 */
export function setCallRooms(server: Server, room: CallRoom): void {
  answerRooms.set(server, room);
}

/** The SDK's protocol layer, as far as cancellation goes (SDK 1.x). */
interface Cancellable {
  _oncancel(notification: { params: { requestId: string | number; reason?: string } }): void;
  _requestHandlerAbortControllers: Map<string | number, AbortController>;
}

/**
 * The SDK ignores a cancellation of the request with id 0 or "" (it tests the id for truth): such
 * a call ran on, a `terminal_wait` for up to 10 minutes, and its answer came all the same. Every
 * id is looked up here.
 */
function cancelEveryId(server: Server): void {
  const protocol = server as unknown as Cancellable;
  protocol._oncancel = ({ params }) =>
    protocol._requestHandlerAbortControllers.get(params.requestId)?.abort(params.reason);
}

/** A request handler as the SDK's protocol layer keeps it (the request is checked inside). */
type StoredHandler = (request: unknown, extra: object) => Promise<unknown>;

/**
 * Wraps every request handler the SDK keeps (in `_requestHandlers`, SDK 1.x) so that:
 * - the params of each request, as they arrived, are kept in `received` (by the request's
 *   `extra`, which reaches our handler unchanged), before the SDK's Zod parse reshapes them;
 * - a request that does not have the shape of its method, which the SDK answers -32603 with a
 *   raw Zod dump, is answered -32602 with a message naming each field and its rule.
 */
function checkRequestsFirst(server: Server, received: WeakMap<object, unknown>): void {
  const handlers = (server as unknown as { _requestHandlers: Map<string, StoredHandler> })
    ._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      received.set(extra, (request as { params?: unknown }).params);
      try {
        return await handler(request, extra);
      } catch (error) {
        const issues = zodIssues(error);
        if (!issues) throw error;
        throw new McpError(ErrorCode.InvalidParams, `Invalid ${method} request: ${issues}`);
      }
    });
  }
}

/** A Zod error's issues in words ("'params.name': expected string"), or undefined for other errors. */
function zodIssues(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown })?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.slice(0, 5).map((issue: { path?: unknown[]; message?: string }) => {
    const path = (issue.path ?? []).join(".");
    return `${path ? `'${path}'` : "the request"}: ${issue.message ?? "is invalid"}`;
  }).join("; ");
}

function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: wireSchema(tool.input) as Tool["inputSchema"],
    outputSchema: wireSchema(tool.output) as Tool["outputSchema"],
    annotations: tool.annotations,
  };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** A failed call in words: an engine error in the tool's field names and tool names. */
function explain(tool: ToolDefinition, error: unknown, audience: Audience): string {
  if (error instanceof EngineError) {
    const wording = mcpWording(tool.fieldNames);
    const message = error.worded(wording, audience === "local");
    return error.field ? `'${wording.field(error.field)}': ${message}` : message;
  }
  const name = tool.name;
  log.error("tool failed unexpectedly", { tool: name, error, stack: (error as Error)?.stack });
  if (audience === "remote") return `${name} failed unexpectedly (the server log has the detail)`;
  return `${name} failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** A request's id, as the SDK's protocol layer has it. */
type RequestId = RequestHandlerExtra<ServerRequest, ServerNotification>["requestId"];

/**
 * Keeps each tool call's promise that settles once its answer is handed to the transport (the
 * wire's order from there on), or once none will be (the call was cancelled): see
 * ToolContext.answered. The transport's `send` is watched from its connection on.
 */
function watchAnswers(
  server: Server,
): (extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => Promise<void> {
  const waiting = new Map<RequestId, (() => void)[]>();
  const settle = (id: RequestId) => {
    const resolvers = waiting.get(id);
    waiting.delete(id);
    for (const resolve of resolvers ?? []) resolve();
  };
  const connect = server.connect.bind(server);
  server.connect = (transport) => {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      try {
        await send(message, options);
      } finally {
        if ("id" in message && ("result" in message || "error" in message)) {
          settle(message.id as RequestId);
        }
      }
    };
    return connect(transport);
  };
  return (extra) => {
    if (extra.signal.aborted) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    waiting.set(extra.requestId, [...waiting.get(extra.requestId) ?? [], resolve]);
    // The SDK sends no answer to a cancelled call.
    extra.signal.addEventListener("abort", () => settle(extra.requestId), { once: true });
    return promise;
  };
}

function toolContext(
  server: Server,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  answered: Promise<void>,
): ToolContext {
  const progressToken = extra._meta?.progressToken;
  const room = answerRooms.get(server);
  return {
    signal: extra.signal,
    answered,
    client: server,
    ...(room ? { room: () => room(extra.requestId, answered) } : {}),
    progress: async (progress, total, message) => {
      if (progressToken === undefined) return;
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken, progress, total, message },
      }).catch(() => {});
    },
    log: (params) => server.sendLoggingMessage(params).catch(() => {}),
  };
}
