/**
 * The HTTP server under load no client controls the cost of: static files served from shared
 * bytes (plain or gzip, never made per request), pipelined requests answered one at a time
 * per connection with reading held meanwhile, clients that read nothing cut after the write
 * timeout, one bound on what waits to be sent over all connections, and MCP sessions whose
 * standing event streams take none of the capacity requests need. Every test drives a real
 * server started as the README says, over real sockets (the SDK's client for MCP).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { gunzipSync } from "node:zlib";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "../helpers/mcp.ts";
import { type HttpServer, rawRequest, startHttpServer, withHttp } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";

withHttp(
  "static files: gzip and plain are the same bytes, with their length and headers",
  async (server) => {
    const plain = await fetch(`${server.url}/assets/app.js`, {
      headers: { "accept-encoding": "identity" },
    });
    const plainBytes = new Uint8Array(await plain.arrayBuffer());
    assertEquals(plain.status, 200);
    assertEquals(plain.headers.get("content-length"), String(plainBytes.length));
    assertEquals(plain.headers.get("content-encoding"), null);
    assertEquals(plain.headers.get("x-content-type-options"), "nosniff");
    assertEquals(plain.headers.get("referrer-policy"), "no-referrer");
    match(plain.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    // Raw, so that nothing decompresses on the way.
    const { hostname, port } = new URL(server.url);
    const conn = await Deno.connect({ hostname, port: Number(port) });
    await conn.write(new TextEncoder().encode(
      "GET /assets/app.js HTTP/1.1\r\nhost: localhost\r\naccept-encoding: gzip\r\nconnection: close\r\n\r\n",
    ));
    const chunks: Uint8Array[] = [];
    for await (const chunk of conn.readable) chunks.push(chunk);
    const raw = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.length, 0));
    chunks.reduce((at, chunk) => (raw.set(chunk, at), at + chunk.length), 0);
    const split = raw.findIndex((_, i) =>
      raw[i] === 13 && raw[i + 1] === 10 && raw[i + 2] === 13 && raw[i + 3] === 10
    );
    const head = new TextDecoder().decode(raw.subarray(0, split));
    const body = raw.subarray(split + 4);
    match(head, /^HTTP\/1\.1 200/);
    match(head, /content-encoding: gzip/i);
    match(head, new RegExp(`content-length: ${body.length}\\r?$`, "im"));
    assertEquals(new Uint8Array(gunzipSync(body)), plainBytes);
    // A second answer is the same (the bytes are shared, never consumed by the first).
    const again = await fetch(`${server.url}/assets/app.js`, {
      headers: { "accept-encoding": "identity" },
    });
    assertEquals(new Uint8Array(await again.arrayBuffer()), plainBytes);
    // HEAD: the headers, no body; a conditional request: 304.
    const headOnly = await rawRequest(server, "HEAD /assets/app.css HTTP/1.1\nhost: localhost\n");
    assertEquals([headOnly.status, headOnly.body], [200, ""]);
    const etag = plain.headers.get("etag")!;
    const cached = await fetch(`${server.url}/assets/app.js`, {
      headers: { "if-none-match": etag },
    });
    assertEquals([cached.status, await cached.text()], [304, ""]);
    ok(plainBytes.length > 100_000);
  },
  { everywhere: true },
);

const linux = Deno.build.os === "linux";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A raw connection to the server. */
async function connectTo(server: HttpServer): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(server.url);
  return await Deno.connect({ hostname, port: Number(port) });
}

/** The server's resident memory, in MiB (Linux). */
function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** The server's open file descriptors (Linux). */
function openFiles(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

/** Reads until the server closes; what it sent (or what it sent before a reset). */
async function readToEnd(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const count = await conn.read(buffer);
      if (count === null) break;
      chunks.push(buffer.slice(0, count));
    }
  } catch {
    // reset by the server: what came before is the answer
  }
  const all = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.length, 0));
  chunks.reduce((at, chunk) => (all.set(chunk, at), at + chunk.length), 0);
  return all;
}

/** An authorized `GET /api/terminals` on a connection of its own: its status. */
async function probe(server: HttpServer): Promise<number> {
  const answer = await rawRequest(
    server,
    `GET /api/terminals HTTP/1.1\nhost: localhost\nauthorization: Bearer ${server.token}\n`,
  );
  return answer.status;
}

/** `count` requests for the web view's script (614 KB uncompressed) in one write. */
function scripts(count: number, last = ""): Uint8Array {
  return encoder.encode(
    "GET /assets/app.js HTTP/1.1\r\nhost: localhost\r\n\r\n".repeat(count - 1) +
      `GET /assets/app.js HTTP/1.1\r\nhost: localhost\r\n${last}\r\n`,
  );
}

