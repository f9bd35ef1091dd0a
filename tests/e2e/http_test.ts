/**
 * The HTTP front end with real requests against a started server: the REST API's endpoints
 * and shapes, the security checks, MCP over Streamable HTTP with the SDK client, graceful
 * shutdown.
 */
import { deepStrictEqual as assertEquals, match, ok, rejects } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, MAIN, START_FLAGS } from "../helpers/mcp.ts";
import { type HttpServer, rawRequest, request, startHttpServer } from "../helpers/http.ts";
import { eventually, processesWith, uniqueMarker } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

function withHttp(
  name: string,
  fn: (server: HttpServer) => Promise<void>,
  options: { args?: string[]; env?: Record<string, string> } = {},
) {
  Deno.test({
    name,
    ignore: !posix,
    async fn() {
      const server = await startHttpServer(options.args, options.env);
      try {
        await fn(server);
      } finally {
        await server.stop();
      }
    },
  });
}

/** Polls the output endpoint until it contains `needle`. */
async function untilOutput(server: HttpServer, id: string, needle: string): Promise<string> {
  let output = "";
  ok(
    await eventually(() => output.includes(needle), 10_000, async () => {
      output = (await request(server, "GET", `/api/terminals/${id}/output`)).json.data.output;
    }),
    `never saw ${needle}: ${JSON.stringify(output)}`,
  );
  return output;
}

withHttp("REST: every endpoint, in the documented shapes", async (server) => {
  const health = await request(server, "GET", "/api/health", { token: null });
  assertEquals(health.status, 200);
  assertEquals(Object.keys(health.json.data), ["status", "uptime", "activeTerminals", "version"]);
  assertEquals([health.json.success, health.json.data.status, health.json.data.activeTerminals], [
    true,
    "healthy",
    0,
  ]);

  const created = await request(server, "POST", "/api/terminals", {
    body: { shell: "sh", cols: 100, rows: 30 },
  });
  assertEquals(created.status, 201);
  const terminal = created.json.data;
  assertEquals(Object.keys(terminal), [
    "terminalId",
    "pid",
    "shell",
    "cwd",
    "created",
    "lastActivity",
    "status",
  ]);
  assertEquals([created.json.success, terminal.status], [true, "active"]);
  const id = terminal.terminalId;

  const input = await request(server, "POST", `/api/terminals/${id}/input`, {
    body: { input: "for i in 1 2 3 4 5; do echo row-$i; done" },
  });
  assertEquals(input.json, { success: true, message: "Input sent successfully" });
  await untilOutput(server, id, "row-5");

  const tail = await request(
    server,
    "GET",
    `/api/terminals/${id}/output?mode=tail&tailLines=2&since=0`,
  );
  assertEquals(Object.keys(tail.json.data), [
    "output",
    "totalLines",
    "nextReadFrom",
    "hasMore",
    "truncated",
    "stats",
  ]);
  assertEquals(Object.keys(tail.json.data.stats), [
    "totalBytes",
    "estimatedTokens",
    "linesShown",
    "linesOmitted",
  ]);
  assertEquals(tail.json.data.stats.linesShown, 2);

  const stats = await request(server, "GET", `/api/terminals/${id}/stats`);
  assertEquals(Object.keys(stats.json.data), [
    "terminalId",
    "totalLines",
    "totalBytes",
    "estimatedTokens",
    "bufferSize",
    "oldestLine",
    "newestLine",
    "isActive",
  ]);
  assertEquals([stats.json.data.terminalId, stats.json.data.isActive], [id, true]);

  const list = await request(server, "GET", "/api/terminals");
  assertEquals(list.json.data.count, 1);
  assertEquals(Object.keys(list.json.data.terminals[0]), [
    "id",
    "pid",
    "shell",
    "cwd",
    "created",
    "lastActivity",
    "status",
  ]);

  const deleted = await request(server, "DELETE", `/api/terminals/${id}`, {
    body: { signal: "SIGTERM" },
  });
  assertEquals(deleted.json, { success: true, message: "Terminal terminated successfully" });
  const gone = await request(server, "GET", `/api/terminals/${id}/output`);
  assertEquals([gone.status, gone.json.success, gone.json.error.code], [
    404,
    false,
    "TERMINAL_NOT_FOUND",
  ]);
  assertEquals(Object.keys(gone.json.error), ["code", "message", "details"]);

  // An exited terminal refuses input with TERMINAL_INACTIVE.
  const short =
    (await request(server, "POST", "/api/terminals", { body: { command: "true", args: [] } })).json
      .data;
  let status = "active";
  await eventually(() => status === "exited", 10_000, async () => {
    status = (await request(server, "GET", "/api/terminals")).json.data.terminals.find((
      t: { id: string },
    ) => t.id === short.terminalId).status;
  });
  const late = await request(server, "POST", `/api/terminals/${short.terminalId}/input`, {
    body: { input: "x" },
  });
  assertEquals([late.status, late.json.error.code], [409, "TERMINAL_INACTIVE"]);
});

