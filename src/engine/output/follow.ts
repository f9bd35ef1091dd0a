/**
 * Following a stream as cleaned text, piece by piece (what `enable_streaming` pushes): bytes
 * are decoded and cleaned by one streaming {@link Cleaner}, so an escape sequence or a character
 * split between two pieces is handled whole and never leaks as text. Text is handed out by
 * complete lines (a line being redrawn, such as a progress bar, is handed out once it ends; the
 * last line when the stream ends), so the pieces put together are exactly the cleaned output.
 *
 * Bounded: what waits to be taken, with the marker that says what was skipped, takes at most
 * `maxBytes` in JSON (UTF-8, with JSON's escapes: what a notification carries; older lines are
 * skipped, and the next piece says how many characters), and a line that never ends keeps only
 * its newest `maxBytes` characters.
 *
 * @example
 * ```ts
 * import { TextFollower } from "./follow.ts";
 * const follower = new TextFollower({ maxBytes: 65536 });
 * follower.push(new TextEncoder().encode("\x1b[3"));
 * follower.push(new TextEncoder().encode("2mok\x1b[0m\nnext"));
 * follower.take(); // "ok\n"
 * follower.end();  // "next"
 * ```
 * @module
 */
import { Cleaner, isLowSurrogate } from "./clean.ts";
import { cutHead, jsonSize } from "./shape.ts";

/** Room kept for the marker that says how much was skipped. */
const MARKER_ROOM = 64;

/** See the module documentation. */
export class TextFollower {
  /** What may wait, in bytes of JSON (the marker's room set aside). */
  readonly #maxBytes: number;
  readonly #decoder = new TextDecoder();
  readonly #cleaner: Cleaner;
  #pending = "";
  /** {@link #pending}'s size in JSON, kept as it changes (measuring it whole each time costs). */
  #pendingBytes = 0;
  #skipped = 0;

  /** `columns`: the terminal's width, for cleaning (see clean.ts). */
  constructor(options: { maxBytes: number; columns?: number }) {
    this.#maxBytes = Math.max(0, options.maxBytes - MARKER_ROOM);
    this.#cleaner = new Cleaner({ keepLine: options.maxBytes, columns: options.columns });
  }

  /** Takes the next bytes of the stream (UTF-8). */
  push(bytes: Uint8Array): void {
    this.#add(this.#cleaner.push(this.#decoder.decode(bytes, { stream: true })));
  }

  /** The complete lines that arrived since the last call ("" if none). */
  take(): string {
    const text = this.#pending;
    const skipped = this.#skipped;
    this.#pending = "";
    this.#pendingBytes = 0;
    this.#skipped = 0;
    return skipped ? `[... ${skipped} characters skipped ...]\n${text}` : text;
  }

  /** The stream has ended: everything not yet taken, the last line included. */
  end(): string {
    this.#add(this.#cleaner.push(this.#decoder.decode()) + this.#cleaner.end());
    return this.take();
  }

  #add(text: string): void {
    this.#pending += text;
    this.#pendingBytes += jsonSize(text);
    const excess = this.#pendingBytes - this.#maxBytes;
    if (excess > 0) {
      // The shortest head whose removal is enough (never half a surrogate pair, see shape.ts),
      // then on to the start of a line: the end of a line shown alone would read as a line of
      // its own. Only the unfinished last line handed over at the end can lack one.
      let cut = cutHead(this.#pending, excess);
      if (jsonSize(this.#pending.slice(0, cut)) < excess) {
        const code = this.#pending.charCodeAt(cut);
        const pair = code >= 0xd800 && code <= 0xdbff &&
          isLowSurrogate(this.#pending.charCodeAt(cut + 1));
        cut += pair ? 2 : 1;
      }
      const lineStart = this.#pending.indexOf("\n", cut - 1) + 1;
      if (lineStart > 0) cut = lineStart;
      this.#skipped += cut;
      this.#pendingBytes -= jsonSize(this.#pending.slice(0, cut));
      this.#pending = this.#pending.slice(cut);
    }
  }
}
