/**
 * The WebSocket streams, recordings and web logins, against the real server over HTTP with
 * a plain client: bytes arrive live with the token; no token, a wrong one and a foreign
 * Origin are refused; a late joiner gets the screen as it is; only a client that took over
 * types or resizes, audited, and the size comes back; a slow reader is cut off while others
 * go on; streams are capped; recordings are asciicast v2 and bounded; the login link works
 * once and a session needs its cookie, its key and this server's own page.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "../helpers/mcp.ts";
import { type HttpServer, request, withHttp } from "../helpers/http.ts";
import { concat, eventually, staysFalse, tempDir, WAIT_FLOOR_MS } from "../helpers/process.ts";
import { openStream, Refused, type StreamClient } from "../helpers/stream.ts";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { Screen } from "../../src/engine/output/screen.ts";

/** A quiet shell (no rc files: see NOTES §9) with a plain prompt. */
async function shell(server: HttpServer, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await request(server, "POST", "/api/terminals", {
    body: { command: "bash", args: ["--norc", "--noprofile"], env: { PS1: "$ " }, ...extra },
  });
  assertEquals(created.status, 201, JSON.stringify(created.json));
  return created.json.data.terminalId;
}

async function type(server: HttpServer, id: string, input: string): Promise<void> {
  const sent = await request(server, "POST", `/api/terminals/${id}/input`, { body: { input } });
  assertEquals(sent.status, 200, JSON.stringify(sent.json));
}

/**
 * A raw stream client: the handshake and the hello (its watch has begun: what the terminal
 * prints from then on is sent to it), then it reads nothing until told to.
 */
async function stalledClient(server: HttpServer, path: string): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(server.url);
  const stalled = await Deno.connect({ hostname, port: Number(port) });
  await stalled.write(new TextEncoder().encode(
    `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\n` +
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
      `Sec-WebSocket-Version: 13\r\nAuthorization: Bearer ${server.token}\r\n\r\n`,
  ));
  const head = new Uint8Array(256);
  let received = "";
  while (!received.includes('"type":"hello"')) {
    const n = await stalled.read(head);
    if (n === null) break;
    received += new TextDecoder().decode(head.subarray(0, n));
  }
  match(received, /^HTTP\/1.1 101/);
  return stalled;
}

/**
 * Reads a stalled client's frames until 2 s pass without any (or it closes): how many bytes,
 * whether a resync came, the flood's end ("flood-25-done") and an exit message.
 */
/** What a stalled client has read so far. */
interface StalledRead {
  total: number;
  resynced: boolean;
  ended: boolean;
  exited: boolean;
}

/**
 * Reads a stalled client's stream until `until` holds for what it has read, the connection
 * ends, or WAIT_FLOOR_MS passes; with `quietMs`, also once nothing came for that long (only for
 * what has no last word: a stop there can only make the test's bound easier to meet). Never
 * "until quiet" where the test waits for something: a loaded machine pauses mid-stream too.
 */
async function readStalled(
  stalled: Deno.TcpConn,
  { until = () => false, quietMs }: { until?: (read: StalledRead) => boolean; quietMs?: number },
): Promise<StalledRead> {
  const read: StalledRead = { total: 0, resynced: false, ended: false, exited: false };
  let text = "";
  const sink = new Uint8Array(1 << 16);
  const decoder = new TextDecoder();
  const timers: ReturnType<typeof setTimeout>[] = [];
  const after = (ms: number) =>
    new Promise<"stop">((resolve) => timers.push(setTimeout(resolve, ms, "stop")));
  const bound = after(WAIT_FLOOR_MS);
  while (!until(read)) {
    const got = await Promise.race([
      stalled.read(sink),
      bound,
      ...(quietMs === undefined ? [] : [after(quietMs)]),
    ]);
    if (got === "stop" || got === null) break;
    read.total += got;
    // Looked for in what was read with the end of what came before (a read may hold a resync,
    // a screen and more: kept to its last 4 KiB, it had lost the resync).
    text += decoder.decode(sink.subarray(0, got), { stream: true });
    read.resynced ||= text.includes('"type":"resync"');
    read.ended ||= text.includes("flood-25-done");
    read.exited ||= text.includes('"type":"exit"');
    text = text.slice(-4096);
  }
  for (const timer of timers) clearTimeout(timer);
  return read;
}

async function outputOf(server: HttpServer, id: string): Promise<string> {
  return (await request(server, "GET", `/api/terminals/${id}/output?raw=true`)).json.data.output;
}

async function refusedWith(promise: Promise<unknown>): Promise<Refused> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Refused) return error;
    throw error;
  }
  throw new Error("the handshake was accepted");
}

