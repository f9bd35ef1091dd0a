/**
 * The screen emulator itself (@xterm/headless), one a screen, run in the emulator's thread
 * (screen_worker.ts): fed what {@link ScreenInput} makes of the output, it answers what the
 * screen shows ({@link Emulator.view}) and how to redraw it ({@link Emulator.snapshot}). See
 * screen.ts for how it is fed.
 *
 * @example
 * ```ts
 * import { Emulator, loadEmulators } from "./screen_emulator.ts";
 * await loadEmulators();
 * const emulator = new Emulator(20, 3);
 * emulator.feed(new TextEncoder().encode("ab\x1b[2;5Hcd"));
 * emulator.view().text; // "ab\n    cd\n"
 * emulator.dispose();
 * ```
 * @module
 */
import { ScreenInput, type Unfinished } from "./screen_input.ts";

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

/** What a screen shows (see screen.ts, `ScreenView`, which adds what is not shown yet). */
export interface EmulatorView {
  /** The visible rows, one per line, without trailing spaces or trailing blank rows. */
  text: string;
  cols: number;
  rows: number;
  /** Cursor position, 0-based. */
  cursorX: number;
  cursorY: number;
  /** True while a full-screen program has switched to the alternate screen. */
  alternate: boolean;
}

/** How to redraw a screen, and the output its emulator is still in the middle of. */
export interface EmulatorSnapshot {
  /** Escape sequences that redraw the screen in a fresh terminal of its size. */
  data: Uint8Array;
  cols: number;
  rows: number;
  /** See {@link ScreenInput.unfinished}. */
  unfinished: Unfinished;
}

type Packages = {
  Terminal: typeof import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
  Unicode11Addon: new () => Addon;
  SerializeAddon: new () => Serializer;
};
let packages: Packages | undefined;

/** Loads the emulator's packages (xterm and its add-ons): before the first {@link Emulator}. */
export async function loadEmulators(): Promise<void> {
  const [{ Terminal }, { Unicode11Addon }, { SerializeAddon }] = await Promise.all([
    import("@xterm/headless") as unknown as Promise<Pick<Packages, "Terminal">>,
    import("@xterm/addon-unicode11") as unknown as Promise<Pick<Packages, "Unicode11Addon">>,
    import("@xterm/addon-serialize") as unknown as Promise<Pick<Packages, "SerializeAddon">>,
  ]);
  packages = { Terminal, Unicode11Addon, SerializeAddon };
}

const encoder = new TextEncoder();

/** One screen's emulator: see the module documentation. */
export class Emulator {
  readonly #terminal: XtermTerminal;
  readonly #input: ScreenInput;
  #serializer: Serializer | undefined;
  #size: { cols: number; rows: number };

  /** An emulator of that size ({@link loadEmulators} first). */
  constructor(cols: number, rows: number) {
    if (!packages) throw new Error("the emulator's packages are not loaded (loadEmulators)");
    this.#size = { cols, rows };
    this.#input = new ScreenInput(() => this.#size);
    // Its log off: it would warn that writeSync is deprecated, and it logs with console.info.
    this.#terminal = new packages.Terminal({
      cols,
      rows,
      scrollback: 0,
      allowProposedApi: true,
      logLevel: "off",
    });
    // Emoji take two columns, as wcwidth (vim, curses, the shell) counts them: xterm's own table
    // (Unicode 6) gives many of them one, and the screen came out shifted.
    this.#terminal.loadAddon(new packages.Unicode11Addon());
    this.#terminal.unicode.activeVersion = "11";
  }

  /**
   * Takes the next output (what ScreenInput makes of it is parsed at once), as much of it as
   * makes about `maxCost` cells' work (see ScreenInput); returns how many bytes it took.
   */
  feed(output: Uint8Array, maxCost = Infinity): number {
    const core = (this.#terminal as unknown as Internals)._core;
    if (!core?.writeSync) {
      throw new Error("@xterm/headless has no writeSync: see screen_emulator.ts");
    }
    const { bytes, consumed } = this.#input.filter(output, maxCost);
    // xterm's public `write` parses in timer tasks of its own; its core's `writeSync` is the same
    // parser, called at once (unreliable only with handlers that wait, which this one has not).
    core.writeSync(bytes);
    return consumed;
  }

  /** The output from here on is laid out at this size. */
  resize(cols: number, rows: number): void {
    this.#size = { cols, rows };
    this.#terminal.resize(cols, rows);
  }

  /** Starts afresh (at this size): the output fed next is read from a blank screen. */
  restart(cols: number, rows: number): void {
    this.#terminal.reset();
    this.#input.reset();
    if (cols !== this.#size.cols || rows !== this.#size.rows) this.resize(cols, rows);
  }

  /** What the screen shows. */
  view(): EmulatorView {
    const terminal = this.#terminal;
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
    };
  }

  /** The screen as escape sequences that redraw it (see screen.ts, `Screen.snapshot`). */
  snapshot(): EmulatorSnapshot {
    const terminal = this.#terminal;
    if (!this.#serializer) {
      this.#serializer = new packages!.SerializeAddon();
      // The addon is typed against the browser package's Terminal; the headless one has what
      // it uses.
      terminal.loadAddon(this.#serializer as unknown as Addon);
    }
    return {
      data: encoder.encode(redraw(terminal, this.#serializer)),
      cols: terminal.cols,
      rows: terminal.rows,
      unfinished: this.#input.unfinished,
    };
  }

  dispose(): void {
    this.#terminal.dispose();
  }
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

/** What is used of an xterm add-on. */
type Addon = Parameters<XtermTerminal["loadAddon"]>[0];
