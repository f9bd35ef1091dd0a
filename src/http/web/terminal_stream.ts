/**
 * A terminal's stream to one client (the protocol is stream.ts's module documentation): a
 * snapshot to start from, then every byte of output; a client too far behind misses output
 * until it has caught up, then starts again from a snapshot; its messages take over, hand
 * back, resize, ask for a resync and type.
 *
 * @module
 */
// @ts-types="npm:@types/ws@8.18.1"
import type { RawData, WebSocket } from "ws";
import {
  type FrontEnd,
  type Terminal,
  type TerminalEvent,
  utf8Length,
  type Watch,
} from "../../engine/mod.ts";
import { log } from "../../log.ts";
import { type Liveness, rawBytes, type StreamClient } from "./stream_client.ts";

/** Input waiting for the terminal beyond this pauses reading from the client. */
const INPUT_HIGH_WATER = 64 * 1024;
/** The history a terminal's stream is sent before the screen is sent in frames of this size. */
const HISTORY_FRAME_BYTES = 64 * 1024;
/** How often a client that fell behind is looked at to see whether it has caught up. */
const CATCH_UP_CHECK_MS = 50;

/** A client's text message, as parsed (each field checked where it is used). */
interface ClientMessage {
  type?: unknown;
  cols?: unknown;
  rows?: unknown;
  data?: unknown;
}

/** One client's stream of one terminal. */
export class TerminalStream {
  /** Who this client is to the terminal's takeover. */
  readonly #key = {};
  readonly #input: InputQueue;
  readonly #stopControl: () => void;
  #watch: Watch | undefined;
  #closed = false;
  #exitSent = false;
  /** Set while the client is too far behind: output is not sent until it catches up. */
  #catchingUp: ReturnType<typeof setInterval> | undefined;
  /** Set while a start from a snapshot is under way (one at a time: one watch at a time). */
  #beginning = false;