withHttp(
  "stream: hello, the current screen, then every byte live, with the token",
  async (server) => {
    const id = await shell(server, { cols: 90, rows: 20 });
    await type(server, id, "echo before-$((6*7))");
    let output = "";
    await eventually(() => output.includes("before-42"), 10_000, async () => {
      output = await outputOf(server, id);
    });
    const stream = await openStream(server, `/api/terminals/${id}/stream`);
    try {
      await stream.until(() => stream.frames.length >= 1, "the screen");
      const hello = stream.messages[0];
      assertEquals(
        [hello.type, hello.kind, hello.id, hello.cols, hello.rows, hello.running, hello.holder],
        ["hello", "terminal", id, 90, 20, true, null],
      );
      ok(stream.output().includes("before-42"), "the screen holds what was printed before");
      await type(server, id, "for i in 1 2 3; do echo live-$i-$((i*11)); done");
      await stream.until(() => stream.output().includes("live-3-33"), "live output");
      // Raw bytes: the terminal's own line endings and escape sequences, as they came.
      ok(stream.output().includes("live-1-11\r\n"));
      await type(server, id, "exit 3");
      await stream.until(() => stream.messages.some((m) => m.type === "exit"), "the exit");
      assertEquals(stream.messages.find((m) => m.type === "exit").exitStatus, {
        exitCode: 3,
        signal: null,
      });
      assertEquals(await stream.closed, 1000);
    } finally {
      stream.close();
    }
  },
);

withHttp(
  "stream: a client that asks gets the screen afresh, and live output once, however often it asks",
  async (server) => {
    const id = await shell(server, { cols: 90, rows: 20 });
    await type(server, id, "echo before-$((6*7))");
    const stream = await openStream(server, `/api/terminals/${id}/stream`);
    // Frames and messages in the order they came: output is counted after the last resync.
    const log: (string | { type: string })[] = [];
    stream.ws.on("message", (data: Uint8Array, binary: boolean) => {
      log.push(binary ? new TextDecoder().decode(data) : JSON.parse(String(data)));
    });
    try {
      await stream.until(() => stream.output().includes("before-42"), "the screen");
      // Asked again and again, before the first is answered: one watch at a time all the same.
      for (let i = 0; i < 5; i++) stream.ws.send(JSON.stringify({ type: "resync" }));
      const resync = stream.messages.length;
      await stream.until(() => stream.messages.length > resync, "a resync");
      assertEquals(stream.messages[resync], { type: "resync", holder: null, cols: 90, rows: 20 });
      await type(server, id, "echo live-$((7*11))-once");
      await stream.until(() => stream.output().includes("live-77-once"), "live output");
      await type(server, id, "echo end-$((8*11))");
      await stream.until(() => stream.output().includes("end-88"), "the end marker");
      const last = log.findLastIndex((entry) => typeof entry !== "string");
      const after = log.slice(last + 1).filter((entry) => typeof entry === "string").join("");
      assertEquals(after.split("live-77-once\r\n").length - 1, 1, after);
    } finally {
      stream.close();
    }
  },
);

withHttp(
  "stream: no token, a wrong token, a foreign Origin, another port's page are refused",
  async (server) => {
    const id = await shell(server);
    const path = `/api/terminals/${id}/stream`;
    assertEquals((await refusedWith(openStream(server, path, { token: null }))).status, 401);
    assertEquals(
      (await refusedWith(openStream(server, path, { token: "x".repeat(40) }))).status,
      401,
    );
    const foreign = await refusedWith(openStream(server, path, { origin: "https://evil.example" }));
    assertEquals(foreign.status, 403);
    match(foreign.body, /Origin/);
    // A token in the query string is not a credential.
    const query = await refusedWith(
      openStream(server, `${path}?token=${server.token}`, { token: null }),
    );
    assertEquals(query.status, 401);
    // A page on another port of this machine, with a browser's cookie but without the key.
    const login = await webLogin(server);
    const otherPort = await refusedWith(openStream(server, path, {
      token: null,
      origin: "http://127.0.0.1:1",
      headers: { cookie: login.cookie },
      protocols: ["winterm", `winterm.key.${login.key}`],
    }));
    assertEquals(otherPort.status, 403);
    const noKey = await refusedWith(openStream(server, path, {
      token: null,
      origin: server.url,
      headers: { cookie: login.cookie },
      protocols: ["winterm"],
    }));
    assertEquals(noKey.status, 401);
    assertEquals(
      (await refusedWith(openStream(server, "/api/terminals/term_nope/stream"))).status,
      404,
    );
    // Not a WebSocket: told so. Nothing else upgrades (an MCP event stream would never end).
    assertEquals((await request(server, "GET", path)).status, 426);
    for (const other of ["/mcp", "/api/terminals", `/api/terminals/${id}/output`]) {
      assertEquals((await refusedWith(openStream(server, other))).status, 400, other);
    }
    // The page's own session is accepted (cookie, key as subprotocol, this server's Origin).
    const page = await openStream(server, path, {
      token: null,
      origin: server.url,
      headers: { cookie: login.cookie },
      protocols: ["winterm", `winterm.key.${login.key}`],
    });
    assertEquals(page.ws.protocol, "winterm");
    page.close();
  },
);

/** The audit log's folder; removed when this file's tests end, passed or failed. */
const AUDIT_DIR = tempDir("winterm-audit-");
globalThis.addEventListener("unload", () => Deno.removeSync(AUDIT_DIR, { recursive: true }));
const AUDIT = `${AUDIT_DIR}/audit.jsonl`;

