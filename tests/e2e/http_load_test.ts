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
import { rawRequest, withHttp } from "../helpers/http.ts";

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
