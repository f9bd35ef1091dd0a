/**
 * A plain WebSocket client (npm ws) for the server's streams: any headers, any Origin, and
 * every frame kept.
 *
 * @module
 */
// @ts-types="npm:@types/ws@8.18.1"
import { WebSocket } from "ws";
import type { HttpServer } from "./http.ts";
import { concat, WAIT_FLOOR_MS } from "./process.ts";

/** An open stream and what it received. */
export interface StreamClient {
  ws: WebSocket;
  /** Text frames, parsed. */
  // deno-lint-ignore no-explicit-any
  messages: any[];
  /** Binary frames. */
  frames: Uint8Array[];
  /** The binary frames so far, decoded as one text. */
  output(): string;
  /** Resolves when `check` holds (checked on every frame), rejects after `timeoutMs`. */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Sends a JSON message. */
  send(message: Record<string, unknown>): void;
  /** Resolves with the close code once closed. */
  closed: Promise<number>;
  close(): void;
}

/** The refusal of a handshake: its HTTP status and body. */
export class Refused extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`refused with ${status}: ${body}`);
  }
}

/**
 * Opens `path` (e.g. /api/terminals/ID/stream) with the token as a Bearer header unless
 * `token` is null; `origin` sets the Origin header.
 */
export function openStream(
  server: HttpServer,
  path: string,
  options: {
    token?: string | null;
    origin?: string;
    headers?: Record<string, string>;
    protocols?: string[];
  } = {},
): Promise<StreamClient> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? server.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const ws = new WebSocket(server.url.replace(/^http/, "ws") + path, options.protocols ?? [], {
    headers,
    ...(options.origin ? { origin: options.origin } : {}),
  });
  ws.binaryType = "nodebuffer";
  const client: StreamClient = {
    ws,
    messages: [],
    frames: [],
    output: () => new TextDecoder().decode(concat(client.frames)),
    until(check, what, timeoutMs = WAIT_FLOOR_MS) {
      return new Promise((resolve, reject) => {
        if (check()) return resolve();
        const done = () => {
          clearTimeout(timer);
          ws.off("message", onMessage);
          ws.off("close", onClose);
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `timed out waiting for ${what}; output: ${
                JSON.stringify(client.output().slice(-2000))
              }`,
            ),
          );
        }, Math.max(timeoutMs, WAIT_FLOOR_MS));
        const onMessage = () => {
          if (!check()) return;
          done();
          resolve();
        };
        // The last frames are handled before the close: look once more after it.
        const onClose = () => setTimeout(onMessage, 0);
        ws.on("message", onMessage);
        ws.once("close", onClose);
      });
    },
    send: (message) => ws.send(JSON.stringify(message)),
    closed: new Promise((resolve) => ws.once("close", (code: number) => resolve(code))),
    close: () => ws.close(),
  };
  ws.on("message", (data: Uint8Array, binary: boolean) => {
    if (binary) client.frames.push(new Uint8Array(data));
    else client.messages.push(JSON.parse(new TextDecoder().decode(data)));
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(client));
    ws.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Uint8Array) => body += new TextDecoder().decode(chunk));
      response.on("end", () => reject(new Refused(response.statusCode ?? 0, body)));
      response.on("error", () => reject(new Refused(response.statusCode ?? 0, body)));
    });
    ws.once("error", (error) => reject(error));
  });
}
