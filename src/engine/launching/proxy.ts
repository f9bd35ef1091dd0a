/**
 * The proxy through which sandboxed programs reach the hosts their allowlist names: HTTP
 * CONNECT (for https, git, anything over TLS) and plain HTTP requests in absolute form, on a
 * loopback port of its own. Each sandbox has a token, which its program sends as the proxy's
 * credentials (`http://winterm:TOKEN@127.0.0.1:PORT`, in HTTP_PROXY and friends): the token says
 * which allowlists apply. The sandbox lets its program connect to this port and nowhere else.
 *
 * A request is refused, with 403 and the reason in the body and in `X-Winterm-Refusal`, when
 * its host is not allowed by every list, when a name resolves to a loopback, link-local or
 * metadata address (an IP literal the list names is the only way to reach one), or when it
 * cannot be resolved; each refusal is reported to the sandbox's owner. Requests are bounded:
 * 16 KiB of head, read within 10 s; 256 connections at once; a sandbox's tunnels end with it.
 * Names are resolved here once, and the connection goes to the address that was judged.
 *
 * @example
 * ```ts
 * import { NetworkProxy } from "./proxy.ts";
 * const proxy = await NetworkProxy.start();
 * const client = proxy.register([[]], (refusal) => console.error(refusal.reason));
 * client.url; // "http://winterm:…@127.0.0.1:PORT"
 * client.release();
 * proxy.close();
 * ```
 * @module
 */
import { allows, type HostRule, isForbiddenAddress, isIpv6, normalHost } from "./hosts.ts";
import { log } from "../../log.ts";
import type { Refusal } from "../sandbox_info.ts";

export type { Refusal };

/** A sandbox's registration. */
export interface ProxyClient {
  /** What its program is given as HTTP_PROXY. */
  readonly url: string;
  /** Ends its tunnels; its token is no longer accepted. */
  release(): void;
}

const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_TIMEOUT_MS = 10_000;
const RESOLVE_TIMEOUT_MS = 5_000;
const MAX_CONNECTIONS = 256;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Registration {
  lists: HostRule[][];
  refused: (refusal: Refusal) => void;
  connections: Set<Deno.Conn>;
}

/** See the module documentation. */
export class NetworkProxy {
  #clients = new Map<string, Registration>();
  #open = new Set<Deno.Conn>();
  #closed = false;

  private constructor(private readonly listener: Deno.TcpListener, readonly port: number) {
    this.#accept();
  }

  /** Listens on a free loopback port. */
  static async start(): Promise<NetworkProxy> {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    await Promise.resolve();
    return new NetworkProxy(listener, listener.addr.port);
  }

  /**
   * A sandbox whose connections every list of `lists` must allow; `refused` hears of each
   * refusal.
   */
  register(lists: HostRule[][], refused: (refusal: Refusal) => void): ProxyClient {
    const token = crypto.randomUUID().replaceAll("-", "");
    const registration: Registration = { lists, refused, connections: new Set() };
    this.#clients.set(token, registration);
    return {
      url: `http://winterm:${token}@127.0.0.1:${this.port}`,
      release: () => {
        this.#clients.delete(token);
        for (const conn of registration.connections) closeQuietly(conn);
      },
    };
  }