withHttp("REST refuses what it should, with the right status and code", async (server) => {
  const cases: [string, string, Parameters<typeof request>[3], number, string, RegExp?][] = [
    ["GET", "/api/terminals", { token: null }, 401, "UNAUTHORIZED"],
    ["GET", "/api/terminals", { token: "wrong-token" }, 401, "UNAUTHORIZED"],
    [
      "GET",
      "/api/terminals",
      { headers: { origin: "https://evil.example.com" } },
      403,
      "FORBIDDEN",
      /Origin/,
    ],
    [
      "POST",
      "/api/terminals",
      { raw: "{not json", headers: { "content-type": "application/json" } },
      400,
      "INVALID_INPUT",
      /not JSON/,
    ],
    [
      "POST",
      "/api/terminals",
      { raw: JSON.stringify({ cwd: "x".repeat(5000) }) },
      413,
      "INVALID_INPUT",
      /larger than 2048 bytes/,
    ],
    [
      "POST",
      "/api/terminals",
      { body: { cols: 0 } },
      400,
      "INVALID_INPUT",
      /'cols' must be an integer from 1 to 1000/,
    ],
    [
      "POST",
      "/api/terminals",
      { body: { bogus: 1 } },
      400,
      "INVALID_INPUT",
      /'bogus' is not a known argument/,
    ],
    [
      "POST",
      "/api/terminals",
      { body: { cwd: "/no/such/dir" } },
      400,
      "INVALID_INPUT",
      /does not exist/,
    ],
    ["GET", "/api/terminals/term_nope/output", {}, 404, "TERMINAL_NOT_FOUND"],
    [
      "GET",
      "/api/terminals/term_nope/output?since=-1",
      {},
      400,
      "INVALID_INPUT",
      /'since' must be an integer >= 0/,
    ],
    [
      "GET",
      "/api/terminals/term_nope/output?mode=sideways",
      {},
      400,
      "INVALID_INPUT",
      /'mode' must be one of/,
    ],
    ["POST", "/api/terminals/term_nope/input", { body: { input: "x" } }, 404, "TERMINAL_NOT_FOUND"],
    [
      "POST",
      "/api/terminals/term_nope/input",
      { body: {} },
      400,
      "INVALID_INPUT",
      /'input' is required/,
    ],
    ["DELETE", "/api/terminals/term_nope", {}, 404, "TERMINAL_NOT_FOUND"],
    ["GET", "/api/nowhere", {}, 404, "INVALID_INPUT", /no such route/],
    [
      "OPTIONS",
      "/api/terminals",
      { headers: { origin: `http://localhost` } },
      403,
      "FORBIDDEN",
      /CORS/,
    ],
  ];
  for (const [method, path, options, status, code, message] of cases) {
    const answer = await request(server, method, path, options);
    assertEquals([answer.status, answer.json?.success, answer.json?.error?.code], [
      status,
      false,
      code,
    ], `${method} ${path}`);
    if (message) match(answer.json.error.message, message);
    if (status === 401) match(answer.headers.get("www-authenticate") ?? "", /Bearer/);
  }
  // A page on another name that resolves to 127.0.0.1 (DNS rebinding) is refused by its Host.
  const rebound = await rawRequest(server, "GET /api/health HTTP/1.1\nHost: evil.example.com\n");
  assertEquals(rebound.status, 403);
  match(rebound.body, /"code":"FORBIDDEN".*Host 'evil\.example\.com' is not allowed/);
  const local = await rawRequest(server, "GET /api/health HTTP/1.1\nHost: localhost:1234\n");
  assertEquals(local.status, 200);
  // Still serving.
  assertEquals((await request(server, "GET", "/api/terminals")).status, 200);
}, { env: { WINTERM_HTTP_MAX_BODY_BYTES: "2048" } });

