/**
 * What a person would see on a terminal right now: a headless terminal emulator
 * (@xterm/headless) kept at the terminal's size and fed its output. The only sane view of a
 * full-screen program (vim, htop, a progress display). Loaded on first use, so terminals whose
 * screen is never asked for cost nothing.
 *
 * The emulator is fed lazily, when the screen is asked for, and at a bounded cost:
 * - through {@link ScreenInput}, which clamps the counts xterm would loop or allocate over;
 * - at most the newest {@link CATCH_UP} bytes: further behind (or when the buffer has dropped
 *   what it had not seen), it restarts from a line start that recent (full-screen programs
 *   redraw the screen, a shell's last lines are there);
 * - in slices of bounded work ({@link SLICE_COST} cells, as ScreenInput estimates it: about 10
 *   ms), with the event loop free between them (xterm parses asynchronously), and for at most
 *   {@link RENDER_BUDGET_MS} per request: output the emulator could not get through by then is
 *   reported as `unrenderedBytes` and fed on the next request.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { Screen } from "./screen.ts";
 * const buffer = new OutputBuffer();
 * const screen = await Screen.create(buffer, 20, 3);
 * buffer.append(new TextEncoder().encode("ab\x1b[2;5Hcd"));
 * (await screen.render()).text; // "ab\n    cd\n" (blank rows below are left out)
 * ```
 * @module
 */
import type { OutputBuffer } from "./buffer.ts";
import { ScreenInput } from "./screen_input.ts";

// The package's "module" field names a file it does not ship, which bundlers follow: the
// import map points at its ESM build, and the types come from its typings.
type XtermTerminal = import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;

/** The emulator is fed at most this many of the newest bytes. */
export const CATCH_UP = 1024 * 1024;
/** One request feeds the emulator for at most this long. */
export const RENDER_BUDGET_MS = 1000;
/** The work one slice of feeding may take, in cells the emulator touches (see ScreenInput). */
export const SLICE_COST = 1_000_000;
/** Bytes read from the buffer for one slice, at most. */
const SLICE_BYTES = 64 * 1024;

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

/** See the module documentation. */
export class Screen {
  #terminal: XtermTerminal;
  #buffer: OutputBuffer;
  #input: ScreenInput;
  /** Offset of the first byte not yet fed. */
  #fed: number;
  /** Requests run one after the other. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(terminal: XtermTerminal, buffer: OutputBuffer) {
    this.#terminal = terminal;
    this.#buffer = buffer;
    this.#input = new ScreenInput(() => ({ cols: terminal.cols, rows: terminal.rows }));
    this.#fed = buffer.start;
  }

  /** A screen of the given size showing `buffer`'s output. */
  static async create(buffer: OutputBuffer, cols: number, rows: number): Promise<Screen> {
    const { Terminal } = await import("@xterm/headless") as unknown as {
      Terminal: typeof import("npm:@xterm/headless@6.0.0/typings/xterm-headless.d.ts").Terminal;
    };
    return new Screen(new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true }), buffer);
  }

  /** Resizes, once the output written at the old size has been shown at it. */
  resize(cols: number, rows: number): Promise<void> {
    return this.#enqueue(async () => {
      await this.#catchUp();
      this.#terminal.resize(cols, rows);
    });
  }

  /** The screen once the output so far has been processed (within the time budget). */
  render(): Promise<ScreenView> {
    return this.#enqueue(async () => {
      await this.#catchUp();
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
        unrenderedBytes: this.#buffer.end - this.#fed,
      };
    });
  }

  dispose(): void {
    this.#enqueue(() => Promise.resolve(this.#terminal.dispose()));
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => {});
    return result;
  }

  async #catchUp(): Promise<void> {
    const output = this.#buffer;
    if (this.#fed < output.start || output.end - this.#fed > CATCH_UP) {
      // Too far behind: start afresh from a recent line start.
      const from = Math.max(output.start, output.end - CATCH_UP);
      const line = output.lineStart(output.lineAt(from) + 1);
      this.#fed = output.lineStart(output.lineAt(from)) === from || line >= output.end
        ? from
        : line;
      this.#terminal.reset();
      this.#input.reset();
    }
    const deadline = performance.now() + RENDER_BUDGET_MS;
    while (this.#fed < output.end && performance.now() < deadline) {
      const end = Math.min(output.end, this.#fed + SLICE_BYTES);
      const { bytes, consumed } = this.#input.filter(output.read(this.#fed, end).bytes, SLICE_COST);
      await new Promise<void>((resolve) => this.#terminal.write(bytes, resolve));
      this.#fed += consumed;
    }
  }
}
