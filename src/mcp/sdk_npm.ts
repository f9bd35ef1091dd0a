/**
 * The MCP SDK pieces this project uses, as they come from npm: the entry of the bundle that
 * sdk.ts serves (scripts/bundle_sdk.ts), and its types. Under Deno the SDK's `.js` subpath
 * imports lose their types (typescript-sdk#2701); `@ts-types` points each at its declarations.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/validation/types"
export type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
export { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
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
