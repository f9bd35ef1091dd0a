/**
 * Shell integration on Windows through the real server: cmd's prompt marks and terminal_run
 * (output, exit code, cwd), under Wine too (where the server starts an interactive cmd with its
 * input and output on CON, and where the marks take cells: a wide terminal keeps the prompt on
 * one line). PowerShell's are tested in powershell_test.ts.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runningUnderWine } from "../../src/pty/mod.ts";
import { type Connection, serverTest } from "../helpers/mcp.ts";

const windows = Deno.build.os === "windows";

interface Run {
  condition: string;
  output: string;
  exitCode: number | null;
  cwd: string | null;
}

const run = (mcp: Connection, terminalId: string, command: string, timeoutMs = 30_000) =>
  mcp.callOk<Run>("terminal_run", { terminalId, command, timeoutMs }, 60_000);

serverTest("cmd: terminal_run answers the output, the exit code and the cwd", async (mcp) => {
  const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    shell: "cmd",
    cwd: "C:\\",
    cols: 250,
  });
  const failed = await run(mcp, terminalId, "cmd /d /c exit 5");
  assertEquals([failed.condition, failed.exitCode, failed.output], ["done", 5, ""]);
  match(failed.cwd!, /^C:\\$/i);

  const moved = await run(mcp, terminalId, "cd /d %SystemRoot% & echo in-42");
  assertEquals([moved.output, moved.exitCode], ["in-42\n", 0]);
  match(moved.cwd!, /^C:\\windows$/i);

  // Output that looks like the prompt does not end the command early.
  const lookalike = await run(
    mcp,
    terminalId,
    "echo C:\\Windows^>& ping -n 2 127.0.0.1 >nul & echo after",
  );
  assertEquals(lookalike.output, "C:\\Windows>\nafter\n");

  // A command that reads input, answered through terminal_write.
  const asking = await run(
    mcp,
    terminalId,
    "set /p ANSWER=name? & call echo hello %^ANSWER%",
    2000,
  );
  assertEquals(asking.condition, "timeout");
  await mcp.callOk("terminal_write", { terminalId, input: "Ada" });
  const back = await mcp.callOk<{ condition: string; output: string; cwd?: string }>(
    "terminal_wait",
    { terminalId, prompt: true, timeoutMs: 30_000 },
  );
  assertEquals(back.condition, "prompt");
  match(back.output, /hello Ada/);

  const list = await mcp.callOk<{ terminals: { state: string; cwd: string }[] }>("terminal_list");
  assertEquals(list.terminals[0].state, "prompt");
  match(list.terminals[0].cwd, /^C:\\windows$/i);

  // Whether a program reads the console cannot be told here: said, not guessed.
  const input = await mcp.call("terminal_wait", { terminalId, input: true, timeoutMs: 100 });
  ok(input.isError);
  match(JSON.stringify(input.content), /Linux only/);
  await mcp.callOk("terminal_release", { terminalId });
}, { ignore: !windows });

serverTest(
  "cmd: terminal_run through cmd's own grammar (for, if, rem, &, &&, ||, blocks)",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: "cmd",
      cwd: "C:\\",
      cols: 250,
    });
    // Each of these swallowed an end mark appended to its line (the body of a for or an if, a
    // remark): for answered its first item only, the others no exit code.
    const cases: [string, string, number][] = [
      ["for %i in (a b c) do @echo item-%i", "item-a\nitem-b\nitem-c\n", 0],
      ["if exist C:\\no-such-file echo yes", "", 0],
      ["rem x", "", 0],
      ["echo x & rem y", "x\n", 0],
      ["echo a && echo b", "a\nb\n", 0],
      // cmd's %ERRORLEVEL%, not a POSIX shell's $?: echo leaves it as the failure set it.
      ["cmd /d /c exit 3 || echo failed", "failed\n", 3],
      ["cmd /d /c exit 4 && echo never", "", 4],
      ["(echo p1 & echo p2)", "p1\np2\n", 0],
      ["if 1==1 (echo yes) else (echo no)", "yes\n", 0],
      // A line starts from %ERRORLEVEL% 0: what does not set it answers 0 after a failure too.
      ["rem after a failure", "", 0],
    ];
    for (const [command, output, exitCode] of cases) {
      const answer = await run(mcp, terminalId, command);
      assertEquals(
        [answer.condition, answer.output, answer.exitCode],
        ["done", output, exitCode],
        command,
      );
    }
    // The state the command left is the shell's: a variable set, the exit code asked for later.
    assertEquals((await run(mcp, terminalId, "set WINTERM_TEST=kept")).exitCode, 0);
    assertEquals((await run(mcp, terminalId, "echo [%WINTERM_TEST%]")).output, "[kept]\n");
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !windows },
);

serverTest(
  "an interactive cmd stays at its prompt through Ctrl+C (Windows; Wine's cmd exits)",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: "cmd",
      cols: 250,
    });
    assertEquals((await run(mcp, terminalId, "echo first")).output, "first\n");
    // At its prompt, and while a command runs.
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const atPrompt = await run(mcp, terminalId, "echo after-prompt-ctrl-c");
    assertEquals([atPrompt.condition, atPrompt.output], ["done", "after-prompt-ctrl-c\n"]);
    const long = await run(mcp, terminalId, "ping -n 60 127.0.0.1", 1000);
    assertEquals(long.condition, "timeout");
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const back = await mcp.callOk<{ condition: string }>("terminal_wait", {
      terminalId,
      prompt: true,
      timeoutMs: 30_000,
    });
    assertEquals(back.condition, "prompt");
    assertEquals((await run(mcp, terminalId, "echo still-here")).output, "still-here\n");
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !windows || runningUnderWine() !== null },
);
