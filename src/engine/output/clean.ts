/**
 * Turns terminal output into the text a person would read: escape sequences removed (CSI, OSC
 * ended by BEL or ST, DCS/SOS/PM/APC, charset selects and other ESC sequences, their 8-bit C1
 * forms), control characters dropped, and carriage-return overwrites (progress bars) collapsed
 * to their final text, honouring backspace and the in-line cursor and edit sequences (`CSI K`
 * EL, `C` CUF, `a` HPR, `D` CUB, `G` CHA, `` ` `` HPA, `X` ECH, `P` DCH, `@` ICH, `b` REP).
 * `\r\n` becomes `\n`. Sequences that move between lines (CUP, IL, DL, ...) are dropped: for
 * full-screen programs use a screen view instead.
 *
 * It parses as a terminal does (the VT500 state machine: an ESC or CAN/SUB ends any sequence,
 * C0 controls act inside CSI), one state carried across {@link Cleaner.push} calls, so a
 * sequence split between two chunks of a stream is removed whole. One departure: a line feed
 * ends a control string (OSC, DCS, ...), so an unterminated one hides the rest of its line, not
 * the rest of the output, and every line feed of the input is one line break of the result.
 *
 * Bounded cost, whatever the parameters (a program controls them):
 * - parameters are clamped while they are read (at most {@link MAX_PARAMETERS} of them, each at
 *   most 99,999), never converted from an arbitrarily long digit string;
 * - a line is edited as rows as wide as the terminal (`columns`, at most {@link MAX_COLUMNS}),
 *   as a terminal does: the cursor never goes past the last column, text written there wraps to
 *   a new row, a carriage return goes to the start of the current row. So every sequence costs
 *   at most one row's worth of work (typed-array moves), and adds at most a row of characters
 *   to the result: the cleaned text is never longer than the printed text plus a row per escape
 *   sequence and per line. Printed text without cursor moves is never cut or wrapped, however
 *   long its line.
 *
 * @example
 * ```ts
 * import { Cleaner, cleanTerminalText } from "./clean.ts";
 * cleanTerminalText("\x1b[32mok\x1b[0m\r\n");            // "ok\n"
 * cleanTerminalText("10%\r50%\r100%\n");                 // "100%\n"
 * cleanTerminalText("\x1b]0;title\x07prompt$ ");         // "prompt$ "
 * const stream = new Cleaner();
 * stream.push("\x1b[3");                                 // "" (a sequence has begun)
 * stream.push("2mgreen\n");                              // "green\n"
 * ```
 * @module
 */

import { atOnce, type Steps } from "../slices.ts";
import { isLowAfterHigh, Line, MAX_COLUMNS } from "./cleaned_line.ts";

export { isLowAfterHigh, MAX_COLUMNS };

/** Parameters of one CSI sequence that are read; later ones are ignored. */
export const MAX_PARAMETERS = 16;
/**
 * Characters of input between two places where {@link Cleaner.pushSteps} may pause: about a
 * millisecond of the slowest output to clean (edits of lines in cell mode, 60-100 ns each).
 */
export const PAUSE_CHARACTERS = 16 * 1024;
const MAX_PARAMETER_VALUE = 99_999;

const ESC = 0x1b, BEL = 0x07, BS = 0x08, LF = 0x0a, CR = 0x0d, CAN = 0x18, SUB = 0x1a;
const DEL = 0x7f;
const C1_DCS = 0x90, C1_SOS = 0x98, C1_CSI = 0x9b, C1_OSC = 0x9d, C1_PM = 0x9e;
const C1_APC = 0x9f;
/** Characters that need attention in text: C0 controls but tab, DEL, and C1 controls. */
// deno-lint-ignore no-control-regex -- matching control characters is this module's purpose
const SPECIAL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;
/** What can end (or break) a control string. */
// deno-lint-ignore no-control-regex -- likewise
const STRING_BREAK = /[\x07\x0a\x18\x1a\x1b\x80-\x9f]/g;

