/**
 * Live streams over WebSocket: `GET /api/terminals/:id/stream` (and, read-only,
 * `/api/commands/:token/stream`), for the web view and for any other tool.
 *
 * The handshake passes every check an API request passes (Host, Origin, the bearer token or a
 * web session; see app.ts), because it is answered by the same application: the upgrade
 * request is handed to it, and only if its stream route accepts is the connection upgraded
 * (anything else gets the application's own refusal, 401, 403 or 404). At most
 * `maxStreams` streams are open at once (503 beyond).
 *
 * Server to client:
 * - text `{"type":"hello","kind":"terminal","id","command","cols","rows","running","holder",
 *   "history"}`,
 * - with `?history=1` in the address, `history` bytes of the output kept before the screen, from
 *   a line start, in binary frames (at most `maxBufferedBytes` with the screen's frame): written
 *   first into a terminal of `cols` × `rows`, they fill its scrollback;
 * - one binary frame that redraws the screen at an exact output offset (a snapshot of the
 *   engine's headless terminal, see Terminal.watch: a late joiner sees vim as it is), over
 *   whatever the terminal showed, its scrollback kept, then every byte of output from that
 *   offset on (what was kept since, then as it arrives), as binary frames,
 * - text `{"type":"resize","cols","rows"}`, `{"type":"control","holder":"you"|"other"|null}`,
 *   `{"type":"error","message"}`, and `{"type":"exit","exitStatus"}` before a normal close.
 *
 * Client to server: text `{"type":"takeover"}` / `{"type":"handback"}`; while holding the
 * terminal, binary frames (UTF-8) or `{"type":"input","data"}` are typed into it, and
 * `{"type":"resize","cols","rows"}` resizes it (until it hands back). `{"type":"resync"}` asks
 * for the screen afresh: a `resync` and a frame that redraws it come back, as they do after the
 * server's own bound (a view that cannot draw as fast as the output comes, such as the web page
 * in a slow browser, drops what it has not drawn and asks). A client that has not
 * taken over is read-only: its input is refused with an error message. Whoever may open a
 * stream may take over (they could type through REST anyway); a web session's input is audited
 * as `via: "web"`, a token client's as `via: "stream"`.
 *
 * Bounds: no more than `maxBufferedBytes` ever wait for one client. A terminal stream's client
 * that falls further behind misses output until it has caught up (a quarter of the bound),
 * then gets `{"type":"resync","cols","rows","holder"}` and a frame that redraws the screen as it is
 * then: its view is right again, and server memory never grows with a slow reader. (A
 * command's stream has no screen to redraw: its client is disconnected instead.) Messages a
 * client sends while more than the bound waits for it get no answer (a resync: the catching up
 * brings one); one that sends on while far more waits is disconnected. Frames from
 * clients are at most 64 KiB; typing waits for the terminal to take the previous input. A
 * client is pinged every `pingIntervalMs`, and must answer within that plus the time it takes to
 * read, at {@link MIN_READ_RATE}, what was sent before the ping (its pong waits behind it: what
 * the server still holds, and what the kernels hold, megabytes on their own); one that does not
 * is dropped. Output sent meanwhile does not count: a client that reads nothing is dropped
 * however slowly the terminal prints. A client the server does not read (more than 64 KiB of its
 * typing waits for a program that does not read it) is not timed until it is read again: its
 * pong is behind its typing. If the program takes none of it for {@link STALLED_PINGS}
 * intervals (and twice the write timeout), the client is closed (code 4000), its typing dropped.
 *
 * @module
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
// @ts-types="npm:@types/ws@8.18.1"
import type { WebSocket, WebSocketServer } from "ws";
import { concatBytes } from "../../bytes.ts";
import type { Command, FrontEnd, Terminal } from "../../engine/mod.ts";
import { log } from "../../log.ts";
import { rawErrorResponse } from "../listener.ts";
import { STREAM_PROTOCOL } from "./sessions.ts";
import { StreamClient } from "./stream_client.ts";
import { TerminalStream } from "./terminal_stream.ts";

/** Largest frame a client may send. */
export const MAX_CLIENT_FRAME = 64 * 1024;
/**
 * Ping intervals a client may go unread while the program takes none of its typing: then it is
 * let go, with that typing.
 */
const STALLED_PINGS = 4;

