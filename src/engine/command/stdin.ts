/**
 * A command's `stdin`: text the program reads as its standard input, after which its input
 * ends. Read and refused before anything starts: too large, not text (a lone surrogate), a
 * character its encoding cannot write, or, on a terminal, where it is typed, a control
 * character the terminal would act on as a key.
 *
 * @example
 * ```ts
 * import { ChildCodec } from "../encoding.ts";
 * import { stdinBytes } from "./stdin.ts";
 * const codec = new ChildCodec({ codePage: null }, undefined, undefined);
 * stdinBytes("b\na\n", "pipe", codec).length; // 4
 * stdinBytes("a\u0003", "pty", codec); // throws: Ctrl+C would interrupt on a terminal
 * ```
 * @module
 */
import type { StdioMode } from "../../pty/mod.ts";
import type { ChildCodec } from "../encoding.ts";
import { EngineError } from "../errors.ts";

/**
 * The most bytes of stdin, as encoded for the program: it is held until the program takes it,
 * for as long as the command may run.
 */
export const STDIN_MAX_BYTES = 1024 * 1024;

/**
 * Control characters (Unicode's Cc) but tab and line feed: on a terminal they are keys (Ctrl+C
 * interrupts, Ctrl+D ends input, Ctrl+S stops output, a carriage return is another Enter).
 */
// deno-lint-ignore no-control-regex -- those are the characters looked for
const TERMINAL_KEYS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/**
 * `text` as the program reads it (in `codec`'s encoding), checked for `mode`. Throws
 * {@link EngineError} naming `stdin` and the rule it breaks.
 */
export function stdinBytes(text: string, mode: StdioMode, codec: ChildCodec): Uint8Array {
  const key = mode === "pty" ? TERMINAL_KEYS.exec(text) : null;
  if (key) {
    const code = key[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    throw new EngineError(
      "invalid_input",
      [
        `a control character (U+${code}) at index ${key.index}: on a terminal stdin is typed, ` +
        "and a terminal acts on control characters as keys (Ctrl+C interrupts, a carriage " +
        "return is one more Enter); end lines with \\n (tab passes), or run with ",
        { field: "usePty" },
        ": false for stdin as it is",
      ],
      "stdin",
    );
  }
  const bytes = codec.encode(text, "stdin");
  if (bytes.length > STDIN_MAX_BYTES) {
    throw new EngineError(
      "invalid_input",
      `${bytes.length} bytes once encoded for the program, over the ${STDIN_MAX_BYTES} ` +
        "(1 MiB) allowed: write it to a file and redirect it (program < file)",
      "stdin",
    );
  }
  return bytes;
}
