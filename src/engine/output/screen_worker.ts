/**
 * The emulators' thread: a Worker holding the emulator of every screen (screen_emulator.ts),
 * so that feeding them, however much output there is to catch up on, never holds the event
 * loop that answers calls (see screen.ts).
 *
 * Each screen's messages are handled in the order they come (each feed answered with how much
 * of it was taken, each view and snapshot answered, a failure reported), and the screens take
 * turns: a piece of one screen's feed of at most {@link PIECE_COST} cells of work (1-2 ms, see
 * ScreenInput), then the next screen's turn, and messages come in between every
 * {@link TURN_MS}. So a terminal flooding its screen with costly sequences (scrolls of the whole
 * screen) holds up another screen's read by a piece, not by all it sent. A feed stops at its
 * time (`until`, ms since the epoch) once it has taken a piece, and says how much it took: the
 * rest is sent again with the next request (see screen.ts).
 *
 * Started by screen.ts with `new Worker(new URL("./screen_worker.ts", import.meta.url))`: a
 * bundle (scripts/compile.ts) makes it a module of its own beside the others.
 *
 * @module
 */
import { Emulator, type EmulatorSnapshot, type EmulatorView } from "./screen_emulator.ts";
import { loadEmulators } from "./screen_emulator.ts";

/** What the server asks of the emulators' thread. `id`: a screen; `request`: an answer's number. */
export type ToEmulators =
  | { type: "open"; id: number; cols: number; rows: number }
  | { type: "feed"; id: number; request: number; bytes: Uint8Array; until: number }
  | { type: "resize"; id: number; cols: number; rows: number }
  | { type: "restart"; id: number; cols: number; rows: number }
  | { type: "view"; id: number; request: number }
  | { type: "snapshot"; id: number; request: number }
  | { type: "close"; id: number };

/** What the emulators' thread answers. */
export type FromEmulators =
  | { type: "fed"; request: number; consumed: number }
  | { type: "view"; request: number; view: EmulatorView }
  | { type: "snapshot"; request: number; snapshot: EmulatorSnapshot }
  | { type: "failed"; id: number; request?: number; message: string };

/** The work of one turn of a screen's feed, in cells the emulator touches (see ScreenInput). */
export const PIECE_COST = 100_000;
/** How long the thread works before it takes in the messages that came meanwhile. */
const TURN_MS = 25;

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToEmulators>) => void) | null;
  postMessage(message: FromEmulators, transfer?: Transferable[]): void;
};

/** A screen's emulator and its messages not handled yet, oldest first. */
interface Screen {
  emulator: Emulator;
  messages: ToEmulators[];
}

const screens = new Map<number, Screen>();
/** Bytes taken so far of each feed being handled. */
const taken = new Map<ToEmulators, number>();
/** Screens with messages to handle, in turn. */
const ready: Screen[] = [];
let working = false;
const loaded = loadEmulators();

scope.onmessage = ({ data }) => {
  if (data.type === "open") {
    screens.set(data.id, { emulator: undefined!, messages: [data] });
  }
  const screen = screens.get(data.id);
  if (!screen) return fail(data, new Error(`no screen ${data.id} in the emulators' thread`));
  if (data.type !== "open") screen.messages.push(data);
  if (screen.messages.length === 1) ready.push(screen);
  if (!working) {
    working = true;
    loaded.then(work, (error) => {
      for (const screen of ready.splice(0)) {
        for (const message of screen.messages.splice(0)) fail(message, error);
      }
      working = false;
    });
  }
};

/** Handles messages, a screen at a time, for a turn; then lets the next messages in. */
function work(): void {
  const until = performance.now() + TURN_MS;
  while (ready.length > 0 && performance.now() < until) {
    const screen = ready.shift()!;
    const message = screen.messages[0];
    let done = true;
    try {
      done = handle(screen, message);
    } catch (error) {
      fail(message, error);
    }
    if (done) screen.messages.shift();
    if (screen.messages.length > 0) ready.push(screen);
  }
  if (ready.length === 0) working = false;
  else setTimeout(work, 0);
}

/** Handles (part of) a screen's oldest message; false if some of it is left for its next turn. */
function handle(screen: Screen, message: ToEmulators): boolean {
  switch (message.type) {
    case "open":
      screen.emulator = new Emulator(message.cols, message.rows);
      return true;
    case "feed": {
      const consumed = screen.emulator.feed(message.bytes, PIECE_COST);
      taken.set(message, (taken.get(message) ?? 0) + consumed);
      if (
        consumed < message.bytes.length &&
        performance.timeOrigin + performance.now() < message.until
      ) {
        message.bytes = message.bytes.subarray(consumed);
        return false;
      }
      scope.postMessage({ type: "fed", request: message.request, consumed: taken.get(message)! });
      taken.delete(message);
      return true;
    }
    case "resize":
      screen.emulator.resize(message.cols, message.rows);
      return true;
    case "restart":
      screen.emulator.restart(message.cols, message.rows);
      return true;
    case "view":
      scope.postMessage({ type: "view", request: message.request, view: screen.emulator.view() });
      return true;
    case "snapshot": {
      const snapshot = screen.emulator.snapshot();
      scope.postMessage({ type: "snapshot", request: message.request, snapshot }, [
        snapshot.data.buffer as ArrayBuffer,
      ]);
      return true;
    }
    case "close":
      screen.emulator?.dispose();
      screens.delete(message.id);
      return true;
  }
}

/** Reports that a message could not be handled (to its request's caller, if it has one). */
function fail(message: ToEmulators, error: unknown): void {
  scope.postMessage({
    type: "failed",
    id: message.id,
    ...("request" in message ? { request: message.request } : {}),
    message: error instanceof Error ? error.message : String(error),
  });
}
