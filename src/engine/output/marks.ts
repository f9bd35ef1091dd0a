/**
 * Shell integration marks: what a shell started with the server's integration scripts (see
 * launching/integration/) tells about itself, taken out of its output as it arrives.
 *
 * A mark is an OSC 133 sequence (FinalTerm's, as VS Code, iTerm2, WezTerm and kitty use it)
 * whose last field is the terminal's nonce, ended by BEL or ST:
 *
 * | sequence | means |
 * |---|---|
 * | `ESC ] 133 ; A ; <nonce> BEL` | the prompt starts |
 * | `ESC ] 133 ; A ; k=s ; <nonce> BEL` | a continuation prompt (PS2; kitty's "secondary" prompt kind): the shell reads on, the line entered is not a whole command yet |
 * | `ESC ] 133 ; B ; <nonce> BEL` | the prompt ends: the shell reads a command |
 * | `ESC ] 133 ; C ; <nonce> BEL` | the command's output starts (`C ; nl`: after the line break that follows) |
 * | `ESC ] 133 ; D ; <exit code> ; <nonce> BEL` | the command finished (no code: no command ran) |
 * | `ESC ] 133 ; P ; enc:<path> ; <nonce> BEL` | the shell's working directory, percent-encoded (at least `%`, BEL, ESC and LF; every byte allowed) |
 * | `ESC ] 133 ; P ; <path> ; <nonce> BEL` | the same as it is (cmd, whose paths hold no control character and which cannot encode) |
 * | `ESC ] 133 ; E ; <command line> ; <nonce> BEL` | the command line about to run |
 * | `ESC ] 133 ; W ; 1 ; <nonce> BEL` | before a prompt: a line typed ahead waits, which the shell reads at it (`W ; 0`: none does) |
 *
 * The nonce is random per terminal and never printed by anything but the shell's own hooks,
 * so a program that prints marks (a log, `cat` of a recording, a nested shell with its own
 * integration) cannot end a command early or change the cwd: marks with another nonce, or none,
 * are ordinary output and stay in it (cleaning then removes them as any OSC). Marks with the
 * nonce never reach the buffer: not the cleaned text, not raw reads, not the screen.
 *
 * A mark split between chunks is still recognised: a chunk that ends inside what may become a
 * mark is held back until the next chunk decides, or the end of the stream releases it. What is
 * held is at most {@link MAX_MARK_BYTES} and never a line feed (a mark holds none), so a program
 * that prints the start of one and stops holds back only the rest of that line, which a
 * terminal would not show either (an unfinished OSC swallows it; cleaning ends it at the line
 * feed as well).
 *
 * @example
 * ```ts
 * import { MarkFilter } from "./marks.ts";
 * const filter = new MarkFilter("n0nce");
 * const bytes = new TextEncoder().encode("hi\n\x1b]133;D;0;n0nce\x07$ ");
 * const { data, marks } = filter.push(bytes);
 * new TextDecoder().decode(data); // "hi\n$ "
 * marks; // [{ at: 3, mark: { kind: "command-end", exitCode: 0 } }]
 * ```
 * @module
 */
import { concatBytes as concat } from "../../bytes.ts";

/** What a shell told. */
export type ShellMark =
  | { kind: "prompt-start" }
  | { kind: "continuation" }
  | { kind: "prompt-end" }
  | { kind: "output-start"; lineBreak?: boolean }
  | { kind: "command-end"; exitCode: number | null }
  | { kind: "cwd"; path: string }
  | { kind: "command"; text: string }
  | { kind: "line-waiting"; waiting: boolean };

/** A mark and where it was: the number of bytes of `data` before it. */
export interface PlacedMark {
  at: number;
  mark: ShellMark;
}

/** What {@link MarkFilter.push} gives back. */
export interface FilteredOutput {
  /** The output without the terminal's marks. */
  data: Uint8Array;
  marks: PlacedMark[];
}

/**
 * A longer sequence is not a mark. The longest a shell sends is a path: PATH_MAX (4096) bytes
 * with every byte percent-encoded (as fish's url style does) is 12288, and a command line.
 */
export const MAX_MARK_BYTES = 16384;

const ESC = 0x1b, BEL = 0x07, LF = 0x0a, BACKSLASH = 0x5c;
/** `] 1 3 3 ;` after ESC. */
const PREFIX = [0x5d, 0x31, 0x33, 0x33, 0x3b];
const decoder = new TextDecoder();

