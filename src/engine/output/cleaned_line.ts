/**
 * The line a {@link Cleaner} builds (see clean.ts): its text while the cursor stays at its end,
 * its cells once the cursor moves, and how wide characters are on a terminal (wcwidth).
 *
 * @module
 */
import { eastAsianWidth } from "get-east-asian-width";

/** Cells in a row at most: the widest terminal modelled (the server opens none wider). */
export const MAX_COLUMNS = 1000;

/**
 * The line being built. Plain while the cursor stays at its end (the common case: text is
 * appended as strings); once the cursor moves, its current row becomes cells (code points in
 * a typed array, 0 for a blank) and the rows before it are kept as text.
 */
export class Line {
  readonly #width: number;
  #plain = "";
  /** Cell mode: the line's rows before the current one (they wrapped), as text. */
  #head = "";
  #row: Uint32Array | undefined;
  /** Combining marks that go with a cell's character, by column (made on first need). */
  #attached: (string | undefined)[] | undefined;
  #cellMode = false;
  /** Cells of the row in use: one past the last written or kept cell. */
  #used = 0;
  #cursor = 0;
  /** The cursor is on the last column and the next character wraps first (as in xterm). */
  #wrapPending = false;
  /** The last character printed, for REP; 0 when something else came after it. */
  last = 0;

  constructor(width: number) {
    this.#width = width;
  }

  write(segment: string): void {
    if (segment.length === 0) return;
    if (!this.#cellMode) {
      this.#plain += segment;
    } else {
      for (let i = 0; i < segment.length; i++) {
        const code = segment.codePointAt(i)!;
        if (code > 0xffff) i++;
        this.#put(code);
      }
    }
    this.last = segment.codePointAt(segment.length - 1)!;
    if (this.last >= 0xdc00 && this.last <= 0xdfff && segment.length > 1) {
      this.last = segment.codePointAt(segment.length - 2)!;
    }
  }

  #put(code: number): void {
    const row = this.#row!;
    const width = cellWidth(code, this.#width);
    if (width === 0) return this.#attach(String.fromCodePoint(code));
    // A double-width character that does not fit in the row wraps, leaving its last cell blank.
    if (this.#wrapPending || this.#cursor + width > this.#width) {
      // (That blank is no text of the line: the row ends before it.)
      const shown = !this.#wrapPending && row[this.#width - 1] === 0
        ? this.#width - 1
        : this.#width;
      this.#head += render(row, shown, this.#attached);
      this.#blank(0, this.#width);
      this.#used = 0;
      this.#cursor = 0;
      this.#wrapPending = false;
    }
    const at = this.#cursor;
    // Written over half of a double-width character, the other half is blank.
    if (row[at] === WIDE_TAIL && at > 0) this.#blank(at - 1, at);
    if (row[at + width] === WIDE_TAIL) this.#blank(at + width, at + width + 1);
    row[at] = code;
    if (width === 2) row[at + 1] = WIDE_TAIL;
    if (this.#attached) this.#attached.fill(undefined, at, at + width);
    if (at + width === this.#width) {
      this.#cursor = this.#width - 1;
      this.#wrapPending = true;
      this.#used = this.#width;
    } else {
      this.#cursor = at + width;
      if (this.#cursor > this.#used) this.#used = this.#cursor;
    }
  }

  /** A character of no width of its own (a combining mark) goes with the one before it. */
  #attach(mark: string): void {
    const column = this.#wrapPending ? this.#width - 1 : this.#cursor - 1;
    if (column < 0) {
      this.#head += mark;
      return;
    }
    const at = this.#row![column] === WIDE_TAIL && column > 0 ? column - 1 : column;
    this.#attached ??= new Array(this.#width);
    this.#attached[at] = (this.#attached[at] ?? "") + mark;
  }

  /** Blanks the cells [from, to), and what goes with them. */
  #blank(from: number, to: number): void {
    this.#row!.fill(0, from, to);
    this.#attached?.fill(undefined, from, to);
  }

