/**
 * Splitting a command line into program and arguments without a shell. POSIX shell rules:
 * whitespace separates, `'...'` is literal, `"..."` allows `\"`, `\\`, `\$`, `` \` `` and line
 * continuation, `\x` outside quotes is `x`; no expansion of any kind. Windows rules: those of
 * `CommandLineToArgvW` (quoting for CreateProcessW is the platform layer's). And the inverse for
 * POSIX: quoting arguments so that the split gives them back.
 *
 * @example
 * ```ts
 * import { quotePosix, splitPosix, splitWindows } from "./argv.ts";
 * splitPosix(`grep -n "a b" 'c d'`); // ["grep", "-n", "a b", "c d"]
 * splitWindows(String.raw`C:\bin\x.exe "a b" c\d`); // ["C:\\bin\\x.exe", "a b", "c\\d"]
 * quotePosix("it's"); // `'it'\''s'`
 * ```
 * @module
 */
/** A command line that cannot be split or built (an unterminated quote, say). */
export class CommandLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandLineError";
  }
}

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

/** Splits by the rules of CommandLineToArgvW. */
export function splitWindows(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  const n = line.length;
  const isBlank = (index: number) => line[index] === " " || line[index] === "\t";
  while (i < n && isBlank(i)) i++;
  if (i >= n) return args;
  // The program name: quotes group, backslashes are plain.
  let program = "";
  if (line[i] === '"') {
    for (i++; i < n && line[i] !== '"'; i++) program += line[i];
    i++;
  } else {
    for (; i < n && !isBlank(i); i++) program += line[i];
  }
  args.push(program);
  for (;;) {
    while (i < n && isBlank(i)) i++;
    if (i >= n) break;
    let arg = "";
    let quotes = 0; // 1 while inside quotes
    let backslashes = 0;
    while (i < n && !(isBlank(i) && quotes === 0)) {
      const char = line[i];
      if (char === "\\") {
        arg += char;
        backslashes++;
        i++;
        continue;
      }
      if (char !== '"') {
        arg += char;
        backslashes = 0;
        i++;
        continue;
      }
      if (backslashes % 2 === 0) {
        arg = arg.slice(0, arg.length - backslashes / 2);
        quotes++;
      } else {
        arg = arg.slice(0, arg.length - (backslashes + 1) / 2) + '"';
      }
      backslashes = 0;
      // Runs of quotes: every third one in a row is a literal quote.
      for (i++; line[i] === '"'; i++) {
        if (++quotes === 3) {
          arg += '"';
          quotes = 0;
        }
      }
      if (quotes === 2) quotes = 0;
    }
    args.push(arg);
  }
  return args;
}