/** Generates a nonce: 128 random bits as hex. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The body of a mark (between `133;` and the terminator) as a mark, if it is one. */
export function parseMark(body: string): ShellMark | undefined {
  const kind = body[0];
  const value = body.length > 2 && body[1] === ";" ? body.slice(2) : undefined;
  if (body.length !== 1 && value === undefined) return undefined;
  // A, B and C may carry options; of them only A's prompt kind `k=s` (a secondary prompt, as
  // kitty writes it) says something more here.
  if (kind === "A") return value === "k=s" ? { kind: "continuation" } : { kind: "prompt-start" };
  if (kind === "B") return { kind: "prompt-end" };
  if (kind === "C") {
    return value === "nl" ? { kind: "output-start", lineBreak: true } : { kind: "output-start" };
  }
  if (value === undefined) {
    return kind === "D" ? { kind: "command-end", exitCode: null } : undefined;
  }
  if (kind === "D") {
    const code = /^-?\d{1,10}$/.test(value) ? Number(value) : NaN;
    return { kind: "command-end", exitCode: Number.isSafeInteger(code) ? code : null };
  }
  if (kind === "P") {
    const path = value.startsWith("enc:") ? percentDecoded(value.slice(4)) : value;
    // Only an absolute path (POSIX, or a Windows drive or share) is a directory.
    return /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path) ? { kind: "cwd", path } : undefined;
  }
  if (kind === "E") return { kind: "command", text: value };
  if (kind === "W" && (value === "0" || value === "1")) {
    return { kind: "line-waiting", waiting: value === "1" };
  }
  return undefined;
}

/** `%XX` sequences as the bytes they stand for (UTF-8, as a path's bytes are here). */
function percentDecoded(text: string): string {
  return text.replace(
    /(?:%[0-9A-Fa-f]{2})+/g,
    (run) => decoder.decode(Uint8Array.from(run.slice(1).split("%"), (hex) => parseInt(hex, 16))),
  );
}

/** See the module documentation. */
export class MarkFilter {
  readonly #nonce: string;
  /** Bytes held back: the start of what may be a mark (begins with ESC). */
  #held: Uint8Array = new Uint8Array(0);
  /** How far into the held bytes the terminator has been looked for. */
  #searched = 0;

  constructor(nonce: string) {
    this.#nonce = nonce;
  }

  /** Takes the next chunk; returns it without the terminal's marks, and the marks. */
  push(chunk: Uint8Array): FilteredOutput {
    const held = this.#held;
    if (held.length === 0 && chunk.indexOf(ESC) < 0) return { data: chunk, marks: [] };
    const input = held.length === 0 ? chunk : concat([held, chunk]);
    const resume = this.#searched;
    this.#held = new Uint8Array(0);
    this.#searched = 0;
    const parts: Uint8Array[] = [];
    const marks: PlacedMark[] = [];
    let kept = 0;
    let copied = 0;
    let i = input.indexOf(ESC);
    while (i >= 0) {
      const found = this.#examine(input, i, i === 0 ? resume : 0);
      if (found === "hold") {
        this.#held = input.slice(i);
        break;
      }
      if (found === undefined) {
        i = input.indexOf(ESC, i + 1);
        continue;
      }
      const piece = input.subarray(copied, i);
      parts.push(piece);
      kept += piece.length;
      if (found.mark) marks.push({ at: kept, mark: found.mark });
      copied = found.end;
      i = input.indexOf(ESC, copied);
    }
    const end = this.#held.length > 0 ? input.length - this.#held.length : input.length;
    parts.push(input.subarray(copied, end));
    return { data: parts.length === 1 ? parts[0] : concat(parts), marks };
  }

  /** The stream ended: what was held back is output after all. */
  end(): Uint8Array {
    const rest = this.#held;
    this.#held = new Uint8Array(0);
    this.#searched = 0;
    return rest;
  }

  /**
   * Looks at the sequence starting with the ESC at `start`: "hold" when the input ends before
   * it is decided, undefined when it is not one of ours, else where it ends (and its mark, if
   * it says something this engine knows).
   */
  #examine(
    input: Uint8Array,
    start: number,
    searchedBefore: number,
  ): "hold" | undefined | { end: number; mark?: ShellMark } {
    for (let k = 0; k < PREFIX.length; k++) {
      const at = start + 1 + k;
      if (at >= input.length) return "hold";
      if (input[at] !== PREFIX[k]) return undefined;
    }
    const bodyStart = start + 1 + PREFIX.length;
    const limit = Math.min(input.length, start + MAX_MARK_BYTES);
    for (let at = Math.max(bodyStart, start + searchedBefore); at < limit; at++) {
      const byte = input[at];
      if (byte === BEL || byte === ESC) {
        if (byte === ESC && at + 1 >= input.length) {
          this.#searched = at - start;
          return "hold";
        }
        if (byte === ESC && input[at + 1] !== BACKSLASH) return undefined;
        const end = byte === BEL ? at + 1 : at + 2;
        return this.#accept(input.subarray(bodyStart, at), end);
      }
      // CAN and SUB, which end an OSC on a terminal, are not looked at: a directory's name may
      // hold them (the shells encode only %, BEL, ESC and LF), and without the nonce the
      // sequence stays output all the same.
      if (byte === LF) return undefined;
    }
    if (limit === input.length && input.length - start < MAX_MARK_BYTES) {
      this.#searched = limit - start;
      return "hold";
    }
    return undefined;
  }

  /** A complete sequence: ours if its last field is the nonce. */
  #accept(bodyBytes: Uint8Array, end: number): undefined | { end: number; mark?: ShellMark } {
    const body = decoder.decode(bodyBytes);
    const last = body.lastIndexOf(";");
    if (last < 0 || body.slice(last + 1) !== this.#nonce) return undefined;
    return { end, mark: parseMark(body.slice(0, last)) };
  }
}
