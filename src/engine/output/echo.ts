/**
 * Where the answer to typed input starts: after the terminal's echo of it. A terminal shows
 * what is typed (the line discipline in canonical mode, or the program itself: readline,
 * PSReadLine, a REPL), so the output after a write begins with the typed line, and a wait for
 * `ready-on-port-\d+` right after typing `sleep 1; echo ready-on-port-4321` would match that
 * echo at once instead of the output a second later.
 *
 * The rule: the typed text's last line that was entered (followed by Enter), with escape
 * sequences and control characters removed and blanks trimmed, is looked for in the cleaned
 * output from the write on. The answer starts at the line after the first line holding it.
 * - While the newest output line ends with the start of that text (the echo is arriving), the
 *   place is not known yet ({@link EchoLocation} `pending`).
 * - Until the echo shows up, nothing is skipped (`unseen`): a program that does not echo (a
 *   password prompt, a full-screen program) is answered from the write on, and output printed
 *   before the echo arrived (by a command still running) is not echo.
 * - Text typed without Enter, or only keys and control characters, is not looked for
 *   (`absent`), nor is an echo after the first {@link ECHO_SEARCH_LIMIT} characters of output
 *   (or four times that many bytes).
 * - Several lines typed at once: only the first echo of the last one is skipped. A shell that
 *   was busy may echo type-ahead twice (the terminal, then its line editor after the prompt).
 *
 * - The echo is compared with blanks and characters of no width left out, on both sides: a line
 *   editor that wraps a long line may print a blank where the row ends (readline, before a
 *   double-width character that does not fit), zsh may show a combining mark as its code
 *   (`<0301>`), and the typed line is compared as the terminal shows it, its rows counted from
 *   the start of the line the write began on (the prompt's), so that a line editor's carriage
 *   return after a wrap (zsh) goes to the row it means.
 *
 * Shell integration marks (OSC 133 `C`, "command output starts") are the exact answer where a
 * shell sends them; this is the rule without them, kept in one place for the waits.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./buffer.ts";
 * import { EchoSkip } from "./echo.ts";
 * const buffer = new OutputBuffer();
 * const echo = new EchoSkip(buffer, 0, "echo ready\r");
 * buffer.append(new TextEncoder().encode("$ echo ready\r\nready\r\n"));
 * echo.locate(); // { state: "found", start: 14 }: the line "ready"
 * ```
 * @module
 */
import type { OutputBuffer } from "./buffer.ts";
import { Cleaner, cleanTerminalText } from "./clean.ts";

/** Cleaned characters of output searched for the echo, at most. */
export const ECHO_SEARCH_LIMIT = 64 * 1024;
/** Bytes of the line the write began on read to place its rows, at most. */
const LINE_BEFORE_LIMIT = 16 * 1024;

/** Where the answer to the typed text starts, as far as is known now. */
export type EchoLocation =
  | { state: "found"; start: number }
  | { state: "pending" }
  | { state: "unseen" }
  | { state: "absent" };

/** The line whose echo marks the end of what was typed, or "" if none is looked for. */
export function echoKey(typed: string): string {
  const lines = typed.split(/\r\n|\r|\n/);
  // The text after the last Enter was typed but not entered: its echo has no end yet.
  lines.pop();
  for (let i = lines.length - 1; i >= 0; i--) {
    const key = cleanTerminalText(lines[i]).trim();
    if (key) return key;
  }
  return "";
}

/** See the module documentation. */
export class EchoSkip {
  readonly #buffer: OutputBuffer;
  readonly #from: number;
  readonly #key: string;
  readonly #cleaner: Cleaner;
  #offset: number;
  /** Complete cleaned lines since `from`, without blanks. */
  #text = "";
  /** Their characters, blanks counted. */
  #searched = 0;
  #known: EchoLocation | undefined;

  /** Looks for the echo of `typed` in the output of `buffer` from offset `from`. */
  constructor(buffer: OutputBuffer, from: number, typed: string, columns?: number) {
    this.#buffer = buffer;
    this.#from = from;
    this.#offset = from;
    this.#key = withoutBlanks(echoKey(typed));
    this.#cleaner = new Cleaner({ columns, keepLine: ECHO_SEARCH_LIMIT });
    if (!this.#key) this.#known = { state: "absent" };
    // The line so far (a prompt) goes first, so that rows wrap where the terminal's do. It
    // holds no line feed: the cleaned lines still begin at the write's line.
    const lineStart = buffer.lineStart(buffer.lineAt(from));
    if (from - lineStart <= LINE_BEFORE_LIMIT && lineStart >= buffer.start) {
      this.#cleaner.push(buffer.readText(lineStart, from).text);
    }
  }

  /** Where the answer starts, given the output so far (found and absent are final). */
  locate(): EchoLocation {
    if (this.#known) return this.#known;
    // Bounded work, whatever floods in after the write: a few times the search limit of bytes.
    const end = Math.min(this.#buffer.end, this.#from + 4 * ECHO_SEARCH_LIMIT);
    const range = this.#buffer.readText(this.#offset, end);
    this.#offset = range.end;
    const cleaned = this.#cleaner.push(range.text);
    this.#searched += cleaned.length;
    this.#text += withoutBlanks(cleaned);
    const key = this.#key;
    const at = this.#text.indexOf(key);
    if (at >= 0) {
      // The text holds complete lines only, so the echo's line ends in it. Every line feed of
      // the output is one "\n" of the cleaned text: the lines up to it map back to offsets.
      const lineEnd = this.#text.indexOf("\n", at + key.length);
      let lines = 0;
      for (
        let i = this.#text.indexOf("\n");
        i !== -1 && i <= lineEnd;
        i = this.#text.indexOf("\n", i + 1)
      ) {
        lines++;
      }
      const first = this.#buffer.lineAt(this.#from);
      this.#known = { state: "found", start: this.#buffer.lineStart(first + lines) };
      return this.#known;
    }
    const unfinished = this.#cleaner.peek(), line = withoutBlanks(unfinished);
    if (line.includes(key) || arriving(line, key)) return { state: "pending" };
    if (this.#searched + unfinished.length > ECHO_SEARCH_LIMIT || end < this.#buffer.end) {
      this.#known = { state: "absent" };
      return this.#known;
    }
    return { state: "unseen" };
  }
}

/** Characters of the key's start compared at once; shorter partial echoes are not looked for. */
const KEY_HEAD = 64, MIN_PARTIAL = 3;

/** Whether `line` ends with the start of `key` (its echo is on its way). */
function arriving(line: string, key: string): boolean {
  const shortest = Math.min(MIN_PARTIAL, key.length);
  for (let length = Math.min(line.length, key.length, KEY_HEAD); length >= shortest; length--) {
    if (line.endsWith(key.slice(0, length))) return true;
  }
  const head = key.slice(0, KEY_HEAD);
  if (head.length < KEY_HEAD) return false;
  for (let at = line.indexOf(head); at !== -1; at = line.indexOf(head, at + 1)) {
    if (key.startsWith(line.slice(at))) return true;
  }
  return false;
}

/**
 * `text` without what a line editor may show differently from what was typed: blanks (spaces
 * and tabs; line feeds kept), and characters of no width (combining marks, joiners, variation
 * selectors), which zsh shows as their code (`<0301>`) where its locale cannot draw them.
 */
function withoutBlanks(text: string): string {
  return text.replace(
    /[ \t]+|<[0-9a-f]{4,6}>|[\p{Mn}\p{Me}\u200b-\u200f\u2060\ufe00-\ufe0f]/gu,
    "",
  );
}
