/**
 * What a person would see on a terminal right now: a headless terminal emulator
 * (@xterm/headless) kept at the terminal's size and fed its output. The only sane view of a
 * full-screen program (vim, htop, a progress display). Loaded on first use, so terminals whose
 * screen is never asked for cost nothing.
 *
 * The emulator is fed lazily, when the screen is asked for ({@link Screen.render},
 * {@link Screen.snapshot}), from the output buffer, and at a bounded cost:
 * - through {@link ScreenInput}, which clamps the counts xterm would loop or allocate over;
 * - at most the newest {@link CATCH_UP} bytes: further behind (or when the buffer has dropped
 *   what it had not seen), it restarts from a line start that recent (full-screen programs
 *   redraw the screen, a shell's last lines are there);
 * - in pieces of bounded work ({@link PIECE_COST} cells, as ScreenInput estimates it: 1-2 ms),
 *   parsed at once, in the server's slices of work (see src/engine/slices.ts): the event loop
 *   goes round between two slices of about 4 ms, and the screens caught up at once take turns;
 * - for at most {@link RENDER_BUDGET_MS} per request: output the emulator could not get
 *   through by then is reported as `unrenderedBytes` and fed on the next request.
 * Resizes are recorded at the output offset they happened at ({@link Screen.resize}) and applied
 * when the feeding gets there: output is laid out at the size it was written for.
 *
 * A {@link Screen.snapshot} is the screen as escape sequences (@xterm/addon-serialize) at an
 * exact output offset: written into a fresh terminal of the same size, then followed by the
 * output from that offset on, it draws what this screen draws. So a viewer that joins late sees
 * vim as it is, and misses nothing. (If the output is in the middle of a sequence or a character
 * at that offset, the snapshot ends with its first bytes, so that the output continues it.)
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { Screen } from "./screen.ts";
 * const buffer = new OutputBuffer();
 * const screen = new Screen(buffer, 20, 3);
 * buffer.append(new TextEncoder().encode("ab\x1b[2;5Hcd"));
 * (await screen.render()).text; // "ab\n    cd\n" (blank rows below are left out)
 * ```
 * @module
 */
import type { OutputBuffer } from "./buffer.ts";
import { ScreenInput } from "./screen_input.ts";
import { nextSlice, SLICE_MS } from "../slices.ts";

// The package's "module" field names a file it does not ship, which bundlers follow: the
// import map points at its ESM build, and the types come from its typings.
type XtermTerminal = import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
type XtermBuffer = import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").IBuffer;
/** A cell's attributes (the emulator's current ones have the same methods). */
type Attributes = Omit<
  import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").IBufferCell,
  "getWidth" | "getChars" | "getCode"
>;
/**
 * What is used of @xterm/addon-serialize. Its own typings are the browser terminal's, which
 * pull the DOM's types into the server's type-check: the import map names its ESM build, untyped.
 */
interface Serializer {
  serialize(options?: { scrollback?: number }): string;
}

/**
 * What the public API and the serializer leave out: the cursor's visibility (DECTCEM) and the
 * attributes new text gets. Read guarded: if they go away, only that is lost.
 */
interface Internals {
  _core?: {
    /** Parses at once (xterm's own `write` parses in a timer task of its choosing). */
    writeSync?(data: Uint8Array): void;
    coreService?: { isCursorHidden?: boolean };
    _inputHandler?: { _curAttrData?: Attributes };
    buffers?: {
      /** The normal screen's cursor saved by the switch (DECSC): its attributes come back with it. */
      normal?: { savedCurAttrData?: Attributes };
      active?: ScreenInternals;
    };
  };
}

/** A screen's scroll region (DECSTBM, rows from 0) and its cursor saved by DECSC (ESC 7). */
interface ScreenInternals {
  scrollTop?: number;
  scrollBottom?: number;
  savedX?: number;
  /** Counted from the top of the scrollback (ybase). */
  savedY?: number;
  ybase?: number;
  savedCurAttrData?: Attributes;
}

/** The emulator is fed at most this many of the newest bytes. */
export const CATCH_UP = 1024 * 1024;
/** One request feeds the emulator for at most this long. */
export const RENDER_BUDGET_MS = 1000;
/**
 * The work one piece of feeding may take, in cells the emulator touches (see ScreenInput): 1-2
 * ms here for most output (15-25 ns a cell), so that a slice ends near its time.
 */