withHttp(
  "stream: read-only until take-over; input then reaches the shell (audited); resize only while held, restored after",
  async (server) => {
    const id = await shell(server, { cols: 80, rows: 24 });
    const writer = await openStream(server, `/api/terminals/${id}/stream`);
    const watcher = await openStream(server, `/api/terminals/${id}/stream`);
    try {
      await writer.until(() => writer.frames.length >= 1, "the screen");
      writer.ws.send(new TextEncoder().encode("echo refused-$((2*2))\r"));
      writer.send({ type: "resize", cols: 100, rows: 30 });
      await writer.until(
        () => writer.messages.filter((m) => m.type === "error").length >= 2,
        "two refusals",
      );
      match(writer.messages.find((m) => m.type === "error").message, /take over/);
      ok(!(await outputOf(server, id)).includes("refused-4"));

      writer.send({ type: "takeover" });
      await writer.until(() => writer.messages.some((m) => m.holder === "you"), "control");
      await watcher.until(() => watcher.messages.some((m) => m.holder === "other"), "told");
      // Binary frames, split inside a character, and text input messages.
      const bytes = new TextEncoder().encode("echo typed-€-$((3*3))");
      writer.ws.send(bytes.subarray(0, 14));
      writer.ws.send(bytes.subarray(14));
      writer.send({ type: "input", data: "\r" });
      await watcher.until(
        () => watcher.output().includes("typed-€-9"),
        "the typed command's output",
      );
      // Text that is no text is refused, not typed as U+FFFD: a lone surrogate, bytes no UTF-8.
      const errors = () => writer.messages.filter((m) => m.type === "error").length;
      const before = errors();
      writer.send({ type: "input", data: "echo bad-\ud800-one\r" });
      writer.ws.send(Uint8Array.of(0x65, 0x63, 0x68, 0x6f, 0x20, 0xff, 0x0d));
      await writer.until(() => errors() >= before + 2, "two refusals of input");
      const refusals = writer.messages.filter((m) => m.type === "error").slice(-2)
        .map((m) => m.message).sort().join("\n");
      match(refusals, /must be UTF-8[^]*lone surrogate/);
      ok(!(await outputOf(server, id)).includes("bad-"));
      writer.send({ type: "resize", cols: 100, rows: 30 });
      await watcher.until(
        () => watcher.messages.some((m) => m.type === "resize" && m.cols === 100),
        "the resize",
      );
      // The watcher cannot take the size, or type.
      watcher.send({ type: "resize", cols: 20, rows: 5 });
      await watcher.until(() => watcher.messages.some((m) => m.type === "error"), "a refusal");
      writer.send({ type: "handback" });
      await watcher.until(
        () => watcher.messages.some((m) => m.type === "resize" && m.cols === 80 && m.rows === 24),
        "the size from before",
      );
      const info = (await request(server, "GET", "/api/terminals")).json.data.terminals[0];
      assertEquals(info.id, id);
    } finally {
      writer.close();
      watcher.close();
    }
    const audit = (await Deno.readTextFile(AUDIT)).trim().split("\n").map((line) =>
      JSON.parse(line)
    );
    const mine = audit.filter((record) => record.id === id);
    assertEquals(
      mine.filter((r) => r.event === "takeover" || r.event === "handback").map((r) => [
        r.event,
        r.via,
      ]),
      [["takeover", "stream"], ["handback", "stream"]],
    );
    ok(mine.some((r) => r.event === "input" && r.via === "stream"));
  },
  { env: { WINTERM_AUDIT: AUDIT } },
);

withHttp("stream: a late joiner sees a full-screen program as it is", async (server) => {
  const id = await shell(server, { cols: 60, rows: 12 });
  await type(
    server,
    id,
    "printf '\\033[?1049h\\033[2J\\033[1;1Htop-left\\033[6;20H\\033[7mFULL SCREEN\\033[0m\\033[12;1H%s' bot''tom; sleep 60",
  );
  let raw = "";
  await eventually(
    () => raw.includes("bottom"),
    10_000,
    async () => raw = await outputOf(server, id),
  );
  const stream = await openStream(server, `/api/terminals/${id}/stream`);
  try {
    await stream.until(() => stream.frames.length >= 1, "the screen");
    // Drawn into a fresh terminal of the same size, the snapshot gives the same screen.
    const drawn = new OutputBuffer();
    const screen = new Screen(drawn, stream.messages[0].cols, stream.messages[0].rows);
    drawn.append(stream.frames[0]);
    const view = await screen.render();
    screen.dispose();
    ok(view.alternate, "on the alternate screen");
    const rows = view.text.split("\n");
    assertEquals(rows[0], "top-left");
    assertEquals(rows[5], " ".repeat(19) + "FULL SCREEN");
    assertEquals(rows[11], "bottom");
    ok(!stream.frames[0].includes(0x07), "no stray bell");
  } finally {
    stream.close();
  }
});

