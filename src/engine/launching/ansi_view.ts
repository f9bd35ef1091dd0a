/**
 * WorstFit, closed: on Windows, a program that reads its command line or working directory
 * through the ANSI API sees them converted to the system's ANSI code page with best-fit
 * look-alikes (see src/pty/windows/ansi.ts), so `＂ --evil ＂` is one argument to us and three
 * (`"`, `--evil`, `"`) to it. Before anything starts, the program path, each argument and the
 * working directory must read the same in the ANSI view; else the request is refused naming
 * the field, unless it opted in (`allowAnsiMismatch`), knowing what its program reads.
 *
 * A shell's command line (`command` run by cmd or PowerShell) is not checked: both read it as
 * Unicode, and a command line is code, with no argument boundary to keep (whatever a look-alike
 * could smuggle into a program it starts, the command could say in plain ASCII). Arguments are
 * where the boundary is what a caller or a policy relies on.
 *
 * @example
 * ```ts
 * import { checkAnsiView } from "./ansi_view.ts";
 * // On Windows at code page 1252 this throws, naming `args`:
 * checkAnsiView([{ field: "args", label: "args[0]", text: "\uff02 --evil \uff02" }], "allowAnsiMismatch");
 * ```
 * @module
 */
import { type AnsiMismatch, ansiMismatch } from "../../pty/mod.ts";
import { EngineError } from "../errors.ts";

/** A text of the request that reaches the child, and where it came from. */
export interface AnsiChecked {
  /** The request field that holds it. */
  field: string;
  /** How the message names it (`args[2]`, `the working directory`). */
  label: string;
  text: string;
}

/**
 * Throws {@link EngineError} (`invalid_input`, naming the field) for the first text the ANSI
 * view changes. `optIn`: the request field that lets it through (its key: the message names
 * it, in each front end's spelling). `view`: the platform's
 * check (tests give their own).
 */
export function checkAnsiView(
  texts: readonly AnsiChecked[],
  optIn: string,
  view: (text: string) => AnsiMismatch | undefined = ansiMismatch,
): void {
  for (const { field, label, text } of texts) {
    const mismatch = view(text);
    if (!mismatch) continue;
    const { char, seen, codePage } = mismatch;
    const code = [...char].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase()}`);
    throw new EngineError(
      "invalid_input",
      [
        `${label} holds '${char}' (${code.join(" ")}), which a program reading its command ` +
        `line or directory in the ANSI code page (${codePage}) sees as '${seen}': Windows' ` +
        "best-fit conversion changes what the program gets (the WorstFit argument injection, " +
        "CVE-2024-4577); refused. Pass ",
        { field: optIn },
        ": true if the program reads them as Unicode (wmain, GetCommandLineW: most current " +
        "programs) and the change cannot matter",
      ],
      field,
    );
  }
}

/** What the launcher starts, as far as the ANSI view goes. */
export interface AnsiLaunch {
  /** The program as CreateProcessW gets it (its command line's first word). */
  program: string;
  /** The arguments given to the program (`executable`), or none for a shell. */
  args: readonly string[];
  /** The working directory, as the child starts in it. */
  cwd: string;
}

/** The texts of a launch to check, each with the request field it came from. */
export function launchTexts(
  launch: AnsiLaunch,
  fields: { program: string; cwd: string; args?: string },
): AnsiChecked[] {
  const argsField = fields.args ?? "args";
  return [
    { field: fields.program, label: "the program path", text: launch.program },
    ...launch.args.map((text) => ({
      field: argsField,
      label: `the argument ${shown(text)}`,
      text,
    })),
    { field: fields.cwd, label: "the working directory", text: launch.cwd },
  ];
}

/** A text as a message quotes it: at most 60 characters. */
function shown(text: string): string {
  return JSON.stringify(text.length > 60 ? text.slice(0, 60) + "…" : text);
}
