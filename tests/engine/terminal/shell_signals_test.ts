/**
 * What terminal_run and terminal_wait answer is decided by the shell's marks, the terminal's
 * state and the program's exit, never by how long something took (issue 35): a line that is
 * only the start of a command is refused by the continuation prompt's mark, in every shell; a
 * prompt slow to come after Ctrl+C, an echo slow to come after a prompt, startup files slower
 * than any bound, and many shells answering at once, each answered right. Shells start with
 * HOME in a fresh directory, where some tests write their own rc files.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { text } from "../../helpers/mcp.ts";
import { eventually, exists } from "../../helpers/process.ts";
import { has, linux, listed, open, type Run, run, shellTest } from "../../helpers/shells.ts";

for (const shell of ["bash", "zsh", "sh", "fish"]) {
  shellTest(
    `${shell}: a line that is only the start of a command is refused by its continuation prompt's mark and dropped`,
    async (mcp) => {
      // The run waited its whole timeout at the continuation prompt, answered "> " as output,
      // and the terminal counted as running the line until Ctrl+C (found by an attack helper).
      // Then the refusal came from a guess (the shell read the terminal and its output was still
      // for 150 ms), which a shell merely slow to start the command also met: now the shell's
      // continuation prompt (PS2; Enter's binding in fish) says so, and sh is covered too.
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "true");
      const lines = ["echo 'it''s open", "echo a |", "echo a \\", "echo a &&"];
      // fish has no here-documents (`<<` is an error there); it reads on after an open block.
      lines.push(shell === "fish" ? "begin" : "cat <<EOF");
      for (const line of lines) {
        const refused = await mcp.call("terminal_run", {
          terminalId,
          command: line,
          timeoutMs: 60_000,
        });
        ok(refused.isError, `${line}: ${JSON.stringify(refused.structuredContent)}`);
        match(text(refused), /^'command': the shell read it as the start of a longer command/);
        const next = await run(mcp, terminalId, "echo next; sh -c 'exit 4'");
        assertEquals([line, next.output, next.exitCode], [line, "next\n", 4]);
      }
      // A command the shell runs itself that reads the terminal is no such line: it waits.
      const reading = await mcp.callOk<Run>("terminal_run", {
        terminalId,
        command: "read x; echo got-$x",
        timeoutMs: 1500,
      });
      assertEquals(reading.condition, "timeout");
      await mcp.callOk("terminal_write", { terminalId, input: "abc" });
      const answered = await mcp.callOk<{ output: string }>("terminal_wait", {
        terminalId,
        prompt: true,
        timeoutMs: 15_000,
      });
      match(answered.output, /got-abc/);
      // A line that is whole after all runs as usual, and the next prompt is the shell's.
      const whole = await run(mcp, terminalId, "echo 'it''s closed'");
      assertEquals(whole.condition, "done");
      assertEquals((await listed(mcp, terminalId)).state, "prompt");
      // A syntax error starts nothing: answered with what the shell said, and the next run is
      // its own (fish kept the line, and drew its prompt twice: the next run was answered by
      // the second, and appended to the line).
      for (const wrong of ["echo ) oops", "echo ) again"]) {
        const error = await run(mcp, terminalId, wrong);
        assertEquals([error.condition, error.exitCode === 0], ["done", false]);
        match(error.output, /\)/);
        const after = await run(
          mcp,
          terminalId,
          "echo after-$((6*7))".replace(
            "$((6*7))",
            shell === "fish" ? "(math 6 '*' 7)" : "$((6*7))",
          ),
        );
        assertEquals([wrong, after.output, after.exitCode], [wrong, "after-42\n", 0]);
      }
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest(
  "Ctrl+C at the prompt, and prompt hooks slower than the 2 s once allowed: the next run waits for that prompt",
  async (mcp, home) => {
    // A run sent after Ctrl+C waited 2 s for the prompt it brings, then typed its line while
    // the hooks still ran: the prompt the line was read at answered it (output "", exit code
    // null), and its own output went to the run after.
    const terminalId = await open(mcp, "bash");
    await run(mcp, terminalId, "touch ~/slow-prompt", 30_000);
    ok(exists(`${home}/slow-prompt`));
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const after = await run(mcp, terminalId, "echo after-$((6*7)); (exit 3)", 30_000);
    assertEquals([after.condition, after.output, after.exitCode], ["done", "after-42\n", 3]);
    const next = await run(mcp, terminalId, "echo next", 30_000);
    assertEquals([next.output, next.exitCode], ["next\n", 0]);
  },
  { files: { ".bashrc": "PROMPT_COMMAND='[ -f ~/slow-prompt ] && sleep 3'\n" } },
);

shellTest(
  "zsh: part of a line typed while a command ran, whose echo comes late after the prompt: the run is refused, never appended to it",
  async (mcp, home) => {
    // The run looked 50 ms after the prompt for the line editor's echo of that text; a line
    // editor that got to it later (here zle-line-init takes half a second) had the run appended
    // to it: "echo partecho x" ran.
    let state = "";
    const terminalId = await open(mcp, "zsh");
    await run(mcp, terminalId, "true");
    // The command runs until the text is typed (a file says so: a sleep could end first).
    await mcp.callOk("terminal_write", {
      terminalId,
      input: "until [[ -f ~/typed ]]; do sleep 0.05; done; touch ~/slow-echo",
    });
    ok(
      await eventually(() => state === "running", 15_000, async () => {
        state = (await listed(mcp, terminalId)).state;
      }),
    );
    await mcp.callOk("terminal_write", { terminalId, input: "echo part", appendNewline: false });
    Deno.writeTextFileSync(`${home}/typed`, "");
    await mcp.callOk("terminal_wait", { terminalId, prompt: true, timeoutMs: 15_000 });
    const held = await mcp.call("terminal_run", { terminalId, command: "echo x" });
    ok(held.isError, JSON.stringify(held.structuredContent));
    match(text(held), /may have text typed at its prompt and not entered/);
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    assertEquals((await run(mcp, terminalId, "echo cleared")).output, "cleared\n");
  },
  {
    ignore: !linux || !has("zsh"),
    files: {
      ".zshrc": "zle-line-init() { [[ -f ~/slow-echo ]] && sleep 0.5 }\nzle -N zle-line-init\n",
    },
  },
);

shellTest(
  "startup files slower than the 10 s once allowed: a line typed meanwhile is answered after its prompt, not matched in its echo",
  async (mcp, home) => {
    // A line typed 10 s after the start, the shell still starting, was no longer taken to wait
    // for the first prompt: a wait for a pattern the line itself holds matched the line editor's
    // echo of it after that prompt, before the command ran.
    const terminalId = await open(mcp, "bash");
    ok(await eventually(() => exists(`${home}/rc-slept`), 60_000), "the startup file slept");
    const write = mcp.callOk<{ condition: string; output: string }>("terminal_write", {
      terminalId,
      input: "echo ready",
      pattern: "ready",
      timeoutMs: 60_000,
    });
    // Typed ahead once it waited the write timeout (1 s here) for the first prompt: the
    // terminal echoes it before the startup file goes on.
    let shown = "";
    ok(
      await eventually(() => shown.includes("echo ready"), 30_000, async () => {
        shown = (await mcp.callOk<{ output: string }>("terminal_read", { terminalId })).output;
      }),
      shown,
    );
    Deno.writeTextFileSync(`${home}/go`, "");
    const matched = await write;
    assertEquals(matched.condition, "pattern");
    match(matched.output, /^ready\n/);
    assertEquals((await listed(mcp, terminalId)).shellIntegration, "active");
  },
  {
    files: {
      ".bashrc": "sleep 10.5; touch ~/rc-slept\nwhile [ ! -f ~/go ]; do sleep 0.1; done\n",
    },
    env: { WINTERM_WRITE_TIMEOUT_MS: "1000" },
  },
);

const AT_ONCE = 300;

shellTest(
  `${AT_ONCE} bash terminals running at once: every answer is its own command's output and exit code`,
  async (mcp) => {
    // 300 at once: 281 refused as the start of a longer command (a 150 ms guess); 60 at once
    // were all right on a quiet machine. The measure is `deno task bench --only concurrent-runs`.
    const ids = await Promise.all(Array.from({ length: AT_ONCE }, () => open(mcp, "bash")));
    const answers = await Promise.all(
      ids.map((terminalId, n) =>
        mcp.call("terminal_run", { terminalId, command: `echo ok-${n}; (exit ${n % 7})` }, 180_000)
      ),
    );
    const wrong = answers.map((answer, n) => {
      const ran = answer.structuredContent as unknown as Run | undefined;
      return !answer.isError && ran?.condition === "done" && ran.output === `ok-${n}\n` &&
          ran.exitCode === n % 7
        ? undefined
        : `${n}: ${answer.isError ? text(answer) : JSON.stringify(ran)}`;
    }).filter((line) => line !== undefined);
    assertEquals(wrong, []);
  },
  { env: { WINTERM_MAX_TERMINALS: String(AT_ONCE) } },
);