withHttp("CORS answers only configured origins", async (server) => {
  const preflight = await fetch(`${server.url}/api/terminals`, {
    method: "OPTIONS",
    headers: { origin: "https://app.example", "access-control-request-method": "POST" },
  });
  await preflight.body?.cancel();
  assertEquals(preflight.status, 204);
  assertEquals(preflight.headers.get("access-control-allow-origin"), "https://app.example");
  const call = await request(server, "GET", "/api/terminals", {
    headers: { origin: "https://app.example" },
  });
  assertEquals([call.status, call.headers.get("access-control-allow-origin")], [
    200,
    "https://app.example",
  ]);
  const other = await request(server, "GET", "/api/terminals", {
    headers: { origin: "https://other.example" },
  });
  assertEquals(other.status, 403);
}, { env: { WINTERM_CORS_ORIGINS: "https://app.example" } });

withHttp("MCP over Streamable HTTP with the SDK client; the token is required", async (server) => {
  const url = new URL(`${server.url}/mcp`);
  const anonymous = new Client({ name: "no-token", version: "1" });
  await rejects(anonymous.connect(new StreamableHTTPClientTransport(url)));
  const client = new Client({ name: "http-tests", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  const { tools } = await client.listTools();
  ok(
    tools.some((tool) => tool.name === "run_command") &&
      tools.some((tool) => tool.name === "terminal_create"),
  );
  const run = await client.callTool({
    name: "run_command",
    arguments: { command: "echo over-http" },
  });
  const token = (run.structuredContent as { token: string }).token;
  const done = await client.callTool({
    name: "query_command_status",
    arguments: { token, wait_ms: 10_000 },
  });
  assertEquals((done.structuredContent as { stdout: string }).stdout, "over-http\n");
  // The REST API and MCP share one engine: a terminal made over MCP is listed by REST.
  const made = await client.callTool({ name: "terminal_create", arguments: { shell: "sh" } });
  const terminalId = (made.structuredContent as { terminalId: string }).terminalId;
  const listed = await request(server, "GET", "/api/terminals");
  ok(listed.json.data.terminals.some((t: { id: string }) => t.id === terminalId));
  await client.close();
});

Deno.test({
  name: "a non-loopback address without WINTERM_TOKEN is refused at start",
  ignore: !posix,
  async fn() {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...START_FLAGS, MAIN, "--http", "--host", "0.0.0.0", "--port", "0"],
      env: { WINTERM_TOKEN: "" },
      stdin: "null",
      stdout: "null",
    }).output();
    assertEquals(code, 2);
    match(
      new TextDecoder().decode(stderr),
      /refusing to listen on 0\.0\.0\.0 without WINTERM_TOKEN/,
    );
  },
});

Deno.test({
  name: "SIGTERM: stop accepting, kill every terminal and command, exit 0",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer();
    const marker = uniqueMarker();
    await request(server, "POST", "/api/terminals", {
      body: { command: "sleep", args: [`${marker}1`] },
    });
    await request(server, "POST", "/api/terminals", {
      body: { command: `sh -c 'sleep ${marker}2 & sleep ${marker}3'` },
    });
    const markers = [1, 2, 3].map((n) => `sleep ${marker}${n}`);
    ok(
      await eventually(() => markers.every((marker) => processesWith(marker).length > 0)),
      "children did not start",
    );
    const status = await server.stop("SIGTERM");
    assertEquals(status.code, 0);
    ok(
      await eventually(() => processesWith(`sleep ${marker}`).length === 0),
      "children outlived the server",
    );
  },
});
