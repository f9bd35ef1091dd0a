/**
 * The MCP server: lists the tools it is given and answers calls through them. Translation
 * only: validation failures and engine errors become `isError` results that say what was
 * wrong; an unknown tool is a protocol error.
 *
 * @example
 * ```ts
 * import { createMcpServer } from "./server.ts";
 * import { StdioServerTransport } from "./sdk.ts";
 * const server = createMcpServer([]);
 * await server.connect(new StdioServerTransport());
 * ```
 * @module
 */
import { log } from "../log.ts";
import { EngineError } from "../engine/errors.ts";
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
import { validationErrors } from "../schema.ts";
import { type ToolContext, type ToolDefinition } from "./tool.ts";

const INSTRUCTIONS = "Real terminals for agents. One-shot commands: run_command returns a token; " +
  "query_command_status with wait_ms waits for the end and returns output and exit code. " +
  "Persistent terminals (shells, REPLs, servers): terminal_create, terminal_write, " +
  "terminal_wait (until output matches, idle, or exit), terminal_read.";

/** Creates a server offering `tools`. */
export function createMcpServer(tools: ToolDefinition[]): Server {
  const server = new Server(
    { name: NAME, version: VERSION },
    { capabilities: { tools: {}, logging: {} }, instructions: INSTRUCTIONS },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  let listed: Tool[] | undefined;
  server.setRequestHandler(ListToolsRequestSchema, () => {
    listed ??= tools.map(describeTool);
    return { tools: listed };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const problems = validationErrors(tool.input, args);
    if (problems.length > 0) {
      return failure(`Invalid arguments for ${name}: ${problems.join("; ")}`);
    }
    try {
      const result = await tool.handler(args, toolContext(server, extra));
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result,
      };
    } catch (error) {
      return failure(explain(name, error));
    }
  });
  return server;
}

function describeTool(tool: ToolDefinition): Tool {
  // JSON round trip: TypeBox's symbol keys must not reach the wire.
  return JSON.parse(JSON.stringify({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    outputSchema: tool.output,
    annotations: { title: tool.title, ...tool.annotations },
  }));
}

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

function explain(tool: string, error: unknown): string {
  if (error instanceof EngineError) {
    return error.field ? `'${error.field}': ${error.message}` : error.message;
  }
  log.error("tool failed unexpectedly", { tool, error, stack: (error as Error)?.stack });
  return `${tool} failed: ${error instanceof Error ? error.message : String(error)}`;
}

function toolContext(
  server: Server,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): ToolContext {
  const progressToken = extra._meta?.progressToken;
  return {
    signal: extra.signal,
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
