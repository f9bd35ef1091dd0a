/**
 * A Deno TCP connection as the Node `Duplex` socket that `node:http` parses requests from.
 * `node:http` accepts any Duplex through its `connection` event (a documented Node API), so
 * the accept loop stays ours ({@link ./listener.ts}) while the HTTP parsing and its timeouts
 * are Node's. What this layer adds, so that no connection can make the server hold more than a
 * bounded amount for it:
 *
 * - reading waits while {@link ConnectionSocket.readWhile}'s condition says so (an answer is
 *   being sent): at most one more read is taken ahead and kept, unparsed, so that the peer's
 *   end is still noticed; beyond it the peer meets TCP's backpressure;
 * - what waits to be sent counts against the server's {@link SendBudget}, and a write that
 *   makes no progress for the write timeout closes the connection;
 * - large chunks are written as they are, never copied to be joined.
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
import { Buffer } from "node:buffer";
import { Duplex } from "node:stream";
import { concatBytes } from "../bytes.ts";
import type { SendBudget, Sender } from "./send_budget.ts";

/** How long a socket that has sent its last byte waits for the peer to close before it is dropped. */
const LINGER_MS = 2000;
/** The bytes one read takes at most. */
const READ_SIZE = 16 * 1024;
/** What the parser is handed at a time at first (see #deliver). */
const PIECE_BYTES = 1024;
/** Chunks written together up to this size are joined into one write; larger ones are not copied. */
const JOIN_BYTES = 64 * 1024;

/** How a {@link ConnectionSocket} sends. */
export interface SendOptions {
  /** A write that makes no progress for this long closes the connection (0: never). */
  writeTimeoutMs?: number;
  /** Where the bytes waiting to be sent count. */
  budget?: SendBudget;
}

/** See the module documentation. */
export class ConnectionSocket extends Duplex implements Sender {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly remoteFamily: string;
  readonly localAddress: string;
  readonly localPort: number;
  #conn: Deno.Conn;
  #options: SendOptions;
  #received = 0;
  #buffer = new Uint8Array(READ_SIZE);
  /** A read is under way. */
  #reading = false;
  /** The stream asked for data and has not refused any since. */
  #wanted = false;
  /** Whether reading may go on (see readWhile). */
  #mayRead: () => boolean = () => true;
  /** What the parser is handed at a time now (see #deliver). */
  #piece = PIECE_BYTES;
  /** What was read but not handed over while reading was held, kept for when it may go on. */
  #ahead: Uint8Array | undefined;
  /** Bytes handed to the socket and not yet taken by the kernel. */
  #unsent = 0;
  #writing = false;
  #lastProgress = performance.now();
  #writeTimer?: ReturnType<typeof setTimeout>;
  #timeoutMs = 0;
  #lastActive = 0;
  #timer?: ReturnType<typeof setTimeout>;
  #linger?: ReturnType<typeof setTimeout>;

