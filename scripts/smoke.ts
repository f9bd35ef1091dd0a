/**
 * Smoke test of a built executable (or any server command): a real MCP handshake over stdio
 * with the SDK client, the tool list, get_version, and one command run to completion.
 *
 *   deno run -A scripts/smoke.ts dist/winterm-mcp.exe
 *   deno run -A scripts/smoke.ts deno run -A dist/winterm-mcp.js
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [binary, ...args] = Deno.args;
if (!binary) {
  console.error("usage: smoke.ts EXECUTABLE [ARGS...]");
  Deno.exit(2);
}
const client = new Client({ name: "winterm-smoke", version: "1.0.0" });
const started = performance.now();
await client.connect(
  new StdioClientTransport({ command: binary, args, env: Deno.env.toObject(), stderr: "inherit" }),
);
console.log(`initialize answered in ${(performance.now() - started).toFixed(0)} ms`);
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`);
const version = await client.callTool({ name: "get_version", arguments: {} });
console.log("get_version:", JSON.stringify(version.structuredContent));
const run = await client.callTool({ name: "run_command", arguments: { command: "echo smoke-ok" } });
const token = (run.structuredContent as { token: string }).token;
const done = await client.callTool({
  name: "query_command_status",
  arguments: { token, wait_ms: 30_000 },
});
const result = done.structuredContent as { status: string; exit_code: number; stdout: string };
console.log("run_command:", JSON.stringify(result));
await client.close();
if (
  result.status !== "completed" || result.exit_code !== 0 || !result.stdout.includes("smoke-ok")
) {
  console.error("smoke test failed");
  Deno.exit(1);
}
console.log("smoke test passed");
