/**
 * What really runs a script: the interpreter its `#!` line names, read as Linux reads it
 * (fs/binfmt_script.c), the interpreter's own `#!` line in turn, and the program that
 * `#!/usr/bin/env NAME` runs, looked up on the child's PATH as env will. So that a policy can
 * judge every image that runs, not only the file asked for.
 *
 * Hostile lines are bounded as the kernel bounds them: only the first 256 bytes are read (a
 * longer line is cut there, and one whose interpreter's name runs past them runs nothing);
 * at most {@link MAX_INTERPRETERS} interpreters are followed (the kernel refuses more). What
 * cannot be told exactly (an unreadable file, an env line that sets PATH or uses options it
 * does not know) is said as such, for the caller to refuse.
 *
 * @example
 * ```ts
 * import { parseShebang } from "./shebang.ts";
 * parseShebang(new TextEncoder().encode("#!/usr/bin/env python3\n"));
 * // { interpreter: "/usr/bin/env", argument: "python3" }
 * ```
 * @module
 */
import { posix } from "node:path";
import { realPathOf, resolveProgram } from "../resolve.ts";

/** What Linux reads of a file to find its `#!` line (BINPRM_BUF_SIZE). */
export const LINE_BYTES = 256;
/** Interpreters followed at most: Linux rewrites an exec at most 5 times (then ELOOP). */
export const MAX_INTERPRETERS = 5;

/** A `#!` line as the kernel splits it: the interpreter, and at most one argument. */
export interface ShebangLine {
  interpreter: string;
  argument?: string;
}

const SPACE = 0x20, TAB = 0x09, NUL = 0, NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The `#!` line of a file whose first bytes are `head` (at most {@link LINE_BYTES} are looked
 * at; missing ones count as NUL, as in the kernel's zeroed buffer), or undefined when the
 * kernel would not run it as a script (no `#!`, no interpreter name, a name cut off).
 */
export function parseShebang(head: Uint8Array): ShebangLine | undefined {
  const buf = new Uint8Array(LINE_BYTES);
  buf.set(head.subarray(0, LINE_BYTES));
  if (buf[0] !== 0x23 || buf[1] !== 0x21) return undefined;
  const spacetab = (byte: number) => byte === SPACE || byte === TAB;
  const terminator = (byte: number) => spacetab(byte) || byte === NUL;
  // The last byte is the kernel's terminating NUL.
  const bufEnd = LINE_BYTES - 1;
  let end = buf.subarray(0, LINE_BYTES).indexOf(NEWLINE);
  if (end < 0) {
    let start = 2;
    while (start < bufEnd && spacetab(buf[start])) start++;
    if (start >= bufEnd) return undefined; // only spaces and tabs
    let after = start;
    while (after < bufEnd && !terminator(buf[after])) after++;
    // No space, tab or NUL after the name: it may be cut off, so the kernel runs nothing.
    if (after >= bufEnd) return undefined;
    end = bufEnd;
  }
  while (end > 2 && spacetab(buf[end - 1])) end--;
  let name = 2;
  while (name < end && spacetab(buf[name])) name++;
  if (name >= end) return undefined;
  let separator = name;
  while (separator < end && !terminator(buf[separator])) separator++;
  const interpreter = decoder.decode(buf.subarray(name, separator));
  if (separator >= end || buf[separator] === NUL) return { interpreter };
  let argument = separator;
  while (argument < end && spacetab(buf[argument])) argument++;
  if (argument >= end) return { interpreter };
  // The argument is a C string: it ends at a NUL.
  const text = buf.subarray(argument, end);
  const nul = text.indexOf(NUL);
  return { interpreter, argument: decoder.decode(nul < 0 ? text : text.subarray(0, nul)) };
}

/** What `#!/usr/bin/env ARGUMENT` runs: a program name, nothing, or why it cannot be told. */
export type EnvTarget = { name: string; path?: string } | { nothing: true } | { unclear: string };

/** The options of GNU env that take no value and do not change what it runs or finds. */
const ENV_FLAGS = new Set(["-0", "--null", "-v", "--debug"]);
/** Options that clear the environment: env then finds programs on the default path. */
const ENV_CLEARS = new Set(["-i", "--ignore-environment", "-"]);
/** The path execvp searches when PATH is not set (glibc). */
const DEFAULT_PATH = "/bin:/usr/bin";

/**
 * What env runs when a `#!` line gives it `argument` (one string, as Linux passes it): its
 * program's name, and the PATH it is looked up on when env changes it (`-i`, `-u PATH`).
 * Without `-S`, the whole argument is one word. Anything this cannot follow exactly (PATH set,
 * quotes or variables in a split string, options it does not know) is `unclear`.
 */
export function envTarget(argument: string | undefined): EnvTarget {
  if (argument === undefined) return { nothing: true };
  let words: string[];
  const split = argument.match(/^(?:-S|--split-string(?:=|\s|$))\s*(.*)$/s);
  if (split) {
    if (/["'\\$]/.test(split[1])) {
      return { unclear: "its env -S line uses quotes, escapes or variables" };
    }
    words = split[1].split(/[ \t]+/).filter(Boolean);
  } else words = [argument];
  let path: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === "--") {
      const name = words[i + 1];
      return name === undefined ? { nothing: true } : named(name, path);
    }
    if (ENV_FLAGS.has(word)) continue;
    if (ENV_CLEARS.has(word)) {
      path = DEFAULT_PATH;
      continue;
    }
    const unset = word.match(/^(?:-u|--unset=)(.*)$/);
    if (unset) {
      const variable = unset[1] || words[++i];
      if (variable === undefined) return { unclear: "env -u without a name" };
      if (variable === "PATH") path = DEFAULT_PATH;
      continue;
    }
    if (word.startsWith("-")) return { unclear: `env option '${word.slice(0, 40)}'` };
    if (word.includes("=")) {
      if (word.startsWith("PATH=")) return { unclear: "its env line sets PATH" };
      continue;
    }
    return named(word, path);
  }
  return { nothing: true };
}