withHttp(
  "stream: ?history=1 sends the output kept before the screen, from a line start, within the bound",
  async (server) => {
    const id = await shell(server, { cols: 80, rows: 10 });
    // 200 KB of numbered lines, three times the bound.
    await type(server, id, "seq -f 'kept-line-%06g' 1 12000; echo seq-$((6*7))-done");
    // Until the screen shows the end: the stream's snapshot is taken where the screen's emulator
    // stands, which a busy machine leaves behind the output (the history then ended at line
    // 3,033, the rest coming after the screen, as it should; this test looks at the history).
    let screenText = "";
    ok(
      await eventually(() => screenText.includes("seq-42-done"), 30_000, async () => {
        screenText = (await request(server, "GET", `/api/terminals/${id}/output?mode=screen`))
          .json.data.output;
      }),
      `the screen never showed the end: ${screenText}`,
    );
    const stream = await openStream(server, `/api/terminals/${id}/stream?history=1`);
    try {
      const hello = () => stream.messages.find((m) => m.type === "hello");
      await stream.until(() => hello() !== undefined, "the hello");
      const history: number = hello().history;
      const total = () => stream.frames.reduce((sum, frame) => sum + frame.length, 0);
      await stream.until(() => total() > history, "the history and the screen");
      const all = concat(stream.frames);
      const kept = new TextDecoder().decode(all.subarray(0, history));
      // Whole lines, the newest ones, ending where the screen stands (the prompt after them).
      match(kept, /^kept-line-\d{6}\r\n/);
      ok(kept.includes("kept-line-012000\r\nseq-42-done\r\n"), kept.slice(-200));
      // Every line in order, none left out (the output as it was kept).
      const numbers = [...kept.matchAll(/kept-line-(\d{6})\r\n/g)].map((m) => Number(m[1]));
      assertEquals(numbers, numbers.map((_, i) => numbers[0] + i));
      // History and screen together within the bound (WINTERM_STREAM_MAX_BUFFERED_BYTES).
      const screen = stream.frames.at(-1)!;
      ok(history + screen.length <= 65536, `${history} + ${screen.length} bytes`);
      ok(history > 65536 - screen.length - 20, `only ${history} bytes of history`);
      // Drawn into a terminal of its size, history then screen: the screen as the server has
      // it, and the lines before it in the scrollback.
      const drawn = new OutputBuffer();
      const view = new Screen(drawn, hello().cols, hello().rows);
      drawn.append(all);
      const rows = (await view.render()).text;
      view.dispose();
      const served = (await request(server, "GET", `/api/terminals/${id}/output?mode=screen`))
        .json.data.output;
      assertEquals(rows, served);
    } finally {
      stream.close();
    }
    // Without it, the screen comes first, as it always did; a wrong value is refused.
    const plain = await openStream(server, `/api/terminals/${id}/stream`);
    try {
      await plain.until(() => plain.frames.length >= 1, "the screen");
      assertEquals(plain.messages[0].history, 0);
      ok(!new TextDecoder().decode(plain.frames[0]).includes("kept-line-000001"));
    } finally {
      plain.close();
    }
    const refused = await refusedWith(openStream(server, `/api/terminals/${id}/stream?history=2`));
    assertEquals(refused.status, 400);
    match(refused.body, /history must be 1/);
  },
  { env: { WINTERM_STREAM_MAX_BUFFERED_BYTES: "65536" } },
);

withHttp(
  "stream: the screen is drawn right over whatever the history left (modes, colours, the alternate screen)",
  async (server) => {
    const id = await shell(server, { cols: 40, rows: 8 });
    // A program that is still on its alternate screen, with a scroll region, origin mode,
    // colours, a mouse mode and insert mode on: the history leaves the viewer's terminal in that
    // state, where the snapshot's own sequences (made for a fresh terminal) would go astray.
    await type(
      server,
      id,
      "printf 'normal-text\\n\\033[?1049h\\033[H\\033[2J\\033[7;31mjunk-on-alt\\033[3;5r\\033[?6h" +
        "\\033[?1000h\\033[4h\\033[2;3Hin-region-%s' $((6*7)); sleep 60",
    );
    let raw = "";
    await eventually(() => raw.includes("in-region-42"), 10_000, async () => {
      raw = await outputOf(server, id);
    });
    const stream = await openStream(server, `/api/terminals/${id}/stream?history=1`);
    try {
      await stream.until(() => stream.messages.length > 0, "the hello");
      const { history, cols, rows } = stream.messages[0];
      await stream.until(
        () => stream.frames.reduce((sum, frame) => sum + frame.length, 0) > history,
        "the screen",
      );
      const served = (await request(server, "GET", `/api/terminals/${id}/output?mode=screen`))
        .json.data.output;
      // The whole stream drawn in one terminal, or the screen alone in a fresh one: the same.
      for (const bytes of [concat(stream.frames), stream.frames.at(-1)!]) {
        const drawn = new OutputBuffer();
        const view = new Screen(drawn, cols, rows);
        drawn.append(bytes);
        assertEquals((await view.render()).text, served);
        view.dispose();
      }
    } finally {
      stream.close();
    }
  },
);

withHttp(
  "stream: a client that stops reading gets no more than the bound queued; it catches up with a fresh screen",
  async (server) => {
    const id = await shell(server);
    const path = `/api/terminals/${id}/stream`;
    const stalled = await stalledClient(server, path);
    const reader = await openStream(server, path);
    const FLOOD = 12_000_000;
    try {
      await type(
        server,
        id,
        `head -c ${FLOOD} /dev/zero | tr '\\0' x; echo; echo flood-$((5*5))-done`,
      );
      // The reader sees the end: live, or in the screen it is sent after catching up.
      await reader.until(
        () => reader.output().includes("flood-25-done"),
        "the flood's end",
        120_000,
      );
      ok(
        await eventually(() => server.stderr().includes("reads too slowly"), 10_000),
        server.stderr(),
      );
      // What waited for it never went past the bound (it did by a frame: 4.4 MB over 4 MiB).
      for (const [, waiting] of server.stderr().matchAll(/reads too slowly.*?buffered=(\d+)/g)) {
        ok(Number(waiting) <= 131_072, `${waiting} bytes waited`);
      }
      // Behind, it asks for the screen (as the web page does): that is no reason to let it go.
      const resync = new TextEncoder().encode(JSON.stringify({ type: "resync" }));
      await stalled.write(new Uint8Array([0x81, 0x80 | resync.length, 0, 0, 0, 0, ...resync]));
      // Now the stalled client reads what there is: what the kernel held and at most the
      // bound, then a fresh screen; never the whole flood.
      const { total, resynced, ended } = await readStalled(stalled, {
        until: (read) => read.resynced && read.ended,
      });
      // Without the bound it would get all of it: the server would have queued it.
      ok(total < FLOOD / 2, `the stalled client got ${total} bytes`);
      ok(resynced && ended, "it caught up with a fresh screen, and saw the end");
    } finally {
      reader.close();
      stalled.close();
    }
  },
  { env: { WINTERM_STREAM_MAX_BUFFERED_BYTES: "131072" } },
);

