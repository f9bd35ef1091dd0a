/**
 * The HTTP front end with real requests against a started server: the security checks, MCP
 * over Streamable HTTP with the SDK client, graceful shutdown, token rules, malformed requests,
 * `__proto__` keys, what errors reveal, logging that never blocks. (The REST API's endpoints,
 * shapes and refusals: tests/http/rest_test.ts; timeouts, caps and sessions:
 * http_limits_test.ts.)
 */
import { deepStrictEqual as assertEquals, match, ok, rejects } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, connect, MAIN, START_FLAGS, startAlone, text } from "../helpers/mcp.ts";
import {
  type HttpServer,
  rawRequest,
  request,
  startHttpServer,
  withHttp,
} from "../helpers/http.ts";
import { eventually, processesWith, uniqueMarker } from "../helpers/process.ts";
import { initializeRequest } from "../helpers/jsonrpc.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

withHttp(
  "MCP over HTTP: a message the schema refuses gets -32600 with its id, the field and the rule",
  async (server) => {
    const headers = { accept: "application/json, text/event-stream" };
    const body = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "get_version", arguments: {}, _meta: { progressToken: { a: 1 } } },
    };
    const refused = await request(server, "POST", "/mcp", { body, headers });
    assertEquals(refused.status, 400);
    assertEquals(refused.json, {
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32600,
        message:
          "Invalid Request: 'params._meta.progressToken': expected string or number, received object",
      },
    });
    // In a batch, before any session: each request is answered, the refused one with why, the
    // others that they were not run (a notification needs no answer).
    const batch = await request(server, "POST", "/mcp", {
      body: [
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: "b" },
        { jsonrpc: "2.0", id: 3.5, method: "ping" },
      ],
      headers,
    });
    assertEquals(batch.status, 400);
    assertEquals(
      batch.json.map(({ id, error }: { id: unknown; error: { message: string } }) => [
        id,
        error.message,
      ]),
      [
        [1, "not run: item 3 of its batch was refused"],
        ["b", "Invalid Request: 'method': expected string, missing"],
        [3.5, "Invalid Request: 'id': expected a string or an integer, received 3.5"],
      ],
    );
    // Unknown keys by the thousand, or one of a megabyte, are named in a few hundred characters.
    for (
      const keys of [
        Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, 1])),
        { ["K".repeat(900_000)]: 1 },
      ]
    ) {
      const many = await request(server, "POST", "/mcp", {
        body: { jsonrpc: "2.0", method: "notifications/x", ...keys },
        headers,
      });
      assertEquals([many.status, many.json.error.code], [400, -32600]);
      ok(many.json.error.message.length < 600, `${many.json.error.message.length} characters`);
      match(many.json.error.message, /^Invalid Request: '\(the message\)': Unrecognized keys?: "/);
    }
  },
);

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
}, { env: { WINTERM_CORS_ORIGINS: "https://app.example" }, everywhere: true });

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
  async fn() {
    const { code, stderr } = await startAlone(["--http", "--host", "0.0.0.0", "--port", "0"], {
      WINTERM_TOKEN: "",
    });
    assertEquals(code, 2);
    match(stderr, /refusing to listen on 0\.0\.0\.0 without WINTERM_TOKEN/);
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

Deno.test({
  name: "SIGTERM: calls waiting on the processes it ends are answered with how they ended",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer();
    const marker = uniqueMarker();
    const created = await request(server, "POST", "/api/terminals", {
      body: { shell: "bash" },
    });
    const id = created.json.data.terminalId;
    // A REST run and an MCP terminal_wait, both waiting when the server is told to stop.
    const run = request(server, "POST", `/api/terminals/${id}/run`, {
      body: { command: `sleep ${marker}`, timeoutMs: 60_000 },
    });
    const client = new Client({ name: "stopping", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    const wait = client.callTool(
      {
        name: "terminal_wait",
        arguments: { terminalId: id, pattern: "never-printed", timeoutMs: 60_000 },
      },
      undefined,
      { timeout: 60_000 },
    );
    ok(
      await eventually(() => processesWith(`sleep ${marker}`).length > 0, 30_000),
      "sleep did not start",
    );
    const status = await server.stop("SIGTERM");
    assertEquals(status.code, 0);
    const ran = await run;
    ok(ran.status < 500, JSON.stringify(ran.json));
    const waited = await wait;
    assertEquals((waited.structuredContent as { condition: string }).condition, "exit");
  },
});

/** Starts the server with `env` and expects it to refuse to start; returns what it said. */
async function refusedStart(env: Record<string, string>): Promise<string> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...START_FLAGS, MAIN, "--http", "--port", "0"],
    env,
    stdin: "null",
    stdout: "null",
  }).output();
  assertEquals(code, 2);
  return new TextDecoder().decode(stderr);
}