  /** Switches to cell mode: the last row of the plain text becomes cells, the cursor at its end. */
  #cells(): Uint32Array {
    if (this.#cellMode) return this.#row!;
    this.#row ??= new Uint32Array(this.#width);
    this.#cellMode = true;
    const text = this.#plain;
    this.#plain = "";
    // The plain text is as many rows as it takes, counted from the line's start (forgotten or
    // not); its last row (full or not) is the current one.
    const split = advance(this.#forgottenColumn, text, text.length, this.#width).rowStart;
    this.#head = text.slice(0, split);
    // Cells past #used are always blank, and finish() blanks the used ones: the row is clean.
    const row = this.#row;
    this.#used = 0;
    this.#cursor = 0;
    this.#wrapPending = false;
    for (let i = split; i < text.length; i++) {
      const code = text.codePointAt(i)!;
      if (code > 0xffff) i++;
      this.#put(code);
    }
    return row;
  }

  /** Moves to column `column` of the current row (clamped to the row). */
  moveTo(column: number): void {
    this.#cells();
    this.#cursor = Math.min(Math.max(0, column), this.#width - 1);
    this.#wrapPending = false;
    this.last = 0;
  }

  moveBy(delta: number): void {
    this.#cells();
    this.moveTo(this.#cursor + delta);
  }

  /** Erase in line: 0 cursor to end, 1 start to cursor, 2 whole row. */
  erase(mode: number): void {
    this.last = 0;
    // In plain mode the cursor is at the end: erasing to the end erases nothing.
    if (mode === 0 && !this.#cellMode) return;
    if (mode > 2) return;
    this.#cells();
    if (mode === 0) {
      this.#blank(this.#cursor, this.#used);
      this.#used = Math.min(this.#used, this.#cursor);
    } else if (mode === 1) {
      this.#blank(0, Math.min(this.#cursor + 1, this.#used));
    } else {
      this.#blank(0, this.#used);
      this.#used = 0;
    }
  }

  /** ECH: blanks `count` cells from the cursor on. */
  eraseChars(count: number): void {
    this.last = 0;
    if (!this.#cellMode) return; // nothing after the cursor
    this.#blank(this.#cursor, Math.min(this.#cursor + count, this.#used));
  }

  /** DCH: deletes `count` cells at the cursor; the rest of the row moves left. */
  deleteChars(count: number): void {
    this.last = 0;
    if (!this.#cellMode || this.#cursor >= this.#used) return;
    const row = this.#row!;
    const removed = Math.min(count, this.#used - this.#cursor);
    row.copyWithin(this.#cursor, this.#cursor + removed, this.#used);
    this.#attached?.copyWithin(this.#cursor, this.#cursor + removed, this.#used);
    this.#blank(this.#used - removed, this.#used);
    this.#used -= removed;
  }

  /** ICH: inserts `count` blanks at the cursor; cells pushed past the last column are lost. */
  insertBlanks(count: number): void {
    this.last = 0;
    if (!this.#cellMode || this.#cursor >= this.#used) return;
    const row = this.#row!;
    const inserted = Math.min(count, this.#width - this.#cursor);
    row.copyWithin(this.#cursor + inserted, this.#cursor, this.#width - inserted);
    this.#attached?.copyWithin(this.#cursor + inserted, this.#cursor, this.#width - inserted);
    this.#blank(this.#cursor, this.#cursor + inserted);
    this.#used = Math.min(this.#width, this.#used + inserted);
  }

  /** REP: prints the last character again, at most a row's worth of times. */
  repeat(count: number): void {
    const code = this.last;
    if (code === 0) return;
    const times = Math.min(count, this.#width);
    if (!this.#cellMode) this.#plain += String.fromCodePoint(code).repeat(times);
    else for (let i = 0; i < times; i++) this.#put(code);
  }

  /** Characters of this line forgotten by {@link forgetOld}. */
  forgotten = 0;
  /** The last character {@link forgetOld} forgot (the one before what it kept), or "". */
  forgottenLast = "";
  /** The column after the characters forgotten while the line was plain: its rows start there. */
  #forgottenColumn = 0;

  /** Forgets all but about the last `keep` characters of the line (see CleanerOptions). */
  forgetOld(keep: number): void {
    const text = this.#cellMode ? this.#head : this.#plain;
    const kept = keepEnd(text, keep);
    if (kept.length === text.length) return;
    const cut = text.length - kept.length;
    if (this.#cellMode) this.#head = kept;
    else {
      this.#plain = kept;
      this.#forgottenColumn = advance(this.#forgottenColumn, text, cut, this.#width).column;
    }
    this.forgotten += cut;
    this.forgottenLast = text[cut - 1];
  }

  /** The character shown right before the cursor (where the next one goes), or "" at the start. */
  beforeCursor(): string {
    if (!this.#cellMode) return this.#plain.at(-1) ?? "";
    const column = this.#wrapPending ? this.#width : this.#cursor;
    if (column === 0) return this.#head.at(-1) ?? "";
    const row = this.#row!;
    const code = row[column - 1] === WIDE_TAIL && column > 1 ? row[column - 2] : row[column - 1];
    return code === 0 || code === WIDE_TAIL ? " " : String.fromCodePoint(code);
  }

  /** About how many characters the line holds. */
  get size(): number {
    return this.#cellMode ? this.#head.length + this.#used : this.#plain.length;
  }

  /** The text as it stands: blank cells show as spaces, trailing ones vanish. */
  text(): string {
    if (!this.#cellMode) return this.#plain;
    let end = this.#used;
    const row = this.#row!;
    while (end > 0 && row[end - 1] === 0) end--;
    return this.#head + render(row, end, this.#attached);
  }

  /** Returns the text and starts a new, empty line. */
  finish(): string {
    const text = this.text();
    this.#plain = "";
    this.#head = "";
    if (this.#cellMode) this.#blank(0, this.#used);
    this.#cellMode = false;
    this.#used = 0;
    this.#cursor = 0;
    this.#wrapPending = false;
    this.last = 0;
    this.forgotten = 0;
    this.forgottenLast = "";
    this.#forgottenColumn = 0;
    return text;
  }
}

/** The last `keep` characters of `text` once it is twice that long (a pair is never split). */
function keepEnd(text: string, keep: number): string {
  if (text.length <= 2 * keep) return text;
  const start = text.length - keep;
  return text.slice(isLowAfterHigh(text, start) ? start + 1 : start);
}

/** Whether the code unit at `i` is the second half of a surrogate pair. */
export function isLowAfterHigh(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if (code < 0xdc00 || code > 0xdfff || i === 0) return false;
  const high = text.charCodeAt(i - 1);
  return high >= 0xd800 && high <= 0xdbff;
}

const units = new Uint16Array(MAX_COLUMNS);

/** The text of the first `length` cells (blank cells as spaces), with their combining marks. */
function render(row: Uint32Array, length: number, attached?: (string | undefined)[]): string {
  // Usually every cell is one UTF-16 unit: one copy and one call; else cell by cell.
  let simple = attached === undefined || !attached.some((mark, i) => i < length && mark);
  for (let i = 0; simple && i < length; i++) {
    const code = row[i];
    if (code > 0xffff) simple = false;
    units[i] = code === 0 ? 0x20 : code;
  }
  if (simple) {
    return String.fromCharCode.apply(null, units.subarray(0, length) as unknown as number[]);
  }
  let text = "";
  for (let i = 0; i < length; i++) {
    const code = row[i];
    if (code === WIDE_TAIL) continue;
    text += (code === 0 ? " " : String.fromCodePoint(code)) + (attached?.[i] ?? "");
  }
  return text;
}

/** The cell after a double-width character's, which it covers. */
const WIDE_TAIL = 0xffffffff;
/** Characters shown with the one before them, in no cell of their own. */
const NO_WIDTH = /^[\p{Mn}\p{Me}\u200b-\u200f\u2060\ufe00-\ufe0f]$/u;

/**
 * The cells a character takes, as terminals count them (wcwidth): 2 for East Asian wide and
 * fullwidth characters (and emoji), 0 for combining marks and joiners, else 1; at most the row.
 */
function cellWidth(code: number, columns: number): number {
  if (code < 0x300) return 1;
  if (NO_WIDTH.test(String.fromCodePoint(code))) return 0;
  return Math.min(columns, eastAsianWidth(code));
}

/**
 * Where the last row of `text` (up to `end`, code units) starts on a terminal `columns` wide, and
 * the column after it, the line's text having begun at `column` of its first row.
 */
function advance(
  column: number,
  text: string,
  end: number,
  columns: number,
): { column: number; rowStart: number } {
  let rowStart = 0;
  for (let i = 0; i < end; i++) {
    const code = text.codePointAt(i)!;
    const width = cellWidth(code, columns);
    if (width > 0 && column + width > columns) {
      rowStart = i;
      column = 0;
    }
    column += width;
    if (code > 0xffff) i++;
  }
  return { column, rowStart };
}
