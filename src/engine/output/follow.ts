/**
 * Following a stream as cleaned text, piece by piece (what `enable_streaming` pushes): bytes
 * are decoded and cleaned by one streaming {@link Cleaner}, so an escape sequence or a character
 * split between two pieces is handled whole and never leaks as text. Text is handed out by
 * complete lines (a line being redrawn, such as a progress bar, is handed out once it ends; the
 * last line when the stream ends), so the pieces put together are exactly the cleaned output.
 *
 * Memory is bounded: at most `maxChars` characters wait to be taken (older lines are skipped, and
 * the next piece says how many characters), and a line that never ends keeps only its newest
 * `maxChars`.
 *
 * @example
 * ```ts
 * import { TextFollower } from "./follow.ts";
 * const follower = new TextFollower({ maxChars: 65536 });
 * follower.push(new TextEncoder().encode("\x1b[3"));
 * follower.push(new TextEncoder().encode("2mok\x1b[0m\nnext"));
 * follower.take(); // "ok\n"
 * follower.end();  // "next"
 * ```
 * @module
 */
import { Cleaner, isLowSurrogate } from "./clean.ts";

/** See the module documentation. */
export class TextFollower {
  readonly #maxChars: number;
  readonly #decoder = new TextDecoder();
  readonly #cleaner: Cleaner;
  #pending = "";
  #skipped = 0;

  /** `columns`: the terminal's width, for cleaning (see clean.ts). */
  constructor(options: { maxChars: number; columns?: number }) {
    this.#maxChars = options.maxChars;
    this.#cleaner = new Cleaner({ keepLine: options.maxChars, columns: options.columns });
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
    const excess = this.#pending.length - this.#maxChars;
    if (excess > 0) {
      // Skip to the start of a line: the end of a line shown alone would read as a line of its
      // own. Only the unfinished last line handed over at the end can lack one.
      let cut = this.#pending.indexOf("\n", excess - 1) + 1;
      if (cut === 0) cut = excess + (isLowSurrogate(this.#pending.charCodeAt(excess)) ? 1 : 0);
      this.#skipped += cut;
      this.#pending = this.#pending.slice(cut);
    }
  }
}
