/**
 * The MCP SDK pieces this project uses, imported once. Under Deno the SDK's `.js` subpath
 * imports lose their types (typescript-sdk#2701); `@ts-types` points each at its declarations.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
export { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type LoggingMessageNotification,
  McpError,
  type ServerNotification,
  type ServerRequest,
  type Tool,
  type ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
