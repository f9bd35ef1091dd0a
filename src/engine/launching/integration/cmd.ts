/**
 * Shell integration for cmd: its prompt. cmd has no hooks, but expands `$E` (ESC) and `$P`
 * (the current directory) before every prompt, so the prompt carries `P`, `A`, the user's
 * prompt (`$P$G` if none) and `B`. Marks end with ST (`$E\`): consoles swallow BEL. The prompt
 * is set by a `prompt` command at the start (`/k`), not through PROMPT in the environment,
 * which some cmd builds (Wine's) ignore.
 *
 * How far cmd allows: no `C` and no `D` of its own. A command typed by `terminal_write` ends
 * when the next prompt shows, with no exit code. `terminal_run` types its command followed by
 * {@link cmdExitCode}, which prints `D` with the exit code: `call` expands %ERRORLEVEL% once
 * the command has run (the caret keeps the command line's own expansion off it), and ESC comes
 * from WINTERM_ESC, which the shell gets in its environment. Afterwards %ERRORLEVEL% is 0 (the
 * echo's). The nonce is in PROMPT, an environment variable every program cmd starts can read.
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

/** What `terminal_run` types after a command in cmd to report its exit code. */
export function cmdExitCode(nonce: string): string {
  const esc = `%${ESC_VARIABLE}%`;
  return ` & call echo ${esc}]133;D;%^ERRORLEVEL%;${nonce}${esc}\\`;
}