withHttp(
  "pipelining: answers come in order, one at a time; more than 16 waiting closes the connection",
  async (server) => {
    const conn = await connectTo(server);
    const paths = ["/api/health", "/", "/assets/app.css", "/api/health", "/assets/none.js"];
    await conn.write(encoder.encode(
      paths.map((path, i) =>
        `GET ${path} HTTP/1.1\r\nhost: localhost\r\naccept-encoding: gzip\r\n` +
        (i === paths.length - 1 ? "connection: close\r\n" : "") + "\r\n"
      ).join(""),
    ));
    const answers = splitAnswers(await readToEnd(conn));
    conn.close();
    assertEquals(answers.map((answer) => answer.status), [200, 200, 200, 200, 404]);
    assertEquals(answers.map((answer) => answer.headers.get("content-type")?.split(";")[0]), [
      "application/json",
      "text/html",
      "text/css",
      "application/json",
      "application/json",
    ]);
    // 40 at once: one answered at most before the connection is closed, not 40 made and held.
    const greedy = await connectTo(server);
    await greedy.write(encoder.encode(
      "GET /api/health HTTP/1.1\r\nhost: localhost\r\n\r\n".repeat(40),
    ));
    const answered = splitAnswers(await readToEnd(greedy));
    greedy.close();
    ok(answered.length <= 17, `${answered.length} answered`);
    assertEquals(await probe(server), 200);
  },
  { everywhere: true },
);

Deno.test({
  name:
    "clients that pipeline the 614 KB script and read nothing: memory stays bounded, the token-bearer is answered, they are cut after the write timeout",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], { WINTERM_HTTP_WRITE_TIMEOUT_MS: "1500" });
    const attackers: Deno.Conn[] = [];
    try {
      const pid = server.process.pid;
      assertEquals(await probe(server), 200);
      // The script once, so that its bytes are made before idle is measured.
      await (await fetch(`${server.url}/assets/app.js`)).arrayBuffer();
      const idleRss = rssMiB(pid);
      const idleFiles = openFiles(pid);
      // 20 connections, 16 requests each (as many as wait on a connection), no gzip: 196 MB of
      // answers if each were made and held (it took the server to 3 GB with 100 each).
      for (let i = 0; i < 20; i++) {
        const conn = await connectTo(server);
        attackers.push(conn);
        await conn.write(scripts(16));
      }
      let peak = 0;
      let during = 0;
      // Until the server has closed them all (their descriptors gone; ours are still open).
      ok(
        await eventually(() => openFiles(pid) <= idleFiles, 60_000, async () => {
          peak = Math.max(peak, rssMiB(pid));
          if (during !== 200) during = await probe(server);
        }),
        `still open: ${openFiles(pid)} files (idle ${idleFiles})`,
      );
      assertEquals(during, 200);
      ok(peak - idleRss < 128, `RSS ${idleRss.toFixed(0)} -> ${peak.toFixed(0)} MiB`);
      assertEquals(await probe(server), 200);
    } finally {
      attackers.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "past WINTERM_HTTP_MAX_QUEUED_BYTES, connections that read nothing are closed, those without the token first",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], {
      WINTERM_HTTP_MAX_QUEUED_BYTES: String(8 * 1024 * 1024),
      WINTERM_HTTP_WRITE_TIMEOUT_MS: "600000",
    });
    const attackers: Deno.Conn[] = [];
    try {
      // A client with the token that asks for the script 16 times and reads nothing for now.
      const client = await connectTo(server);
      await client.write(encoder.encode(
        `GET /api/terminals HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${server.token}\r\n\r\n`,
      ));
      match(decoder.decode(await readSome(client)), /^HTTP\/1\.1 200/);
      await client.write(scripts(16, "connection: close\r\n"));
      // 30 strangers doing the same: what waits to be sent passes 8 MiB (the kernel takes about
      // 4 MiB of each connection; one answer of 614 KB waits behind it).
      for (let i = 0; i < 30; i++) {
        const conn = await connectTo(server);
        attackers.push(conn);
        await conn.write(scripts(16));
      }
      ok(
        await eventually(
          () => /WINTERM_HTTP_MAX_QUEUED_BYTES\) reached/.test(server.stderr()),
          60_000,
        ),
        server.stderr().slice(-2000),
      );
      match(server.stderr(), /lastTrusted=false/);
      assertEquals(await probe(server), 200);
      // The client is not cut: all 16 answers arrive whole.
      const received = await readToEnd(client);
      client.close();
      const answers = splitAnswers(received);
      assertEquals(answers.map((answer) => answer.status), Array(16).fill(200));
      ok(answers.every((answer) => answer.body.length > 600_000));
    } finally {
      attackers.forEach((conn) => conn.close());
      await server.stop();
    }
  },
});