export const PIECE_COST = 100_000;
/** Resizes not yet applied that are kept; beyond, the oldest is forgotten. */
export const MAX_PENDING_RESIZES = 1024;
/**
 * A snapshot ends with at most this many bytes of a sequence still unfinished at its offset;
 * of a longer one (an endless control string), only its introducer.
 */
export const MAX_UNFINISHED = 4096;
/** Bytes read from the buffer for one piece, at most. */
const PIECE_BYTES = 16 * 1024;

/** A rendered screen. */
export interface ScreenView {
  /** The visible rows, one per line, without trailing spaces or trailing blank rows. */
  text: string;
  cols: number;
  rows: number;
  /** Cursor position, 0-based. */
  cursorX: number;
  cursorY: number;
  /** True while a full-screen program has switched to the alternate screen. */
  alternate: boolean;
  /** Output not yet shown: the emulator did not get through it in this request's time. */
  unrenderedBytes: number;
}

/** A resize, at the output offset it happened at. */
export interface ScreenResize {
  offset: number;
  cols: number;
  rows: number;
}

/** The screen at one point of the output (see {@link Screen.snapshot}). */
export interface ScreenSnapshot {
  /** Escape sequences that redraw the screen in a fresh terminal of its size. */
  data: Uint8Array;
  cols: number;
  rows: number;
  /** The output offset it stands at: the output from here on follows it. */
  offset: number;
  /** Resizes at or after `offset`, not in the snapshot yet, in order. */
  resizes: ScreenResize[];
}

interface Emulator {
  terminal: XtermTerminal;
  serializer?: Serializer;
}

const encoder = new TextEncoder();
const ESC = 0x1b;

/** See the module documentation. */
export class Screen {
  readonly #buffer: OutputBuffer;
  readonly #input: ScreenInput;
  #emulator: Promise<Emulator> | undefined;
  /** The emulator's size (the size at {@link #fed}). */
  #size: { cols: number; rows: number };
  /** Resizes not applied yet, in order, each at a later offset than the one before. */
  #resizes: ScreenResize[] = [];
  /** Offset of the first byte not yet fed. */
  #fed: number;
  /** Requests run one after the other. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The render queued and not yet begun, which a new request joins. */
  #nextRender?: Promise<ScreenView>;

  /** A screen of the given size showing `buffer`'s output (the emulator loads on first use). */
  constructor(buffer: OutputBuffer, cols: number, rows: number) {
    this.#buffer = buffer;
    this.#size = { cols, rows };
    this.#input = new ScreenInput(() => this.#size);
    this.#fed = buffer.start;
  }