const enum State {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
  /** A CSI sequence that will be ignored (private marker, intermediates, sub-parameters). */
  CsiIgnore,
  /** OSC: ended by ST or BEL. */
  Osc,
  /** DCS, SOS, PM, APC: ended by ST. */
  ControlString,
}

/** Options of a {@link Cleaner}. */
export interface CleanerOptions {
  /** The terminal's width (1 to {@link MAX_COLUMNS}). Default {@link MAX_COLUMNS}. */
  columns?: number;
  /**
   * Keep only about this many of the newest characters of a line still being written (for a
   * reader that only looks at the newest part of it, such as a pattern scanner): a line that
   * never ends then costs bounded memory. At least two rows' worth (a row of surrogate pairs),
   * so that the current row is always kept whole. Default: the whole line.
   */
  keepLine?: number;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
/** Whether `code` is the second half of a surrogate pair. */
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * A stream's cleaner: feed it the stream's text in pieces; it returns each line once the line
 * is complete. See the module documentation.
 */
export class Cleaner {
  readonly #keepLine: number;
  readonly #line: Line;

  constructor(options: CleanerOptions = {}) {
    const columns = Math.min(MAX_COLUMNS, Math.max(1, Math.round(options.columns ?? MAX_COLUMNS)));
    this.#keepLine = Math.max(2 * columns, options.keepLine ?? Infinity);
    this.#line = new Line(columns);
  }

  #state = State.Ground;
  /** A carriage return whose meaning depends on the next character (`\r\n` is a newline). */
  #pendingReturn = false;
  #params: number[] = [];
  #param = -1;
  /** Where the unfinished sequence began in the last input, or -1 (none, or in an earlier input). */
  #sequenceStart = -1;
  #inputLength = 0;
  #consumed = 0;
  /** Lines of the current push already added to the size count. */
  #counted = 0;
  /**
   * A high surrogate that ended the last input: the first half of a character whose second half
   * comes in the next one (written alone only if it does not).
   */
  #highSurrogate = "";

  /**
   * Cleans the next piece of the stream; returns the lines it completed, each ending in "\n".
   * With `limit`, stops early (between two sequences or lines) once this call has added about
   * `limit` characters (to completed lines and the unfinished one); {@link consumed} then tells
   * how much of `input` was read. It always reads something.
   */
  push(input: string, limit: number = Infinity): string {
    return atOnce(this.pushSteps(input, limit));
  }