function named(name: string, path: string | undefined): EnvTarget {
  return path === undefined ? { name } : { name, path };
}

/** One interpreter that runs a program: as named, and the file that really runs. */
export interface Interpreter {
  /** As the `#!` line (or env) names it. */
  name: string;
  /** The file found for it, links resolved. */
  realPath: string;
  /** Found by `#!/usr/bin/env` on PATH, not named by a path. */
  viaEnv?: boolean;
  /** The file whose `#!` line names it. */
  script: string;
}

/** The interpreters of a program, outermost first; `unclear` when the chain cannot be told. */
export interface Interpreters {
  chain: Interpreter[];
  unclear?: string;
}

/** Reads at most {@link LINE_BYTES} of a file; undefined if it cannot be read. */
function head(path: string): Uint8Array | undefined {
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(path, { read: true });
    const buffer = new Uint8Array(LINE_BYTES);
    let filled = 0;
    while (filled < LINE_BYTES) {
      const read = file.readSync(buffer.subarray(filled));
      if (read === null || read === 0) break;
      filled += read;
    }
    return buffer.subarray(0, filled);
  } catch {
    return undefined;
  } finally {
    file?.close();
  }
}

/**
 * The interpreters that run `realProgram` when it is started in `cwd` with `env`: its `#!`
 * interpreter, that one's, and so on, with the program `#!/usr/bin/env NAME` finds. A file that
 * cannot be read, an env line that cannot be followed, or a chain longer than the kernel
 * follows is `unclear`.
 */
export function scriptInterpreters(
  realProgram: string,
  context: { cwd: string; env: Record<string, string> },
): Interpreters {
  const chain: Interpreter[] = [];
  let current = realProgram;
  for (;;) {
    const bytes = head(current);
    if (bytes === undefined) {
      return { chain, unclear: `${current} cannot be read to see its #! line` };
    }
    const line = parseShebang(bytes);
    if (!line) return { chain };
    if (chain.length >= MAX_INTERPRETERS) {
      return { chain, unclear: `more than ${MAX_INTERPRETERS} nested #! interpreters` };
    }
    const interpreter = posix.resolve(context.cwd, line.interpreter);
    const realPath = realPathOf(interpreter);
    chain.push({ name: line.interpreter, realPath, script: current });
    if (posix.basename(line.interpreter) !== "env" && posix.basename(realPath) !== "env") {
      current = realPath;
      continue;
    }
    const target = envTarget(line.argument);
    if ("nothing" in target) return { chain };
    if ("unclear" in target) return { chain, unclear: `${current}: ${target.unclear}` };
    let found: string;
    try {
      found = resolveProgram(target.name, {
        cwd: context.cwd,
        env: target.path === undefined ? context.env : { ...context.env, PATH: target.path },
        flavor: "posix",
      });
    } catch {
      // env will not find it either: nothing more runs.
      return { chain };
    }
    const real = realPathOf(found);
    if (chain.length >= MAX_INTERPRETERS) {
      return { chain, unclear: `more than ${MAX_INTERPRETERS} nested #! interpreters` };
    }
    chain.push({ name: target.name, realPath: real, viaEnv: true, script: current });
    current = real;
  }
}