  constructor(
    private readonly client: StreamClient,
    private readonly terminal: Terminal,
    private readonly via: FrontEnd,
  ) {
    this.#stopControl = terminal.takeover.changes.add(() =>
      this.#sendOrCatchUp(JSON.stringify({ type: "control", holder: this.#holder() }))
    );
    this.#input = new InputQueue(
      client.ws,
      terminal,
      via,
      (message) => this.#reply({ type: "error", message }),
      client.liveness,
    );
    const ws = client.ws;
    ws.once("close", () => {
      this.#closed = true;
      clearInterval(this.#catchingUp);
      this.#watch?.stop();
      this.#stopControl();
      terminal.takeover.release(this.#key, terminal.running);
    });
    ws.on("message", (data: RawData, binary: boolean) => this.#onMessage(data, binary));
  }

  /** Says hello and starts from a snapshot, with `historyBytes` of the output kept before it. */
  start(historyBytes: number): void {
    const terminal = this.terminal;
    this.#begin({
      type: "hello",
      kind: "terminal",
      id: terminal.id,
      command: terminal.command,
      running: terminal.running,
      holder: this.#holder(),
    }, historyBytes);
  }

  #json(message: Record<string, unknown>): void {
    this.client.send(JSON.stringify(message));
  }

  /** Answers a message: not while more than the bound waits (it is read when caught up). */
  #reply(message: Record<string, unknown>): void {
    if (this.client.ws.bufferedAmount <= this.client.maxBufferedBytes) this.#json(message);
  }

  #holder(): "you" | "other" | null {
    const holder = this.terminal.takeover.holder;
    return holder ? holder.key === this.#key ? "you" : "other" : null;
  }

  #exit(): void {
    if (this.#exitSent) return;
    this.#exitSent = true;
    this.#json({ type: "exit", exitStatus: this.terminal.exitStatus });
    this.client.ws.close(1000, "the program exited");
  }

  /**
   * Starts (again) from a snapshot: the history asked for (at most the bound, with the screen),
   * the screen, then every event after it.
   */
  #begin(hello: Record<string, unknown>, historyBytes = 0): Promise<void> {
    this.#beginning = true;
    const onEvent = (event: TerminalEvent) => this.#onEvent(event);
    return this.terminal.watch(onEvent, historyBytes).then((started) => {
      this.#beginning = false;
      this.#watch = started;
      if (this.#closed) return started.stop();
      const kept = started.history;
      this.#json({
        ...hello,
        cols: started.cols,
        rows: started.rows,
        ...(hello.type === "hello" ? { history: kept.length } : {}),
      });
      for (let at = 0; at < kept.length; at += HISTORY_FRAME_BYTES) {
        this.client.send(kept.subarray(at, at + HISTORY_FRAME_BYTES));
      }
      this.client.send(started.snapshot);
      started.start();
      // Output kept after the screen may have put the client behind again: its next resync
      // brings the end, then the exit.
      if (!this.terminal.running && this.#catchingUp === undefined) this.#exit();
    }, (error) => {
      this.#beginning = false;
      log.error("cannot watch a terminal", { terminalId: this.terminal.id, error });
      this.client.ws.close(1011, "the terminal cannot be watched");
    });
  }

  /**
   * Sends what happened, or, while more than the bound waits for the client, nothing until it
   * has caught up: then a resync brings the screen, its size and who holds it. (Another
   * viewer's takeovers and resizes, sent to one that read nothing, grew the server to 1 GB.)
   */
  #sendOrCatchUp(data: string | Uint8Array): void {
    if (this.#catchingUp !== undefined) return;
    const client = this.client;
    if (!client.behind(data)) return client.send(data);
    // What fits goes (cut anywhere: the screen sent after catching up redraws it all).
    const room = client.maxBufferedBytes - client.ws.bufferedAmount;
    if (typeof data !== "string" && room > 0) client.send(data.subarray(0, room));
    this.#catchingUp = setInterval(() => {
      if (this.#closed || client.ws.bufferedAmount > client.maxBufferedBytes / 4) return;
      clearInterval(this.#catchingUp);
      this.#catchingUp = undefined;
      this.#watch?.stop();
      this.#begin({ type: "resync", holder: this.#holder() });
    }, CATCH_UP_CHECK_MS);
  }

  #onEvent(event: TerminalEvent): void {
    if (event.type === "resize") {
      this.#sendOrCatchUp(JSON.stringify({ type: "resize", cols: event.cols, rows: event.rows }));
    } // A client still catching up gets the final screen first: its resync says exit after it.
    else if (event.type === "exit") this.#catchingUp === undefined && this.#exit();
    // A state change carries no bytes; the page's list shows the state.
    else if (event.type === "output") this.#sendOrCatchUp(event.data);
  }

  #onMessage(data: RawData, binary: boolean): void {
    if (this.client.deaf()) return;
    if (binary) return this.#input.pushBytes(this.#key, rawBytes(data));
    let message: ClientMessage;
    try {
      message = JSON.parse(rawBytes(data).length ? new TextDecoder().decode(rawBytes(data)) : "");
    } catch {
      return this.#reply({ type: "error", message: "a text frame must be a JSON message" });
    }
    const terminal = this.terminal;
    switch (message?.type) {
      case "takeover":
        if (!terminal.running) {
          return this.#reply({ type: "error", message: "the program has exited" });
        }
        return terminal.takeover.take(this.#key, this.via);
      case "handback":
        return terminal.takeover.release(this.#key);
      case "resync":
        // Asked while one is under way (the server's own, or an earlier request): that one
        // brings the screen as it is. Asked while behind: the catching up brings one.
        if (this.#beginning || this.#catchingUp !== undefined) return;
        if (this.client.ws.bufferedAmount > this.client.maxBufferedBytes) return;
        this.#watch?.stop();
        return void this.#begin({ type: "resync", holder: this.#holder() });
      case "resize":
        return this.#resize(message);
      case "input":
        if (typeof message.data !== "string") {
          return this.#reply({ type: "error", message: "input needs data, a string" });
        }
        return this.#input.pushText(this.#key, message.data);
      default:
        return this.#reply({
          type: "error",
          message:
            "unknown message type: takeover, handback, resize, resync and input are understood",
        });
    }
  }

  #resize({ cols, rows }: ClientMessage): void {
    if (!isSize(cols) || !isSize(rows)) {
      return this.#reply({ type: "error", message: "resize needs cols and rows, integers 1-1000" });
    }
    if (!this.terminal.running) return;
    if (!this.terminal.takeover.resize(this.#key, cols, rows)) {
      this.#reply({
        type: "error",
        message: "only the viewer that has taken over may resize (send takeover first)",
      });
    }
  }
}

/**
 * Typing from one stream client, in order, never more than {@link INPUT_HIGH_WATER} waiting:
 * beyond that the client is not read until the terminal has taken what came before.
 */
class InputQueue {
  #chain: Promise<void> = Promise.resolve();
  #waiting = 0;
  #decoder = new TextDecoder("utf-8", { fatal: true });

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

  /** A binary frame's typing: UTF-8, a character perhaps split between frames. */
  pushBytes(key: object, bytes: Uint8Array): void {
    if (!this.#holds(key)) return;
    let text: string;
    try {
      text = this.#decoder.decode(bytes, { stream: true });
    } catch {
      // Bytes that are no UTF-8 would reach the program as U+FFFD: refused, as every input is.
      this.#decoder = new TextDecoder("utf-8", { fatal: true });
      return this.refuse("a binary frame must be UTF-8 text: this one is not; nothing was sent");
    }
    if (text !== "") this.#push(key, text, bytes.length);
  }

  /** An input message's typing (the engine refuses text that is no text: a lone surrogate). */
  pushText(key: object, text: string): void {
    if (this.#holds(key) && text !== "") this.#push(key, text, utf8Length(text));
  }

  #holds(key: object): boolean {
    if (this.terminal.takeover.holds(key)) return true;
    this.refuse('read-only: take over first ({"type":"takeover"}) to type');
    return false;
  }

  #push(key: object, text: string, size: number): void {
    this.#waiting += size;
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
        this.#waiting -= size;
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