  /** The terminal was resized now: the output from here on is laid out at the new size. */
  resize(cols: number, rows: number): void {
    const offset = this.#buffer.end;
    const last = this.#resizes.at(-1);
    // Sizes set with no output between: only the last one lays anything out.
    if (last?.offset === offset) this.#resizes.pop();
    this.#resizes.push({ offset, cols, rows });
    if (this.#resizes.length > MAX_PENDING_RESIZES) this.#resizes.shift();
  }

  /**
   * The screen once the output so far has been processed (within the time budget). Requests
   * made while a render waits to start share it: a hundred at once cost two renders, not a
   * hundred seconds.
   */
  render(): Promise<ScreenView> {
    return this.#nextRender ??= this.#enqueue(async () => {
      this.#nextRender = undefined;
      const { terminal } = await this.#catchUp();
      const buffer = terminal.buffer.active;
      const lines: string[] = [];
      for (let y = 0; y < terminal.rows; y++) {
        lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
      }
      while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
      return {
        text: lines.map((line) => line + "\n").join(""),
        cols: terminal.cols,
        rows: terminal.rows,
        cursorX: buffer.cursorX,
        cursorY: buffer.cursorY,
        alternate: buffer.type === "alternate",
        unrenderedBytes: this.#buffer.end - this.#fed,
      };
    });
  }

  /**
   * The screen as escape sequences that redraw it (contents, colours, the alternate screen,
   * modes, the cursor), once the output so far has been processed (within the time budget), at
   * the exact offset the emulator has got to. `taken` is called with it at that moment, before
   * anything else runs (so it can start listening for what follows); its result is returned.
   */
  snapshot<T>(taken: (snapshot: ScreenSnapshot) => T): Promise<T> {
    return this.#enqueue(async () => {
      const emulator = await this.#emulatorLoaded();
      emulator.serializer ??= await loadSerializer(emulator.terminal);
      const { terminal } = await this.#catchUp();
      const screen = encoder.encode(redraw(terminal, emulator.serializer));
      const unfinished = this.#unfinishedBytes();
      const data = new Uint8Array(screen.length + unfinished.length);
      data.set(screen);
      data.set(unfinished, screen.length);
      return taken({
        data,
        cols: terminal.cols,
        rows: terminal.rows,
        offset: this.#fed,
        resizes: this.#resizes.map((resize) => ({ ...resize })),
      });
    });
  }

  /** Frees the emulator (once the requests under way are done). */
  dispose(): void {
    const emulator = this.#emulator;
    this.#emulator = undefined;
    this.#enqueue(async () => (await emulator)?.terminal.dispose());
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => {});
    return result;
  }

  #emulatorLoaded(): Promise<Emulator> {
    this.#emulator ??= loadTerminal(this.#size.cols, this.#size.rows).then((terminal) => ({
      terminal,
    }));
    return this.#emulator;
  }

  async #catchUp(): Promise<Emulator> {
    const emulator = await this.#emulatorLoaded();
    const { terminal } = emulator;
    const output = this.#buffer;
    const deadline = performance.now() + RENDER_BUDGET_MS;
    // Too far behind starts afresh once a request: again each time a flood outpaced the
    // emulator, it reset the screen over and over. Nor does a request end on a fresh start
    // (a blank screen) before a slice has been fed.
    let fresh = false;
    if (output.end - this.#fed > CATCH_UP) fresh = this.#restart(terminal);
    let sliceEnd = performance.now() + SLICE_MS;
    for (;;) {
      if (this.#fed < output.start) fresh = this.#restart(terminal); // dropped before it was fed
      this.#applyResizes(terminal);
      const now = performance.now();
      if (this.#fed >= output.end || (now >= deadline && !fresh)) return emulator;
      if (now >= sliceEnd) {
        // Output may come and go meanwhile: the loop looks again.
        await nextSlice();
        sliceEnd = performance.now() + SLICE_MS;
        continue;
      }
      // A piece ends where the next resize happened, so that it is laid out at its size.
      const end = Math.min(
        output.end,
        this.#fed + PIECE_BYTES,
        this.#resizes[0]?.offset ?? Infinity,
      );
      const { bytes, consumed } = this.#input.filter(output.read(this.#fed, end).bytes, PIECE_COST);
      writeAtOnce(terminal, bytes);
      this.#fed += consumed;
      fresh = false;
    }
  }

  /**
   * Too far behind: starts afresh from a recent line start, at the size the terminal had there.
   * Returns true (the screen is fresh).
   */
  #restart(terminal: XtermTerminal): true {
    const output = this.#buffer;
    const from = Math.max(output.start, output.end - CATCH_UP);
    const line = output.lineStart(output.lineAt(from) + 1);
    this.#fed = output.lineStart(output.lineAt(from)) === from || line >= output.end ? from : line;
    terminal.reset();
    this.#input.reset();
    let size: ScreenResize | undefined;
    while (this.#resizes.length > 0 && this.#resizes[0].offset <= this.#fed) {
      size = this.#resizes.shift();
    }
    if (size) this.#resizeTo(terminal, size);
    return true;
  }

  /** Applies the resizes the feeding has got to. */
  #applyResizes(terminal: XtermTerminal): void {
    while (this.#resizes.length > 0 && this.#resizes[0].offset <= this.#fed) {
      this.#resizeTo(terminal, this.#resizes.shift()!);
    }
  }

  #resizeTo(terminal: XtermTerminal, { cols, rows }: { cols: number; rows: number }): void {
    this.#size = { cols, rows };
    terminal.resize(cols, rows);
  }

  /**
   * The first bytes of what the output is in the middle of where the feeding stands, without
   * the C0 controls among them: those have acted already (inside an escape sequence) or do
   * nothing (inside a control string), and must not act twice.
   */
  #unfinishedBytes(): Uint8Array {
    const { length, introducer } = this.#input.unfinished;
    const from = this.#fed - length;
    if (length === 0 || length > MAX_UNFINISHED || from < this.#buffer.start) return introducer;
    return this.#buffer.read(from, this.#fed).bytes.filter((byte) => byte >= 0x20 || byte === ESC);
  }
}

