/**
 * The accept loop in front of the HTTP parser: it caps open connections, makes room for a
 * newcomer by closing the least recently used idle one (a connection with no authorized request
 * in flight: none sent yet, between requests, or sending a public one such as a login), answers
 * 503 when none can be closed, survives accept errors such as EMFILE (backing off, the listener
 * kept), and reports any other listener error as fatal so the process can exit non-zero.
 *
 * @example
 * ```ts
 * import { ConnectionFront } from "./listener.ts";
 * const front = new ConnectionFront(Deno.listen({ hostname: "127.0.0.1", port: 0 }), {
 *   maxConnections: 256,
 *   onConnection: (socket) => socket.end("HTTP/1.1 204 No Content\r\n\r\n"),
 * });
 * front.failed.then((error) => console.error("listener died:", error));
 * await front.close();
 * ```
 * @module
 */
import { log } from "../log.ts";
import { SendBudget } from "./send_budget.ts";
import { ConnectionSocket } from "./socket.ts";

/** What a {@link ConnectionFront} does with connections. */
export interface FrontOptions {
  /** Connections open at once (standing event streams aside: see {@link ConnectionFront.stand}). */
  maxConnections: number;
  /** Bytes waiting to be sent over all connections together (see send_budget.ts); none: no bound. */
  maxQueuedBytes?: number;
  /** A write that makes no progress for this long closes its connection (0 or none: never). */
  writeTimeoutMs?: number;
  /** Receives every connection that is let in. */
  onConnection(socket: ConnectionSocket): void;
}

/** Accept errors that say "not now" rather than "this listener is broken". */
const TRANSIENT_CODES = new Set([
  "EMFILE",
  "ENFILE",
  "ENOBUFS",
  "ENOMEM",
  "ECONNABORTED",
  "ECONNRESET",
  "EINTR",
  "EAGAIN",
  "EPROTO",
  "EPERM",
  "ETIMEDOUT",
]);

/** True for an accept error to back off from and retry. */
export function isTransientAcceptError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && TRANSIENT_CODES.has(code)) return true;
  return error instanceof Deno.errors.ConnectionAborted ||
    error instanceof Deno.errors.ConnectionReset ||
    error instanceof Deno.errors.Interrupted ||
    error instanceof Deno.errors.TimedOut ||
    error instanceof Deno.errors.WouldBlock;
}

const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 1000;
/** How often repeated accept errors are summarised in the log. */
const ERROR_LOG_INTERVAL_MS = 10_000;
/** Which idle connections go first, as [trusted, arriving] (see `ConnectionFront.#evictIdle`). */
const EVICTION_ORDER = [[false, false], [false, true], [true, false], [true, true]] as const;
/** Refusals being written at once; beyond this a refused connection is just closed. */
const MAX_REFUSING = 64;
/** How long a refused connection may take to read its 503. */
const REFUSAL_LINGER_MS = 250;

const encoder = new TextEncoder();

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

/**
 * A whole HTTP/1.1 error answer, as bytes, in the REST API's error shape, for the answers
 * given before any request reached the application (the connection is closed after it).
 */
