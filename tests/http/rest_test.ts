/**
 * The REST API (src/http/rest.ts) with real requests against a started server: every endpoint
 * in its documented shapes, summaries bounded by maxLines, and what it refuses, with the right
 * status and code. (MCP over HTTP, shutdown, tokens and malformed requests: e2e/http_test.ts.)
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type HttpServer, rawRequest, request, withHttp } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";

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
    "state",
    "running",
    "lastExitCode",
    "shellIntegration",
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
  // The screen, as terminal_read's mode screen gives it: what a person sees, and its size.
  const screen = await request(server, "GET", `/api/terminals/${id}/output?mode=screen`);
  assertEquals(screen.status, 200, JSON.stringify(screen.json));
  ok(screen.json.data.output.includes("row-5"), screen.json.data.output);
  assertEquals([screen.json.data.screen.cols, screen.json.data.screen.rows], [100, 30]);
  const { linesShown, linesOmitted } = screen.json.data.stats;
  ok(linesShown >= 6, `${linesShown} rows shown`); // the command and its five rows at least
  assertEquals(linesShown + linesOmitted, 30);
  // Within maxBytes, the top rows first, and what it leaves out said; line parameters unused.
  const cut = await request(
    server,
    "GET",
    `/api/terminals/${id}/output?mode=screen&maxBytes=60&since=0`,
  );
  assertEquals(cut.status, 200, JSON.stringify(cut.json));
  const data = cut.json.data;
  ok(data.truncated && data.output.includes("omitted"), data.output);
  ok(new TextEncoder().encode(JSON.stringify(data.output)).length < 60 + 100, data.output);
  assertEquals(data.stats.linesShown + data.stats.linesOmitted, 30);
  match(data.notice, /mode screen .*: since unused/);

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
    "state",
    "running",
    "cwd",
    "lastExitCode",
    "shellIntegration",
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
    "state",
    "running",
    "lastExitCode",
    "shellIntegration",
  ]);

  const deleted = await request(server, "DELETE", `/api/terminals/${id}`, {
    body: { signal: "SIGTERM" },
  });
  assertEquals(deleted.json, { success: true, message: "Terminal terminated successfully" });
  // One that ended by itself is said to have ended so, not to have been terminated (issue 39).
  const ended = (await request(server, "POST", "/api/terminals", {
    body: { command: "sh", args: ["-c", "exit 3"] },
  })).json.data.terminalId;
  // Its state says it exited (`running` is null for a program: no shell reports what runs).
  let endedStats = { state: "running", lastExitCode: null };
  ok(
    await eventually(() => endedStats.state === "exited", undefined, async () => {
      endedStats = (await request(server, "GET", `/api/terminals/${ended}/stats`)).json.data;
    }),
    "the program did not exit",
  );
  // A program's own exit code, once it has exited (it said null).
  assertEquals(endedStats.lastExitCode, 3);
  assertEquals((await request(server, "DELETE", `/api/terminals/${ended}`)).json, {
    success: true,
    message: "Terminal had already exited (exit code 3); released",
  });
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

withHttp(
  "REST: maxLines bounds a summary's lines; a program that exited 0 says so",
  async (server) => {
    const { terminalId } = (await request(server, "POST", "/api/terminals", {
      body: { command: "seq", args: ["1", "10"] },
    })).json.data;
    let stats = { state: "running", lastExitCode: null };
    ok(
      await eventually(() => stats.state === "exited", undefined, async () => {
        stats = (await request(server, "GET", `/api/terminals/${terminalId}/stats`)).json.data;
      }),
      "the program did not exit",
    );
    // Its own exit code, 0 (issue 39: null).
    assertEquals(stats.lastExitCode, 0);
    // Issue 39: mode=full&maxLines=3 without since answered 4 lines and the marker.
    const read = (await request(
      server,
      "GET",
      `/api/terminals/${terminalId}/output?mode=full&maxLines=3`,
    )).json.data;
    assertEquals(
      read.output,
      "1\n... [7 lines, 21 bytes omitted; read them with since=1] ...\n9\n10\n",
    );
    assertEquals([read.stats.linesShown, read.stats.linesOmitted], [3, 7]);
    // A page (with since) is maxLines lines, and no marker.
    const page = (await request(
      server,
      "GET",
      `/api/terminals/${terminalId}/output?since=2&maxLines=3`,
    )).json.data;
    assertEquals([page.output, page.nextReadFrom, page.hasMore], ["3\n4\n5\n", 5, true]);
    await request(server, "DELETE", `/api/terminals/${terminalId}`);
  },
);

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
      // Bytes that are no UTF-8 (FF) were read as U+FFFD and typed so.
      "POST",
      "/api/terminals",
      {
        raw: Uint8Array.of(...new TextEncoder().encode('{"cwd":"/tm'), 0xff, 0x70, 0x22, 0x7d),
        headers: { "content-type": "application/json" },
      },
      400,
      "INVALID_INPUT",
      /the request body is not UTF-8/,
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
      { body: { outputByteLimit: -1 } },
      400,
      "INVALID_INPUT",
      /'outputByteLimit' must be an integer from 0 to 1073741824/,
    ],
    [
      "POST",
      "/api/terminals",
      { raw: "null", headers: { "content-type": "application/json" } },
      400,
      "INVALID_INPUT",
      /^the request body must be a JSON object \(got null\)$/,
    ],
    [
      "POST",
      "/api/terminals",
      { raw: "[]", headers: { "content-type": "application/json" } },
      400,
      "INVALID_INPUT",
      /^the request body must be a JSON object \(got an array\)$/,
    ],
    [
      "POST",
      "/api/terminals",
      { body: { cwd: "/no/such/dir" } },
      400,
      "INVALID_INPUT",
      /does not exist/,
    ],
    // A program with its arguments runs with no shell: a shell given was silently ignored.
    [
      "POST",
      "/api/terminals",
      { body: { command: "ls", args: ["-l"], shell: "bash" } },
      400,
      "INVALID_INPUT",
      /shell cannot apply: command with args runs that program itself, with no shell; drop shell, or give command alone/,
    ],
    [
      "POST",
      "/api/terminals",
      { body: { args: ["-c", "echo injected"] } },
      400,
      "INVALID_INPUT",
      /^applies only with command \(the program that takes them\)$/,
    ],
    ["GET", "/api/terminals/term_nope/output", {}, 404, "TERMINAL_NOT_FOUND"],
    // URLSearchParams reads %FF as U+FFFD and %ZZ as itself: grep=%FF searched for U+FFFD.
    [
      "GET",
      "/api/terminals/term_nope/output?grep=%FF",
      {},
      400,
      "INVALID_INPUT",
      /'grep' is not valid percent-encoded UTF-8 \("%FF"\)/,
    ],
    [
      "GET",
      "/api/terminals/term_nope/output?mode=full&grep=a%ZZ",
      {},
      400,
      "INVALID_INPUT",
      /'grep' is not valid percent-encoded UTF-8 \("a%ZZ"\)/,
    ],
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
    [
      "GET",
      "/api/terminals/term_nope/output?mode=screen&=1",
      {},
      400,
      "INVALID_INPUT",
      /a query parameter has no name/,
    ],
    [
      "GET",
      "/api/terminals/term_nope/output?mode=screen&mode=tail",
      {},
      400,
      "INVALID_INPUT",
      /'mode' is given more than once/,
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
    // Nothing there is not bad input (issue 39).
    ["GET", "/api/nowhere", {}, 404, "NOT_FOUND", /no such route/],
    ["GET", "/nowhere", {}, 404, "NOT_FOUND", /nothing at \/nowhere/],
    [
      "OPTIONS",
      "/api/terminals",
      { headers: { origin: server.url } },
      403,
      "FORBIDDEN",
      /CORS/,
    ],
    // A page of this host on another port is another origin, token or not (it was accepted).
    [
      "GET",
      "/api/terminals",
      { headers: { origin: `http://127.0.0.1:${Number(new URL(server.url).port) + 1}` } },
      403,
      "FORBIDDEN",
      /Origin 'http:\/\/127\.0\.0\.1:\d+' is not allowed/,
    ],
    [
      "GET",
      "/api/terminals",
      { headers: { origin: "http://127.0.0.1" } },
      403,
      "FORBIDDEN",
      /Origin/,
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
  // This server's own origin is welcome (as the page it serves, or through a proxy keeping Host).
  const own = await request(server, "GET", "/api/terminals", { headers: { origin: server.url } });
  assertEquals(own.status, 200);
  // Still serving.
  assertEquals((await request(server, "GET", "/api/terminals")).status, 200);
}, { env: { WINTERM_HTTP_MAX_BODY_BYTES: "2048" }, everywhere: true });