  constructor(conn: Deno.Conn, options: SendOptions = {}) {
    super({ allowHalfOpen: false });
    this.#conn = conn;
    this.#options = options;
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

  /** Bytes handed to the socket and not yet taken by the kernel. */
  get unsent(): number {
    return this.#unsent;
  }

  /** When sending last made progress (or began, after a time with nothing to send). */
  get lastProgress(): number {
    return this.#lastProgress;
  }

  /**
   * Reads on only while `mayRead` holds; otherwise one read more is taken and kept (the peer's
   * end is passed on at once when nothing is kept before it). Call {@link resumeReading} when
   * the condition may have turned.
   */
  readWhile(mayRead: () => boolean): void {
    this.#mayRead = mayRead;
  }

  /** Reading resumes if {@link readWhile}'s condition now allows it. */
  resumeReading(): void {
    this.#drive();
  }

  override _read(): void {
    this.#wanted = true;
    // Not within _read: what is pushed there reaches the parser only later (on the next tick),
    // and a piece must be parsed before the next is handed over (see #deliver).
    queueMicrotask(() => this.#drive());
  }

  #drive(): void {
    if (this.destroyed) return;
    if (this.#ahead !== undefined && this.#wanted && this.#mayRead()) {
      const chunk = this.#ahead;
      this.#ahead = undefined;
      this.#deliver(chunk);
      if (this.#ahead !== undefined) return;
    }
    if (this.#reading || this.#ahead !== undefined) return;
    // Held: one read ahead, whether or not the stream wants it; otherwise only when it does.
    if (this.#mayRead() && !this.#wanted) return;
    this.#readOne();
  }

  /**
   * Hands `chunk` to the parser a piece at a time, keeping the rest once reading may not go on:
   * the parser takes every request of what it is given, and a packet of 100 pipelined requests
   * made 100 of them (each aborted, with an error and its stack, when the connection closed).
   * Pieces start at 1 KiB and double while reading goes on (a body arriving), back to 1 KiB
   * once it is held (an answer under way): a 1 MB body in 1 KiB pieces took 5 times as long.
   */
  #deliver(chunk: Uint8Array | null): void {
    if (chunk === null) {
      this.push(null);
      this.#wanted = false;
      return;
    }
    for (let at = 0; at < chunk.length;) {
      if (at > 0 && !(this.#wanted && this.#mayRead())) {
        this.#ahead = chunk.subarray(at);
        this.#piece = PIECE_BYTES;
        return;
      }
      const piece = chunk.subarray(at, at + this.#piece);
      at += piece.length;
      this.#wanted = this.push(piece);
      if (this.destroyed) return;
      if (this.#mayRead()) this.#piece = Math.min(2 * this.#piece, READ_SIZE);
      else this.#piece = PIECE_BYTES;
    }
  }

  async #readOne(): Promise<void> {
    this.#reading = true;
    let count: number | null;
    try {
      count = await this.#conn.read(this.#buffer);
    } catch (error) {
      this.#reading = false;
      if (!this.destroyed) this.destroy(error as Error);
      return;
    }
    this.#reading = false;
    if (this.destroyed) return;
    if (count === null) {
      // Nothing is kept (no read starts while something is): the end is passed on at once.
      this.#deliver(null);
      return;
    }
    this.#active();
    this.#received += count;
    // A copy of what arrived: the buffer is reused by the next read (one read at a time).
    const chunk = this.#buffer.slice(0, count);
    if (this.#wanted && this.#mayRead()) this.#deliver(chunk);
    else this.#ahead = chunk;
    this.#drive();
  }

  // deno-lint-ignore no-explicit-any
  override write(chunk: any, ...rest: any[]): boolean {
    if (!this.destroyed && !this.writableEnded) {
      this.#charge(byteLength(chunk, typeof rest[0] === "string" ? rest[0] : undefined));
    }
    return (Duplex.prototype.write as (...args: unknown[]) => boolean).apply(this, [
      chunk,
      ...rest,
    ]);
  }

  /** As Node's: `end(chunk)` is `write(chunk)` and `end()`, so that the chunk is counted too. */
  // deno-lint-ignore no-explicit-any
  override end(...args: any[]): this {
    const [chunk] = args;
    if (chunk !== undefined && chunk !== null && typeof chunk !== "function") {
      const encoding = typeof args[1] === "string" ? args[1] : undefined;
      if (encoding) this.write(chunk, encoding);
      else this.write(chunk);
      return super.end(args.find((arg) => typeof arg === "function"));
    }
    return (Duplex.prototype.end as (...args: unknown[]) => this).apply(this, args);
  }

  override _write(
    chunk: Uint8Array,
    _encoding: string,
    callback: (error?: Error | null) => void,
  ): void {
    this.#active();
    this.#writeAll([chunk]).then(() => callback(), (error) => callback(error));
  }

  /** Several chunks (node:http's head and body): small ones joined in one write, large ones not copied. */
  override _writev(
    chunks: { chunk: Uint8Array }[],
    callback: (error?: Error | null) => void,
  ): void {
    this.#active();
    const all = chunks.map(({ chunk }) => chunk);
    const size = all.reduce((total, chunk) => total + chunk.length, 0);
    this.#writeAll(size <= JOIN_BYTES ? [concatBytes(all)] : all)
      .then(() => callback(), (error) => callback(error));
  }

  async #writeAll(chunks: Uint8Array[]): Promise<void> {
    this.#writing = true;
    this.#watchWrites();
    try {
      for (const chunk of chunks) {
        for (let at = 0; at < chunk.length;) {
          const count = await this.#conn.write(chunk.subarray(at));
          at += count;
          this.#sent(count);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  #charge(bytes: number): void {
    if (bytes <= 0) return;
    // Nothing was waiting: the wait for progress starts now.
    if (this.#unsent === 0) this.#lastProgress = performance.now();
    this.#unsent += bytes;
    this.#options.budget?.charge(this, bytes);
  }

  #sent(bytes: number): void {
    this.#lastProgress = performance.now();
    this.#active();
    const counted = Math.min(bytes, this.#unsent);
    this.#unsent -= counted;
    this.#options.budget?.discharge(this, counted);
  }

  /** Closes the connection once a write has made no progress for the write timeout. */
  #watchWrites(ms = this.#options.writeTimeoutMs ?? 0): void {
    if (!this.#options.writeTimeoutMs || this.#writeTimer !== undefined) return;
    this.#writeTimer = setTimeout(() => {
      this.#writeTimer = undefined;
      if (this.destroyed || !this.#writing) return;
      const limit = this.#options.writeTimeoutMs!;
      const stalled = performance.now() - this.#lastProgress;
      if (stalled < limit) return this.#watchWrites(limit - stalled);
      this.destroy(
        Object.assign(
          new Error(
            `the client took nothing of the answer for ${limit} ms (WINTERM_HTTP_WRITE_TIMEOUT_MS)`,
          ),
          { code: "ETIMEDOUT" },
        ),
      );
    }, ms);
  }

  /** Half-closes after the last byte; a peer that never closes its side is dropped after a while. */
  override _final(callback: (error?: Error | null) => void): void {
    this.#conn.closeWrite().catch(() => {}).finally(() => callback());
    this.#linger = setTimeout(() => this.destroy(), LINGER_MS);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#linger);
    clearTimeout(this.#writeTimer);
    this.#ahead = undefined;
    this.#options.budget?.discharge(this, this.#unsent);
    this.#unsent = 0;
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

/** The bytes a chunk handed to `write` will take. */
function byteLength(chunk: unknown, encoding?: string): number {
  if (typeof chunk === "string") return Buffer.byteLength(chunk, encoding as BufferEncoding);
  if (ArrayBuffer.isView(chunk)) return chunk.byteLength;
  return 0;
}