/**
 * Has the emulator parse `bytes` now, in this slice of work. Its public `write` parses in a
 * timer task of its own, for up to 12 ms at a time, outside the slices (and each timer waits a
 * millisecond or two). Its core's `writeSync` is the same parser, called at once; it is only
 * unreliable with handlers that wait (images), which the headless terminal does not have.
 */
function writeAtOnce(terminal: XtermTerminal, bytes: Uint8Array): void {
  const core = (terminal as unknown as Internals)._core;
  if (!core?.writeSync) throw new Error("@xterm/headless has no writeSync: see screen.ts");
  core.writeSync(bytes);
}

/** The switch the serializer writes between the normal screen and the alternate one. */
const TO_ALTERNATE = "\x1b[?1049h\x1b[H";

/**
 * The serializer's redrawing of the screen, made exact where it is not:
 * - to make a row wrap into the next one it moves by `CSI 0 C` and `CSI 0 D` when the row
 *   is blank, which terminals read as a move by one: left out (nothing else writes them);
 * - it sets the attributes of new text before switching to the alternate screen: they are
 *   set to those the switch saved (which the way back restores, as the switch's fill used
 *   their background) and reset after it (the alternate screen's part starts from the
 *   defaults);
 * - its cursor is put back by relative movements, which go wrong when its text ended in the
 *   last column: the cursor is put back in place absolutely (the normal screen's too, before
 *   the switch to the alternate one, which saves it);
 * - it leaves out the cursor's visibility (DECTCEM), the scroll region (DECSTBM) and the
 *   cursor the screen saved (DECSC), which a program's next line feed, reverse index or ESC 8
 *   acts on;
 * - it sets origin mode (DECOM) before the cursor is put back, whose rows it then counts from
 *   the region's top: it is set after the region, and the cursor put back from the region's top.
 */
function redraw(terminal: XtermTerminal, serializer: Serializer): string {
  let data = serializer.serialize({ scrollback: 0 }).replaceAll("\x1b[0C", "")
    .replaceAll("\x1b[0D", "");
  const switched = data.indexOf(TO_ALTERNATE);
  const internals = (terminal as unknown as Internals)._core;
  if (switched >= 0) {
    // The switch saves this cursor, with the attributes of new text, and the way back restores
    // both: they are set as the switch found them, and reset after it.
    const saved = internals?.buffers?.normal?.savedCurAttrData;
    const normal = placeCursor(terminal.buffer.normal, terminal.cols, "") +
      (saved ? sgr(saved) : "\x1b[0m");
    data = data.slice(0, switched) + "\x1b[0m" + normal + TO_ALTERNATE + "\x1b[0m" +
      data.slice(switched + TO_ALTERNATE.length);
  }
  const current = internals?._inputHandler?._curAttrData;
  const attributes = current ? sgr(current) : "\x1b[0m";
  data = data.replaceAll(ORIGIN_MODE, "") +
    savedAndRegion(terminal, internals?.buffers?.active, attributes);
  const origin = terminal.modes.originMode;
  const top = origin ? internals?.buffers?.active?.scrollTop ?? 0 : 0;
  data += (origin ? ORIGIN_MODE : "") +
    placeCursor(terminal.buffer.active, terminal.cols, attributes, top);
  return data + (internals?.coreService?.isCursorHidden ? "\x1b[?25l" : "");
}

/** Origin mode (DECOM) set: cursor rows count from the scroll region's top. */
const ORIGIN_MODE = "\x1b[?6h";

/**
 * The active screen's cursor saved by DECSC (put there with its attributes and saved, then
 * `attributes`, those of new text, set again), and its scroll region; each only if not as a
 * fresh screen has it. Both move the cursor, which is put back after them.
 */