export function rawErrorResponse(
  status: number,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): Uint8Array {
  const body = encoder.encode(
    JSON.stringify({ success: false, error: { code, message, details } }),
  );
  const head = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\n` +
    "content-type: application/json\r\nconnection: close\r\n" +
    (status === 503 ? "retry-after: 1\r\n" : "") +
    `content-length: ${body.length}\r\n\r\n`;
  const bytes = new Uint8Array(encoder.encode(head).length + body.length);
  bytes.set(encoder.encode(head));
  bytes.set(body, bytes.length - body.length);
  return bytes;
}

/** See the module documentation. */
export class ConnectionFront {
  /** The address listened on. */
  readonly addr: Deno.NetAddr;
  /** Settles, with the error, only if the listener fails for good. */
  readonly failed: Promise<Error>;
  /** Open connections, least recently used first, with their requests in flight. */
  #open = new Map<ConnectionSocket, number>();
  /** What each connection had received when it last fell idle (let in, or answered). */
  #receivedWhenIdle = new WeakMap<ConnectionSocket, number>();
  /** Connections that have carried an authorized request. */
  #trusted = new WeakSet<ConnectionSocket>();
  /** Connections given over to a standing event stream: outside the cap, never evicted. */
  #standing = new Set<ConnectionSocket>();
  #budget?: SendBudget;
  #closing = false;
  #refusing = 0;
  #fail!: (error: Error) => void;
  #acceptErrors = 0;
  #lastErrorLog = 0;

  constructor(private readonly listener: Deno.Listener, private readonly options: FrontOptions) {
    this.addr = listener.addr as Deno.NetAddr;
    if (options.maxQueuedBytes !== undefined) {
      this.#budget = new SendBudget(
        options.maxQueuedBytes,
        (sender) => this.#trusted.has(sender as ConnectionSocket),
      );
    }
    this.failed = new Promise((resolve) => this.#fail = resolve);
    this.#acceptLoop().catch((error) => {
      log.error("the HTTP accept loop failed", { error, stack: error?.stack });
      this.#fail(error);
    });
  }

  /** Connections open now under the cap (standing streams aside). */
  get size(): number {
    return this.#open.size;
  }

  /**
   * `socket` now carries a standing event stream (MCP's GET /mcp): it leaves the cap, so that
   * streams, which never end, take nothing of the capacity requests need, and it is never
   * closed to make room. Their number is the MCP session table's to bound (one per session).
   */
  stand(socket: object): void {
    if (!this.#open.delete(socket as ConnectionSocket)) return;
    this.#standing.add(socket as ConnectionSocket);
  }

  /** A request started on `socket`: it is busy (never evicted) until {@link idle}. */
  busy(socket: object): void {
    const inFlight = this.#open.get(socket as ConnectionSocket);
    if (inFlight === undefined) return;
    this.#trusted.add(socket as ConnectionSocket);
    // Re-inserting moves it to the most recently used end.
    this.#open.delete(socket as ConnectionSocket);
    this.#open.set(socket as ConnectionSocket, inFlight + 1);
  }

  /** A request on `socket` finished. */
  idle(socket: object): void {
    const inFlight = this.#open.get(socket as ConnectionSocket);
    if (inFlight === undefined) return;
    this.#receivedWhenIdle.set(socket as ConnectionSocket, (socket as ConnectionSocket).received);
    this.#open.delete(socket as ConnectionSocket);
    this.#open.set(socket as ConnectionSocket, Math.max(0, inFlight - 1));
  }

  /** A request on `socket` was answered (whoever sent it): what came before it was its own. */
  answered(socket: object): void {
    if (!this.#open.has(socket as ConnectionSocket)) return;
    this.#receivedWhenIdle.set(socket as ConnectionSocket, (socket as ConnectionSocket).received);
  }

  /** Stops accepting and closes every connection. */
  close(): Promise<void> {
    this.#closing = true;
    try {
      this.listener.close();
    } catch {
      // already closed
    }
    for (const socket of [...this.#open.keys(), ...this.#standing]) socket.destroy();
    this.#open.clear();
    this.#standing.clear();
    return Promise.resolve();
  }

  async #acceptLoop(): Promise<void> {
    let backoff = 0;
    while (!this.#closing) {
      let conn: Deno.Conn;
      try {
        conn = await this.listener.accept();
      } catch (error) {
        if (this.#closing) return;
        if (!isTransientAcceptError(error)) {
          log.error("the HTTP listener failed", { error });
          this.#fail(error as Error);
          return;
        }
        this.#noteAcceptError(error);
        backoff = Math.min(backoff ? backoff * 2 : FIRST_BACKOFF_MS, MAX_BACKOFF_MS);
        await new Promise((resolve) => setTimeout(resolve, backoff));
        continue;
      }
      backoff = 0;
      if (this.#open.size >= this.options.maxConnections && !this.#evictIdle()) {
        this.#refuse(conn);
        continue;
      }
      this.#admit(conn);
    }
  }

  #admit(conn: Deno.Conn): void {
    let socket: ConnectionSocket;
    try {
      socket = new ConnectionSocket(conn, {
        writeTimeoutMs: this.options.writeTimeoutMs,
        budget: this.#budget,
      });
    } catch (error) {
      // The peer left before we looked at it (no address any more).
      log.debug("dropped a connection", { error });
      conn.close();
      return;
    }
    this.#open.set(socket, 0);
    this.#receivedWhenIdle.set(socket, 0);
    socket.once("close", () => {
      this.#open.delete(socket);
      this.#standing.delete(socket);
    });
    // Errors (resets, timeouts) end the connection; node:http has its own listener too.
    socket.on("error", () => {});
    try {
      this.options.onConnection(socket);
    } catch (error) {
      log.error("a connection could not be served", { error, stack: (error as Error)?.stack });
      socket.destroy();
    }
  }

  /**
   * Closes the least recently used connection with no request in flight; false if all are
   * busy. Even one let in a moment ago: sparing new ones (for a second, before 2026-11-28) let
   * anyone who opened connections faster than the cap a second refuse everybody else (300 a
   * second made 60% of requests fail, 800 all). Those that never carried an authorized
   * request go first (a client with the token is not reset for a flood without it), and of
   * each kind quiet ones before those whose request is arriving (a flood of silent connections
   * never resets a request in transit).
   */
  #evictIdle(): boolean {
    for (const [trusted, arriving] of EVICTION_ORDER) {
      for (const [socket, inFlight] of this.#open) {
        if (inFlight > 0 || this.#trusted.has(socket) !== trusted) continue;
        if (this.#arriving(socket) !== arriving) continue;
        this.#open.delete(socket);
        socket.destroy();
        log.debug("closed an idle connection to make room", {
          remote: `${socket.remoteAddress}:${socket.remotePort}`,
        });
        return true;
      }
    }
    return false;
  }

  /** Whether bytes came on `socket` since it last fell idle: a request is on its way. */
  #arriving(socket: ConnectionSocket): boolean {
    return socket.received > (this.#receivedWhenIdle.get(socket) ?? 0);
  }

  /** Answers 503 (every connection is busy) and closes, giving the peer a moment to read it. */
  #refuse(conn: Deno.Conn): void {
    if (this.#refusing >= MAX_REFUSING) {
      conn.close();
      return;
    }
    this.#refusing++;
    const limit = this.options.maxConnections;
    const answer = rawErrorResponse(
      503,
      "UNAVAILABLE",
      `all ${limit} connections are busy with requests, the most allowed ` +
        "(WINTERM_HTTP_MAX_CONNECTIONS); retry shortly",
      { limit },
    );
    const linger = setTimeout(() => conn.close(), REFUSAL_LINGER_MS);
    (async () => {
      try {
        await conn.write(answer);
        await conn.closeWrite();
        // Read what the peer sent until it closes, so that closing does not reset the answer away.
        const sink = new Uint8Array(4096);
        while (await conn.read(sink) !== null) { /* discard */ }
        clearTimeout(linger);
        conn.close();
      } catch {
        // closed by the linger timer, or the peer left
      }
    })().finally(() => this.#refusing--);
  }

  #noteAcceptError(error: unknown): void {
    this.#acceptErrors++;
    const now = Date.now();
    if (now - this.#lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
    this.#lastErrorLog = now;
    log.warn("accepting HTTP connections failed; backing off and retrying", {
      error,
      failures: this.#acceptErrors,
      open: this.#open.size,
    });
  }
}
