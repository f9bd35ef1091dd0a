/**
 * One answer at a time on each connection. `node:http` parses every request of what it was
 * given (a client may pipeline hundreds in one packet) and hands each to the application at
 * once, whose answers then wait in memory, in full, for the ones before them to be sent: 20
 * connections pipelining 100 requests for a 614 KB script took a server to 2 GB. Here a request
 * reaches the application only once the answer before it on its connection has been sent (taken
 * by the kernel), and the connection is not read while an answer is being sent (once its request
 * has fully arrived: a body is still read): what a client sends meanwhile meets TCP's
 * backpressure. What was already read waits, at most {@link MAX_WAITING} requests; a client
 * that pipelines more in one go has its connection closed (HTTP/1.1 clients retry what was not
 * answered on a new connection; browsers and common clients do not pipeline at all).
 *
 * Requests without valid credentials (anyone may send them: the page, health, a refusal) take
 * turns server-wide, {@link MAX_ANONYMOUS} at a time, each next turn in a later turn of the
 * event loop: a flood of them never holds up a client with the token. Valid, not merely
 * present: the page is public, and a flood that sent `Authorization: Bearer x` with it was
 * answered as if it were the token's.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { AnswerQueue } from "./answer_queue.ts";
 * const queue = new AnswerQueue((_request, response) => response.end("hi"), {
 *   trusted: (request) => request.headers.authorization === "Bearer 0123456789abcdef0123456789abcdef",
 * });
 * const server = createServer((request, response) => queue.admit(request, response));
 * ```
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { log } from "../log.ts";

/** Requests read and waiting behind an answer on one connection, at most. */
export const MAX_WAITING = 16;
/** Answers to requests without credentials being made at once, server-wide. */
export const MAX_ANONYMOUS = 8;

/** What the queue needs of a connection: ConnectionSocket's reading controls (optional). */
interface Connection {
  readonly destroyed: boolean;
  destroy(error?: Error): void;
  once(event: "close", listener: () => void): unknown;
  readWhile?(mayRead: () => boolean): void;
  resumeReading?(): void;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => unknown;

interface Lane {
  /** The request being answered. */
  current?: IncomingMessage;
  waiting: [IncomingMessage, ServerResponse][];
}

/** See the module documentation. */
export class AnswerQueue {
  #lanes = new WeakMap<Connection, Lane>();
  /** Answers to requests without credentials under way. */
  #anonymous = 0;
  /** Requests without credentials waiting for one of those to end, oldest first. */
  #anonymousWaiting: (() => void)[] = [];

  /**
   * `handle` answers a request (the application); `trusted` says whether a request carries
   * valid credentials (none does, without it).
   */
  constructor(
    private readonly handle: Handler,
    private readonly options: {
      trusted?: (request: IncomingMessage) => boolean;
      maxWaiting?: number;
    } = {},
  ) {}

  /** node:http's `request` listener. */
  admit(request: IncomingMessage, response: ServerResponse): void {
    const connection = request.socket as unknown as Connection;
    if (connection.destroyed) return;
    const lane = this.#lane(connection);
    if (lane.current === undefined) return this.#start(connection, lane, request, response);
    const most = this.options.maxWaiting ?? MAX_WAITING;
    if (lane.waiting.length >= most) {
      log.debug("closed a connection pipelining too many requests", { most });
      lane.waiting = [];
      connection.destroy();
      return;
    }
    lane.waiting.push([request, response]);
  }

  #lane(connection: Connection): Lane {
    let lane = this.#lanes.get(connection);
    if (lane) return lane;
    const created: Lane = { waiting: [] };
    this.#lanes.set(connection, lane = created);
    connection.readWhile?.(() => created.current === undefined || !created.current.complete);
    connection.once("close", () => created.waiting = []);
    return lane;
  }

  #start(
    connection: Connection,
    lane: Lane,
    request: IncomingMessage,
    response: ServerResponse,
  ): void {
    lane.current = request;
    response.once("close", () => {
      lane.current = undefined;
      const next = lane.waiting.shift();
      if (next && !connection.destroyed) this.#start(connection, lane, ...next);
      // Read on if the answer queue is empty, or the next request's body is still arriving.
      connection.resumeReading?.();
    });
    const answer = () =>
      Promise.resolve(this.handle(request, response)).catch((error) =>
        log.error("HTTP request failed", { error, stack: (error as Error)?.stack })
      );
    // A request anyone may send waits for one of a few turns, so that a flood of them never
    // holds up a client with the token; not one whose body is still arriving (a login sent
    // slowly would hold its turn: the request timeout bounds those).
    if (!request.complete || this.options.trusted?.(request)) return void answer();
    const begin = () => {
      // Its client left while it waited: nothing to make.
      if (response.destroyed || request.socket.destroyed) {
        return void this.#anonymousWaiting.shift()?.();
      }
      this.#anonymous++;
      // The turn ends once the answer is made and handed to the connection (not sent: a client
      // that does not read must not hold it), and the next begins in a later turn of the event
      // loop: an answer the kernel takes at once ends within this one, and the next would
      // follow in it, and so on, thousands before anything else (a client with the token) is read.
      answer().finally(() => {
        this.#anonymous--;
        const next = this.#anonymousWaiting.shift();
        if (next) setTimeout(next, 0);
      });
    };
    if (this.#anonymous < MAX_ANONYMOUS) begin();
    else this.#anonymousWaiting.push(begin);
  }
}
