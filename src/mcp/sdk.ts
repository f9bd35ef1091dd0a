/**
 * The MCP SDK pieces this project uses, loaded from one generated module: the pinned SDK's own
 * code bundled (scripts/bundle_sdk.ts), which the server loads in a fraction of the time the
 * 250-odd npm modules take. Types are the SDK's (sdk_npm.ts).
 *
 * @module
 */
// @ts-types="./sdk_npm.ts"
export * from "../generated/mcp_sdk.js";
