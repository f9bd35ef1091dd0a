/**
 * Smoke test of a built executable (or any server command): a real MCP handshake over stdio
 * with the SDK client, the tool list, get_version, then commands run to completion and a
 * persistent terminal read as a screen. On Windows: cmd and PowerShell, each through pipes and
 * on a pseudoconsole (PowerShell is required unless under Wine, which has none).
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
import { runningUnderWine } from "../src/pty/mod.ts";

const [binary, ...args] = Deno.args;
if (!binary) {
  console.error("usage: smoke.ts EXECUTABLE [ARGS...]");
  Deno.exit(2);
}
const windows = Deno.build.os === "windows";
const client = new Client({ name: "winterm-smoke", version: "1.0.0" });
const started = performance.now();
await client.connect(
  new StdioClientTransport({ command: binary, args, env: Deno.env.toObject(), stderr: "inherit" }),
);
console.log(`initialize answered in ${(performance.now() - started).toFixed(0)} ms`);
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`);

const failures: string[] = [];

async function call<T>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Runs a command to its end and checks its output. */
async function check(label: string, args: Record<string, unknown>, expect: RegExp) {
  try {
    const { token } = await call<{ token: string }>("run_command", args);
    const result = await call<{ status: string; exit_code: number; stdout: string }>(
      "query_command_status",
      { token, wait_ms: 30_000 },
    );
    const passed = result.status === "completed" && result.exit_code === 0 &&
      expect.test(result.stdout);
    console.log(`${passed ? "ok  " : "FAIL"} ${label}: ${JSON.stringify(result)}`);
    if (!passed) failures.push(label);
  } catch (error) {
    console.log(`FAIL ${label}: ${(error as Error).message}`);
    failures.push(label);
  }
}

const version = await call<{ shells: { powershell: string | null; cmd: string | null } }>(
  "get_version",
  {},
);
console.log("get_version:", JSON.stringify(version));

await check("default shell", { command: "echo smoke-ok" }, /smoke-ok/);
if (windows) {
  // Under Wine a program on a pseudoconsole reaches it only by writing to CON.
  const toConsole = runningUnderWine() ? ">CON" : "";
  await check(
    "cmd, pipes",
    { command: "echo cmd-pipe", shell_type: "cmd", use_pty: false },
    /cmd-pipe/,
  );
  await check(
    "cmd, pseudoconsole",
    { command: `echo cmd-pty${toConsole}`, shell_type: "cmd" },
    /cmd-pty/,
  );
  if (version.shells.powershell) {
    for (const use_pty of [false, true]) {
      await check(
        `PowerShell, ${use_pty ? "pseudoconsole" : "pipes"}`,
        { command: "Write-Output ('ps-' + 'ok ü 中')", shell_type: "powershell", use_pty },
        /ps-ok ü 中/,
      );
    }
  } else if (!runningUnderWine()) {
    console.log("FAIL no PowerShell found on Windows");
    failures.push("PowerShell");
  }
}

// A persistent terminal: output waited for, then seen as a screen.
try {
  const [command, args] = windows
    ? ["cmd.exe", ["/d", "/c", `echo screen-ok${runningUnderWine() ? ">CON" : ""}`]]
    : ["sh", ["-c", "echo screen-ok"]];
  const { terminalId } = await call<{ terminalId: string }>("terminal_create", { command, args });
  const waited = await call<{ condition: string }>("terminal_wait", {
    terminalId,
    pattern: "screen-ok",
    timeoutMs: 30_000,
    since: 0,
  });
  const screen = await call<{ output: string }>("terminal_read", { terminalId, mode: "screen" });
  await call("terminal_release", { terminalId });
  const passed = waited.condition === "pattern" && /screen-ok/.test(screen.output);
  console.log(`${passed ? "ok  " : "FAIL"} terminal and screen: ${JSON.stringify(screen.output)}`);
  if (!passed) failures.push("terminal");
} catch (error) {
  console.log(`FAIL terminal: ${(error as Error).message}`);
  failures.push("terminal");
}

await client.close();
if (failures.length > 0) {
  console.error(`smoke test failed: ${failures.join(", ")}`);
  Deno.exit(1);
}
console.log("smoke test passed");