withHttp(
  "stream: a client that sends without reading gets no answers queued beyond the bound",
  async (server) => {
    const id = await shell(server);
    const stalled = await stalledClient(server, `/api/terminals/${id}/stream`);
    // Text frames of one byte, masked with a zero key, that are no JSON: each would get an error
    // message back, which the client does not read (queued, they grew the server 25 MB a second).
    const junk = new Uint8Array(7 * 1000);
    for (let at = 0; at < junk.length; at += 7) junk.set([0x81, 0x81, 0, 0, 0, 0, 0x78], at);
    // Unless the server lets it go first for the pings it does not answer (a busy machine
    // sends the megabyte slower than a ping's deadline): that, too, ends what it queued.
    let letGo = false;
    try {
      for (let sent = 0; sent < 1_000_000; sent += 1000) await stalled.write(junk);
    } catch (error) {
      if (!(error instanceof Deno.errors.ConnectionReset)) throw error;
      letGo = true;
    }
    // Sent, then read: what the kernel held and the bound, not a million answers (70 MB).
    const { total } = letGo ? { total: 0 } : await readStalled(stalled, { quietMs: 2000 });
    ok(total < 20_000_000, `the client was sent ${total} bytes`);
    stalled.close();
    // The terminal is still there for others.
    const reader = await openStream(server, `/api/terminals/${id}/stream`);
    try {
      await reader.until(() => reader.messages.some((m) => m.type === "hello"), "the hello");
    } finally {
      reader.close();
    }
  },
  { env: { WINTERM_STREAM_MAX_BUFFERED_BYTES: "131072" } },
);

/**
 * Reads a raw stream client's frames `bytes` at a time, answering each ping with a pong as it
 * comes to it (a browser does the same, in order: behind what it has yet to read).
 */
class SlowReader {
  #pending: Uint8Array = new Uint8Array(0);
  constructor(readonly conn: Deno.TcpConn) {}