  /** Stops listening and ends every connection. */
  close(): void {
    this.#closed = true;
    closeQuietly(this.listener);
    for (const conn of this.#open) closeQuietly(conn);
    this.#clients.clear();
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        if (this.#open.size >= MAX_CONNECTIONS) {
          void answer(conn, 503, "the proxy has too many connections open").finally(() =>
            closeQuietly(conn)
          );
          continue;
        }
        this.#open.add(conn);
        this.#serve(conn)
          .catch((error) => log.debug("proxy connection failed", { error }))
          .finally(() => {
            this.#open.delete(conn);
            closeQuietly(conn);
          });
      }
    } catch (error) {
      if (!this.#closed) log.error("the sandbox proxy stopped accepting", { error });
    }
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const request = await readHead(conn);
    if (typeof request === "string") return void await answer(conn, 400, request);
    const registration = this.#clients.get(tokenOf(request.headers) ?? "");
    if (!registration) {
      return void await answer(
        conn,
        407,
        "this proxy serves winterm-mcp's sandboxes: use the HTTP_PROXY a sandbox is given",
        'Proxy-Authenticate: Basic realm="winterm"\r\n',
      );
    }
    registration.connections.add(conn);
    const target = targetOf(request);
    if (typeof target === "string") return void await answer(conn, 400, target);
    const judged = await judge(registration.lists, target.host, target.port);
    if ("reason" in judged) {
      registration.refused({ host: target.host, port: target.port, reason: judged.reason });
      return void await answer(conn, 403, `refused by the sandbox: ${judged.reason}`);
    }
    let upstream: Deno.TcpConn;
    try {
      upstream = await Deno.connect({ hostname: judged.address, port: target.port });
    } catch (error) {
      return void await answer(
        conn,
        502,
        `cannot connect to ${target.host}:${target.port}: ${(error as Error).message}`,
      );
    }
    registration.connections.add(upstream);
    try {
      if (request.method === "CONNECT") {
        await writeAll(conn, encoder.encode("HTTP/1.1 200 Connection established\r\n\r\n"));
      } else {
        await writeAll(upstream, encoder.encode(forwardedHead(request, target)));
      }
      if (request.rest.length) await writeAll(upstream, request.rest);
      await tunnel(conn, upstream);
    } finally {
      registration.connections.delete(upstream);
      closeQuietly(upstream);
    }
  }
}

interface Head {
  method: string;
  target: string;
  version: string;
  /** Lower-case names; each header's lines in order. */
  headers: [string, string][];
  /** Bytes read past the head (the start of a body or of the tunnel). */
  rest: Uint8Array;
}

/** Reads a request's head, within the byte and time bounds; a string says what was wrong. */
async function readHead(conn: Deno.Conn): Promise<Head | string> {
  const buffer = new Uint8Array(MAX_HEAD_BYTES);
  let filled = 0;
  const deadline = AbortSignal.timeout(HEAD_TIMEOUT_MS);
  const timedOut = new Promise<null>((resolve) =>
    deadline.addEventListener("abort", () => resolve(null))
  );
  for (;;) {
    const end = findHeadEnd(buffer.subarray(0, filled));
    if (end >= 0) return parseHead(buffer.subarray(0, end), buffer.slice(end + 4, filled));
    if (filled === buffer.length) return `the request head is over ${MAX_HEAD_BYTES} bytes`;
    const read = await Promise.race([conn.read(buffer.subarray(filled)), timedOut]);
    if (read === null) return "the request head did not arrive";
    filled += read;
  }
}

function findHeadEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

function parseHead(bytes: Uint8Array, rest: Uint8Array): Head | string {
  const [line, ...lines] = decoder.decode(bytes).split("\r\n");
  const parts = line.split(" ");
  if (parts.length !== 3 || !/^HTTP\/1\.[01]$/.test(parts[2])) return "not an HTTP/1 request";
  const headers: [string, string][] = [];
  for (const header of lines) {
    const colon = header.indexOf(":");
    if (colon <= 0) return "a malformed header line";
    headers.push([header.slice(0, colon).trim().toLowerCase(), header.slice(colon + 1).trim()]);
  }
  return { method: parts[0], target: parts[1], version: parts[2], headers, rest };
}