function savedAndRegion(
  terminal: XtermTerminal,
  screen: ScreenInternals | undefined,
  attributes: string,
): string {
  if (!screen) return "";
  let data = "";
  const { savedX = 0, savedY = 0, ybase = 0, savedCurAttrData } = screen;
  const saved = savedCurAttrData ? sgr(savedCurAttrData) : "\x1b[0m";
  if (savedX !== 0 || savedY !== 0 || saved !== "\x1b[0m") {
    const row = Math.max(savedY - ybase, 0) + 1, column = Math.min(savedX, terminal.cols - 1) + 1;
    data += `\x1b[${row};${column}H${saved}\x1b7${attributes}`;
  }
  const { scrollTop = 0, scrollBottom = terminal.rows - 1 } = screen;
  if (scrollTop !== 0 || scrollBottom !== terminal.rows - 1) {
    data += `\x1b[${scrollTop + 1};${scrollBottom + 1}r`;
  }
  return data;
}

/**
 * Puts `buffer`'s cursor where it is, absolutely. After a character in the last column the
 * cursor waits there to wrap with the next one, which no movement can say: that character is
 * printed again, with its attributes, and then `attributes` (those of new text) are set. In
 * origin mode, rows are counted from `top`, the scroll region's.
 */
function placeCursor(buffer: XtermBuffer, cols: number, attributes: string, top = 0): string {
  const row = buffer.cursorY - top + 1;
  const at = `\x1b[${row};${Math.min(buffer.cursorX, cols - 1) + 1}H`;
  if (buffer.cursorX < cols) return at;
  const line = buffer.getLine(buffer.baseY + buffer.cursorY);
  let column = cols - 1;
  let cell = line?.getCell(column);
  if (cell?.getWidth() === 0 && column > 0) cell = line?.getCell(--column);
  if (!cell) return at;
  return `\x1b[${row};${column + 1}H${sgr(cell)}${cell.getChars() || " "}${attributes}`;
}

/** The SGR sequence that sets exactly these attributes. */
function sgr(attributes: Attributes): string {
  const params = [0];
  const color = (rgb: boolean, palette: boolean, value: number, base: number, bright: number) => {
    if (rgb) params.push(base + 8, 2, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
    else if (palette && value >= 16) params.push(base + 8, 5, value);
    else if (palette) params.push((value & 8 ? bright : base) + (value & 7));
  };
  color(attributes.isFgRGB(), attributes.isFgPalette(), attributes.getFgColor(), 30, 90);
  color(attributes.isBgRGB(), attributes.isBgPalette(), attributes.getBgColor(), 40, 100);
  const flags: [number, () => number][] = [
    [1, () => attributes.isBold()],
    [2, () => attributes.isDim()],
    [3, () => attributes.isItalic()],
    [4, () => attributes.isUnderline()],
    [5, () => attributes.isBlink()],
    [7, () => attributes.isInverse()],
    [8, () => attributes.isInvisible()],
    [9, () => attributes.isStrikethrough()],
    [53, () => attributes.isOverline()],
  ];
  for (const [param, isSet] of flags) if (isSet()) params.push(param);
  return `\x1b[${params.join(";")}m`;
}

async function loadTerminal(cols: number, rows: number): Promise<XtermTerminal> {
  const [{ Terminal }, { Unicode11Addon }] = await Promise.all([
    import("@xterm/headless") as unknown as Promise<{
      Terminal: typeof import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
    }>,
    import("@xterm/addon-unicode11") as unknown as Promise<{ Unicode11Addon: new () => Addon }>,
  ]);
  // Its log off: it would warn that writeSync is deprecated, and it logs with console.info
  // (stdout: JSON-RPC's).
  const terminal = new Terminal({
    cols,
    rows,
    scrollback: 0,
    allowProposedApi: true,
    logLevel: "off",
  });
  // Emoji take two columns, as wcwidth (vim, curses, the shell) counts them: xterm's own table
  // (Unicode 6) gives many of them one, and the screen came out shifted.
  terminal.loadAddon(new Unicode11Addon());
  terminal.unicode.activeVersion = "11";
  return terminal;
}

/** What is used of an xterm add-on. */
type Addon = Parameters<XtermTerminal["loadAddon"]>[0];

async function loadSerializer(terminal: XtermTerminal): Promise<Serializer> {
  const { SerializeAddon } = await import("@xterm/addon-serialize") as {
    SerializeAddon: new () => Serializer;
  };
  const serializer = new SerializeAddon();
  // The addon is typed against the browser package's Terminal; the headless one has what it uses.
  terminal.loadAddon(serializer as unknown as Parameters<XtermTerminal["loadAddon"]>[0]);
  return serializer;
}