Deno.test({
  name: "weak tokens are refused at start, with the reason and how to make a good one",
  ignore: !posix,
  async fn() {
    const short = await refusedStart({ WINTERM_TOKEN: "x" });
    match(short, /WINTERM_TOKEN is 1 characters long: at least 32 are needed/);
    match(short, /openssl rand -hex 24/);
    match(short, /RandomNumberGenerator/);
    const odd = await refusedStart({ WINTERM_TOKEN: "a".repeat(31) + " b!" });
    match(odd, /may only hold the characters A-Z a-z 0-9/);
  },
});

withHttp("malformed requests get a 4xx in the API's error shape, never a 500", async (server) => {
  const bearer = `authorization: Bearer ${server.token}\n`;
  const cases: [string, number, RegExp][] = [
    [`GET /api/terminals/%E0%A4%A/output HTTP/1.1\nhost: localhost\n${bearer}`, 400, /percent/],
    [`GET /api/terminals/%E0%A4/output HTTP/1.1\nhost: localhost\n${bearer}`, 400, /percent/],
    [`GET /api/terminals HTTP/1.1\nhost: localhost\nauthorization: Basic eDp5\n`, 400, /Bearer/],
    [`GET /api/health HTTP/1.1\n`, 400, /[Hh]ost/],
    [`BREW /api/health HTTP/1.1\nhost: localhost\n`, 400, /malformed HTTP request/],
    [`GET /api/health HTTP/1.1\nhost: localhost\nx-big: ${"a".repeat(20_000)}\n`, 431, /larger/],
    [
      `POST /api/terminals HTTP/1.1\nhost: localhost\n${bearer}content-length: 5\n` +
      "transfer-encoding: chunked\n",
      400,
      /malformed HTTP request/,
    ],
  ];
  for (const [head, status, message] of cases) {
    const answer = await rawRequest(server, head);
    assertEquals(answer.status, status, head.slice(0, 60));
    const json = JSON.parse(answer.body.slice(answer.body.indexOf("{")));
    assertEquals([json.success, json.error.code], [false, "INVALID_INPUT"], head.slice(0, 60));
    match(json.error.message, message);
  }
  const smuggled = await request(server, "POST", "/api/terminals", {
    raw: '{"shell":"sh","__proto__":{"cols":5}}',
    headers: { "content-type": "application/json" },
  });
  assertEquals([smuggled.status, smuggled.json.error.code], [400, "INVALID_INPUT"]);
  match(smuggled.json.error.message, /'__proto__' is not a known argument/);
  // Bodies shaped to cost the server (the parse, then each check) are refused unread.
  const shapes: [string, RegExp][] = [
    [`{"shell":"sh","env":${"[".repeat(65)}${"]".repeat(65)}}`, /nests .* 66 deep, more than 64/],
    [`{"shell":"sh","args":[${"0,".repeat(100_000)}0]}`, /100003 commas and colons/],
    // A string left open had the counting given up, and the whole body parsed.
    [`${"[".repeat(70)}"`, /nests .* 70 deep, more than 64/],
  ];
  for (const [raw, message] of shapes) {
    const headers = { "content-type": "application/json" };
    const rest = await request(server, "POST", "/api/terminals", { raw, headers });
    assertEquals([rest.status, rest.json.error.code], [400, "INVALID_INPUT"]);
    match(rest.json.error.message, message);
    const mcp = await request(server, "POST", "/mcp", { raw, headers });
    assertEquals([mcp.status, mcp.json.error.code], [400, -32600]);
    match(mcp.json.error.message, message);
  }
  // A JSON-RPC id that would be read as another number (it was answered as that one's).
  const rounded = await request(server, "POST", "/mcp", {
    raw: '{"jsonrpc":"2.0","id":7.0000000000000001,"method":"ping"}',
    headers: { "content-type": "application/json" },
  });
  assertEquals([rounded.status, rounded.json.id, rounded.json.error.code], [400, null, -32600]);
  const crowd = await request(server, "POST", "/mcp", {
    raw: JSON.stringify(
      Array.from({ length: 101 }, (_, id) => ({ jsonrpc: "2.0", id, method: "ping" })),
    ),
    headers: { "content-type": "application/json" },
  });
  assertEquals([crowd.status, crowd.json.id, crowd.json.error.code], [400, null, -32600]);
  match(crowd.json.error.message, /a batch of 101 messages, more than 100; it was not read/);
  const empty = await request(server, "POST", "/mcp", {
    raw: "[]",
    headers: { "content-type": "application/json" },
  });
  assertEquals([empty.status, empty.json.id, empty.json.error], [400, null, {
    code: -32600,
    message: "Invalid Request: an empty batch",
  }]);
  match(rounded.json.error.message, /'id' 7.0000000000000001 is read as the nearest double, 7/);
  assertEquals((await request(server, "GET", "/api/terminals")).json.data.count, 0);
});

