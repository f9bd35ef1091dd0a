/**
 * The HTTP server keeps serving whatever clients do: idle, slow-header and slow-body
 * connections are cut after the configured timeouts, open connections are capped (an idle one
 * makes room for a newcomer; 503 when all are busy), running out of file descriptors is
 * survived, and the MCP session table never locks a new client out. Every test drives a
 * real server started as the README says, over real sockets.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "../helpers/mcp.ts";
import { type HttpServer, rawRequest, request, startHttpServer } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A raw connection to the server. */
async function connectTo(server: HttpServer): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(server.url);
  return await Deno.connect({ hostname, port: Number(port) });
}

/** Reads until the server closes; returns what it sent (or what it sent before a reset). */
async function readToEnd(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(4096);
  let text = "";
  try {
    for (;;) {
      const count = await conn.read(buffer);
      if (count === null) break;
      text += decoder.decode(buffer.subarray(0, count));
    }
  } catch {
    // reset by the server: what came before is the answer
  }
  return text;
}

/** An authorized `GET /api/terminals` on a connection of its own (fetch would reuse one). */
function probe(server: HttpServer): Promise<{ status: number; body: string }> {
  return rawRequest(
    server,
    `GET /api/terminals HTTP/1.1\nhost: localhost\nauthorization: Bearer ${server.token}\n`,
  );
}

/** Reads what the server has sent so far (one read). */
async function readSome(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(4096);
  const count = await conn.read(buffer);
  return count === null ? "" : decoder.decode(buffer.subarray(0, count));
}

/**
 * Sends `parts` one at a time, `gapMs` apart, until the server closes the connection; returns
 * what the server answered and how long the connection lived.
 */
async function trickle(
  server: HttpServer,
  parts: string[],
  gapMs: number,
): Promise<{ answer: string; livedMs: number }> {
  const conn = await connectTo(server);
  const started = performance.now();
  let closed = false;
  const writer = (async () => {
    for (const part of parts) {
      if (closed) return;
      try {
        await conn.write(encoder.encode(part));
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  })();
  const answer = await readToEnd(conn);
  const livedMs = performance.now() - started;
  closed = true;
  await writer;
  conn.close();
  return { answer, livedMs };
}

/** The open file descriptors of a process (Linux). */
function openFiles(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

function initializeBody(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: `client-${id}`, version: "1" },
    },
  };
}

/** An initialized MCP session over HTTP, and a terminal in it running `cat`. */
async function sessionWithCat(
  server: HttpServer,
): Promise<{ sessionId: string; terminalId: string }> {
  const init = await postMcp(server, initializeBody(1));
  const sessionId = init.sessionId!;
  await postMcp(server, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId);
  const created = await postMcp(server, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "terminal_create", arguments: { command: "cat" } },
  }, sessionId);
  return { sessionId, terminalId: created.json.result.structuredContent.terminalId };
}