/** Reads what the server has sent so far (one read). */
async function readSome(conn: Deno.Conn): Promise<Uint8Array> {
  const buffer = new Uint8Array(4096);
  const count = await conn.read(buffer);
  return count === null ? new Uint8Array() : buffer.slice(0, count);
}

/** HTTP/1.1 answers one after another (each with a Content-Length), as sent on a connection. */
function splitAnswers(bytes: Uint8Array): { status: number; headers: Headers; body: Uint8Array }[] {
  const answers = [];
  let at = 0;
  for (;;) {
    let end = at;
    while (end + 3 < bytes.length && !isBlankLine(bytes, end)) end++;
    if (end + 3 >= bytes.length) return answers;
    const [statusLine, ...lines] = decoder.decode(bytes.subarray(at, end)).split("\r\n");
    const headers = new Headers(lines.map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()] as [string, string];
    }));
    const length = Number(headers.get("content-length") ?? "0");
    const body = bytes.subarray(end + 4, end + 4 + length);
    if (body.length < length) return answers;
    answers.push({ status: Number(statusLine.split(" ")[1]), headers, body });
    at = end + 4 + length;
  }
}

/** Whether `bytes` has CR LF CR LF at `at`. */
function isBlankLine(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 13 && bytes[at + 1] === 10 && bytes[at + 2] === 13 && bytes[at + 3] === 10;
}

/** An SDK client over Streamable HTTP, and what became of its standing event streams. */
interface Watched {
  client: Client;
  /** The status of each GET /mcp (the standing stream) it made, in order. */
  gets: number[];
  /** How each of its standing streams (those answered 200) ended, in order: "clean", "error". */
  ends: string[];
  /** The errors its transport reported (reconnections that failed, say). */
  errors: string[];
}

/** Connects an SDK client and waits until its standing event stream is open. */
async function connectWatched(server: HttpServer, name: string): Promise<Watched> {
  const watched: Watched = {
    client: new Client({ name, version: "1" }),
    gets: [],
    ends: [],
    errors: [],
  };
  const watchingFetch = async (url: string | URL, init?: RequestInit) => {
    const response = await fetch(url, init);
    if ((init?.method ?? "GET") !== "GET") return response;
    watched.gets.push(response.status);
    if (response.status !== 200 || !response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            watched.ends.push("clean");
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          watched.ends.push("error");
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  watched.client.onerror = (error) => watched.errors.push(String(error));
  await watched.client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      fetch: watchingFetch,
    }),
  );
  ok(await eventually(() => watched.gets.length > 0, 20_000), `${name}: no event stream`);
  assertEquals(watched.gets, [200], `${name}'s event stream`);
  return watched;
}

/** A call of `get_version`: "ok", or the error it failed with. */
async function callOf(watched: Watched): Promise<string> {
  try {
    const result = await watched.client.callTool({ name: "get_version", arguments: {} });
    return result.isError ? "isError" : "ok";
  } catch (error) {
    return String(error);
  }
}

Deno.test({
  name:
    "MCP: standing event streams take no connection requests need; a full table closes the least recently used idle session, its stream ending cleanly, with no reconnection loop",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer([], {
      WINTERM_HTTP_MAX_CONNECTIONS: "4",
      WINTERM_MCP_MAX_SESSIONS: "6",
    });
    const clients: Watched[] = [];
    try {
      // Nine clients, each keeping its event stream: twice the connections allowed, and three
      // sessions more than the table holds. Every one gets in (the fifth got 503 before).
      for (let i = 0; i < 9; i++) clients.push(await connectWatched(server, `client-${i}`));
      // The three least recently used made room: their calls are refused as the protocol says
      // (404: initialize again), their streams ended cleanly, and after the SDK's two tries to
      // reopen them (404 too) they stay closed.
      for (const evicted of clients.slice(0, 3)) {
        match(await callOf(evicted), /404|Session not found/);
        ok(
          await eventually(
            () => evicted.errors.some((error) => /Maximum reconnection attempts/.test(error)),
            30_000,
          ),
          evicted.errors.join("\n"),
        );
        assertEquals(evicted.ends, ["clean"]);
        assertEquals(evicted.gets, [200, 404, 404]);
      }
      // Every other session is answered, oldest first, and kept its one stream throughout.
      for (const kept of clients.slice(3)) assertEquals(await callOf(kept), "ok");
      const newcomer = await connectWatched(server, "newcomer");
      clients.push(newcomer);
      assertEquals(await callOf(newcomer), "ok");
      for (const kept of clients.slice(4)) {
        assertEquals([kept.gets, kept.ends], [[200], []]);
        assertEquals(await callOf(kept), "ok");
      }
      assertEquals(await probe(server), 200);
    } finally {
      await Promise.all(clients.map(({ client }) => client.close().catch(() => {})));
      await server.stop();
    }
  },
});
