/**
 * Windows command lines by the rules of `CommandLineToArgvW`, which is how a Windows program
 * sees its command line: backslashes are literal unless they precede a quote (2n backslashes
 * and a quote give n backslashes and toggle quoting; 2n+1 give n and a literal quote), and the
 * program name (first word) is split by quotes alone. Pure functions: usable on any OS.
 *
 * @example
 * ```ts
 * import { quoteWindowsCommandLine, splitWindows } from "./command_line.ts";
 * splitWindows(String.raw`C:\bin\x.exe "a b" c\d`); // ["C:\\bin\\x.exe", "a b", "c\\d"]
 * quoteWindowsCommandLine(["x.exe", `say "hi"`]); // `x.exe "say \"hi\""`
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

/** Quotes one argument (not the program) so that CommandLineToArgvW gives it back. */
export function quoteWindowsArg(arg: string): string {
  if (arg !== "" && !/[ \t\n\v"]/.test(arg)) return arg;
  let quoted = '"';
  let backslashes = 0;
  for (const char of arg) {
    if (char === "\\") {
      backslashes++;
      continue;
    }
    // Backslashes before a quote are doubled, and the quote escaped.
    quoted += "\\".repeat(char === '"' ? backslashes * 2 + 1 : backslashes) + char;
    backslashes = 0;
  }
  // Backslashes before the closing quote are doubled too.
  return quoted + "\\".repeat(backslashes * 2) + '"';
}

/** Builds a command line from a program and its arguments, for CreateProcessW. */
export function quoteWindowsCommandLine(argv: string[]): string {
  const [program, ...args] = argv;
  if (program.includes('"')) {
    throw new CommandLineError("a Windows program path cannot contain a double quote");
  }
  const first = program === "" || /[ \t]/.test(program) ? `"${program}"` : program;
  return [first, ...args.map(quoteWindowsArg)].join(" ");
}
