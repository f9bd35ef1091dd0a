/**
 * Starts the real server (main.ts, with the permissions `deno task start` grants) and drives
 * it over stdio with the MCP SDK's Client.
 *
 * @module
 */
import { ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import config from "../../deno.json" with { type: "json" };
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export { Client };

/** The entry point. */
export const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
/**
 * The flags of `deno task start` (permissions, and V8's), so tests run the server exactly as
 * users do.
 */
export const START_FLAGS = config.tasks.start.split(" ").filter((word) =>
  word.startsWith("--allow") || word.startsWith("--v8-flags")
);
/**
 * The environment `deno task start` sets for the server (its `NAME=value` words before `deno`):
 * Deno's update check off.
 */
export const START_ENV: Record<string, string> = Object.fromEntries(
  config.tasks.start.split(" deno ")[0].split(" ").filter((word) => word.includes("=")).map(
    (word) => [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)],
  ),
);

/** A connected client and the server process it talks to. */
export interface Connection {
  client: Client;
  /** The server's process id. */
  pid: number;
  /** Calls a tool; returns the raw result. */
  call(name: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<CallToolResult>;
  /** Calls a tool that must succeed; returns its structured content. */
  callOk<T = Record<string, unknown>>(
    name: string,
    args?: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<T>;
  close(): Promise<void>;
}

/**
 * Starts a server (main.ts, or another entry such as a bundle) with extra flags and environment;
 * with `umask`, under that file mode creation mask (POSIX), as a service configured so would run;
 * with `user` (the test runs as root), as that user and group, with no other groups (setpriv,
 * which execs the server: the connection's pid is the server's).
 */
export async function connect(
  args: string[] = [],
  env: Record<string, string> = {},
  entry: string = MAIN,
  options: { umask?: string; user?: { uid: number; gid: number } } = {},
): Promise<Connection> {
  let command = [Deno.execPath(), "run", ...START_FLAGS, entry, ...args];
  if (options.umask !== undefined) {
    command = ["bash", "--norc", "-c", `umask ${options.umask} && exec "$@"`, "bash", ...command];
  }
  if (options.user) {
    const { uid, gid } = options.user;
    command = ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", ...command];
  }
  const transport = new StdioClientTransport({
    command: command[0],
    args: command.slice(1),
    env: { ...Deno.env.toObject(), WINTERM_LOG_LEVEL: "warn", ...START_ENV, ...env },
    stderr: "inherit",
  });
  const client = new Client({ name: "winterm-tests", version: "1.0.0" });
  await client.connect(transport);
  // Listed first, the tools' outputSchemas are what the SDK checks every structured answer
  // against: an answer that does not match its tool's schema fails the call.
  await client.listTools();
  const call = async (name: string, args: Record<string, unknown> = {}, timeoutMs = 60_000) =>
    await client.callTool({ name, arguments: args }, undefined, {
      timeout: timeoutMs,
    }) as CallToolResult;
  return {
    client,
    pid: transport.pid!,
    call,
    async callOk<T>(name: string, args: Record<string, unknown> = {}, timeoutMs?: number) {
      const result = await call(name, args, timeoutMs);
      ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    close: () => client.close(),
  };
}

/**
 * Runs the server with `args` (and `env` added) as the README starts it, stdin closed, for a
 * start that must fail: its exit code and stderr.
 */
export async function startAlone(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string }> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...START_FLAGS, MAIN, ...args],
    env,
    stdin: "null",
    stdout: "null",
  }).output();
  return { code, stderr: new TextDecoder().decode(stderr) };
}

/** What query_command_status answers (the fields tests look at). */
export interface CommandQuery {
  status: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  timeout_occurred: boolean;
}

/** Runs a command with run_command and waits (up to 30 s) for its end. */
export async function runToEnd(
  mcp: Connection,
  args: Record<string, unknown>,
): Promise<CommandQuery> {
  const { token } = await mcp.callOk<{ token: string }>("run_command", args);
  return await mcp.callOk<CommandQuery>("query_command_status", { token, wait_ms: 30_000 });
}

/** The text of a result's first content block. */
export function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

/**
 * How long a server test may take. Past it, its server is killed, so the test fails with this
 * rule instead of holding the suite (and CI) until something outside ends it.
 */
export const SERVER_TEST_LIMIT_MS = 180_000;

/** Registers a test that runs `fn` against a fresh server, closed afterwards. */
export function serverTest(
  name: string,
  fn: (mcp: Connection) => Promise<void>,
  options: { ignore?: boolean; args?: string[]; env?: Record<string, string> } = {},
): void {
  Deno.test({
    name,
    ignore: options.ignore ?? false,
    async fn() {
      const mcp = await connect(options.args, options.env);
      let overdue = false;
      const limit = setTimeout(() => {
        overdue = true;
        try {
          Deno.kill(mcp.pid, "SIGKILL");
        } catch { /* it has exited meanwhile */ }
      }, SERVER_TEST_LIMIT_MS);
      const failure = await fn(mcp).then(() => undefined, (error: unknown) => ({ error }));
      clearTimeout(limit);
      await mcp.close();
      if (overdue) {
        throw new Error(`not done within ${SERVER_TEST_LIMIT_MS} ms: its server was killed`, {
          cause: failure?.error,
        });
      }
      if (failure) throw failure.error;
    },
  });
}
