import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import {
  shellIntegration,
  ShellScripts,
} from "../../../../src/engine/launching/integration/mod.ts";
import { cmdPromptCommand } from "../../../../src/engine/launching/integration/cmd.ts";
import { exists, tempDir } from "../../../helpers/process.ts";

const NONCE = "0123456789abcdef0123456789abcdef";

Deno.test("each shell gets its way in, and the user's own settings are passed on", () => {
  const scripts = new ShellScripts();
  try {
    const bash = shellIntegration("bash", NONCE, {}, scripts)!;
    assertEquals(bash.args?.[0], "--init-file");
    match(Deno.readTextFileSync(bash.args![1]), /\. ~\/\.bashrc/);
    assertEquals(bash.env, { WINTERM_SHELL_NONCE: NONCE });

    const zsh = shellIntegration("zsh", NONCE, { ZDOTDIR: "/home/me/.config/zsh" }, scripts)!;
    ok(Deno.statSync(`${zsh.env!.ZDOTDIR}/.zshenv`).isFile);
    ok(Deno.statSync(`${zsh.env!.ZDOTDIR}/.zshrc`).isFile);
    assertEquals(zsh.env!.WINTERM_USER_ZDOTDIR, "/home/me/.config/zsh");
    assertEquals(shellIntegration("zsh", NONCE, {}, scripts)!.env!.WINTERM_USER_ZDOTDIR, undefined);

    const sh = shellIntegration("sh", NONCE, { ENV: "$HOME/.shrc" }, scripts)!;
    match(Deno.readTextFileSync(sh.env!.ENV), /PS1=/);
    assertEquals(sh.env!.WINTERM_USER_ENV, "$HOME/.shrc");
    // The prompts are handed over unexported: dash would export the nonce with them.
    const prompted = shellIntegration("sh", NONCE, { PS1: "EX$ ", PS2: "more> " }, scripts)!;
    assertEquals(
      [prompted.env!.WINTERM_USER_PS1, prompted.env!.WINTERM_USER_PS2, prompted.unset],
      ["EX$ ", "more> ", ["PS1", "PS2"]],
    );

    const fish = shellIntegration("fish", NONCE, {}, scripts)!;
    match(fish.args![1], new RegExp(`^set -g __winterm_nonce ${NONCE}; source '.*\\.fish'$`));

    match(shellIntegration("powershell", NONCE, {}, scripts)!.startup!, /function global:prompt/);
    const cmd = shellIntegration("cmd", NONCE, { Prompt: "$N$G" }, scripts)!;
    match(cmd.startup!, /^prompt .*\$N\$G/);
    assertEquals(cmd.env, { WINTERM_ESC: "\x1b" });
    // Nothing after the command on its line: the exit code is asked for on a line of its own.
    match(
      cmd.runWrapping!.prefix,
      /^ver>nul& echo %WINTERM_ESC%\]133;C;nl;[0-9a-f]+%WINTERM_ESC%\\& $/,
    );
    match(cmd.runWrapping!.exitQuery!, /^echo %WINTERM_ESC%\]133;D;%ERRORLEVEL%;[0-9a-f]+/);
    assertEquals(shellIntegration("xonsh", NONCE, {}, scripts), undefined);
  } finally {
    scripts.remove();
  }
});

Deno.test("the files are named by their content, written once, whole, and kept private", () => {
  const dir = tempDir("winterm-scripts-");
  try {
    const first = new ShellScripts(dir).file("x", "echo one\n", ".sh");
    const again = new ShellScripts(dir).file("x", "echo one\n", ".sh");
    const other = new ShellScripts(dir).file("x", "echo two\n", ".sh");
    assertEquals(first, again);
    ok(first !== other);
    if (Deno.build.os !== "windows") assertEquals(Deno.statSync(first).mode! & 0o777, 0o600);
    assertEquals([...Deno.readDirSync(dir)].filter((entry) => entry.name.endsWith(".tmp")), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  if (Deno.build.os !== "windows" && Deno.uid() !== 0) {
    // A state directory that cannot be written: a temporary one serves.
    const locked = tempDir("winterm-locked-");
    Deno.chmodSync(locked, 0o500);
    const scripts = new ShellScripts(`${locked}/sub`);
    ok(!scripts.file("z", "true\n").startsWith(locked));
    scripts.remove();
    Deno.chmodSync(locked, 0o700);
    Deno.removeSync(locked, { recursive: true });
  }
  if (Deno.build.os === "linux") {
    const missing = new ShellScripts("/proc/no-such-place/for/scripts");
    ok(!missing.file("z", "true\n").startsWith("/proc"));
    missing.remove();
  }
  const temporary = new ShellScripts();
  const path = temporary.file("y", "true\n");
  temporary.remove();
  ok(!exists(path), "a temporary directory goes at shutdown");
});

Deno.test("cmd: a prompt cmd would act on is replaced by the default", () => {
  match(cmdPromptCommand(NONCE, "$P$G"), /\$P\$G\$E\]133;B;/);
  for (const prompt of ["a&b", "%CD%>", 'say "hi"', "x=y"]) {
    match(cmdPromptCommand(NONCE, prompt), /\$E\\\$P\$G\$E\]133;B;/, prompt);
  }
});
