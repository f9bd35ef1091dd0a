/**
 * A Deno TCP connection as the Node `Duplex` socket that `node:http` parses requests from.
 * `node:http` accepts any Duplex through its `connection` event (a documented Node API), so
 * the accept loop stays ours ({@link ./listener.ts}) while the HTTP parsing and its timeouts
 * are Node's.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { ConnectionSocket } from "./socket.ts";
 * const server = createServer((_request, response) => response.end("hi"));
 * const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * server.emit("connection", new ConnectionSocket(await listener.accept()));
 * ```
 * @module
 */
import { Duplex } from "node:stream";
import { concatBytes } from "../bytes.ts";

/** How long a socket that has sent its last byte waits for the peer to close before it is dropped. */
const LINGER_MS = 2000;
/** The bytes one read takes at most. */
const READ_SIZE = 16 * 1024;

/** See the module documentation. */
export class ConnectionSocket extends Duplex {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly remoteFamily: string;
  readonly localAddress: string;
  readonly localPort: number;
  #conn: Deno.Conn;
  #reading = false;
  #received = 0;
  #buffer = new Uint8Array(READ_SIZE);
  #timeoutMs = 0;
  #lastActive = 0;
  #timer?: ReturnType<typeof setTimeout>;
  #linger?: ReturnType<typeof setTimeout>;

  constructor(conn: Deno.Conn) {
    super({ allowHalfOpen: false });
    this.#conn = conn;
    // node:http writes a head and a body separately: with Nagle's algorithm the second write
    // waits for the peer's delayed ACK (40 ms).
    (conn as Deno.TcpConn).setNoDelay?.(true);
    const remote = conn.remoteAddr as Deno.NetAddr;
    const local = conn.localAddr as Deno.NetAddr;
    this.remoteAddress = remote.hostname;
    this.remotePort = remote.port;
    this.remoteFamily = remote.hostname.includes(":") ? "IPv6" : "IPv4";
    this.localAddress = local.hostname;
    this.localPort = local.port;
  }

  /** Bytes received so far. */
  get received(): number {
    return this.#received;
  }

  override _read(): void {
    if (this.#reading) return;
    this.#reading = true;
    this.#pump().finally(() => this.#reading = false);
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const count = await this.#conn.read(this.#buffer);
        if (count === null) {
          this.push(null);
          return;
        }
        this.#active();
        this.#received += count;
        // A copy of what arrived: the buffer is reused by the next read (one read at a time).
        if (!this.push(this.#buffer.slice(0, count))) return;
      }
    } catch (error) {
      if (!this.destroyed) this.destroy(error as Error);
    }
  }

  override _write(
    chunk: Uint8Array,
    _encoding: string,
    callback: (error?: Error | null) => void,
  ): void {
    this.#active();
    this.#writeAll(chunk).then(() => callback(), (error) => callback(error));
  }

  /** Several chunks (node:http's head and body) in one write. */
  override _writev(
    chunks: { chunk: Uint8Array }[],
    callback: (error?: Error | null) => void,
  ): void {
    this._write(concatBytes(chunks.map(({ chunk }) => chunk)), "buffer", callback);
  }

  async #writeAll(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.length;) at += await this.#conn.write(chunk.subarray(at));
  }

  /** Half-closes after the last byte; a peer that never closes its side is dropped after a while. */
  override _final(callback: (error?: Error | null) => void): void {
    this.#conn.closeWrite().catch(() => {}).finally(() => callback());
    this.#linger = setTimeout(() => this.destroy(), LINGER_MS);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#linger);
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
    callback(error);
  }

  /** Emits `timeout` after `ms` without traffic (0 turns it off), as `net.Socket` does. */
  setTimeout(ms: number, callback?: () => void): this {
    this.#timeoutMs = ms;
    if (callback) this.once("timeout", callback);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#active();
    return this;
  }

  setNoDelay(noDelay = true): this {
    (this.#conn as Deno.TcpConn).setNoDelay?.(noDelay);
    return this;
  }

  setKeepAlive(keepAlive = false): this {
    (this.#conn as Deno.TcpConn).setKeepAlive?.(keepAlive);
    return this;
  }

  /** Ends the socket once everything written has been sent (then {@link _final} lingers). */
  destroySoon(): void {
    this.end();
  }

  /** Notes traffic. One timer per socket, re-armed when it fires early, not on every chunk. */
  #active(): void {
    this.#lastActive = performance.now();
    if (this.#timeoutMs === 0 || this.destroyed || this.#timer !== undefined) return;
    this.#arm(this.#timeoutMs);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#timeoutMs === 0 || this.destroyed) return;
      const quiet = performance.now() - this.#lastActive;
      if (quiet >= this.#timeoutMs) this.emit("timeout");
      else this.#arm(this.#timeoutMs - quiet);
    }, ms);
  }
}