  /** Reads once (at most `bytes`), answers the pings read; false once the server closed. */
  async read(bytes: number): Promise<boolean> {
    const sink = new Uint8Array(bytes);
    const got = await this.conn.read(sink);
    if (got === null) return false;
    this.#pending = concat([this.#pending, sink.subarray(0, got)]);
    for (;;) {
      const frame = frameAt(this.#pending);
      if (!frame) return true;
      if (frame.opcode === 0x9) {
        // A pong, masked with a zero key, carrying the ping's payload.
        await this.conn.write(
          concat([new Uint8Array([0x8a, 0x80 | frame.payload.length, 0, 0, 0, 0]), frame.payload]),
        );
      }
      this.#pending = this.#pending.subarray(frame.end);
    }
  }
}

/** The server's (unmasked) frame at the start of `bytes`, if whole. */
function frameAt(
  bytes: Uint8Array,
): { opcode: number; payload: Uint8Array; end: number } | undefined {
  if (bytes.length < 2) return undefined;
  let length = bytes[1] & 0x7f, at = 2;
  if (length === 126) {
    if (bytes.length < 4) return undefined;
    length = (bytes[2] << 8) | bytes[3];
    at = 4;
  } else if (length === 127) {
    if (bytes.length < 10) return undefined;
    length = Number(new DataView(bytes.buffer, bytes.byteOffset + 2, 8).getBigUint64(0));
    at = 10;
  }
  if (bytes.length < at + length) return undefined;
  return { opcode: bytes[0] & 0x0f, payload: bytes.slice(at, at + length), end: at + length };
}

withHttp(
  "stream: a slow reader whose pongs wait behind its backlog stays; one that reads nothing goes",
  async (server) => {
    // Megabytes sent at once: most wait in the kernels' buffers, where the server sees neither
    // them nor the reading. The reader's pongs come only as it reads its way to each ping.
    const id = await shell(server);
    const slow = new SlowReader(await stalledClient(server, `/api/terminals/${id}/stream`));
    const dead = await stalledClient(server, `/api/terminals/${id}/stream`);
    try {
      await type(server, id, "head -c 2000000 /dev/zero | tr '\\0' x; echo");
      // Four ping intervals of reading 8 KiB every 50 ms (160 KB/s): far slower than it was
      // sent. (Intervals of 2 s: at a load of 25 on 2 cores this test's own reads stalled 2 s.)
      const until = Date.now() + 8000;
      while (Date.now() < until) {
        ok(await slow.read(8192), `the slow reader was let go: ${server.stderr().slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The one that reads nothing and answers no ping was let go meanwhile, or is soon: its
      // pong was due by the interval and the time to read, at 64 KiB/s, what it was sent first.
      ok(
        await eventually(() => server.stderr().includes("did not answer its ping in time"), 60_000),
        "a client that reads nothing and answers no ping was kept",
      );
      ok(await slow.read(8192), "the slow reader was let go");
    } finally {
      slow.conn.close();
      dead.close();
    }
  },
  {
    env: {
      WINTERM_STREAM_PING_SECONDS: "2",
      WINTERM_STREAM_MAX_BUFFERED_BYTES: "4194304",
      WINTERM_LOG_LEVEL: "debug",
    },
  },
);

withHttp(
  "stream: a client that reads nothing is let go while the terminal only trickles",
  async (server) => {
    // A few hundred bytes a second: the kernels take them for minutes, as if read.
    const id = await shell(server);
    const dead = await stalledClient(server, `/api/terminals/${id}/stream`);
    try {
      await type(server, id, "while :; do echo tick-$RANDOM; sleep 0.05; done");
      ok(
        await eventually(() => server.stderr().includes("did not answer its ping in time"), 30_000),
        "a client that reads nothing was kept while output trickled",
      );
    } finally {
      dead.close();
      await type(server, id, "\x03");
    }
  },
  { env: { WINTERM_STREAM_PING_SECONDS: "1", WINTERM_LOG_LEVEL: "debug" } },
);

withHttp(
  "stream: a client whose paste waits for a program that reads nothing is kept, and its paste arrives whole",
  async (server) => {
    // Over 64 KiB of typing waiting: the server stops reading the client, so the client's pongs
    // wait behind its paste. It was dropped after two ping intervals, a live browser tab.
    const dir = tempDir("winterm-paste-");
    const go = `${dir}/go`;
    const script = 'stty raw -echo; echo ready; while [ ! -e "$1" ]; do sleep 0.1; done; ' +
      "head -c 200000 | tr -d a | wc -c; head -c 1 | wc -c; echo got-all";
    const id = await shell(server, { command: "sh", args: ["-c", script, "sh", go] });
    const client = await openStream(server, `/api/terminals/${id}/stream`);
    try {
      await client.until(() => client.output().includes("ready"), "the program's start");
      client.send({ type: "takeover" });
      await client.until(
        () => client.messages.some((m) => m.type === "takeover" || m.holder !== undefined),
        "the takeover",
      );
      const chunk = new Uint8Array(1024).fill(0x61);
      for (let sent = 0; sent < 200_000; sent += 1024) client.ws.send(chunk, { binary: true });
      client.ws.send(new TextEncoder().encode("b"), { binary: true });
      // A window for the drop (pings every 2 s: it came after 6 s; the bound for a program
      // that takes nothing is 4 intervals): nothing announces that none came.
      let closed = false;
      client.closed.then(() => closed = true);
      ok(await staysFalse(() => closed, 7_000), "the client was dropped while its paste waited");
      Deno.writeTextFileSync(go, "");
      await client.until(
        () => /0\r?\n\s*1\r?\n[^]*got-all/.test(client.output()),
        "the paste",
        30_000,
      );
      ok(!closed);
    } finally {
      client.close();
      Deno.removeSync(dir, { recursive: true });
    }
  },
  { env: { WINTERM_STREAM_PING_SECONDS: "2", WINTERM_LOG_LEVEL: "debug" } },
);

withHttp(
  "stream: a client whose typing the program takes none of for 4 ping intervals is let go, and its slot frees",
  async (server) => {
    // Not read meanwhile, a dead client could not be told from a live one: it held its slot
    // (of WINTERM_STREAM_MAX_CONNECTIONS) for good.
    const id = await shell(server, { command: "sh", args: ["-c", "stty raw -echo; sleep 600"] });
    const path = `/api/terminals/${id}/stream`;
    const client = await openStream(server, path);
    try {
      await client.until(() => client.messages.some((m) => m.type === "hello"), "the hello");
      client.send({ type: "takeover" });
      const chunk = new Uint8Array(1024).fill(0x61);
      for (let sent = 0; sent < 200_000; sent += 1024) client.ws.send(chunk, { binary: true });
      const code = await Promise.race([
        client.closed,
        new Promise((resolve) => setTimeout(resolve, 30_000, "open")),
      ]);
      assertEquals(code, 4000);
      ok(
        server.stderr().includes("typing the program has not taken"),
        server.stderr().slice(-2000),
      );
      // Its slot (the only one) is free again.
      const next = await openStream(server, path);
      await next.until(() => next.messages.some((m) => m.type === "hello"), "a new stream's hello");
      next.close();
    } finally {
      client.close();
    }
  },
  {
    env: {
      WINTERM_STREAM_PING_SECONDS: "1",
      WINTERM_WRITE_TIMEOUT_MS: "2000",
      WINTERM_STREAM_MAX_CONNECTIONS: "1",
      WINTERM_LOG_LEVEL: "debug",
    },
  },
);

withHttp(
  "stream: another viewer's takeovers queue no more than the bound for one that reads nothing",
  async (server) => {
    // A program that prints nothing: all a viewer is sent is who holds the terminal.
    const id = await shell(server, { command: "sleep", args: ["600"] });
    const path = `/api/terminals/${id}/stream`;
    const stalled = await stalledClient(server, path);
    const spammer = await openStream(server, path);
    try {
      await spammer.until(() => spammer.messages.some((m) => m.type === "hello"), "the hello");
      // Each takeover and handback tells every viewer who holds the terminal now: 60,000 pairs
      // are 4 MB of messages for the viewer that reads nothing.
      for (let i = 0; i < 60_000; i++) {
        spammer.send({ type: "takeover" });
        spammer.send({ type: "handback" });
      }
      // The bound holds for it: it is sent nothing more until it catches up (then a resync).
      ok(
        await eventually(() => server.stderr().includes("reads too slowly"), 60_000),
        "the bound was never applied to the viewer that reads nothing",
      );
    } finally {
      spammer.close();
      stalled.close();
    }
  },
  { env: { WINTERM_STREAM_MAX_BUFFERED_BYTES: "65536" } },
);

withHttp(
  "stream: a client still catching up when the program exits gets the final screen, then exit",
  async (server) => {
    // The program waits for a line, floods, and exits while the client reads nothing: the exit
    // must not close the stream before the client has had the end (found by an attack helper:
    // it was told "exit" and never saw the last 14 MB).
    const FLOOD = 12_000_000;
    const id = await shell(server, {
      args: [
        "--norc",
        "--noprofile",
        "-c",
        `read go; head -c ${FLOOD} /dev/zero | tr '\\0' x; echo; echo flood-$((5*5))-done`,
      ],
    });
    const stalled = await stalledClient(server, `/api/terminals/${id}/stream`);
    try {
      await type(server, id, "go\n");
      let running = true;
      const status = async () => {
        const listed = await request(server, "GET", "/api/terminals");
        running = listed.json.data.terminals.some((terminal: { id: string; running: boolean }) =>
          terminal.id === id && terminal.running
        );
      };
      ok(await eventually(() => !running, 120_000, status), "the program exited");
      const { total, resynced, ended, exited } = await readStalled(stalled, {
        until: (read) => read.exited,
      });
      // It fell behind (unless the kernel's socket buffers took the whole flood): then it was
      // sent a fresh screen. Either way it saw the end, then the exit.
      ok(resynced || total > FLOOD, `${total} bytes, no resync`);
      ok(ended && exited, JSON.stringify({ total, resynced, ended, exited }));
    } finally {
      stalled.close();
    }
  },
  { env: { WINTERM_STREAM_MAX_BUFFERED_BYTES: "131072" } },
);

withHttp("stream: at most WINTERM_STREAM_MAX_CONNECTIONS at once (503 beyond)", async (server) => {
  const id = await shell(server);
  const path = `/api/terminals/${id}/stream`;
  const open = [await openStream(server, path), await openStream(server, path)];
  const refused = await refusedWith(openStream(server, path));
  assertEquals(refused.status, 503);
  match(refused.body, /WINTERM_STREAM_MAX_CONNECTIONS/);
  open[0].close();
  await open[0].closed;
  // The server notices the close a moment later.
  let again: StreamClient | undefined;
  ok(
    await eventually(() => again !== undefined, 5000, async () => {
      again = await openStream(server, path).catch(() => undefined);
    }),
  );
  again!.close();
  open[1].close();
}, { env: { WINTERM_STREAM_MAX_CONNECTIONS: "2" } });

withHttp("recording: asciicast v2 of what the terminal printed and its resizes", async (server) => {
  const id = await shell(server, { cols: 70, rows: 15 });
  await type(server, id, "printf '中文%s\\n' -$((8*8)); echo rec-$((8*8))");
  let raw = "";
  // What only the output holds (the echoed command line has the arithmetic, not its result).
  await eventually(
    () => raw.includes("中文-64") && raw.includes("rec-64"),
    10_000,
    async () => raw = await outputOf(server, id),
  );
  const stream = await openStream(server, `/api/terminals/${id}/stream`);
  // Its watch has begun (a resize before it would come as the hello's size, not as a message).
  await stream.until(() => stream.messages.some((m) => m.type === "hello"), "the hello");
  stream.send({ type: "takeover" });
  await stream.until(() => stream.messages.some((m) => m.holder === "you"), "control");
  stream.send({ type: "resize", cols: 100, rows: 40 });
  await stream.until(() => stream.messages.some((m) => m.type === "resize"), "the resize");
  stream.close();
  const response = await fetch(`${server.url}/api/terminals/${id}/recording`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  assertEquals(response.status, 200);
  match(response.headers.get("content-type")!, /^application\/x-asciicast/);
  const [first, ...events] = (await response.text()).trimEnd().split("\n").map((line) =>
    JSON.parse(line)
  );
  assertEquals([first.version, first.width, first.height], [2, 70, 15]);
  match(first.command, /bash/);
  const output = events.filter((e) => e[1] === "o").map((e) => e[2]).join("");
  ok(output.includes("rec-64") && output.includes("中文-64"));
  ok(events.some((e) => e[1] === "r" && e[2] === "100x40"));
  ok(events.every((e, i) => i === 0 || e[0] >= events[i - 1][0]), "times in order");
  // Anonymous: nothing.
  const anonymous = await fetch(`${server.url}/api/terminals/${id}/recording`);
  assertEquals(anonymous.status, 401);
  await anonymous.body?.cancel();
});

withHttp("recording: stops at its bound with a marker, the live output goes on", async (server) => {
  const id = await shell(server);
  await type(server, id, "head -c 20000 /dev/zero | tr '\\0' y; echo; echo after-$((9*9))");
  let raw = "";
  await eventually(
    () => raw.includes("after-81"),
    10_000,
    async () => raw = await outputOf(server, id),
  );
  const text = await (await fetch(`${server.url}/api/terminals/${id}/recording`, {
    headers: { authorization: `Bearer ${server.token}` },
  })).text();
  const events = text.trimEnd().split("\n").slice(1).map((line) => JSON.parse(line));
  const last = events[events.length - 1];
  assertEquals(last[1], "m");
  match(last[2], /WINTERM_RECORDING_MAX_BYTES/);
  const recorded = events.filter((e) => e[1] === "o").reduce((n, e) => n + e[2].length, 0);
  ok(recorded <= 8192, `${recorded} characters recorded`);
}, { env: { WINTERM_RECORDING_MAX_BYTES: "8192" } });

withHttp("commands: listed with their command line, streamed read-only", async (server) => {
  const client = new Client({ name: "stream-tests", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  try {
    await client.callTool({
      name: "run_command",
      arguments: { command: "echo cmd-$((4*4)); sleep 1; echo cmd-end" },
    });
    const list = await request(server, "GET", "/api/commands");
    assertEquals(list.json.data.count, 1);
    const command = list.json.data.commands[0];
    match(command.command, /echo cmd-\$\(\(4\*4\)\)/);
    const stream = await openStream(server, `/api/commands/${command.token}/stream`);
    await stream.until(() => stream.output().includes("cmd-end"), "the command's output");
    ok(stream.output().includes("cmd-16"));
    await stream.until(() => stream.messages.some((m) => m.type === "exit"), "the end");
    assertEquals(stream.messages.find((m) => m.type === "exit").exitStatus.exitCode, 0);
  } finally {
    await client.close();
  }
});

/** Logs in like the page does, with the one-time link; returns the cookie and the key. */
async function webLogin(server: HttpServer): Promise<{ cookie: string; key: string }> {
  const code = new URL(server.loginLink).hash.match(/login=([\w-]+)/)![1];
  const response = await fetch(`${server.url}/api/web/login`, {
    method: "POST",
    headers: { origin: server.url, "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  assertEquals(response.status, 200);
  const key = (await response.json()).data.key;
  return { cookie: response.headers.get("set-cookie")!.split(";")[0], key };
}

withHttp(
  "web login: the link once, a session needs cookie, key and this server's page",
  async (server) => {
    // Anonymous: the page (no data in it), nothing from the API.
    const page = await fetch(`${server.url}/`);
    assertEquals(page.status, 200);
    const html = await page.text();
    ok(html.includes("<title>winterm</title>") && !html.includes(server.token));
    match(page.headers.get("content-security-policy")!, /frame-ancestors 'none'/);
    for (const path of ["/api/terminals", "/api/commands", "/api/web/session"]) {
      assertEquals((await request(server, "GET", path, { token: null })).status, 401, path);
    }
    // A login forced from another page is refused before the code is even looked at.
    const code = new URL(server.loginLink).hash.match(/login=([\w-]+)/)![1];
    const forced = await fetch(`${server.url}/api/web/login`, {
      method: "POST",
      headers: { origin: "http://127.0.0.1:1", "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    assertEquals(forced.status, 403);
    await forced.body?.cancel();
    const login = await webLogin(server);
    const again = await fetch(`${server.url}/api/web/login`, {
      method: "POST",
      headers: { origin: server.url, "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    assertEquals(again.status, 401, "the link works once");
    await again.body?.cancel();
    const asPage = (extra: Record<string, string> = {}) => ({
      token: null,
      headers: { cookie: login.cookie, "x-winterm-key": login.key, ...extra },
    });
    assertEquals((await request(server, "GET", "/api/terminals", asPage())).status, 200);
    const noKey = asPage();
    delete (noKey.headers as Record<string, string>)["x-winterm-key"];
    assertEquals((await request(server, "GET", "/api/terminals", noKey)).status, 401);
    // A state-changing request needs this server's Origin.
    const post = { body: { command: "true" }, ...asPage() };
    assertEquals((await request(server, "POST", "/api/terminals", post)).status, 403);
    assertEquals(
      (await request(server, "POST", "/api/terminals", {
        ...post,
        headers: { ...post.headers, origin: "http://localhost:9" },
      })).status,
      403,
    );
    // A fresh link, made with the token, logs another browser in; not with a session.
    const link = await request(server, "POST", "/api/web/links");
    assertEquals(link.status, 200);
    match(link.json.data.url, /\/#login=/);
    assertEquals(
      (await request(server, "POST", "/api/web/links", {
        ...asPage({ origin: server.url }),
      })).status,
      403,
    );
    // Logged out: the cookie is worth nothing.
    const out = await request(server, "POST", "/api/web/logout", asPage({ origin: server.url }));
    assertEquals(out.status, 200);
    match(out.headers.get("set-cookie")!, /Max-Age=0/);
    assertEquals((await request(server, "GET", "/api/terminals", asPage())).status, 401);
  },
);