  /**
   * {@link push} as steps (see src/engine/slices.ts): they may pause every
   * {@link PAUSE_CHARACTERS} characters of `input`, and inside a run of text that long (the
   * same writes, split). Nothing else about the result depends on where they pause.
   */
  *pushSteps(input: string, limit: number = Infinity): Steps<string> {
    const lines: string[] = [];
    const line = this.#line;
    const n = input.length;
    this.#inputLength = n;
    if (this.#state !== State.Ground) this.#sequenceStart = -1;
    // The unfinished line's size at the start does not count against this push's limit.
    let produced = -line.size;
    let i = 0;
    if (this.#highSurrogate) {
      const pair = this.#state === State.Ground && isLowSurrogate(input.charCodeAt(0));
      line.write(pair ? this.#highSurrogate + input[0] : this.#highSurrogate);
      this.#highSurrogate = "";
      if (pair) i = 1;
    }
    let pauseAt = i + PAUSE_CHARACTERS;
    while (i < n) {
      if (i >= pauseAt) {
        yield;
        pauseAt = i + PAUSE_CHARACTERS;
      }
      if (this.#state === State.Ground) {
        if (limit !== Infinity) {
          for (let k = this.#counted; k < lines.length; k++) produced += lines[k].length + 1;
          this.#counted = lines.length;
          if (produced + line.size >= limit) break;
        }
        SPECIAL.lastIndex = i;
        const match = SPECIAL.exec(input);
        const stop = match ? match.index : n;
        if (stop > i) {
          this.#resolveReturn(false);
          const split = stop === n && isHighSurrogate(input.charCodeAt(n - 1));
          if (split) this.#highSurrogate = input[n - 1];
          const end = split ? n - 1 : stop;
          const pausedAt = yield* this.#writeText(input, i, end);
          if (pausedAt >= 0) pauseAt = pausedAt + PAUSE_CHARACTERS;
        }
        if (stop >= n) {
          i = n;
          break;
        }
        i = stop;
      } else if (this.#state === State.Osc || this.#state === State.ControlString) {
        STRING_BREAK.lastIndex = i;
        const match = STRING_BREAK.exec(input);
        if (!match) {
          i = n;
          break;
        }
        i = match.index;
        const code = input.charCodeAt(i);
        if (code === BEL && this.#state !== State.Osc) {
          i++;
          continue;
        }
      }
      const code = input.charCodeAt(i);
      i++;
      if (!this.#control(code, lines, i - 1)) i = this.#sequenceByte(code, i);
    }
    if (this.#state === State.Ground) this.#sequenceStart = -1;
    if (this.#keepLine !== Infinity) line.forgetOld(this.#keepLine);
    this.#consumed = i;
    this.#counted = 0;
    return lines.length === 0 ? "" : lines.join("\n") + "\n";
  }

  /**
   * Writes the text `input[from, end)` to the unfinished line. A long run is written in parts
   * (never between the halves of a pair), pausing between them: the same as one write, which in
   * cell mode goes a character at a time. Returns where it last paused (-1: it did not).
   */
  *#writeText(input: string, from: number, end: number): Steps<number> {
    let pausedAt = -1;
    while (from < end) {
      let to = Math.min(end, from + PAUSE_CHARACTERS);
      if (to < end && isHighSurrogate(input.charCodeAt(to - 1))) to++;
      this.#line.write(input.slice(from, to));
      from = to;
      if (from < end) {
        yield;
        pausedAt = from;
      }
    }
    return pausedAt;
  }

  /**
   * Reads the byte at `i - 1` of an escape sequence (after ESC, its intermediates, a CSI's);
   * returns where reading goes on. Ground and strings have nothing here: their controls were
   * handled by {@link #control}, and a string's other characters are ignored.
   */
  #sequenceByte(code: number, i: number): number {
    switch (this.#state) {
      case State.Escape:
        if (code >= 0x20 && code <= 0x2f) this.#state = State.EscapeIntermediate;
        else if (code === 0x5b /* [ */) this.#enterCsi();
        else if (code === 0x5d /* ] */) this.#enterString(State.Osc);
        else if (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) {
          this.#enterString(State.ControlString); // DCS P, SOS X, PM ^, APC _
        } else if (code >= 0x30 && code <= 0x7e) this.#escapeDone();
        else return this.#abort(i);
        return i;
      case State.EscapeIntermediate:
        if (code >= 0x30 && code <= 0x7e) this.#escapeDone();
        else if (code > 0x2f) return this.#abort(i);
        return i;
      case State.Csi:
      case State.CsiIgnore:
        return this.#csiByte(code, i);
      default:
        return i;
    }
  }

  /** How many characters of the last input were read (all of them unless a limit stopped it). */
  get consumed(): number {
    return this.#consumed;
  }

  /** The unfinished line as it would read if the stream ended now (nothing is consumed). */
  peek(): string {
    return this.#line.text();
  }

  /** Characters at the start of the unfinished line forgotten (see {@link CleanerOptions}). */
  get forgotten(): number {
    return this.#line.forgotten;
  }

  /** The character just before the unfinished line's kept part ("" while none is forgotten). */
  get forgottenLast(): string {
    return this.#line.forgottenLast;
  }

  /**
   * The character shown right before the cursor, where the next one would go ("" at a line's
   * start): what output written next follows. A carriage return whose meaning waits on the next
   * character is taken as a return to the row's start.
   */
  beforeCursor(): string {
    this.#resolveReturn(false);
    return this.#line.beforeCursor();
  }

  /** Ends the stream: returns the unfinished line and starts afresh. */
  end(): string {
    if (this.#highSurrogate) this.#line.write(this.#highSurrogate);
    this.#highSurrogate = "";
    this.#state = State.Ground;
    this.#pendingReturn = false;
    this.#sequenceStart = -1;
    return this.#line.finish();
  }

  /** Whether the input so far ends inside an escape sequence. */
  get inSequence(): boolean {
    return this.#state !== State.Ground;
  }

  /**
   * How many characters at the end of the last input belong to a sequence that is not finished
   * yet (0 when none is, or when it began before the last input).
   */
  get unfinishedSequenceLength(): number {
    return this.#sequenceStart < 0 ? 0 : this.#inputLength - this.#sequenceStart;
  }

  /**
   * Handles the controls that act in every state (C0, C1, ESC, CAN/SUB); returns false for
   * anything else, which the state's own rules handle.
   */
  #control(code: number, lines: string[], at: number): boolean {
    const state = this.#state;
    const inString = state === State.Osc || state === State.ControlString;
    if (code === ESC) {
      this.#begin(State.Escape, at, !inString);
      return true;
    }
    if (code === CAN || code === SUB) {
      this.#state = State.Ground;
      return true;
    }
    if (code >= 0x80 && code <= 0x9f) {
      if (code === C1_CSI) {
        this.#begin(State.Csi, at, !inString);
        this.#params = [];
        this.#param = -1;
      } else if (code === C1_OSC) this.#begin(State.Osc, at, !inString);
      else if (code === C1_DCS || code === C1_SOS || code === C1_PM || code === C1_APC) {
        this.#begin(State.ControlString, at, !inString);
      } else this.#state = State.Ground; // ST and the other C1 controls
      return true;
    }
    if (inString) {
      if (code === BEL && state === State.Osc) this.#state = State.Ground;
      else if (code === LF) {
        // A control string never spans lines (a terminal would swallow the rest of the output
        // after an unterminated one): the line feed ends it and counts, so every line feed of
        // the input is exactly one line break of the result.
        this.#state = State.Ground;
        this.#execute(code, lines);
      }
      return true; // everything else belongs to the string
    }
    if (code < 0x20) {
      // C0 controls act wherever they appear outside strings (also inside ESC and CSI).
      this.#execute(code, lines);
      return true;
    }
    // DEL is ignored everywhere; other characters follow the state's own rules.
    return code === DEL || state === State.Ground;
  }

  /** A sequence begins at `at` (`fresh`: it does not continue the one in progress). */
  #begin(state: State, at: number, fresh: boolean): void {
    if (this.#state === State.Ground || fresh) this.#sequenceStart = at;
    this.#resolveReturn(false);
    if (state !== State.Escape && state !== State.Csi) this.#line.last = 0;
    this.#state = state;
  }

  #execute(code: number, lines: string[]): void {
    const line = this.#line;
    line.last = 0;
    if (code === LF) {
      this.#pendingReturn = false;
      lines.push(line.finish());
      return;
    }
    if (code === CR) {
      this.#resolveReturn(false);
      this.#pendingReturn = true;
      return;
    }
    this.#resolveReturn(false);
    if (code === BS) line.moveBy(-1);
    // BEL, NUL, SO/SI, VT, FF and the rest have no text.
  }

  /** Applies a pending carriage return (unless a line feed follows it: then it is a newline). */
  #resolveReturn(beforeNewline: boolean): void {
    if (!this.#pendingReturn) return;
    this.#pendingReturn = false;
    if (!beforeNewline) this.#line.moveTo(0);
  }

  #escapeDone(): void {
    this.#state = State.Ground;
    this.#line.last = 0;
  }

  #enterString(state: State): void {
    this.#state = state;
    this.#line.last = 0;
  }

  #enterCsi(): void {
    this.#state = State.Csi;
    this.#params = [];
    this.#param = -1;
  }

