/**
 * One stream's client as the server sends to it: what it was sent and has read (for the
 * pings, stream.ts), and the bound on what may wait for it (see stream.ts's module
 * documentation).
 *
 * @module
 */
// @ts-types="npm:@types/ws@8.18.1"
import type { RawData, WebSocket } from "ws";
import { concatBytes } from "../../bytes.ts";
import { utf8Length } from "../../engine/mod.ts";
import { log } from "../../log.ts";

/**
 * Beyond twice the bound, this much more waiting for a client that still sends means it does
 * not read (see {@link StreamClient.deaf}): a screen it was sent on catching up may be this large.
 */
const DEAF_MARGIN_BYTES = 8 * 1024 * 1024;
/** WebSocket.OPEN. */
const OPEN = 1;

/** What tells a live client from a gone one, for one stream. */
export interface Liveness {
  /** Bytes of messages handed to the socket, frame headers left out. */
  sent: number;
  /**
   * While the client is not read (its typing waits for the program): since when the program has
   * taken none of it (ms, `performance.now()`).
   */
  stalledSince?: number;
  /** How long that may last at least: a write the program takes slowly ends within it. */
  stallFloorMs?: number;
  /** What had been sent when the last answered ping went: the client has read that far. */
  read: number;
  /**
   * The ping not answered yet: when it went, what had been sent then, and how much of that the
   * client may not have read (at most what the server held then and the kernels' buffers).
   */
  ping?: { at: number; sent: number; behind: number };
}

/** A stream's client: its socket, its liveness, and the bound on what waits for it. */
export class StreamClient {
  readonly liveness: Liveness = { sent: 0, read: 0 };

  constructor(readonly ws: WebSocket, readonly maxBufferedBytes: number) {}

  /** Sends a message if the client is open, counted for the pings. */
  send(data: string | Uint8Array): void {
    if (this.ws.readyState !== OPEN) return;
    this.liveness.sent += typeof data === "string" ? utf8Length(data) : data.byteLength;
    this.ws.send(data);
  }

  /** Whether the socket is open. */
  get open(): boolean {
    return this.ws.readyState === OPEN;
  }

  /**
   * Whether sending `data` would make more than the bound wait for the client (then it is told
   * so in the log).
   */
  behind(data: string | Uint8Array): boolean {
    const size = typeof data === "string" ? utf8Length(data) : data.byteLength;
    if (this.ws.bufferedAmount + size <= this.maxBufferedBytes) return false;
    log.warn("a stream client reads too slowly: it misses output until it catches up", {
      buffered: this.ws.bufferedAmount,
      limit: this.maxBufferedBytes,
    });
    return true;
  }

  /**
   * Lets go of a client that sends while far more than the bound waits for it to read (then
   * true): what the server sends of its own stays within the bound and a frame or a screen, so
   * only the answers to its own messages take it further. One that sent 1-byte junk frames and
   * read nothing grew the server by 25 MB a second, to 1.4 GB.
   */
  deaf(): boolean {
    if (this.ws.bufferedAmount <= 2 * this.maxBufferedBytes + DEAF_MARGIN_BYTES) return false;
    log.warn("a stream client sends but does not read what it is sent: it is let go", {
      buffered: this.ws.bufferedAmount,
      limit: this.maxBufferedBytes,
    });
    this.ws.terminate();
    return true;
  }
}

/** The bytes of a received frame. */
export function rawBytes(data: RawData): Uint8Array {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (Array.isArray(data)) return concatBytes(data);
  return data as Uint8Array;
}
