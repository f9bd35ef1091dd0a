/**
 * Turns terminal output into the text a person would read: escape sequences removed (CSI, OSC
 * ended by BEL or ST, DCS/SOS/PM/APC, charset selects and other ESC sequences, their 8-bit C1
 * forms), control characters dropped, and carriage-return overwrites (progress bars) collapsed
 * to their final text, honouring backspace and the in-line cursor and erase sequences
 * (`CSI K`, `C`, `D`, `G`, `X`, `P`, `@`). `\r\n` becomes `\n`. Sequences that move between
 * lines are dropped: for full-screen programs use a screen view instead.
 *
 * @example
 * ```ts
 * import { cleanTerminalText } from "./clean.ts";
 * cleanTerminalText("\x1b[32mok\x1b[0m\r\n");            // "ok\n"
 * cleanTerminalText("10%\r50%\r100%\n");                 // "100%\n"
 * cleanTerminalText("\x1b]0;title\x07prompt$ ");         // "prompt$ "
 * ```
 * @module
 */

const ESC = 0x1b, BEL = 0x07, BS = 0x08, LF = 0x0a, CR = 0x0d;
const C1_DCS = 0x90, C1_SOS = 0x98, C1_CSI = 0x9b, C1_ST = 0x9c, C1_OSC = 0x9d, C1_PM = 0x9e;
const C1_APC = 0x9f;
/** Characters that need attention: C0 controls but tab, DEL, and C1 controls. */
// deno-lint-ignore no-control-regex -- matching control characters is this module's purpose
const SPECIAL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

/** The line being built: plain while the cursor stays at its end, cells once it moves. */
class Line {
  text = "";
  cells: string[] | undefined;
  cursor = 0;

  write(segment: string): void {
    if (!this.cells) {
      this.text += segment;
      return;
    }
    for (const char of segment) this.cells[this.cursor++] = char;
  }

  /** Switches to cell mode (the cursor is about to move). */
  #toCells(): string[] {
    if (!this.cells) {
      this.cells = Array.from(this.text);
      this.cursor = this.cells.length;
    }
    return this.cells;
  }

  moveTo(column: number): void {
    this.#toCells();
    this.cursor = Math.max(0, column);
  }

  moveBy(delta: number): void {
    this.#toCells();
    this.cursor = Math.max(0, this.cursor + delta);
  }

  /** Erase in line: 0 cursor to end, 1 start to cursor, 2 whole line. */
  erase(mode: number): void {
    const cells = this.#toCells();
    if (mode === 0) cells.length = Math.min(cells.length, this.cursor);
    else if (mode === 1) cells.fill("", 0, Math.min(cells.length, this.cursor + 1));
    else if (mode === 2) cells.length = 0;
  }

  eraseChars(count: number): void {
    const cells = this.#toCells();
    cells.fill("", this.cursor, Math.min(cells.length, this.cursor + count));
  }

  deleteChars(count: number): void {
    this.#toCells().splice(this.cursor, count);
  }

  insertBlanks(count: number): void {
    const cells = this.#toCells();
    if (this.cursor < cells.length) cells.splice(this.cursor, 0, ...new Array(count).fill(""));
  }

  /** The finished text: erased or skipped cells show as spaces, trailing ones vanish. */
  finish(): string {
    const cells = this.cells;
    let result = this.text;
    if (cells) {
      let last = cells.length - 1;
      while (last >= 0 && !cells[last]) last--;
      result = "";
      for (let i = 0; i <= last; i++) result += cells[i] || " ";
    }
    this.text = "";
    this.cells = undefined;
    this.cursor = 0;
    return result;
  }
}

