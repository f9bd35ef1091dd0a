/**
 * The web view (runs in the browser; bundled by scripts/build_web.ts): logs in with the
 * one-time link or the token, lists terminals and commands, shows one live in xterm.js over
 * its WebSocket stream, lets the person take over, and replays recordings with
 * asciinema-player. The session key lives in this origin's localStorage and goes out as a
 * header (a subprotocol for streams); the session id is an HttpOnly cookie it never sees.
 *
 * @module
 */
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { Unicode11Addon } from "@xterm/addon-unicode11";
import * as AsciinemaPlayer from "asciinema-player";
import { Feed } from "./feed.ts";

const KEY_STORAGE = "winterm.key";
/**
 * The terminal's font, then fonts with CJK and emoji glyphs, as Windows, macOS and Linux name
 * theirs: a character the first lacks is drawn with the next that has it (a machine with none of
 * them draws boxes: the browser's own fallback has nothing to offer either).
 */
const FONT_FAMILY = [
  "ui-monospace",
  "'Cascadia Mono'",
  "Consolas",
  "Menlo",
  "'DejaVu Sans Mono'",
  "'Noto Sans Mono'",
  "'Liberation Mono'",
  // CJK: Linux (Noto CJK, Source Han, WenQuanYi, Droid), Windows, macOS.
  "'Noto Sans Mono CJK SC'",
  "'Noto Sans CJK SC'",
  "'Source Han Sans SC'",
  "'WenQuanYi Zen Hei Mono'",
  "'WenQuanYi Micro Hei Mono'",
  "'Droid Sans Fallback'",
  "'Microsoft YaHei'",
  "'MS Gothic'",
  "'Malgun Gothic'",
  "'PingFang SC'",
  "'Hiragino Sans'",
  "'Apple SD Gothic Neo'",
  // Emoji.
  "'Segoe UI Emoji'",
  "'Apple Color Emoji'",
  "'Noto Color Emoji'",
  "'Twemoji Mozilla'",
  "monospace",
].join(", ");
const LIST_INTERVAL_MS = 1000;
const RECONNECT_MS = 1000;
/**
 * Output the view holds for xterm.js at most (see feed.ts): about a second of drawing in a
 * slow browser. A terminal's view that falls further behind starts again from its screen.
 */
const MAX_BEHIND_BYTES = 8 * 1024 * 1024;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const encoder = new TextEncoder();

/** A terminal or command as the API lists it (state, lastExitCode: when the server knows them). */
interface Listed {
  id: string;
  command: string;
  state: string;
  cwd: string;
  since: string;
  exitCode?: number | null;
}

type Kind = "terminal" | "command";

/** `GET /api/terminals` (state and lastExitCode: from shells the server can follow). */
interface TerminalList {
  count: number;
  terminals: {
    id: string;
    shell: string;
    cwd: string;
    created: string;
    status: string;
    state?: string;
    lastExitCode?: number | null;
    exitStatus?: { exitCode: number | null; signal?: string | null };
  }[];
}

/** `GET /api/commands`. */
interface CommandList {
  count: number;
  commands: {
    token: string;
    command: string;
    cwd: string;
    status: string;
    started: string;
    exitCode: number | null;
  }[];
}

let key = localStorage.getItem(KEY_STORAGE) ?? "";
let listTimer: ReturnType<typeof setInterval> | undefined;
let selected: { kind: Kind; id: string } | undefined;
let socket: WebSocket | undefined;
let holder: "you" | "other" | null = null;
let running = false;
let player: { dispose(): void } | undefined;
/** How the program in view ended, in words. */
let ended = "ended";

const term = new Terminal({
  disableStdin: true,
  convertEol: false,
  // As many lines as a terminal keeps by default (WINTERM_TERMINAL_MAX_LINES).
  scrollback: 10_000,
  fontFamily: FONT_FAMILY,
  fontSize: 13,
  theme: { background: "#101418" },
  allowProposedApi: true,
});
const fit = new FitAddon();
term.loadAddon(fit);
// Emoji two columns wide, as the programs (wcwidth) and the server's screen count them.
term.loadAddon(new Unicode11Addon());
term.unicode.activeVersion = "11";
const feed = new Feed(
  { write: (data, parsed) => term.write(data, parsed) },
  MAX_BEHIND_BYTES,
  behind,
);
/** A terminal's view asked for its screen afresh and waits for it: output until then is moot. */
let resyncAsked = false;

class LoggedOut extends Error {}

/**
 * The server stopped answering (a request failed, or the stream dropped) and has not answered
 * since: a refusal of the session then means that it restarted.
 */