/** Posts a JSON-RPC message to /mcp; the answer is the caller's to read. */
function postMcpRaw(
  server: HttpServer,
  body: unknown,
  sessionId?: string,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    signal,
    headers: {
      authorization: `Bearer ${server.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** Posts a JSON-RPC message to /mcp and returns the status, session id and the JSON answer. */
async function postMcp(
  server: HttpServer,
  body: unknown,
  sessionId?: string,
  signal?: AbortSignal,
): Promise<{
  status: number;
  sessionId: string | null;
  // deno-lint-ignore no-explicit-any
  json: any;
}> {
  const response = await postMcpRaw(server, body, sessionId, signal);
  const text = await response.text();
  // Answers come as JSON or as one SSE event.
  const data = text.startsWith("{")
    ? text
    : text.split("\n").find((line) => line.startsWith("data: "))?.slice(6);
  return {
    status: response.status,
    sessionId: response.headers.get("mcp-session-id"),
    json: data ? JSON.parse(data) : undefined,
  };
}

Deno.test({
  name: "1,100 idle connections against ulimit -n 1024: the server answers during and after",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_HEADERS_TIMEOUT_MS: "30000" }, {
      fdLimit: 1024,
    });
    const held: Deno.Conn[] = [];
    try {
      for (let i = 0; i < 1100; i++) held.push(await connectTo(server));
      // Still open on our side; the server keeps at most its cap (256) of them, and answers
      // (at once, or after a 503 while the newest connections are spared, as a client retrying
      // on Retry-After would see).
      let during: number | string = 0;
      ok(
        await eventually(() => during === 200, 60_000, async () => {
          during = await request(server, "GET", "/api/terminals").then(
            (answer) => answer.status,
            (error) => String(error), // refused while the flood is being turned away
          );
        }),
        `answered ${during}`,
      );
      const files = openFiles(server.process.pid);
      ok(files < 400, `the server holds ${files} files`);
      for (const conn of held.splice(0)) conn.close();
      assertEquals((await request(server, "GET", "/api/terminals")).status, 200);
      const status = await server.stop();
      assertEquals(status.code, 0);
    } finally {
      for (const conn of held) conn.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "running out of file descriptors (EMFILE) is survived, the listener kept",
  ignore: !linux,
  async fn() {
    // A cap above the limit lets the connections exhaust the descriptors.
    const server = await startHttpServer([], {
      WINTERM_HTTP_MAX_CONNECTIONS: "5000",
      WINTERM_HTTP_HEADERS_TIMEOUT_MS: "2000",
      WINTERM_HTTP_REQUEST_TIMEOUT_MS: "4000",
    }, { fdLimit: 256 });
    const held: Deno.Conn[] = [];
    try {
      for (let i = 0; i < 400; i++) held.push(await connectTo(server));
      ok(
        await eventually(() => /accepting HTTP connections failed/.test(server.stderr()), 10_000),
        `no EMFILE seen: ${server.stderr()}`,
      );
      // The idle connections are cut at the header deadline, which frees descriptors.
      const during = await request(server, "GET", "/api/terminals");
      assertEquals(during.status, 200);
      for (const conn of held.splice(0)) conn.close();
      assertEquals((await request(server, "GET", "/api/terminals")).status, 200);
      match(server.stderr(), /EMFILE|Too many open files/);
      assertEquals((await server.stop()).code, 0);
    } finally {
      for (const conn of held) conn.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "slow-header and slow-body clients are cut after the timeouts; others are served meanwhile",
  ignore: !posix,
  async fn() {
    const headersMs = 1500, requestMs = 3000;
    const server = await startHttpServer([], {
      WINTERM_HTTP_HEADERS_TIMEOUT_MS: String(headersMs),
      WINTERM_HTTP_REQUEST_TIMEOUT_MS: String(requestMs),
    });
    try {
      const slowHeaders = Array.from({ length: 40 }, (_, i) =>
        trickle(server, [
          "GET /api/terminals HTTP/1.1\r\n",
          ...Array.from({ length: 100 }, (_, n) => `x-slow-${i}-${n}: y\r\n`),
        ], 100));
      // Long enough that trickling it outlasts the request timeout many times over.
      const body = JSON.stringify({ shell: "sh" }) + " ".repeat(60);
      const slowBodies = Array.from({ length: 40 }, () =>
        trickle(server, [
          "POST /api/terminals HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n" +
          `authorization: Bearer ${server.token}\r\ncontent-length: ${body.length}\r\n\r\n`,
          ...body.split(""),
        ], 200));
      // An unauthenticated body is not waited for: 401, and the connection is closed.
      const anonymous = trickle(server, [
        "POST /api/terminals HTTP/1.1\r\nhost: localhost\r\ncontent-length: 100\r\n\r\n",
        ...Array(100).fill("x"),
      ], 200);
      // Meanwhile a well-behaved client is answered, again and again.
      const started = performance.now();
      for (let i = 0; i < 20; i++) {
        assertEquals((await request(server, "GET", "/api/terminals")).status, 200);
      }
      const wellBehavedMs = performance.now() - started;
      ok(wellBehavedMs < headersMs * 4, `20 requests took ${wellBehavedMs} ms`);

      for (const { answer, livedMs } of await Promise.all(slowHeaders)) {
        match(answer, /^HTTP\/1\.1 408/);
        ok(livedMs >= headersMs - 50 && livedMs < headersMs + 15_000, `lived ${livedMs} ms`);
      }
      for (const { answer, livedMs } of await Promise.all(slowBodies)) {
        match(answer, /^HTTP\/1\.1 408/);
        ok(livedMs >= requestMs - 50 && livedMs < requestMs + 15_000, `lived ${livedMs} ms`);
      }
      const refused = await anonymous;
      match(refused.answer, /^HTTP\/1\.1 401/);
      ok(refused.livedMs < requestMs, `the anonymous upload lived ${refused.livedMs} ms`);
      // Nothing was created by the cut-off bodies.
      assertEquals((await request(server, "GET", "/api/terminals")).json.data.count, 0);
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "kept-alive connections close after the idle timeout",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_IDLE_TIMEOUT_MS: "500" });
    try {
      const { answer, livedMs } = await trickle(server, [
        `GET /api/health HTTP/1.1\r\nhost: localhost\r\n\r\n`,
      ], 0);
      match(answer, /^HTTP\/1\.1 200[^]*keep-alive/i);
      ok(livedMs >= 450 && livedMs < 15_000, `lived ${livedMs} ms`);
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: an idle connection makes room; when every one is busy, 503",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "4" });
    const bearer = `authorization: Bearer ${server.token}\n`;
    const busy: Deno.Conn[] = [];
    try {
      // Four idle connections: a newcomer still gets in at once (the oldest idle one is closed),
      // however new they are: whoever opens connections faster than the cap a second locks
      // nobody out.
      const idle = await Promise.all(Array.from({ length: 4 }, () => connectTo(server)));
      const answer = await probe(server);
      assertEquals(answer.status, 200, answer.body);
      idle.forEach((conn) => conn.close());
      // Four connections each in the middle of an authorized upload are busy. Each waits for
      // its 100 Continue: sent as the server takes the request up, so it has been seen (until
      // then, a connection is idle, and the probe below could close it to make room).
      for (let i = 0; i < 4; i++) {
        const conn = await connectTo(server);
        await conn.write(encoder.encode(
          `POST /api/terminals HTTP/1.1\r\nhost: localhost\r\n${bearer.replace("\n", "\r\n")}` +
            "expect: 100-continue\r\ncontent-length: 100\r\n\r\n",
        ));
        busy.push(conn);
        match(await readSome(conn), /^HTTP\/1.1 100 Continue/);
        await conn.write(encoder.encode("{"));
      }
      let refused: { status: number; body: string } | undefined;
      ok(
        await eventually(() => refused?.status === 503, 10_000, async () => {
          refused = await probe(server);
        }),
        `got ${refused?.status}`,
      );
      const json = JSON.parse(refused!.body);
      assertEquals(json.error.code, "UNAVAILABLE");
      match(json.error.message, /WINTERM_HTTP_MAX_CONNECTIONS/);
      busy.splice(0).forEach((conn) => conn.close());
      ok(
        await eventually(() => refused?.status === 200, 10_000, async () => {
          refused = await probe(server);
        }),
      );
    } finally {
      busy.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: logins sent slowly, without the token, lock nobody out",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "4" });
    const logins: Deno.Conn[] = [];
    try {
      // The login is the one POST anyone may send: its body, trickled, must not hold the slot.
      for (let i = 0; i < 4; i++) {
        const conn = await connectTo(server);
        await conn.write(encoder.encode(
          "POST /api/web/login HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n" +
            "content-length: 100000\r\n\r\n{",
        ));
        logins.push(conn);
      }
      for (let i = 0; i < 3; i++) {
        const answer = await probe(server);
        assertEquals(answer.status, 200, answer.body);
      }
    } finally {
      logins.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: a silent connection makes room before a request on its way",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "2" });
    const open: Deno.Conn[] = [];
    try {
      // The older connection has a request on the way (a login: public, so not busy; its 100
      // Continue says the server has read its head), the newer one says nothing: a newcomer
      // closes the silent one, not the request in transit.
      const arriving = await connectTo(server);
      open.push(arriving);
      const body = '{"token":"wrong"}';
      await arriving.write(encoder.encode(
        "POST /api/web/login HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n" +
          `expect: 100-continue\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
      ));
      match(await readSome(arriving), /^HTTP\/1.1 100 Continue/);
      const silent = await connectTo(server);
      open.push(silent);
      const answer = await probe(server);
      assertEquals(answer.status, 200, answer.body);
      assertEquals(await readToEnd(silent), "");
      await arriving.write(encoder.encode(body));
      match(await readToEnd(arriving), /^HTTP\/1.1 4\d\d /);
    } finally {
      open.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: a connection that carried the token goes after those that never did",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "2" });
    const open: Deno.Conn[] = [];
    const ask = `GET /api/terminals HTTP/1.1\r\nhost: localhost\r\n` +
      `authorization: Bearer ${server.token}\r\n\r\n`;
    try {
      // A client keeps its connection between requests (keep-alive), quiet.
      const kept = await connectTo(server);
      open.push(kept);
      await kept.write(encoder.encode(ask));
      match(await readSome(kept), /^HTTP\/1.1 200/);
      // Someone without the token has a request on its way (a login: its 100 Continue says the
      // server read its head).
      const stranger = await connectTo(server);
      open.push(stranger);
      await stranger.write(encoder.encode(
        "POST /api/web/login HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n" +
          "expect: 100-continue\r\ncontent-length: 100\r\n\r\n",
      ));
      match(await readSome(stranger), /^HTTP\/1.1 100 Continue/);
      const answer = await probe(server);
      assertEquals(answer.status, 200, answer.body);
      // The stranger made room; the client's connection still serves it.
      assertEquals(await readToEnd(stranger), "");
      await kept.write(encoder.encode(ask));
      match(await readSome(kept), /^HTTP\/1.1 200/);
    } finally {
      open.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: WebSocket upgrades refused for want of the token hold no connection",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "4" });
    const refused: Deno.Conn[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const conn = await connectTo(server);
        refused.push(conn);
        await conn.write(encoder.encode(
          "GET /api/terminals/term_x/stream HTTP/1.1\r\nhost: localhost\r\n" +
            "upgrade: websocket\r\nconnection: Upgrade\r\n" +
            "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n",
        ));
        // Answered (401), and still open on this side.
        match(await readSome(conn), /^HTTP\/1.1 401/);
      }
      const answer = await probe(server);
      assertEquals(answer.status, 200, answer.body);
    } finally {
      refused.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "connection cap: a connection whose request was answered makes room at once, however new",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_MAX_CONNECTIONS: "2" });
    const bearer = `authorization: Bearer ${server.token}\r\n`;
    const open: Deno.Conn[] = [];
    try {
      // A client keeps its connection after an answer (keep-alive), as fetch does.
      const kept = await connectTo(server);
      open.push(kept);
      await kept.write(
        encoder.encode(`GET /api/terminals HTTP/1.1\r\nhost: localhost\r\n${bearer}\r\n`),
      );
      let head = "";
      const buffer = new Uint8Array(4096);
      while (!/\r\n\r\n[\s\S]*\]/.test(head)) {
        const count = await kept.read(buffer);
        if (count === null) break;
        head += decoder.decode(buffer.subarray(0, count));
      }
      match(head, /^HTTP\/1.1 200/);
      // Another connection is in the middle of an upload: busy once the server has taken its
      // request up (its 100 Continue says so; before, it is a connection with nothing proved,
      // and the first to go: the kept one then stayed open until the idle timeout).
      const busy = await connectTo(server);
      open.push(busy);
      await busy.write(encoder.encode(
        `POST /api/terminals HTTP/1.1\r\nhost: localhost\r\n${bearer}` +
          "expect: 100-continue\r\ncontent-length: 100\r\n\r\n",
      ));
      match(await readSome(busy), /^HTTP\/1.1 100 Continue/);
      await busy.write(encoder.encode("{"));
      // A newcomer: the answered connection goes, not the newcomer.
      const answer = await probe(server);
      assertEquals(answer.status, 200, answer.body);
      assertEquals(await readToEnd(kept), "");
    } finally {
      open.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name: "300 initialize calls, then a new client is served (the oldest session made room)",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_MCP_MAX_SESSIONS: "256" });
    try {
      const first = await postMcp(server, initializeBody(0));
      assertEquals(first.status, 200);
      // Eight at a time, like a crowd of clients.
      for (let i = 1; i < 300; i += 8) {
        const batch = Array.from(
          { length: Math.min(8, 300 - i) },
          (_, n) => postMcp(server, initializeBody(i + n)),
        );
        for (const answer of await Promise.all(batch)) assertEquals(answer.status, 200);
      }
      const client = new Client({ name: "latecomer", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      );
      ok((await client.listTools()).tools.length > 0);
      await client.close();
      // The first session was the least recently used: it is gone, and says so.
      const stale = await postMcp(
        server,
        { jsonrpc: "2.0", id: 1, method: "ping" },
        first.sessionId!,
      );
      assertEquals(stale.status, 404);
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "MCP over HTTP: a call whose client went away is cancelled, not left waiting",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_LOG_LEVEL: "debug" });
    try {
      const { sessionId, terminalId } = await sessionWithCat(server);
      // A wait for what never comes, for 10 minutes; the client leaves once it is under way.
      const leaving = new AbortController();
      const response = await postMcpRaw(
        server,
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: {
            name: "terminal_wait",
            arguments: { terminalId, pattern: "never-printed", timeoutMs: 600_000 },
          },
        },
        sessionId,
        leaving.signal,
      );
      assertEquals(response.status, 200);
      leaving.abort();
      await response.body?.cancel().catch(() => {});
      ok(
        await eventually(
          () => server.stderr().includes("tool call cancelled by the client"),
          10_000,
        ),
        server.stderr().slice(-2000),
      );
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "MCP over HTTP: a cancelled call's answer stream ends, without an answer (a batch's once its other request is answered)",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer();
    try {
      const { sessionId, terminalId } = await sessionWithCat(server);
      const post = (body: unknown) => postMcpRaw(server, body, sessionId);
      const wait = (id: number, pattern: string) => ({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "terminal_wait", arguments: { terminalId, pattern, timeoutMs: 600_000 } },
      });
      const cancel = async (requestId: number) => {
        const sent = await post({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId },
        });
        await sent.body?.cancel();
        assertEquals(sent.status, 202);
      };
      /** The stream's text once it has ended; "open" if it did not end within 20 s. */
      const ended = async (response: Response) => {
        const text = response.text();
        const timer = new Promise<string>((resolve) => setTimeout(resolve, 20_000, "open"));
        const first = await Promise.race([text, timer]);
        if (first === "open") await response.body?.cancel().catch(() => {});
        return first;
      };
      const answers = (text: string) =>
        [...text.matchAll(/^data: (.+)$/gm)].map((line) => JSON.parse(line[1]).id);

      // One call, id 0 (the SDK skips a cancellation of a falsy id): the stream held on with
      // keep-alives for good, and its connection with it.
      const lone = await post(wait(0, "never-printed"));
      assertEquals(lone.status, 200);
      await cancel(0);
      const loneText = await ended(lone);
      ok(loneText !== "open", "the cancelled call's stream stayed open");
      assertEquals(answers(loneText), []);

      // A batch: the cancelled request's stream ends once the other one is answered, with that
      // answer.
      const batch = await post([wait(4, "never-printed"), wait(5, "go-5")]);
      assertEquals(batch.status, 200);
      await cancel(4);
      const typed = await postMcp(server, {
        jsonrpc: "2.0",
        id: 6,
        method: "tools/call",
        params: { name: "terminal_write", arguments: { terminalId, input: "go-5" } },
      }, sessionId);
      ok(!typed.json.result.isError, JSON.stringify(typed.json));
      const batchText = await ended(batch);
      ok(batchText !== "open", "the batch's stream stayed open");
      assertEquals(answers(batchText), [5]);

      // An id in flight is not taken by another request: that one's stream would stay open.
      const first = await post(wait(8, "never-printed"));
      // (Bounded: before, its answer stream never ended.)
      const again = await postMcp(
        server,
        wait(8, "never-printed"),
        sessionId,
        AbortSignal.timeout(20_000),
      );
      assertEquals([again.status, again.json.id], [400, null]);
      match(again.json.error.message, /id 8 is taken by a request of this session not answered/);
      await cancel(8);
      assertEquals(answers(await ended(first)), []);
      // Nor twice in one batch: one answer was lost, the other call ran on unheld.
      const twice = await postMcpRaw(server, [wait(9, "a"), wait(9, "b")], sessionId);
      assertEquals(twice.status, 400);
      match(await twice.text(), /id 9 is taken by another request of this batch/);

      // Many at once: each ends, and the server still answers.
      const many = await Promise.all(
        Array.from({ length: 40 }, (_, i) => post(wait(100 + i, "never-printed"))),
      );
      await Promise.all(many.map((_, i) => cancel(100 + i)));
      const texts = await Promise.all(many.map(ended));
      assertEquals(texts.filter((text) => text === "open").length, 0);
      assertEquals(texts.flatMap(answers), []);
      const ping = await postMcp(server, { jsonrpc: "2.0", id: 7, method: "ping" }, sessionId);
      assertEquals(ping.status, 200);
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "MCP sessions expire when unused for WINTERM_MCP_SESSION_IDLE_SECONDS",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer([], { WINTERM_MCP_SESSION_IDLE_SECONDS: "1" });
    try {
      const { sessionId } = await postMcp(server, initializeBody(1));
      ok(sessionId);
      // Used within the idle time, it lives on...
      assertEquals(
        (await postMcp(server, { jsonrpc: "2.0", id: 2, method: "ping" }, sessionId)).status,
        200,
      );
      // ...left alone for longer than that, it is closed (each try is itself a use).
      let status = 200;
      for (let attempt = 0; attempt < 5 && status !== 404; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 2500));
        status = (await postMcp(server, { jsonrpc: "2.0", id: 3, method: "ping" }, sessionId))
          .status;
      }
      assertEquals(status, 404);
    } finally {
      await server.stop();
    }
  },
});
