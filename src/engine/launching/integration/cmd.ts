/**
 * Shell integration for cmd: its prompt. cmd has no hooks, but expands `$E` (ESC) and `$P`
 * (the current directory) before every prompt, so the prompt carries `P`, `A`, the user's
 * prompt (`$P$G` if none) and `B`. Marks end with ST (`$E\`): consoles swallow BEL. The prompt
 * is set by a `prompt` command at the start (`/k`), not through PROMPT in the environment,
 * which some cmd builds (Wine's) ignore.
 *
 * How far cmd allows: no `C` and no `D` of its own. A command typed by `terminal_write` ends
 * when the next prompt shows, with no exit code. `terminal_run` types its command between the
 * two halves of {@link cmdRunWrapping}: an echo of `C` before it (so its output is told from
 * the echo of the typed line, however the console wraps that), an echo of `D` with the exit
 * code after it: `call` expands %ERRORLEVEL% once the command has run (the caret keeps the
 * command line's own expansion off it). ESC comes from WINTERM_ESC, which the shell gets in its
 * environment. Afterwards %ERRORLEVEL% is 0 (the echo's). The nonce is in PROMPT, an
 * environment variable every program cmd starts can read.
 *
 * @module
 */

/** The variable holding ESC for {@link cmdExitCode}. */
export const ESC_VARIABLE = "WINTERM_ESC";

/** The `prompt` command that installs the marks, the user's prompt inside. */
export function cmdPromptCommand(nonce: string, userPrompt: string | undefined): string {
  // The text goes through cmd's own parsing: a prompt holding characters it would act on is
  // replaced by the default.
  const inner = userPrompt && !/[&|<>^%"=\r\n]/.test(userPrompt) ? userPrompt : "$P$G";
  const mark = (body: string) => `$E]133;${body};${nonce}$E\\`;
  return `prompt ${mark("P;$P")}${mark("A")}${inner}${mark("B")}`;
}

/**
 * What `terminal_run` types around a command in cmd: before it, an echo of `C` (marked as
 * followed by its line break), after it one of `D` with the exit code.
 */
export function cmdRunWrapping(nonce: string): { prefix: string; suffix: string } {
  const esc = `%${ESC_VARIABLE}%`;
  return {
    prefix: `echo ${esc}]133;C;nl;${nonce}${esc}\\& `,
    suffix: ` & call echo ${esc}]133;D;%^ERRORLEVEL%;${nonce}${esc}\\`,
  };
}