  /** Leaves a malformed sequence; the character that broke it is read again as text. */
  #abort(i: number): number {
    this.#state = State.Ground;
    return i - 1;
  }

  #csiByte(code: number, i: number): number {
    if (code >= 0x30 && code <= 0x39) {
      if (this.#param < 0) this.#param = 0;
      this.#param = Math.min(MAX_PARAMETER_VALUE, this.#param * 10 + (code - 0x30));
    } else if (code === 0x3b /* ; */) {
      if (this.#params.length < MAX_PARAMETERS) this.#params.push(Math.max(0, this.#param));
      this.#param = -1;
    } else if (code >= 0x3a && code <= 0x3f) {
      // ':' sub-parameters, '<=>?' private markers: not the in-line sequences handled here.
      this.#state = State.CsiIgnore;
    } else if (code >= 0x20 && code <= 0x2f) {
      this.#state = State.CsiIgnore; // intermediates
    } else if (code >= 0x40 && code <= 0x7e) {
      const apply = this.#state === State.Csi;
      this.#state = State.Ground;
      if (apply) {
        if (this.#params.length < MAX_PARAMETERS) this.#params.push(Math.max(0, this.#param));
        this.#resolveReturn(false);
        this.#dispatch(code, this.#params[0]);
      }
      this.#line.last = 0;
    } else if (code !== DEL) {
      return this.#abort(i);
    }
    return i;
  }

  #dispatch(final: number, first: number): void {
    const line = this.#line;
    const count = Math.max(1, first);
    switch (final) {
      case 0x4b /* K: EL */:
        line.erase(first);
        break;
      case 0x43 /* C: CUF */:
      case 0x61 /* a: HPR */:
        line.moveBy(count);
        break;
      case 0x44 /* D: CUB */:
        line.moveBy(-count);
        break;
      case 0x47 /* G: CHA */:
      case 0x60 /* `: HPA */:
        line.moveTo(count - 1);
        break;
      case 0x58 /* X: ECH */:
        line.eraseChars(count);
        break;
      case 0x50 /* P: DCH */:
        line.deleteChars(count);
        break;
      case 0x40 /* @: ICH */:
        line.insertBlanks(count);
        break;
      case 0x62 /* b: REP */:
        line.repeat(count);
        break;
    }
  }
}

/**
 * How many characters at the start of `after` finish an escape sequence that `before` leaves
 * unfinished (0 when `before` ends outside any sequence): where a stream whose older part was
 * dropped can be read from without a fragment of a sequence showing up as text. `before` must
 * start outside any sequence (at an ESC or a C1 control, which start afresh). A line feed, or
 * the start of another sequence, ends the count before it; `after.length` when the sequence
 * goes on past `after`.
 *
 * @example
 * ```ts
 * import { sequenceRemainder } from "./clean.ts";
 * sequenceRemainder("\x1b[38;5", ";114mX"); // 5: ";114m" ends the colour
 * sequenceRemainder("\x1b[0mok", "X");      // 0
 * ```
 */
export function sequenceRemainder(before: string, after: string): number {
  const cleaner = new Cleaner();
  cleaner.push(before);
  if (!cleaner.inSequence) return 0;
  for (let i = 0; i < after.length; i++) {
    const code = after.charCodeAt(i);
    if (code === ESC || code === LF || (code >= 0x80 && code <= 0x9f)) return i;
    cleaner.push(after[i]);
    if (!cleaner.inSequence) return i + 1;
  }
  return after.length;
}

/** Cleans a whole text (see the module documentation). */
export function cleanTerminalText(input: string, options: CleanerOptions = {}): string {
  const cleaner = new Cleaner(options);
  return cleaner.push(input) + cleaner.end();
}