/** Calls a tool over MCP at /mcp with a raw JSON-RPC body (as a hostile client would write it). */
// deno-lint-ignore no-explicit-any
async function rawToolCall(server: HttpServer, body: string): Promise<any> {
  const headers = {
    authorization: `Bearer ${server.token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  };
  const init = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({ ...initializeRequest("raw"), id: 0 }),
  });
  await init.body?.cancel();
  const session = { ...headers, "mcp-session-id": init.headers.get("mcp-session-id")! };
  const answer = await fetch(`${server.url}/mcp`, { method: "POST", headers: session, body });
  const data = (await answer.text()).split("\n").find((line) => line.startsWith("data: "));
  return JSON.parse(data!.slice(6));
}

withHttp(
  "MCP: __proto__ keys are refused like unknown arguments; bad requests get -32602",
  async (server) => {
    const top = await rawToolCall(
      server,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"terminal_create",' +
        '"arguments":{"command":"sh","__proto__":{"cols":5}}}}',
    );
    assertEquals(top.result.isError, true);
    match(top.result.content[0].text, /'__proto__' is not a known argument \(known: command/);
    const nested = await rawToolCall(
      server,
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal_kill",' +
        '"arguments":{"terminalId":"term_x","signal":"SIGKILL","__proto__":{"signal":"SIGHUP"}}}}',
    );
    match(nested.result.content[0].text, /'__proto__' is not a known argument/);
    const malformed = await rawToolCall(
      server,
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5,"arguments":[]}}',
    );
    assertEquals(malformed.error.code, -32602);
    match(malformed.error.message, /'params\.name': .*string/);
    match(malformed.error.message, /'params\.arguments'/);
    ok(!malformed.error.message.includes("[{"), "a raw Zod dump");
    assertEquals((await request(server, "GET", "/api/terminals")).json.data.count, 0);
  },
);

withHttp(
  "errors over HTTP name the field and the rule, not the server's PATH or directory",
  async (server) => {
    const secrets = [Deno.cwd(), ...(Deno.env.get("PATH") ?? "").split(":").filter(Boolean)];
    const leaks = (message: string) => secrets.filter((secret) => message.includes(secret));

    const missing = await request(server, "POST", "/api/terminals", {
      body: { command: "no-such-program-4711", args: ["x"] },
    });
    assertEquals([missing.status, missing.json.error.details.field], [400, "command"]);
    match(missing.json.error.message, /program 'no-such-program-4711' not found on PATH/);
    assertEquals(leaks(missing.json.error.message), []);

    const directory = await request(server, "POST", "/api/terminals", {
      body: { cwd: "no/such/dir" },
    });
    assertEquals([directory.status, directory.json.error.details.field], [400, "cwd"]);
    match(directory.json.error.message, /'no\/such\/dir' does not exist/);
    assertEquals(leaks(directory.json.error.message), []);

    const client = new Client({ name: "leak-check", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    const viaMcp = await client.callTool({
      name: "terminal_create",
      arguments: { command: "no-such-program-4711", args: ["x"] },
    });
    assertEquals(viaMcp.isError, true);
    const message = (viaMcp.content as { text: string }[])[0].text;
    match(message, /not found on PATH/);
    assertEquals(leaks(message), []);
    await client.close();
  },
);

Deno.test({
  name: "over stdio the same errors keep their detail for the local user; __proto__ refused",
  ignore: !posix,
  async fn() {
    const mcp = await connect();
    try {
      const result = await mcp.call("terminal_create", {
        command: "no-such-program-4711",
        args: ["x"],
      });
      assertEquals(result.isError, true);
      match(text(result), /not found on PATH \(PATH=/);
      const smuggled = await mcp.call(
        "terminal_create",
        JSON.parse('{"command":"sh","__proto__":{"cols":5}}'),
      );
      assertEquals(smuggled.isError, true);
      match(text(smuggled), /'__proto__' is not a known argument/);
    } finally {
      await mcp.close();
    }
  },
});

Deno.test({
  name: "logging never blocks: an unread stderr costs dropped lines, counted, not a stuck server",
  ignore: !posix,
  async fn() {
    const script = await Deno.makeTempFile({ suffix: ".ts" });
    const logModule = new URL("../../src/log.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { flushLog, log, setLogLevel } from "${logModule}";
setLogLevel("debug");
const started = performance.now();
for (let i = 0; i < 30000; i++) log.debug("line", { i, pad: "x".repeat(100) });
await new Promise((resolve) => setTimeout(resolve, 10)); // timers still run
console.log(JSON.stringify({ ms: Math.round(performance.now() - started) }));
await flushLog(60_000);
`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...START_FLAGS, script],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    try {
      // stdout first, stderr untouched: 4 MB of log lines cannot have been written by now.
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      ok(JSON.parse(out).ms >= 0, out);
      const stderr = await new Response(child.stderr).text();
      await reader.cancel();
      assertEquals((await child.status).code, 0);
      const written = stderr.split("\n").filter((line) => line.includes(" DEBUG line ")).length;
      const dropped = [...stderr.matchAll(/WARN (\d+) log lines dropped/g)]
        .reduce((sum, found) => sum + Number(found[1]), 0);
      ok(dropped > 0, "nothing was dropped");
      assertEquals(written + dropped, 30000);
    } finally {
      await Deno.remove(script);
    }
  },
});