let serverLost = false;

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(path, {
    ...init,
    credentials: "same-origin",
    headers: { "x-winterm-key": key, "content-type": "application/json", ...init.headers },
  });
  if (response.status === 401) {
    showLogin(
      serverLost
        ? "The server has restarted, which ends its web sessions: log in again, with the link " +
          "it printed on its standard error or the token."
        : "The session has ended: log in again.",
    );
    throw new LoggedOut();
  }
  serverLost = false;
  return response;
}

async function login(credentials: { code: string } | { token: string }): Promise<boolean> {
  const response = await fetch("/api/web/login", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(credentials),
  });
  const answer = await response.json();
  if (!response.ok) {
    showLogin(answer?.error?.message ?? `login failed (${response.status})`);
    return false;
  }
  key = answer.data.key;
  localStorage.setItem(KEY_STORAGE, key);
  return true;
}

function showLogin(message = ""): void {
  clearInterval(listTimer);
  listTimer = undefined;
  closeStream();
  stopPlayer();
  // The page's one message is the login's: none of the logged-in page's is left.
  selected = undefined;
  $("summary").textContent = "";
  setNotice("");
  $("app").hidden = true;
  $("logout").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message;
}

/** The column headings, the same for terminals and commands. */
const COLUMNS = ["command", "state", "cwd", "age"];
for (const table of ["terminals", "commands"]) {
  const row = document.createElement("tr");
  for (const name of COLUMNS) {
    row.append(Object.assign(document.createElement("th"), { textContent: name }));
  }
  $(table).querySelector("thead")!.replaceChildren(row);
}

function showApp(): void {
  $("login").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  if (!term.element) term.open($("screen"));
  refreshList();
  listTimer ??= setInterval(refreshList, LIST_INTERVAL_MS);
}

