/**
 * Splitting a command line into program and arguments without a shell, by POSIX shell rules,
 * and the inverse: quoting arguments so that the split gives them back. Whitespace separates,
 * `'...'` is literal, `"..."` allows `\"`, `\\`, `\$`, `` \` `` and line continuation, `\x` outside
 * quotes is `x`. No expansion of any kind. (Windows rules: src/pty/windows/command_line.ts.)
 *
 * @example
 * ```ts
 * import { quotePosix, splitPosix } from "./argv.ts";
 * splitPosix(`grep -n "a b" 'c d'`); // ["grep", "-n", "a b", "c d"]
 * quotePosix("it's"); // `'it'\''s'`
 * ```
 * @module
 */
import { CommandLineError } from "../pty/windows/command_line.ts";

export { CommandLineError };

const POSIX_SPACE = /[ \t\n]/;
const DOUBLE_QUOTE_ESCAPABLE = new Set(["$", "`", '"', "\\", "\n"]);

/** Splits by POSIX shell quoting rules (no expansions). */
export function splitPosix(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const char = line[i];
    if (POSIX_SPACE.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (char === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) throw new CommandLineError(`unterminated ' quote at position ${i}`);
      word += line.slice(i + 1, close);
      i = close + 1;
    } else if (char === '"') {
      const open = i++;
      for (;;) {
        if (i >= line.length) {
          throw new CommandLineError(`unterminated " quote at position ${open}`);
        }
        const inner = line[i];
        if (inner === '"') break;
        if (inner === "\\" && DOUBLE_QUOTE_ESCAPABLE.has(line[i + 1])) {
          if (line[i + 1] !== "\n") word += line[i + 1];
          i += 2;
        } else {
          word += inner;
          i++;
        }
      }
      i++;
    } else if (char === "\\") {
      if (i + 1 >= line.length) {
        throw new CommandLineError("the command ends with a lone backslash");
      }
      if (line[i + 1] !== "\n") word += line[i + 1];
      else if (word === "") inWord = false;
      i += 2;
    } else {
      word += char;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Quotes one argument for a POSIX shell (single quotes unless nothing needs quoting). */
export function quotePosix(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return "'" + arg.replaceAll("'", `'\\''`) + "'";
}