/** Whether `ss -K` can destroy a listening socket here (root, and a kernel with SOCK_DESTROY). */
async function canDestroyListeners(): Promise<boolean> {
  if (!linux) return false;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = listener.accept().then(() => false, () => true);
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    await new Deno.Command("ss", {
      args: ["-K", "-t", "state", "listening", "sport", "=", `:${port}`],
      stdout: "null",
      stderr: "null",
    }).output();
  } catch {
    // no ss
  }
  const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000));
  const destroyed = await Promise.race([accepting, timer]);
  listener.close();
  await accepting;
  return destroyed;
}

Deno.test({
  name: "a fatal listener error ends the process with a non-zero status (Restart=on-failure)",
  // The listening socket is destroyed from outside with `ss -K` (needs root and SOCK_DESTROY).
  ignore: !(await canDestroyListeners()),
  async fn() {
    const server = await startHttpServer();
    const port = new URL(server.url).port;
    await new Deno.Command("ss", {
      args: ["-K", "-t", "state", "listening", "sport", "=", `:${port}`],
      stdout: "null",
    }).output();
    const status = await server.process.status;
    assertEquals(status.code, 1);
    match(server.stderr(), /the HTTP listener failed/);
  },
});

Deno.test({
  name: "REST: a run whose client went away stops waiting, and the terminal serves the next",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], { WINTERM_LOG_LEVEL: "debug" });
    try {
      const marker = uniqueMarker();
      const created = await request(server, "POST", "/api/terminals", {
        body: { shell: "bash" },
      });
      const id = created.json.data.terminalId;
      // A wait of up to 10 minutes, abandoned once its command runs.
      const gone = new AbortController();
      const run = fetch(`${server.url}/api/terminals/${id}/run`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ command: `sleep ${marker}`, timeoutMs: 600_000 }),
        signal: gone.signal,
      }).catch(() => "aborted");
      ok(
        await eventually(() => processesWith(`sleep ${marker}`).length > 0, 30_000),
        "sleep did not start",
      );
      gone.abort();
      assertEquals(await run, "aborted");
      ok(
        await eventually(() => server.stderr().includes("a REST run's client went away"), 30_000),
        "the run went on waiting for a client that was gone",
      );
      // The shell is at the command still: Ctrl+C, and once at its prompt, the next run is served.
      await request(server, "POST", `/api/terminals/${id}/input`, {
        body: { input: "\x03", appendNewline: false },
      });
      let state = "";
      ok(
        await eventually(() => state === "prompt", 30_000, async () => {
          const listed = await request(server, "GET", "/api/terminals");
          state = listed.json.data.terminals.find((t: { id: string }) => t.id === id)?.state;
        }),
        `the shell did not come back to its prompt (${state})`,
      );
      const next = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "echo next-$((6*7))", timeoutMs: 30_000 },
      });
      assertEquals(next.status, 200, JSON.stringify(next.json));
      match(next.json.data.output, /next-42/, JSON.stringify(next.json));
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "REST: a limit reached is LIMIT_REACHED (429), naming the setting and the endpoint that frees a slot",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], { WINTERM_MAX_TERMINALS: "1" });
    try {
      const body = { command: "sh", args: ["-c", "sleep 60"] };
      const first = await request(server, "POST", "/api/terminals", { body });
      assertEquals(first.status, 201);
      const second = await request(server, "POST", "/api/terminals", { body });
      assertEquals([second.status, second.json.error.code], [429, "LIMIT_REACHED"]);
      // Which endpoint frees a slot, in the API's words (it said "release some first").
      match(
        second.json.error.message,
        /\(WINTERM_MAX_TERMINALS\): release the ones no longer needed \(DELETE \/api\/terminals\/\{id\}\)$/,
      );
      assertEquals(second.json.error.details.hint, "release-some");
      await request(server, "DELETE", `/api/terminals/${first.json.data.terminalId}`);
    } finally {
      await server.stop();
    }
  },
});