function age(since: string): string {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(since)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} d`;
}

/**
 * Shows `items` in their table. The list is refreshed every second, so rows are updated in
 * place, not made afresh: a row stays the same element as long as its item is listed. A click
 * is a press and a release on the same element; a row replaced between the two (a person's click
 * takes about 100 ms) would lose it, and a row with the keyboard's focus would lose that.
 */
function renderRows(kind: Kind, items: Listed[]): void {
  const body = $(kind === "terminal" ? "terminals" : "commands").querySelector("tbody")!;
  const listed = new Set(items.map((item) => item.id));
  const kept = new Map<string, HTMLTableRowElement>();
  // Rows no longer listed go first: placed before they went, every row after one would be out
  // of place and moved (found by an attack helper: a release above lost a click and the focus).
  for (const tr of [...body.rows]) {
    if (listed.has(tr.dataset.id!)) kept.set(tr.dataset.id!, tr);
    else tr.remove();
  }
  items.forEach((item, index) => {
    const tr = kept.get(item.id) ?? newRow(kind, item.id);
    fillRow(tr, item);
    // Moved only when out of place (a moved element is taken out and put back in).
    if (body.rows[index] !== tr) body.insertBefore(tr, body.rows[index] ?? null);
  });
}

/** An empty row for `id`, which opens it when clicked (or on Enter). */
function newRow(kind: Kind, id: string): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.dataset.id = id;
  tr.dataset.kind = kind;
  tr.tabIndex = 0;
  tr.append(...COLUMNS.map(() => document.createElement("td")));
  // A path's end says most: it is cut at its start (see app.css), and kept left to right inside.
  const cwd = tr.cells[COLUMNS.indexOf("cwd")];
  cwd.className = "path";
  cwd.append(Object.assign(document.createElement("span"), { dir: "ltr" }));
  const open = () => openView(kind, id, tr.dataset.command ?? "");
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", (event) => event.key === "Enter" && open());
  return tr;
}

/** Writes `item` into its row, changing only what has changed. */
function fillRow(tr: HTMLTableRowElement, item: Listed): void {
  tr.dataset.command = item.command;
  tr.classList.toggle("selected", selected?.id === item.id);
  const exit = item.exitCode === undefined || item.exitCode === null
    ? ""
    : ` (exit ${item.exitCode})`;
  const cells: [text: string, title?: string][] = [
    [item.command, `${item.id}: ${item.command}`],
    [item.state + exit],
    [item.cwd],
    [age(item.since), item.since],
  ];
  cells.forEach(([text, title = text], index) => {
    const td = tr.cells[index];
    const holder = td.firstElementChild ?? td;
    if (holder.textContent !== text) holder.textContent = text;
    if (td.title !== title) td.title = title;
  });
}

async function refreshList(): Promise<void> {
  try {
    const [terminals, commands] = await Promise.all([
      api("/api/terminals").then((r) => r.json()) as Promise<{ data: TerminalList }>,
      api("/api/commands").then((r) => r.json()) as Promise<{ data: CommandList }>,
    ]);
    renderRows(
      "terminal",
      terminals.data.terminals.map((t) => ({
        id: t.id,
        command: t.shell,
        // How it ended, or the shell's own state (prompt, running, input) where the server
        // reports it, with its last command's exit code.
        state: t.exitStatus ? exitInWords(t.exitStatus) : t.state ?? t.status,
        cwd: t.cwd,
        since: t.created,
        exitCode: t.exitStatus ? undefined : t.lastExitCode,
      })),
    );
    renderRows(
      "command",
      commands.data.commands.map((c) => ({
        id: c.token,
        command: c.command,
        state: c.status,
        cwd: c.cwd,
        since: c.started,
        exitCode: c.exitCode,
      })),
    );
    $("summary").textContent = `${terminals.data.count} terminals, ${commands.data.count} commands`;
  } catch (error) {
    if (error instanceof LoggedOut) return;
    // One message says it: the header's (a stream's reconnecting says nothing more).
    serverLost = true;
    $("summary").textContent = "the server does not answer; trying again…";
    if (socket === undefined && selected) setNotice("");
  }
}

function closeStream(): void {
  const old = socket;
  socket = undefined;
  old?.close(1000);
  holder = null;
}

function setNotice(text: string): void {
  $("notice").textContent = text;
}

function updateControls(): void {
  const box = $<HTMLInputElement>("takeover");
  box.checked = holder === "you";
  box.disabled = !running;
  $("takeover-label").hidden = selected?.kind !== "terminal";
  $("recording").hidden = selected?.kind !== "terminal";
  term.options.disableStdin = holder !== "you";
  $("screen").classList.toggle("writable", holder === "you");
  const state = !running
    ? ended
    : holder === "you"
    ? "you have taken over: you type into it"
    : holder === "other"
    ? "another viewer has taken over"
    : "watching (read-only)";
  $("view-state").textContent = state;
  $("view-state").title = state;
}

function openView(kind: Kind, id: string, command: string): void {
  closeStream();
  stopPlayer();
  selected = { kind, id };
  for (const row of document.querySelectorAll("tr.selected")) row.classList.remove("selected");
  document.querySelector(`tr[data-id="${CSS.escape(id)}"]`)?.classList.add("selected");
  $("view-title").textContent = `${id}: ${command}`;
  setNotice("");
  feed.afresh(() => term.reset());
  connect(kind, id);
}

function connect(kind: Kind, id: string): void {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  // A terminal's stream starts with the output it kept before its screen: the scrollback.
  const ws = new WebSocket(
    `${scheme}//${location.host}/api/${kind}s/${encodeURIComponent(id)}/stream` +
      (kind === "terminal" ? "?history=1" : ""),
    ["winterm", `winterm.key.${key}`],
  );
  ws.binaryType = "arraybuffer";
  socket = ws;
  resyncAsked = false;
  ws.onmessage = (event) => {
    if (socket !== ws) return;
    if (typeof event.data !== "string") {
      if (!resyncAsked) feed.data(new Uint8Array(event.data as ArrayBuffer));
      return;
    }
    onStreamMessage(JSON.parse(event.data));
  };
  ws.onclose = (event) => {
    if (socket !== ws) return;
    socket = undefined;
    // A deliberate end (the program exited) stays; a lost connection is made again, and the
    // server sends the screen afresh.
    if (event.code === 1000) return;
    if (!serverLost) setNotice("connection lost; reconnecting…");
    serverLost = true;
    setTimeout(() => {
      if (selected?.kind !== kind || selected.id !== id || socket || !listTimer) return;
      // Released meanwhile: it has left the list, and there is nothing to reconnect to.
      if (!document.querySelector(`tr[data-id="${CSS.escape(id)}"]`)) {
        return setNotice("it is gone (released)");
      }
      connect(kind, id);
    }, RECONNECT_MS);
  };
}

