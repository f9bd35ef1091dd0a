/**
 * What a person would see on a terminal right now: a headless terminal emulator
 * (@xterm/headless) fed the same output and kept at the same size. The only sane view of a
 * full-screen program (vim, htop, a progress display). Loaded on first use, so terminals whose
 * screen is never asked for cost nothing. A {@link Screen.snapshot} is the screen as escape
 * sequences (@xterm/addon-serialize): written into a fresh terminal of the same size, it draws
 * the same screen, so a viewer that joins late sees vim as it is.
 *
 * @example
 * ```ts
 * import { Screen } from "./screen.ts";
 * const screen = await Screen.create(20, 3);
 * screen.write(new TextEncoder().encode("ab\x1b[2;5Hcd"));
 * (await screen.render()).text; // "ab\n    cd\n" (blank rows below are left out)
 * ```
 * @module
 */

// The package's "module" field names a file it does not ship, which bundlers follow: the
// import map points at its ESM build, and the types come from its typings.
type XtermTerminal = import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
/**
 * What is used of @xterm/addon-serialize. Its own typings are the browser terminal's, which
 * pull the DOM's types into the server's type-check: the import map names its ESM build, untyped.
 */
interface Serializer {
  serialize(options?: { scrollback?: number }): string;
}

/** The emulator's cursor visibility (DECTCEM), which the public API and the serializer leave out. */
interface CursorState {
  _core?: { coreService?: { isCursorHidden?: boolean } };
}

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
}

/**
 * Output waiting to be parsed at most (xterm.js throws away writes beyond 50 MB; a screen
 * stops well before, and its owner rebuilds it when next asked).
 */
export const MAX_UNPARSED = 16 * 1024 * 1024;

/** See the module documentation. */
export class Screen {
  #terminal: XtermTerminal;
  #serializer: Serializer;
  #settled: Promise<void> = Promise.resolve();
  #unparsed = 0;

  private constructor(terminal: XtermTerminal, serializer: Serializer) {
    this.#terminal = terminal;
    this.#serializer = serializer;
  }

  /** A blank screen of the given size. */
  static async create(cols: number, rows: number): Promise<Screen> {
    const [{ Terminal }, { SerializeAddon }] = await Promise.all([
      import("@xterm/headless") as unknown as Promise<{
        Terminal: typeof import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
      }>,
      import("@xterm/addon-serialize") as Promise<{ SerializeAddon: new () => Serializer }>,
    ]);
    const terminal = new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
    const serializer = new SerializeAddon();
    // The addon is typed against the browser package's Terminal; the headless one has what it uses.
    terminal.loadAddon(serializer as unknown as Parameters<XtermTerminal["loadAddon"]>[0]);
    return new Screen(terminal, serializer);
  }

  /**
   * Feeds output to the emulator (parsed asynchronously, in order). False, and nothing
   * written, when more than {@link MAX_UNPARSED} bytes wait to be parsed already (a flood
   * faster than the emulator): the screen is then behind for good and must be rebuilt.
   */
  write(data: Uint8Array): boolean {
    if (this.#unparsed > MAX_UNPARSED) return false;
    this.#unparsed += data.length;
    this.#settled = new Promise((resolve) =>
      this.#terminal.write(data, () => {
        this.#unparsed -= data.length;
        resolve();
      })
    );
    return true;
  }

  /** Resizes, in order with the writes: output written before is laid out at the old size. */
  resize(cols: number, rows: number): void {
    const terminal = this.#terminal;
    this.#settled = new Promise((resolve) =>
      terminal.write("", () => {
        terminal.resize(cols, rows);
        resolve();
      })
    );
  }

  /**
   * The screen as escape sequences that redraw it (contents, colours, the alternate screen,
   * modes, the cursor), taken after everything written before this call and before anything
   * written after it, with the size it had then.
   */
  snapshot(): Promise<{ data: string; cols: number; rows: number }> {
    const taken = new Promise<{ data: string; cols: number; rows: number }>((resolve) => {
      // A write's callback runs right after that chunk is parsed, before the next one.
      this.#terminal.write("", () => {
        const terminal = this.#terminal;
        const hidden = (terminal as unknown as CursorState)._core?.coreService?.isCursorHidden;
        const data = this.#serializer.serialize({ scrollback: 0 }) + (hidden ? "\x1b[?25l" : "");
        resolve({ data, cols: terminal.cols, rows: terminal.rows });
      });
    });
    this.#settled = taken.then(() => {});
    return taken;
  }

  /** The screen once everything written so far has been processed. */
  async render(): Promise<ScreenView> {
    await this.#settled;
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

  /** Frees the emulator once what was written (and any snapshot asked for) is done. */
  dispose(): void {
    const terminal = this.#terminal;
    this.#settled.then(() => terminal.dispose());
  }
}
