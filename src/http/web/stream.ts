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
import type { RawData, WebSocket, WebSocketServer } from "ws";
import { concatBytes } from "../../bytes.ts";
import {
  type Command,
  type FrontEnd,
  type Terminal,
  type TerminalEvent,
  utf8Length,
  type Watch,
} from "../../engine/mod.ts";
import { log } from "../../log.ts";
import { rawErrorResponse } from "../listener.ts";
import { STREAM_PROTOCOL } from "./sessions.ts";

/** Largest frame a client may send. */
export const MAX_CLIENT_FRAME = 64 * 1024;
/**
 * Ping intervals a client may go unread while the program takes none of its typing: then it is
 * let go, with that typing.
 */
const STALLED_PINGS = 4;

/** Input waiting for the terminal beyond this pauses reading from the client. */
const INPUT_HIGH_WATER = 64 * 1024;
/** The paths that upgrade to a stream. */
const STREAM_PATH = /^\/api\/(terminals|commands)\/[^/?#]+\/stream\/?(\?.*)?$/;
/** The history a terminal's stream is sent before the screen is sent in frames of this size. */
const HISTORY_FRAME_BYTES = 64 * 1024;
/** How often a client that fell behind is looked at to see whether it has caught up. */
/**
 * Beyond twice the bound, this much more waiting for a client that still sends means it does
 * not read (see `#deaf`): a screen it was sent on catching up may be this large.
 */
const DEAF_MARGIN_BYTES = 8 * 1024 * 1024;
const CATCH_UP_CHECK_MS = 50;

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

/** What tells a live client from a gone one, for one stream. */
interface Liveness {
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
   * client may not have read (at most what the server held then and {@link KERNEL_BYTES}).
   */
  ping?: { at: number; sent: number; behind: number };
}

/** What the application's stream route decided for an upgrade request. */
export interface UpgradeTicket {
  target?: { terminal: Terminal } | { command: Command };
  via?: FrontEnd;
}

/** The application, as the stream hub asks it about an upgrade request. */
export type AppFetch = (request: Request, env: { upgrade: UpgradeTicket }) => Promise<Response>;

const encoder = new TextEncoder();
/** WebSocket.OPEN. */
const OPEN = 1;

/** See the module documentation. */
export class StreamHub {
  #server: Promise<WebSocketServer> | undefined;
  #open = new Set<WebSocket>();
  #liveness = new WeakMap<WebSocket, Liveness>();
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
    let request: Request;
    try {
      const headers = new Headers();
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
      }
      request = new Request(`http://${headers.get("host") ?? "invalid"}${req.url}`, {
        method: req.method,
        headers,
      });
    } catch (error) {
      return refuse(rawErrorResponse(
        400,
        "INVALID_INPUT",
        `malformed upgrade request: ${(error as Error).message}`,
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
      const liveness: Liveness = { sent: 0, read: 0 };
      this.#liveness.set(ws, liveness);
      ws.on("pong", () => {
        if (liveness.ping) liveness.read = liveness.ping.sent;
        liveness.ping = undefined;
      });
      ws.on("error", (error) => log.debug("stream error", { error }));
      ws.once("close", () => this.#open.delete(ws));
      if ("terminal" in target) this.#serveTerminal(ws, target.terminal, via, history === "1");
      else this.#serveCommand(ws, target.command);
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
      const liveness = this.#liveness.get(ws)!;
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

  /** Sends a message to an open client, counted for {@link StreamHub.#ping}. */
  #send(ws: WebSocket, data: string | Uint8Array): void {
    if (ws.readyState !== OPEN) return;
    this.#liveness.get(ws)!.sent += typeof data === "string" ? utf8Length(data) : data.byteLength;
    ws.send(data);
  }

  /**
   * Whether sending `data` to `ws` would make more than the bound wait for it (then it is told
   * so in the log).
   */
  #behind(ws: WebSocket, data: string | Uint8Array): boolean {
    const size = typeof data === "string" ? utf8Length(data) : data.byteLength;
    if (ws.bufferedAmount + size <= this.options.maxBufferedBytes) return false;
    log.warn("a stream client reads too slowly: it misses output until it catches up", {
      buffered: ws.bufferedAmount,
      limit: this.options.maxBufferedBytes,
    });
    return true;
  }

  /**
   * Lets go of a client that sends while far more than the bound waits for it to read (then
   * true): what the server sends of its own stays within the bound and a frame or a screen, so
   * only the answers to its own messages take it further. One that sent 1-byte junk frames and
   * read nothing grew the server by 25 MB a second, to 1.4 GB.
   */
  #deaf(ws: WebSocket): boolean {
    if (ws.bufferedAmount <= 2 * this.options.maxBufferedBytes + DEAF_MARGIN_BYTES) return false;
    log.warn("a stream client sends but does not read what it is sent: it is let go", {
      buffered: ws.bufferedAmount,
      limit: this.options.maxBufferedBytes,
    });
    ws.terminate();
    return true;
  }

  #serveTerminal(ws: WebSocket, terminal: Terminal, via: FrontEnd, history: boolean): void {
    const key = {};
    const send = (data: string | Uint8Array) => this.#send(ws, data);
    const json = (message: Record<string, unknown>) => send(JSON.stringify(message));
    /** Answers a message: not while more than the bound waits (it is read when caught up). */
    const reply = (message: Record<string, unknown>) => {
      if (ws.bufferedAmount <= this.options.maxBufferedBytes) json(message);
    };
    const holderName = () => {
      const holder = terminal.takeover.holder;
      return holder ? holder.key === key ? "you" : "other" : null;
    };
    let watch: Watch | undefined;
    let closed = false;
    let exitSent = false;
    /** Set while the client is too far behind: output is not sent until it catches up. */
    let catchingUp: ReturnType<typeof setInterval> | undefined;
    const stopControl = terminal.takeover.changes.add(() =>
      sendOrCatchUp(JSON.stringify({ type: "control", holder: holderName() }))
    );
    const input = new InputQueue(
      ws,
      terminal,
      via,
      (message) => reply({ type: "error", message }),
      this.#liveness.get(ws)!,
    );
    ws.once("close", () => {
      closed = true;
      clearInterval(catchingUp);
      watch?.stop();
      stopControl();
      terminal.takeover.release(key, terminal.running);
    });
    const exit = () => {
      if (exitSent) return;
      exitSent = true;
      json({ type: "exit", exitStatus: terminal.exitStatus });
      ws.close(1000, "the program exited");
    };
    /** Set while a start from a snapshot is under way (one at a time: one watch at a time). */
    let beginning = false;
    /**
     * Starts (again) from a snapshot: the history asked for (at most the bound, with the screen),
     * the screen, then every event after it.
     */
    const begin = (hello: Record<string, unknown>, historyBytes = 0): Promise<void> => {
      beginning = true;
      return terminal.watch(onEvent, historyBytes).then((started) => {
        beginning = false;
        watch = started;
        if (closed) return started.stop();
        const kept = started.history;
        json({
          ...hello,
          cols: started.cols,
          rows: started.rows,
          ...(hello.type === "hello" ? { history: kept.length } : {}),
        });
        for (let at = 0; at < kept.length; at += HISTORY_FRAME_BYTES) {
          send(kept.subarray(at, at + HISTORY_FRAME_BYTES));
        }
        send(started.snapshot);
        started.start();
        // Output kept after the screen may have put the client behind again: its next resync
        // brings the end, then the exit.
        if (!terminal.running && catchingUp === undefined) exit();
      }, (error) => {
        beginning = false;
        log.error("cannot watch a terminal", { terminalId: terminal.id, error });
        ws.close(1011, "the terminal cannot be watched");
      });
    };
    /**
     * Sends what happened, or, while more than the bound waits for the client, nothing until it
     * has caught up: then a resync brings the screen, its size and who holds it. (Another
     * viewer's takeovers and resizes, sent to one that read nothing, grew the server to 1 GB.)
     */
    const sendOrCatchUp = (data: string | Uint8Array) => {
      if (catchingUp !== undefined) return;
      if (!this.#behind(ws, data)) return send(data);
      // What fits goes (cut anywhere: the screen sent after catching up redraws it all).
      const room = this.options.maxBufferedBytes - ws.bufferedAmount;
      if (typeof data !== "string" && room > 0) send(data.subarray(0, room));
      catchingUp = setInterval(() => {
        if (closed || ws.bufferedAmount > this.options.maxBufferedBytes / 4) return;
        clearInterval(catchingUp);
        catchingUp = undefined;
        watch?.stop();
        begin({ type: "resync", holder: holderName() });
      }, CATCH_UP_CHECK_MS);
    };
    const onEvent = (event: TerminalEvent) => {
      if (event.type === "resize") {
        sendOrCatchUp(JSON.stringify({ type: "resize", cols: event.cols, rows: event.rows }));
      } // A client still catching up gets the final screen first: its resync says exit after it.
      else if (event.type === "exit") catchingUp === undefined && exit();
      // A state change carries no bytes; the page's list shows the state.
      else if (event.type === "output") sendOrCatchUp(event.data);
    };
    ws.on("message", (data: RawData, binary: boolean) => {
      if (this.#deaf(ws)) return;
      if (binary) return input.push(key, rawBytes(data));
      let message: { type?: unknown; cols?: unknown; rows?: unknown; data?: unknown };
      try {
        message = JSON.parse(rawBytes(data).length ? new TextDecoder().decode(rawBytes(data)) : "");
      } catch {
        return reply({ type: "error", message: "a text frame must be a JSON message" });
      }
      switch (message?.type) {
        case "takeover":
          if (!terminal.running) return reply({ type: "error", message: "the program has exited" });
          return terminal.takeover.take(key, via);
        case "handback":
          return terminal.takeover.release(key);
        case "resync":
          // Asked while one is under way (the server's own, or an earlier request): that one
          // brings the screen as it is. Asked while behind: the catching up brings one.
          if (beginning || catchingUp !== undefined) return;
          if (ws.bufferedAmount > this.options.maxBufferedBytes) return;
          watch?.stop();
          return void begin({ type: "resync", holder: holderName() });
        case "resize": {
          const { cols, rows } = message;
          if (!isSize(cols) || !isSize(rows)) {
            return reply({ type: "error", message: "resize needs cols and rows, integers 1-1000" });
          }
          if (!terminal.running) return;
          if (!terminal.takeover.resize(key, cols, rows)) {
            return reply({
              type: "error",
              message: "only the viewer that has taken over may resize (send takeover first)",
            });
          }
          return;
        }
        case "input":
          if (typeof message.data !== "string") {
            return reply({ type: "error", message: "input needs data, a string" });
          }
          return input.push(key, encoder.encode(message.data));
        default:
          return reply({
            type: "error",
            message:
              "unknown message type: takeover, handback, resize, resync and input are understood",
          });
      }
    });
    begin({
      type: "hello",
      kind: "terminal",
      id: terminal.id,
      command: terminal.command,
      running: terminal.running,
      holder: holderName(),
    }, history ? this.options.maxBufferedBytes : 0);
  }

  /** A one-shot command: its kept output, then what arrives (read-only). */
  #serveCommand(ws: WebSocket, command: Command): void {
    const send = (data: string | Uint8Array) => {
      if (ws.readyState !== OPEN) return;
      // No screen to redraw after a gap: a client that falls behind is let go.
      if (this.#behind(ws, data)) return ws.terminate();
      this.#send(ws, data);
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
      if (this.#deaf(ws)) return;
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
}

/**
 * Typing from one stream client, in order, never more than {@link INPUT_HIGH_WATER} waiting:
 * beyond that the client is not read until the terminal has taken what came before.
 */
class InputQueue {
  #chain: Promise<void> = Promise.resolve();
  #waiting = 0;
  #decoder = new TextDecoder();

  constructor(
    private readonly ws: WebSocket,
    private readonly terminal: Terminal,
    private readonly via: FrontEnd,
    private readonly refuse: (message: string) => void,
    private readonly liveness: Liveness,
  ) {
    // Each piece of typing is taken, or fails, within the write timeout.
    liveness.stallFloorMs = 2 * terminal.writeTimeoutMs;
  }

  push(key: object, bytes: Uint8Array): void {
    if (!this.terminal.takeover.holds(key)) {
      return this.refuse('read-only: take over first ({"type":"takeover"}) to type');
    }
    // A character may be split between frames: the decoder keeps its start for the next one.
    const text = this.#decoder.decode(bytes, { stream: true });
    if (text === "") return;
    this.#waiting += bytes.length;
    if (this.#waiting > INPUT_HIGH_WATER && !this.ws.isPaused) {
      this.ws.pause();
      this.liveness.stalledSince = performance.now();
    }
    this.#chain = this.#chain.then(async () => {
      let taken = false;
      try {
        if (this.terminal.takeover.holds(key)) await this.terminal.write(text, this.via);
        taken = true;
      } catch (error) {
        this.refuse((error as Error).message);
      } finally {
        this.#waiting -= bytes.length;
        if (this.#waiting <= INPUT_HIGH_WATER && this.ws.isPaused) this.ws.resume();
        // Taken: the program reads, slowly perhaps (a write that timed out is no sign of that).
        if (!this.ws.isPaused) this.liveness.stalledSince = undefined;
        else if (taken) this.liveness.stalledSince = performance.now();
      }
    });
  }
}

function isSize(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 1000;
}

/** The bytes of a received frame. */
function rawBytes(data: RawData): Uint8Array {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (Array.isArray(data)) return concatBytes(data);
  return data as Uint8Array;
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