/** The token of `Proxy-Authorization: Basic base64(winterm:TOKEN)`. */
function tokenOf(headers: [string, string][]): string | undefined {
  const value = headers.find(([name]) => name === "proxy-authorization")?.[1];
  const basic = value?.match(/^Basic\s+([A-Za-z0-9+/=]+)$/i);
  if (!basic) return undefined;
  try {
    const [user, token] = atob(basic[1]).split(":");
    return user === "winterm" ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Where a request goes: CONNECT's authority, or an absolute http:// URL. */
function targetOf(request: Head): { host: string; port: number; path: string } | string {
  if (request.method === "CONNECT") {
    const authority = request.target.match(/^(\[[^\]]+\]|[^:\[\]]+):(\d{1,5})$/);
    if (!authority) return "CONNECT needs host:port";
    return { host: normalHost(authority[1]), port: Number(authority[2]), path: "" };
  }
  let url: URL;
  try {
    url = new URL(request.target);
  } catch {
    return "a proxy request names an absolute http:// URL";
  }
  if (url.protocol !== "http:") return `the proxy forwards http:// requests, not ${url.protocol}`;
  return {
    host: normalHost(url.hostname),
    port: Number(url.port || 80),
    path: `${url.pathname}${url.search}`,
  };
}

/** Allowed (and the address to connect to), or why not. */
async function judge(
  lists: HostRule[][],
  host: string,
  port: number,
): Promise<{ address: string } | { reason: string }> {
  if (port < 1 || port > 65535) return { reason: `port ${port} is not a port` };
  const shown = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (!lists.every((list) => allows(list, host, port))) {
    return { reason: `${shown} is not in the sandbox's network allowlist` };
  }
  // An IP literal the lists name is the one way to reach such an address.
  if (IPV4.test(host) || isIpv6(host)) return { address: host };
  const addresses = await resolve(host);
  if (addresses.length === 0) return { reason: `${host} cannot be resolved` };
  const forbidden = addresses.find(isForbiddenAddress);
  if (forbidden !== undefined) {
    return {
      reason: `${host} resolves to ${forbidden}, a loopback, link-local or metadata address ` +
        "(name it by its IP address in the allowlist to allow it)",
    };
  }
  return { address: addresses[0] };
}

async function resolve(host: string): Promise<string[]> {
  const signal = AbortSignal.timeout(RESOLVE_TIMEOUT_MS);
  const lookups = await Promise.allSettled([
    Deno.resolveDns(host, "A", { signal }),
    Deno.resolveDns(host, "AAAA", { signal }),
  ]);
  return lookups.flatMap((lookup) => lookup.status === "fulfilled" ? lookup.value : []);
}

/**
 * The request as the origin gets it: origin-form, no proxy headers, one request only, and the
 * Host it was judged by (a Host of another name would reach another site on a shared server).
 */
function forwardedHead(
  request: Head,
  target: { host: string; port: number; path: string },
): string {
  const skipped = new Set([
    "proxy-authorization",
    "proxy-connection",
    "connection",
    "keep-alive",
    "host",
  ]);
  const headers = request.headers.filter(([name]) => !skipped.has(name))
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return `${request.method} ${target.path || "/"} ${request.version}\r\n` +
    `host: ${target.port === 80 ? host : `${host}:${target.port}`}\r\n${headers}` +
    "connection: close\r\n\r\n";
}

/** Copies both ways until the upstream ends (the client's end half-closes the upstream). */
async function tunnel(client: Deno.Conn, upstream: Deno.TcpConn): Promise<void> {
  // Ends when the client's side ends or fails; the connections are closed after the tunnel.
  void client.readable.pipeTo(upstream.writable, { preventClose: true })
    .then(() => upstream.closeWrite())
    .catch(() => {});
  await upstream.readable.pipeTo(client.writable, { preventClose: true }).catch(() => {});
}

async function answer(conn: Deno.Conn, status: number, reason: string, extra = ""): Promise<void> {
  const text = { 400: "Bad Request", 403: "Forbidden", 407: "Proxy Authentication Required" }[
    status as 400
  ] ?? (status === 502 ? "Bad Gateway" : "Service Unavailable");
  const body = encoder.encode(reason + "\n");
  const header = `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `x-winterm-refusal: ${reason.replace(/[^\x20-\x7e]/g, "?")}\r\n${extra}` +
    `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  try {
    await writeAll(conn, encoder.encode(header));
    await writeAll(conn, body);
  } catch {
    // the client has gone
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await conn.write(bytes.subarray(written));
  }
}

function closeQuietly(closable: { close(): void }): void {
  try {
    closable.close();
  } catch {
    // already closed
  }
}