/** A text message of the stream (see src/http/web/stream.ts for the protocol). */
// deno-lint-ignore no-explicit-any
function onStreamMessage(message: any): void {
  switch (message.type) {
    case "hello":
      running = message.running;
      holder = message.holder;
      ended = "ended";
      setNotice("");
      // The history comes at once: the view may hold it all besides its usual margin.
      feed.maxWaitingBytes = MAX_BEHIND_BYTES + (message.history ?? 0);
      feed.afresh(() => {
        term.reset();
        // Pipes carry bare line feeds; a terminal's own output is drawn as it is.
        term.options.convertEol = message.kind === "command" && message.mode === "pipe";
        if (message.kind === "terminal") term.resize(message.cols, message.rows);
      });
      updateControls();
      break;
    case "resize":
      feed.then(() => term.resize(message.cols, message.rows));
      break;
    case "resync":
      // The view missed output (the server's bound, or it asked): the next frame redraws the
      // screen over what it shows, and what scrolled off before stays to scroll back to.
      if (!resyncAsked) setNotice("This view fell behind: it shows the screen as it is now.");
      resyncAsked = false;
      feed.afresh(() => term.resize(message.cols, message.rows));
      // Who holds the terminal, as it may have changed while the view was behind.
      if (message.holder !== undefined && message.holder !== holder) {
        holder = message.holder;
        updateControls();
      }
      break;
    case "control":
      holder = message.holder;
      if (holder === "you") sendSize();
      updateControls();
      if (holder === "you") term.focus();
      break;
    case "exit":
      running = false;
      holder = null;
      ended = exitInWords(message.exitStatus);
      updateControls();
      break;
    case "error":
      setNotice(message.message);
      break;
  }
}

/** `{exitCode, signal}` as a person says it: "exited with code 3", "killed by SIGTERM". */
function exitInWords(status?: { exitCode?: number | null; signal?: string | null }): string {
  if (status?.signal) return `killed by ${status.signal}`;
  if (typeof status?.exitCode === "number") return `exited with code ${status.exitCode}`;
  return "ended";
}

/**
 * The view could not draw as fast as the output came, and dropped what it had not drawn: a
 * terminal's stream is asked for the screen as it is now; a command's has none to redraw.
 */
function behind(dropped: number): void {
  const skipped = `${dropped.toLocaleString()} bytes of output were not drawn`;
  if (selected?.kind !== "terminal" || !socket) {
    return setNotice(`This view fell behind: ${skipped}.`);
  }
  resyncAsked = true;
  socket.send(JSON.stringify({ type: "resync" }));
  setNotice(`This view fell behind: ${skipped}; it shows the screen as it is now.`);
}

/** While holding the terminal, its size follows this window. */
function sendSize(): void {
  if (holder !== "you" || !socket) return;
  const size = fit.proposeDimensions();
  if (!size || !size.cols || !size.rows) return;
  socket.send(JSON.stringify({ type: "resize", cols: size.cols, rows: size.rows }));
}

function stopPlayer(): void {
  player?.dispose();
  player = undefined;
  $("player").hidden = true;
  $("player").replaceChildren();
  $("screen").hidden = false;
  $("recording").textContent = "Replay recording";
}

async function replay(): Promise<void> {
  if (selected?.kind !== "terminal") return;
  if (player) return stopPlayer();
  const response = await api(`/api/terminals/${encodeURIComponent(selected.id)}/recording`);
  if (!response.ok) {
    setNotice((await response.json())?.error?.message ?? "no recording");
    return;
  }
  const cast = await response.text();
  $("screen").hidden = true;
  $("player").hidden = false;
  $("recording").textContent = "Back to live";
  player = AsciinemaPlayer.create({ data: cast }, $("player"), {
    autoPlay: true,
    fit: "width",
    terminalFontSize: "small",
    idleTimeLimit: 2,
  }) as unknown as { dispose(): void };
}

term.onData((data) => {
  if (holder === "you" && socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
});
addEventListener("resize", () => sendSize());
$("takeover").addEventListener("change", (event) => {
  const on = (event.target as HTMLInputElement).checked;
  socket?.send(JSON.stringify({ type: on ? "takeover" : "handback" }));
});
$("recording").addEventListener("click", () => replay().catch(() => {}));
$("logout").addEventListener("click", async () => {
  await api("/api/web/logout", { method: "POST", body: "{}" }).catch(() => {});
  localStorage.removeItem(KEY_STORAGE);
  key = "";
  showLogin("Logged out.");
});
$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $<HTMLInputElement>("token");
  const token = input.value.trim();
  input.value = "";
  if (token && await login({ token })) showApp();
});

async function start(): Promise<void> {
  const code = new URLSearchParams(location.hash.slice(1)).get("login");
  if (code) {
    // The code leaves the address bar (and history) before anything else happens.
    history.replaceState(null, "", location.pathname);
    if (await login({ code })) return showApp();
    return;
  }
  if (!key) return showLogin();
  const session = await fetch("/api/web/session", {
    credentials: "same-origin",
    headers: { "x-winterm-key": key },
  });
  if (session.ok) showApp();
  else showLogin();
}

// A login link opened in a tab that already shows the page changes only the fragment.
addEventListener("hashchange", () => start());
start();
