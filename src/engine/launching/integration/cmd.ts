/**
 * Shell integration for cmd: its prompt. cmd has no hooks, but expands `$E` (ESC) and `$P`
 * (the current directory) before every prompt, so the prompt carries `P`, `A`, the user's
 * prompt (`$P$G` if none) and `B`. Marks end with ST (`$E\`): consoles swallow BEL. The prompt
 * is set by a `prompt` command at the start (`/k`), not through PROMPT in the environment,
 * which some cmd builds (Wine's) ignore.
 *
 * How far cmd allows: no `C` and no `D` of its own, and no way to show %ERRORLEVEL% in a
 * prompt. A command typed by `terminal_write` ends when the next prompt shows, with no exit
 * code. `terminal_run` does two things around its command line:
 * - Before it ({@link CmdRunWrapping.prefix}): `ver>nul` (the line starts from %ERRORLEVEL% 0:
 *   cmd's own `rem`, `if` without a match and `for` leave it as it was) and an echo of `C`
 *   (so its output is told from the echo of the typed line, however the console wraps that).
 *   Both end at `&`, before the command: nothing of cmd's grammar in the command reaches them.
 * - Nothing after it on the same line: whatever follows a command on its line may become part
 *   of it (the body of a `for` or an `if`, the text of a `rem`), so the command's end is the
 *   prompt cmd draws once the whole line has run, and the exit code is asked for then, with
 *   a line of its own ({@link CmdRunWrapping.exitQuery}): an echo of `D` with %ERRORLEVEL%,
 *   which cmd expands as it reads that line, and `echo` leaves as it was.
 *
 * ESC comes from WINTERM_ESC, which the shell gets in its environment. The nonce is in PROMPT,
 * an environment variable every program cmd starts can read.
 *
 * @module
 */

/** The variable holding ESC for the marks `terminal_run` echoes. */
export const ESC_VARIABLE = "WINTERM_ESC";

/** The `prompt` command that installs the marks, the user's prompt inside. */
export function cmdPromptCommand(nonce: string, userPrompt: string | undefined): string {
  // The text goes through cmd's own parsing: a prompt holding characters it would act on is
  // replaced by the default.
  const inner = userPrompt && !/[&|<>^%"=\r\n]/.test(userPrompt) ? userPrompt : "$P$G";
  const mark = (body: string) => `$E]133;${body};${nonce}$E\\`;
  return `prompt ${mark("P;$P")}${mark("A")}${inner}${mark("B")}`;
}

/** What `terminal_run` types for a command in cmd (see the module documentation). */
export interface CmdRunWrapping {
  /** Typed before the command, on its line. */
  prefix: string;
  /** Typed as a line of its own once the command's prompt has shown: reports its exit code. */
  exitQuery: string;
}

/** What `terminal_run` types for a command in cmd, with the terminal's nonce. */
export function cmdRunWrapping(nonce: string): CmdRunWrapping {
  const esc = `%${ESC_VARIABLE}%`;
  return {
    prefix: `ver>nul& echo ${esc}]133;C;nl;${nonce}${esc}\\& `,
    exitQuery: `echo ${esc}]133;D;%ERRORLEVEL%;${nonce}${esc}\\`,
  };
}
