/**
 * The sandbox's network proxy (src/engine/launching/proxy.ts) over real loopback sockets, fed
 * what a hostile or confused client sends: no token, a wrong one, not HTTP, a head over the
 * bound, a CONNECT without a port, an https:// URL in absolute form; and what an allowlist must
 * refuse (another host, another port) or let through (CONNECT, and plain HTTP forwarded as one
 * request, its proxy credentials not passed on). Each refusal says why, and is reported once.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type HostRule, parseHostRule } from "../../../src/engine/launching/hosts.ts";
import { NetworkProxy, type Refusal } from "../../../src/engine/launching/proxy.ts";

const encoder = new TextEncoder(), decoder = new TextDecoder();
const rules = (...entries: string[]) => entries.map((entry) => parseHostRule(entry) as HostRule);

/** Sends `bytes` to the proxy and reads until it closes (or `until` is seen). */
async function exchange(port: number, bytes: Uint8Array, until?: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(bytes);
    let text = "";
    const buffer = new Uint8Array(65536);
    for (let read; (read = await conn.read(buffer).catch(() => null)) !== null;) {
      text += decoder.decode(buffer.subarray(0, read));
      if (until !== undefined && text.includes(until)) break;
    }
    return text;
  } finally {
    conn.close();
  }
}

function credentials(url: string): string {
  const { username, password } = new URL(url);
  return `Proxy-Authorization: Basic ${btoa(`${username}:${password}`)}\r\n`;
}

Deno.test("proxy: hostile requests are answered with their reason, and nothing is forwarded", async () => {
  const proxy = await NetworkProxy.start();
  const refusals: Refusal[] = [];
  const client = proxy.register([rules("127.0.0.1:1")], (refusal) => refusals.push(refusal));
  const auth = credentials(client.url);
  try {
    const cases: [string, RegExp][] = [
      ["CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", /^HTTP\/1\.1 407 .*Proxy-Authenticate: Basic/s],
      [
        "CONNECT 127.0.0.1:1 HTTP/1.1\r\nProxy-Authorization: Basic d2ludGVybTp3cm9uZw==\r\n\r\n",
        /^HTTP\/1\.1 407 /,
      ],
      ["hello\r\n\r\n", /^HTTP\/1\.1 400 .*not an HTTP\/1 request/s],
      [`CONNECT example.org HTTP/1.1\r\n${auth}\r\n`, /^HTTP\/1\.1 400 .*CONNECT needs host:port/s],
      [
        `GET https://example.org/ HTTP/1.1\r\n${auth}\r\n`,
        /^HTTP\/1\.1 400 .*forwards http:\/\/ requests, not https:/s,
      ],
      [
        `CONNECT example.org:443 HTTP/1.1\r\n${auth}\r\n`,
        /^HTTP\/1\.1 403 .*x-winterm-refusal: refused by the sandbox: example\.org:443 is not in the sandbox's network allowlist/s,
      ],
      [
        `CONNECT 127.0.0.1:2 HTTP/1.1\r\n${auth}\r\n`,
        /^HTTP\/1\.1 403 .*127\.0\.0\.1:2 is not in the sandbox's network allowlist/s,
      ],
    ];
    for (const [request, answer] of cases) {
      match(await exchange(proxy.port, encoder.encode(request)), answer, request);
    }
    // A head over 16 KiB.
    const huge = `GET http://127.0.0.1:1/ HTTP/1.1\r\nX-Pad: ${"a".repeat(20_000)}\r\n\r\n`;
    match(await exchange(proxy.port, encoder.encode(huge)), /^HTTP\/1\.1 400 .*over 16384 bytes/s);
    assertEquals(refusals.map((refusal) => [refusal.host, refusal.port]), [
      ["example.org", 443],
      ["127.0.0.1", 2],
    ]);
    // Once released, the token is refused.
    client.release();
    match(
      await exchange(proxy.port, encoder.encode(`CONNECT 127.0.0.1:1 HTTP/1.1\r\n${auth}\r\n`)),
      /^HTTP\/1\.1 407 /,
    );
  } finally {
    proxy.close();
  }
});

Deno.test("proxy: an allowed upstream through CONNECT and plain HTTP; names resolving to loopback refused", async () => {
  const heads: string[] = [];
  const hosts: (string | null)[] = [];
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    heads.push([...request.headers.keys()].join(","));
    hosts.push(request.headers.get("host"));
    return new Response(`upstream ${new URL(request.url).pathname}`);
  });
  const port = upstream.addr.port;
  const proxy = await NetworkProxy.start();
  const refusals: Refusal[] = [];
  // Two lists, as a server's and a call's: both must allow.
  const client = proxy.register(
    [rules(`127.0.0.1:${port}`, "localhost"), rules("127.0.0.1", "localhost")],
    (refusal) => refusals.push(refusal),
  );
  const auth = credentials(client.url);
  try {
    const plain = await exchange(
      proxy.port,
      encoder.encode(
        `GET http://127.0.0.1:${port}/plain?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`,
      ),
    );
    match(plain, /^HTTP\/1\.1 200 .*upstream \/plain$/s);
    ok(!heads[0].includes("proxy-authorization"), heads[0]);
    const tunnel = await exchange(
      proxy.port,
      encoder.encode(
        `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n${auth}\r\nGET /tunnelled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      ),
    );
    match(
      tunnel,
      /^HTTP\/1\.1 200 Connection established\r\n\r\nHTTP\/1\.1 200 .*upstream \/tunnelled$/s,
    );
    // localhost is listed, but a name may not resolve to loopback (or it does not resolve at all).
    const named = await exchange(
      proxy.port,
      encoder.encode(`CONNECT localhost:${port} HTTP/1.1\r\n${auth}\r\n`),
    );
    match(named, /^HTTP\/1\.1 403 .*localhost (resolves to .*loopback|cannot be resolved)/s);
    assertEquals(refusals.length, 1);
  } finally {
    client.release();
    proxy.close();
    await upstream.shutdown();
  }
});
