/**
 * What a person would see on a terminal right now: a headless terminal emulator
 * (@xterm/headless) fed the same output and kept at the same size. The only sane view of a
 * full-screen program (vim, htop, a progress display). Loaded on first use, so terminals whose
 * screen is never asked for cost nothing.
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

/** See the module documentation. */
export class Screen {
  #terminal: XtermTerminal;
  #settled: Promise<void> = Promise.resolve();

  private constructor(terminal: XtermTerminal) {
    this.#terminal = terminal;
  }

  /** A blank screen of the given size. */
  static async create(cols: number, rows: number): Promise<Screen> {
    const { Terminal } = await import("@xterm/headless") as unknown as {
      Terminal: typeof import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
    };
    return new Screen(new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true }));
  }

  /** Feeds output to the emulator (parsed asynchronously, in order). */
  write(data: Uint8Array): void {
    this.#settled = new Promise((resolve) => this.#terminal.write(data, resolve));
  }

  resize(cols: number, rows: number): void {
    this.#terminal.resize(cols, rows);
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

  dispose(): void {
    this.#terminal.dispose();
  }
}