/** The paths that upgrade to a stream. */
const STREAM_PATH = /^\/api\/(terminals|commands)\/[^/?#]+\/stream\/?(\?.*)?$/;

/** Stream limits. */
export interface StreamOptions {
  maxStreams: number;
  maxBufferedBytes: number;
  /** How often clients are pinged, and how long one may show no sign of life. */
  pingIntervalMs: number;
}

/**
 * The slowest reading a client behind is allowed (512 kbit/s): its pong may come this much later
 * per byte sent before the ping (4 MiB behind: 64 s). A client that reads nothing holds its
 * stream that long at most after a flood.
 */
const MIN_READ_RATE = 64 * 1024 / 1000; // bytes a millisecond
/**
 * What the kernels' socket buffers may hold for a client, unseen by the server, counted as not
 * read yet when a ping goes (with what the server itself still holds): what was sent since the
 * last pong may have been read long ago (a client that read 2 GB, then died, was given 9 hours).
 */
const KERNEL_BYTES = 4 * 1024 * 1024;

/** What the application's stream route decided for an upgrade request. */
export interface UpgradeTicket {
  target?: { terminal: Terminal } | { command: Command };
  via?: FrontEnd;
}

/** The application, as the stream hub asks it about an upgrade request. */
export type AppFetch = (request: Request, env: { upgrade: UpgradeTicket }) => Promise<Response>;

const encoder = new TextEncoder();

/** See the module documentation. */
export class StreamHub {
  #server: Promise<WebSocketServer> | undefined;
  #open = new Set<WebSocket>();
  #clients = new WeakMap<WebSocket, StreamClient>();
  #pinger: ReturnType<typeof setInterval>;

  constructor(private readonly options: StreamOptions) {
    this.#pinger = setInterval(() => this.#ping(), options.pingIntervalMs);
    Deno.unrefTimer(this.#pinger);
  }

  /** The WebSocket server, loaded with the first stream (a server nobody watches never loads it). */
  #load(): Promise<WebSocketServer> {
    this.#server ??= import("ws").then(({ WebSocketServer }) =>
      new WebSocketServer({
        noServer: true,
        perMessageDeflate: false,
        maxPayload: MAX_CLIENT_FRAME,
        // The page offers "winterm" and its key; answer with the former (never echo the key).
        handleProtocols: (protocols) => protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false,
      })
    );
    return this.#server;
  }

  /** Streams open now. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Answers an upgrade request: asks the application (every check, then the stream route),
   * and upgrades only what it accepted (`accepted` is called then: the connection is busy from
   * there on, not before; a refused one is not).
   */
  async upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Uint8Array,
    fetch: AppFetch,
    accepted: () => void = () => {},
  ) {
    const refuse = (bytes: Uint8Array) => {
      if (socket.writable) socket.end(bytes);
      else socket.destroy();
    };
    // Only the stream routes upgrade; anything else asking to (an MCP event stream, say) is
    // refused here, before the application would start an answer that never ends.
    if (req.method !== "GET" || !STREAM_PATH.test(req.url ?? "")) {
      return refuse(rawErrorResponse(
        400,
        "INVALID_INPUT",
        "only /api/terminals/:id/stream and /api/commands/:token/stream are WebSockets",
      ));
    }
    const request = webRequest(req);
    if (request instanceof Error) {
      return refuse(rawErrorResponse(
        400,
        "INVALID_INPUT",
        `malformed upgrade request: ${request.message}`,
      ));
    }
    const history = new URL(req.url ?? "/", "http://stream").searchParams.get("history");
    if (history !== null && history !== "0" && history !== "1") {
      return refuse(rawErrorResponse(
        400,
        "INVALID_INPUT",
        "history must be 1 (the output kept before the screen first) or 0",
      ));
    }
    const ticket: UpgradeTicket = {};
    let answer: Response;
    try {
      answer = await fetch(request, { upgrade: ticket });
    } catch (error) {
      log.error("stream upgrade failed", { error });
      return refuse(rawErrorResponse(500, "INTERNAL_ERROR", "the upgrade failed unexpectedly"));
    }
    const { target, via } = ticket;
    if (!target || !via) return refuse(await rawAnswer(answer));
    if (this.#open.size >= this.options.maxStreams) {
      return refuse(rawErrorResponse(
        503,
        "UNAVAILABLE",
        `${this.#open.size} streams are open, the most allowed (WINTERM_STREAM_MAX_CONNECTIONS)`,
        { limit: this.options.maxStreams },
      ));
    }
    accepted();
    const server = await this.#load();
    if (socket.destroyed) return;
    server.handleUpgrade(req, socket, asBuffer(head), (ws) => {
      this.#open.add(ws);
      const client = new StreamClient(ws, this.options.maxBufferedBytes);
      const liveness = client.liveness;
      this.#clients.set(ws, client);
      ws.on("pong", () => {
        if (liveness.ping) liveness.read = liveness.ping.sent;
        liveness.ping = undefined;
      });
      ws.on("error", (error) => log.debug("stream error", { error }));
      ws.once("close", () => this.#open.delete(ws));
      if ("terminal" in target) {
        new TerminalStream(client, target.terminal, via)
          .start(history === "1" ? this.options.maxBufferedBytes : 0);
      } else serveCommand(client, target.command);
    });
  }

  /** Closes every stream (the server is stopping). */
  closeAll(): void {
    clearInterval(this.#pinger);
    for (const ws of this.#open) ws.terminate();
    this.#open.clear();
  }

  /**
   * Pings the clients that answered the last ping; drops those whose answer is overdue: due
   * within the interval, plus the time to read at {@link MIN_READ_RATE} what the client may not
   * have read when the ping went (sent since its last pong; at most {@link KERNEL_BYTES} more
   * than the server still held).
   */
  #ping(): void {
    const now = performance.now();
    for (const ws of this.#open) {
      const liveness = this.#clients.get(ws)!.liveness;
      const { ping } = liveness;
      // Not read (its input waits for the terminal): its pong waits behind that input, and its
      // wait starts over once it is read again. A live client that pasted 64 KiB into a program
      // that reads nothing was dropped. But not for good: one whose typing the program has not
      // taken for STALLED_PINGS intervals is let go (a dead one held its slot for ever).
      if (ws.isPaused) {
        if (ping) ping.at = now;
        const stalled = now - (liveness.stalledSince ?? now);
        const most = Math.max(
          STALLED_PINGS * this.options.pingIntervalMs,
          liveness.stallFloorMs ?? 0,
        );
        if (stalled > most) {
          log.info("closing a stream whose typing the program has not taken", {
            stalledMs: Math.round(stalled),
          });
          ws.close(4000, "the program has not read your typing; it was dropped");
          // Its answer to the close would wait behind that typing too.
          Deno.unrefTimer(setTimeout(() => ws.terminate(), 1000));
        }
        continue;
      }
      if (ping) {
        const due = this.options.pingIntervalMs + ping.behind / MIN_READ_RATE;
        if (now - ping.at < due) continue;
        log.debug("dropping a stream that did not answer its ping in time", {
          waitedMs: Math.round(now - ping.at),
          behindBytes: ping.behind,
        });
        ws.terminate();
        continue;
      }
      const behind = Math.min(liveness.sent - liveness.read, ws.bufferedAmount + KERNEL_BYTES);
      liveness.ping = { at: now, sent: liveness.sent, behind };
      ws.ping();
    }
  }
}

/** A one-shot command's stream: its kept output, then what arrives (read-only). */
function serveCommand(client: StreamClient, command: Command): void {
  const ws = client.ws;
  const send = (data: string | Uint8Array) => {
    if (!client.open) return;
    // No screen to redraw after a gap: a client that falls behind is let go.
    if (client.behind(data)) return ws.terminate();
    client.send(data);
  };
  const exit = () => {
    send(JSON.stringify({
      type: "exit",
      exitStatus: { exitCode: command.exitCode, signal: command.signal },
      status: command.status,
    }));
    ws.close(1000, "the command ended");
  };
  ws.on("message", () => {
    if (client.deaf()) return;
    send(JSON.stringify({ type: "error", message: "a command's stream is read-only" }));
  });
  send(JSON.stringify({
    type: "hello",
    kind: "command",
    id: command.token,
    command: command.display,
    mode: command.mode,
    running: command.running,
    holder: null,
  }));
  // Kept output and live output meet in one call: nothing missed, nothing twice.
  const { kept, stop } = command.watch((event) => {
    if (event.type === "output") send(event.data);
    else exit();
  });
  for (const bytes of kept) send(bytes);
  if (!command.running) {
    stop();
    return exit();
  }
  ws.once("close", stop);
}

/** node:http's upgrade request as a web Request for the application, or why it is none. */
function webRequest(req: IncomingMessage): Request | Error {
  try {
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    }
    return new Request(`http://${headers.get("host") ?? "invalid"}${req.url}`, {
      method: req.method,
      headers,
    });
  } catch (error) {
    return error as Error;
  }
}

/** ws wants a Buffer for the bytes read past the handshake. */
function asBuffer(head: Uint8Array): Parameters<WebSocketServer["handleUpgrade"]>[2] {
  return head as Parameters<WebSocketServer["handleUpgrade"]>[2];
}

/** An application answer, as the raw HTTP/1.1 bytes for a socket that will be closed after it. */
async function rawAnswer(response: Response): Promise<Uint8Array> {
  const body = new Uint8Array(await response.arrayBuffer());
  const reason = response.statusText || STATUS_CODES[response.status] || "Error";
  let head = `HTTP/1.1 ${response.status} ${reason}\r\n`;
  for (const [name, value] of response.headers) {
    if (name !== "content-length" && name !== "connection") head += `${name}: ${value}\r\n`;
  }
  head += `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  return concatBytes([encoder.encode(head), body]);
}
