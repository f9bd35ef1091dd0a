/**
 * Windows command lines for CreateProcessW, quoted by the rules of `CommandLineToArgvW` (how a
 * Windows program splits its command line): backslashes are literal unless they precede a
 * quote, where 2n backslashes and a quote give n backslashes and toggle quoting and 2n+1 give n
 * and a literal quote. Pure functions: usable (and tested) on any OS. The inverse, splitting,
 * is the engine's (src/engine/launching/argv.ts).
 *
 * @example
 * ```ts
 * import { quoteWindowsCommandLine } from "./command_line.ts";
 * quoteWindowsCommandLine(["x.exe", `say "hi"`]); // `x.exe "say \"hi\""`
 * ```
 * @module
 */
import { win32 } from "node:path";
import { windowsOpenedPath } from "../resolve.ts";
import { SpawnError } from "../types.ts";

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
    throw new SpawnError("EINVAL", "a Windows program path cannot contain a double quote");
  }
  const first = program === "" || /[ \t]/.test(program) ? `"${program}"` : program;
  return [first, ...args.map(quoteWindowsArg)].join(" ");
}

/** Characters cmd.exe would expand or split on even inside quotes: refused in batch arguments. */
const BATCH_UNSAFE = /["%\r\n]/;
/** Characters that make cmd.exe need quotes around an argument. */
const BATCH_SPECIAL = /[\s&|<>^(),;=!@]/;

/** What CreateProcessW gets: the image to run and its command line. */
export interface CommandLine {
  application: string;
  commandLine: string;
  /** The interpreter `application` is, when the program is a batch file (cmd.exe). */
  interpreter?: string;
}

/**
 * True for a file that Windows runs through cmd.exe: `.bat` or `.cmd` once trailing dots and
 * spaces are removed, as Windows removes them (`x.bat.` runs as a batch file too).
 */
export function isBatchFile(path: string): boolean {
  const extension = win32.extname(windowsOpenedPath(path)).toLowerCase();
  return extension === ".bat" || extension === ".cmd";
}

/**
 * The image and command line that run `program` with `args`. A batch file runs through `cmd`
 * (the caller's cmd.exe, never the child's ComSpec), with the arguments quoted for cmd
 * (CreateProcess would run it through cmd.exe anyway, with cmd's own parsing applied to
 * unquoted arguments), or is refused with {@link SpawnError} when an argument cannot be made
 * safe. `verbatim`: the arguments are joined as they are.
 */
export function buildCommandLine(
  program: string,
  args: string[],
  options: { cmd: string; verbatim?: boolean },
): CommandLine {
  if (isBatchFile(program)) {
    const script = windowsOpenedPath(program);
    for (const text of [script, ...args]) {
      if (BATCH_UNSAFE.test(text)) {
        throw new SpawnError(
          "EINVAL",
          `cannot pass ${
            JSON.stringify(text)
          } to a batch file safely (cmd.exe would expand or split on ", % or line breaks)`,
        );
      }
    }
    const quoted = args.map((arg) => arg === "" || BATCH_SPECIAL.test(arg) ? `"${arg}"` : arg);
    const cmd = options.cmd;
    return {
      application: cmd,
      commandLine: `"${cmd}" /d /e:ON /v:OFF /s /c ""${script}"${
        quoted.map((a) => " " + a).join("")
      }"`,
      interpreter: cmd,
    };
  }
  return {
    application: program,
    commandLine: options.verbatim
      ? [quoteWindowsArg(program), ...args].join(" ")
      : quoteWindowsCommandLine([program, ...args]),
  };
}