/** See the module documentation. */
export function cleanTerminalText(input: string): string {
  const lines: string[] = [];
  const line = new Line();
  let i = 0;
  const n = input.length;
  while (i < n) {
    SPECIAL.lastIndex = i;
    const match = SPECIAL.exec(input);
    const stop = match ? match.index : n;
    if (stop > i) line.write(input.slice(i, stop));
    if (stop >= n) break;
    const code = input.charCodeAt(stop);
    i = stop + 1;
    switch (code) {
      case LF:
        lines.push(line.finish());
        break;
      case CR:
        if (input.charCodeAt(i) !== LF) line.moveTo(0);
        break;
      case BS:
        line.moveBy(-1);
        break;
      case ESC:
        i = escape(input, i, line);
        break;
      case C1_CSI:
        i = csi(input, i, line);
        break;
      case C1_OSC:
        i = stringEnd(input, i, true);
        break;
      case C1_DCS:
      case C1_SOS:
      case C1_PM:
      case C1_APC:
        i = stringEnd(input, i, false);
        break;
      default:
        // Other controls (BEL, NUL, SO/SI, DEL, lone ST, ...) have no text.
        break;
    }
  }
  const last = line.finish();
  return lines.length === 0 ? last : lines.join("\n") + "\n" + last;
}

/** Handles the sequence after an ESC at `i - 1`; returns the index after it. */
function escape(input: string, i: number, line: Line): number {
  if (i >= input.length) return i;
  const code = input.charCodeAt(i);
  if (code === 0x5b /* [ */) return csi(input, i + 1, line);
  if (code === 0x5d /* ] */) return stringEnd(input, i + 1, true);
  // DCS P, SOS X, PM ^, APC _: strings ended by ST.
  if (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) {
    return stringEnd(input, i + 1, false);
  }
  // nF sequences (charset selects and the like): intermediates 0x20-0x2F, then a final byte.
  let j = i;
  while (j < input.length && input.charCodeAt(j) >= 0x20 && input.charCodeAt(j) <= 0x2f) j++;
  if (j < input.length && input.charCodeAt(j) >= 0x30 && input.charCodeAt(j) <= 0x7e) return j + 1;
  // A lone ESC (followed by a control or nothing): drop just the ESC.
  return j > i ? j : i;
}

/** Parses a CSI body starting at `i` and applies the in-line ones; returns the index after. */
function csi(input: string, i: number, line: Line): number {
  const paramsStart = i;
  while (i < input.length && input.charCodeAt(i) >= 0x30 && input.charCodeAt(i) <= 0x3f) i++;
  const params = input.slice(paramsStart, i);
  while (i < input.length && input.charCodeAt(i) >= 0x20 && input.charCodeAt(i) <= 0x2f) i++;
  if (i >= input.length) return i;
  const final = input.charCodeAt(i);
  // Not a final byte: the sequence is malformed; drop what was read and go on from here.
  if (final < 0x40 || final > 0x7e) return i;
  if (params.length === 0 || /^[0-9;]+$/.test(params)) {
    const first = Number.parseInt(params.split(";")[0] || "0", 10);
    const count = Math.max(1, first);
    switch (final) {
      case 0x4b /* K */:
        line.erase(first);
        break;
      case 0x43 /* C */:
        line.moveBy(count);
        break;
      case 0x44 /* D */:
        line.moveBy(-count);
        break;
      case 0x47 /* G */:
        line.moveTo(count - 1);
        break;
      case 0x58 /* X */:
        line.eraseChars(count);
        break;
      case 0x50 /* P */:
        line.deleteChars(count);
        break;
      case 0x40 /* @ */:
        line.insertBlanks(count);
        break;
    }
  }
  return i + 1;
}

/** Finds the end of a control string (ST = ESC \ or 0x9C; BEL too for OSC). */
function stringEnd(input: string, i: number, bellEnds: boolean): number {
  for (; i < input.length; i++) {
    const code = input.charCodeAt(i);
    if (code === C1_ST || (bellEnds && code === BEL)) return i + 1;
    if (code === ESC && input.charCodeAt(i + 1) === 0x5c /* \ */) return i + 2;
  }
  return i;
}
