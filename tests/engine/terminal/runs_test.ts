/**
 * Shell integration through the real server (stdio, the shipped flags): bash, sh, zsh and fish
 * started with their marks, terminal_run's output, exit codes and cwd, terminal_wait's prompt
 * and input conditions, the state in terminal_list and terminal_stats, a python REPL, a real
 * rc file, forged marks, REST. Shells start with HOME in a fresh directory (no rc files of this
 * machine: its ~/.bashrc runs pyenv), where some tests write their own.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, text } from "../../helpers/mcp.ts";
import { request, startHttpServer } from "../../helpers/http.ts";
import { eventually, exists } from "../../helpers/process.ts";
import {
  has,
  home,
  linux,
  listed,
  open,
  type Run,
  run,
  shellTest,
  type Waited,
} from "../../helpers/shells.ts";

const PYTHON = has("python3") ? "/usr/bin/python3" : "python3";
const runFor = run;

/** The issue's cases, for one shell. */
async function provesCommands(mcp: Connection, terminalId: string): Promise<void> {
  /** A run that finishes; terminal_list then shows the prompt, its cwd and exit code. */
  const run = async (mcp: Connection, terminalId: string, command: string, maxBytes?: number) => {
    const done = await mcp.callOk<Run>("terminal_run", {
      terminalId,
      command,
      timeoutMs: 15_000,
      maxBytes,
    });
    const state = await listed(mcp, terminalId);
    assertEquals(
      [done.condition, state.state, state.cwd, state.lastExitCode],
      ["done", "prompt", done.cwd, done.exitCode],
    );
    return done;
  };
  const failed = await run(mcp, terminalId, "false");
  assertEquals([failed.condition, failed.exitCode, failed.output], ["done", 1, ""]);
  assertEquals(failed.cwd, "/");

  const moved = await run(mcp, terminalId, "cd /tmp && echo in-42");
  assertEquals([moved.output, moved.exitCode, moved.cwd], ["in-42\n", 0, "/tmp"]);
  const after = await listed(mcp, terminalId);
  assertEquals([after.state, after.cwd, after.lastExitCode], ["prompt", "/tmp", 0]);

  // 13,893 bytes (16,893 as JSON): over the default 16 KiB answer, whole within 64 KiB.
  const all = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("");
  const lines = await run(mcp, terminalId, "seq 1 3000", 65536);
  assertEquals(lines.output, all);
  assertEquals([lines.exitCode, lines.truncated], [0, false]);
  const shaped = await run(mcp, terminalId, "seq 1 3000");
  const [head, tail] = shaped.output.split(/\.\.\. \[.*\] \.\.\.\n/);
  const omitted = shaped.output.match(
    /\[(\d+) lines, (\d+) bytes omitted; read them with since=\d+\]/,
  )!;
  assertEquals(head + all.slice(head.length, all.length - tail.length) + tail, all);
  // The marker counts the lines left out, and their raw bytes (a terminal's "\r\n").
  const missing = all.slice(head.length, all.length - tail.length);
  assertEquals(Number(omitted[1]), missing.split("\n").length - 1);
  assertEquals(Number(omitted[2]), missing.length + Number(omitted[1]));
  assertEquals(shaped.truncated, true);

  // Output that looks like a prompt, and marks printed by the command itself (without the
  // terminal's nonce), do not end the command early.
  const prompt = (await listed(mcp, terminalId)).cwd;
  const forged = await run(
    mcp,
    terminalId,
    `printf '%s\\n' 'root@host:${prompt}# ' '$ '; ` +
      `printf '\\033]133;D;0;0123456789abcdef0123456789abcdef\\007\\033]133;A\\007\\033]133;B\\007'; ` +
      "sleep 0.3; echo still-running; (exit 4)",
  );
  assertEquals(forged.output, `root@host:${prompt}# \n$ \nstill-running\n`);
  assertEquals(forged.exitCode, 4);
  assertEquals((await listed(mcp, terminalId)).lastExitCode, 4);

  // A command that reads input, answered through terminal_write, still ends with its code.
  const asking = await runFor(
    mcp,
    terminalId,
    "printf 'name? '; read answer; echo \"hello $answer\"; (exit 7)",
    1000,
  );
  assertEquals([asking.condition, asking.exitCode, asking.cwd], ["timeout", null, null]);
  const waiting = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    input: true,
    timeoutMs: 10_000,
  });
  assertEquals(waiting.condition, "input");
  const state = await listed(mcp, terminalId);
  assertEquals(state.state, "input");
  ok(state.running?.command?.includes("read answer"), JSON.stringify(state));
  await mcp.callOk("terminal_write", { terminalId, input: "Ada" });
  const back = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    prompt: true,
    timeoutMs: 10_000,
  });
  assertEquals([back.condition, back.lastExitCode, back.cwd], ["prompt", 7, "/tmp"]);
  match(back.output, /hello Ada/);

  // A nested shell: the command runs until it exits; its exit code is the command's.
  const nested = await runFor(mcp, terminalId, "sh", 500);
  assertEquals(nested.condition, "timeout");
  await mcp.callOk("terminal_write", { terminalId, input: "echo inner-$((6 * 7)); exit 5" });
  const done = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    prompt: true,
    timeoutMs: 10_000,
  });
  assertEquals([done.condition, done.lastExitCode], ["prompt", 5]);
  match(done.output, /inner-42/);

  // The marks never show: not in raw output, not on the screen.
  const raw = await mcp.callOk<{ output: string }>("terminal_read", {
    terminalId,
    raw: true,
    mode: "tail",
    tailLines: 200,
  });
  // Only the three marks the command printed itself are output (the nonce's never are).
  assertEquals(raw.output.split("\x1b]133;").length - 1, 3, raw.output);
  const screen = await mcp.callOk<{ output: string }>("terminal_read", {
    terminalId,
    mode: "screen",
  });
  ok(!screen.output.includes("133;P;") && !screen.output.includes("\x1b"), screen.output);
}

for (const shell of ["bash", "sh", "zsh", "fish"]) {
  shellTest(
    `${shell}: exit codes, output, cwd, forged marks, input, a nested shell`,
    async (mcp) => {
      const terminalId = await open(mcp, shell);
      if (shell === "fish") {
        // fish has its own syntax: the cases it shares.
        const failed = await run(mcp, terminalId, "false");
        assertEquals([failed.exitCode, failed.output, failed.cwd], [1, "", "/"]);
        const moved = await run(mcp, terminalId, "cd /tmp; and echo in-42");
        assertEquals([moved.output, moved.exitCode, moved.cwd], ["in-42\n", 0, "/tmp"]);
        const lines = await mcp.callOk<Run>("terminal_run", {
          terminalId,
          command: "seq 1 3000",
          maxBytes: 65536,
        });
        assertEquals(lines.output.split("\n").length, 3001);
        assertEquals((await listed(mcp, terminalId)).state, "prompt");
        return;
      }
      await provesCommands(mcp, terminalId);
    },
    { ignore: !linux || !has(shell) },
  );
}

for (const shell of ["bash", "sh", "zsh", "fish"]) {
  shellTest(
    `${shell}: the cwd is exact whatever bytes the directory's name holds`,
    async (mcp) => {
      // BEL, ESC and LF would end the mark early; %41 must not come back as A; CAN and SUB
      // (which end an OSC on a terminal) are not encoded by the shells.
      const base = await Deno.makeTempDir();
      const dir = `${base}/a\x07b\x1b[31mc\nd%41;e\x18f\x1ag 中z`;
      await Deno.mkdir(dir);
      // Near PATH_MAX, all '%': three times as long encoded.
      let deep = base;
      while (deep.length < 3800) deep += "/" + "%".repeat(200);
      await Deno.mkdir(deep, { recursive: true });
      try {
        const terminalId = await open(mcp, shell);
        const moved = await run(mcp, terminalId, `cd ${base}/a*z`);
        assertEquals([moved.condition, moved.exitCode, moved.cwd], ["done", 0, dir]);
        assertEquals((await listed(mcp, terminalId)).cwd, dir);
        const deeper = await run(mcp, terminalId, `cd ${deep}`);
        assertEquals([deeper.condition, deeper.exitCode, deeper.cwd], ["done", 0, deep]);
        const screen = await mcp.callOk<{ output: string }>("terminal_read", {
          terminalId,
          mode: "screen",
        });
        ok(!screen.output.includes("133;"), screen.output);
      } finally {
        await Deno.remove(base, { recursive: true });
      }
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest("input is reported at the prompt a program reads, and never for sleep", async (mcp) => {
  const terminalId = await open(mcp, "bash");
  const cases = [
    [`${PYTHON} -c "input('name? ')"`, "name\\? $"],
    ["read -p 'name? ' answer", "name\\? $"],
    ["read -s -p 'secret? ' answer", "secret\\? $"],
  ];
  for (const [command, prompt] of cases) {
    await mcp.callOk("terminal_write", { terminalId, input: command });
    const shown = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      pattern: prompt,
      timeoutMs: 15_000,
    });
    assertEquals(shown.condition, "pattern", command);
    const reading = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      input: true,
      timeoutMs: 5000,
    });
    // How soon is the benchmarks' matter (docs/benchmarks.md), not a test's.
    assertEquals(reading.condition, "input", command);
    await mcp.callOk("terminal_write", { terminalId, input: "x" });
    assertEquals(
      (await mcp.callOk<Waited>("terminal_wait", { terminalId, prompt: true, timeoutMs: 10_000 }))
        .condition,
      "prompt",
    );
  }
  // Long enough to outlast the wait however slowly the wait begins.
  await mcp.callOk("terminal_write", { terminalId, input: "sleep 60" });
  const sleeping = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    input: true,
    timeoutMs: 1500,
  });
  assertEquals(sleeping.condition, "timeout");
  assertEquals((await listed(mcp, terminalId)).state, "running");
  await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
});

shellTest(
  "a python REPL: input at its prompt, no shell integration, a clear error",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: PYTHON,
      args: ["-q"],
    });
    const reading = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      input: true,
      timeoutMs: 15_000,
    });
    assertEquals(reading.condition, "input");
    const state = await listed(mcp, terminalId);
    assertEquals([state.state, state.shellIntegration], ["input", "none"]);
    await mcp.callOk("terminal_write", { terminalId, input: "import time; time.sleep(1.5)" });
    const busy = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      input: true,
      timeoutMs: 800,
    });
    assertEquals(busy.condition, "timeout");
    assertEquals((await listed(mcp, terminalId)).state, "running");
    assertEquals(
      (await mcp.callOk<Waited>("terminal_wait", { terminalId, input: true, timeoutMs: 10_000 }))
        .condition,
      "input",
    );
    const refused = await mcp.call("terminal_run", { terminalId, command: "print(1)" });
    ok(refused.isError);
    match(JSON.stringify(refused.content), /without shell integration/);
    const prompt = await mcp.call("terminal_wait", { terminalId, prompt: true, timeoutMs: 100 });
    ok(prompt.isError);
    match(JSON.stringify(prompt.content), /prompt/);
  },
);

const USER_BASHRC = `
alias greet='echo hello-from-alias'
PS1='custom> '
PROMPT_COMMAND='__user_status=$?; __user_prompts=$((__user_prompts + 1))'
trap '__user_debug=$((__user_debug + 1))' DEBUG
export FROM_BASHRC=yes
`;

shellTest(
  "bash with a real ~/.bashrc: its alias, prompt, PROMPT_COMMAND and DEBUG trap keep working",
  async (mcp, home) => {
    const before = Deno.readTextFileSync(`${home}/.bashrc`);
    const terminalId = await open(mcp, "bash");
    assertEquals((await run(mcp, terminalId, "greet")).output, "hello-from-alias\n");
    assertEquals((await run(mcp, terminalId, "echo $FROM_BASHRC")).output, "yes\n");
    const failed = await run(mcp, terminalId, "(exit 9)");
    assertEquals(failed.exitCode, 9);
    // The user's PROMPT_COMMAND saw the same $? and ran at every prompt; the DEBUG trap runs.
    const seen = await run(mcp, terminalId, 'echo "$__user_status $__user_prompts $__user_debug"');
    const [status, prompts, debug] = seen.output.trim().split(" ").map(Number);
    assertEquals(status, 9);
    ok(prompts >= 4 && debug >= 4, seen.output);
    const screen = await mcp.callOk<{ output: string }>("terminal_read", {
      terminalId,
      mode: "screen",
    });
    match(screen.output, /custom> $/m);
    // Nothing of the user's was changed, and no child inherits the nonce.
    assertEquals(Deno.readTextFileSync(`${home}/.bashrc`), before);
    assertEquals((await run(mcp, terminalId, "env | grep -c WINTERM_SHELL_NONCE")).output, "0\n");
  },
  { files: { ".bashrc": USER_BASHRC } },
);

shellTest(
  "a line typed before the shell's first prompt: waits answer with its output, not its echo",
  async (mcp, home) => {
    // The shell starts slowly (its ~/.bashrc waits for a file, as pyenv or nvm take a second):
    // the line waits for the first prompt the write timeout long (1 s here), then is typed
    // ahead, echoed by the terminal, then shown again by readline after the prompt. Neither
    // echo is the answer, nor is that prompt.
    const typedEarly = async (input: string) => {
      const terminalId = await open(mcp, "bash");
      await mcp.callOk("terminal_write", { terminalId, input });
      let output = "";
      ok(
        await eventually(() => output.includes(input), 10_000, async () => {
          output = (await mcp.callOk<{ output: string }>("terminal_read", { terminalId })).output;
        }),
        `the terminal did not echo the line: ${JSON.stringify(output)}`,
      );
      return terminalId;
    };
    const first = await typedEarly("sleep 0.2; echo server-ready-on-port-4321");
    const second = await typedEarly("sleep 0.2; echo slept-$((2 * 3))");
    const third = await typedEarly("echo quiet-$((3 * 3)); sleep 0.3");
    // Quiet while the shell starts is no answer: the idle wait waits for the line to run.
    const idle = mcp.callOk<{ condition: string; output: string }>("terminal_wait", {
      terminalId: third,
      idleMs: 500,
      timeoutMs: 15_000,
    });
    // Twice its idleMs of startup pass first (a wait for nothing: what is tested is that the
    // idle wait does not answer meanwhile).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    Deno.writeTextFileSync(`${home}/go`, "");
    const quiet = await idle;
    assertEquals(quiet.condition, "idle");
    match(quiet.output, /^quiet-9\n/);
    const matched = await mcp.callOk<{ condition: string; output: string }>("terminal_wait", {
      terminalId: first,
      pattern: "ready-on-port-\\d+",
      timeoutMs: 15_000,
    });
    assertEquals(matched.condition, "pattern");
    match(matched.output, /^server-ready-on-port-4321\n/);
    const prompted = await mcp.callOk<{ condition: string; output: string }>("terminal_wait", {
      terminalId: second,
      prompt: true,
      timeoutMs: 15_000,
    });
    assertEquals(prompted.condition, "prompt");
    match(prompted.output, /^slept-6\n/);
  },
  {
    files: { ".bashrc": 'while [ ! -e "$HOME/go" ]; do sleep 0.05; done\n' },
    env: { WINTERM_WRITE_TIMEOUT_MS: "1000" },
  },
);

shellTest(
  "a command ended, its prompt not shown yet: a run or a line typed then is answered after it",
  async (mcp, home) => {
    // The user's PROMPT_COMMAND runs after the command's end is reported and before the prompt
    // shows (a `git status` in a large repository): the shell reads a line typed meanwhile at
    // that prompt, which is no answer to it. The hook prints nothing (the end mark is then the
    // last thing in the output when the line is typed); it says it runs by a file, and waits
    // for another.
    const terminalId = await open(mcp, "bash");
    const hookRuns = async () => {
      ok(
        await eventually(() => exists(`${home}/in-hook`), 15_000),
        "the prompt hook did not run",
      );
    };
    const release = () => Deno.writeTextFileSync(`${home}/go`, "");
    // The hook removes its file when let go; Ctrl+C cuts it short before that.
    const next = () => {
      for (const file of ["go", "in-hook"]) {
        if (exists(`${home}/${file}`)) Deno.removeSync(`${home}/${file}`);
      }
    };
    const echoed = async (line: string) => {
      let output = "";
      ok(
        await eventually(() => output.includes(line), 10_000, async () => {
          output = (await mcp.callOk<{ output: string }>("terminal_read", { terminalId })).output;
        }),
        `the terminal did not echo the line: ${JSON.stringify(output)}`,
      );
    };
    await hookRuns(); // the first prompt's
    release();
    assertEquals((await run(mcp, terminalId, "(exit 3)")).exitCode, 3);
    next();
    await mcp.callOk("terminal_write", { terminalId, input: "echo before-$((6 * 7)); (exit 4)" });
    await hookRuns();
    // Between the end of that line and its prompt: a run is typed ahead, and answered after
    // it (it was answered with the line before's output and exit code).
    const ran = run(mcp, terminalId, "echo ran-$((6 * 7))");
    await echoed("echo ran-$((6 * 7))"); // typed (the terminal echoes it) before the release
    release();
    const outcome = await ran;
    assertEquals([outcome.condition, outcome.exitCode, outcome.output], ["done", 0, "ran-42\n"]);
    // A line written then, and a wait for the prompt; a run meanwhile is refused (that line
    // was to be answered, not the run's).
    next();
    await mcp.callOk("terminal_write", { terminalId, input: "(exit 5)" });
    await hookRuns();
    await mcp.callOk("terminal_write", { terminalId, input: "echo typed-$((6 * 7))" });
    const busy = await mcp.call("terminal_run", { terminalId, command: "echo other" });
    ok(busy.isError);
    match(JSON.stringify(busy.content), /a line entered that its shell has not started yet/);
    // Ctrl+U after it takes no line back (the guard looked at the last write alone).
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_u"] });
    const still = await mcp.call("terminal_run", { terminalId, command: "echo other" });
    match(JSON.stringify(still.content), /not started yet \(\\"echo typed-\$\(\(6 \* 7\)\)\\"\)/);
    await echoed("echo typed-$((6 * 7))");
    const waiting = mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      prompt: true,
      timeoutMs: 15_000,
    });
    release();
    const waited = await waiting;
    assertEquals([waited.condition, waited.lastExitCode], ["prompt", 0]);
    // From the Ctrl+U on: the line's echo as typed (if it came late), the prompt it was read
    // at with its echo there, its output, and the prompt after it.
    match(waited.output, /^([^\n]*\n)?[^\n]*echo typed-\$\(\(6 \* 7\)\)\ntyped-42\n[^\n]*$/);
    // Ctrl+C while the hook runs is no line read at the prompt: a wait after it answers at that
    // prompt (it waited for one more, which never came).
    next();
    await mcp.callOk("terminal_write", { terminalId, input: "true" });
    await hookRuns();
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const interrupted = mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      prompt: true,
      timeoutMs: 15_000,
    });
    release();
    assertEquals((await interrupted).condition, "prompt");
  },
  {
    files: {
      ".bashrc": 'PROMPT_COMMAND=\'touch "$HOME/in-hook"; ' +
        'while [ ! -e "$HOME/go" ]; do sleep 0.05; done; rm -f "$HOME/in-hook"\'\n',
    },
  },
);

for (
  const [shell, setPrompt, lines] of [
    ["bash", "PS1='PROMPT-TEXT\\$ '", [
      ["# a comment", "", 0],
      ["echo done!x", "bash: !x: event not found\n", null],
    ]],
    ["zsh", "PROMPT='PROMPT-TEXT%# '", [
      ["echo )", "zsh: parse error near `)'\n", 1],
      ["echo done!x", "zsh: event not found: x\n", 1],
    ]],
  ] as const
) {
  shellTest(
    `${shell}: a line that starts no command is answered with what the shell said, never its prompt`,
    async (mcp) => {
      // With no output-start mark, the answer ran on to the end of the output, the next prompt
      // included, with exitCode null (found by an attack helper). The status is the one the shell
      // reports at its prompt; bash reports none after a failed history expansion.
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, setPrompt);
      for (const [line, said, exitCode] of lines) {
        const answer = await run(mcp, terminalId, line);
        assertEquals([answer.condition, answer.output, answer.exitCode], ["done", said, exitCode]);
      }
      // The next run is answered as ever.
      const after = await run(mcp, terminalId, "echo next; (exit 3)");
      assertEquals([after.output, after.exitCode], ["next\n", 3]);
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest(
  "sh: a command line longer than the terminal's line mode holds is refused naming command",
  async (mcp) => {
    // The refusal named 'input', a field terminal_run does not have (found by an attack helper).
    const terminalId = await open(mcp, "sh");
    await run(mcp, terminalId, "true");
    const refused = await mcp.call("terminal_run", {
      terminalId,
      command: `echo ${"x".repeat(4100)}`,
      timeoutMs: 15_000,
    });
    ok(refused.isError);
    match(text(refused), /^'command': the terminal is in line mode \(canonical input\)/);
    assertEquals((await run(mcp, terminalId, "echo still-here")).output, "still-here\n");
  },
  { ignore: !linux },
);

for (const shell of ["sh", "bash"]) {
  shellTest(
    `${shell}: with the terminal's echo off, terminal_run answers every line of the output`,
    async (mcp) => {
      // sh has no output-start mark: its output was taken to start after the echo of the line,
      // and with no echo (stty -echo, as a password prompt or a crashed program leaves it) the
      // first line of each answer was dropped (found by an attack helper).
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "stty -echo");
      const one = await run(mcp, terminalId, "echo line-one");
      assertEquals([one.output, one.exitCode], ["line-one\n", 0]);
      const lines = await run(mcp, terminalId, "printf 'l1\\nl2\\nl3\\n'; (exit 4)");
      assertEquals([lines.output, lines.exitCode], ["l1\nl2\nl3\n", 4]);
      await run(mcp, terminalId, "stty echo");
      const echoed = await run(mcp, terminalId, "echo back");
      assertEquals([echoed.output, echoed.exitCode], ["back\n", 0]);
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest(
  "keys a full-screen program took (Escape in vim) do not hold up the next terminal_run",
  async (mcp) => {
    // They counted as typed at the shell's prompt, unseen, and the run was refused (found by an
    // attack helper). A program in raw mode takes keys as they come.
    const terminalId = await open(mcp, "bash");
    const file = `${home}/notes.txt`;
    const started = await mcp.callOk<{ condition: string }>("terminal_run", {
      terminalId,
      command: `vim -u NONE -N ${file}`,
      timeoutMs: 1500,
    });
    assertEquals(started.condition, "timeout");
    await mcp.callOk("terminal_write", {
      terminalId,
      input: "ihello\x1b",
      appendNewline: false,
      idleMs: 300,
    });
    const quit = await mcp.callOk<{ condition: string }>("terminal_write", {
      terminalId,
      input: ":wq\r",
      prompt: true,
      timeoutMs: 15_000,
    });
    assertEquals(quit.condition, "prompt");
    const after = await run(mcp, terminalId, `cat ${file}`);
    assertEquals([after.output, after.exitCode], ["hello\n", 0]);
  },
  { ignore: !linux || !has("vim") },
);

for (const shell of ["bash", "zsh", "sh"]) {
  shellTest(
    `${shell} under set -x: answers hold the command's own trace, never the integration's`,
    async (mcp) => {
      // The prompt hooks were traced into every answer, before the end mark, with the terminal's
      // mark nonce, which then let output forge a command's end (found by attack helpers).
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "set -x");
      const internals = /__winterm|[0-9a-f]{32}/;
      const traced = await run(mcp, terminalId, "echo hello");
      assertEquals([traced.output.endsWith("echo hello\nhello\n"), traced.exitCode], [true, 0]);
      ok(!internals.test(traced.output), traced.output);
      const failed = await run(mcp, terminalId, "false");
      assertEquals([failed.output.endsWith("false\n"), failed.exitCode], [true, 1]);
      ok(!internals.test(failed.output), failed.output);
      // Tracing stays on for the user's commands, and goes off when they say so.
      match((await run(mcp, terminalId, "echo $-")).output, /echo \S*x\S*\n\S*x/);
      await run(mcp, terminalId, "set +x");
      assertEquals((await run(mcp, terminalId, "echo quiet")).output, "quiet\n");
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest(
  "terminal_run with a maxBytes too small for head and tail says what it left out",
  async (mcp) => {
    // It answered the first maxBytes alone, truncated false, the rest silently missing (found
    // by an attack helper).
    const terminalId = await open(mcp, "bash");
    for (const maxBytes of [1, 200, 799]) {
      const answer = await mcp.callOk<Run & { truncated: boolean }>("terminal_run", {
        terminalId,
        command: "seq 1 1000; echo END",
        maxBytes,
        timeoutMs: 15_000,
      });
      assertEquals([answer.truncated, answer.exitCode], [true, 0]);
      match(answer.output, /^1\n/);
      match(answer.output, /\.\.\. \[\d+ bytes omitted; read them with since=\d+\] \.\.\.\n$/);
      const since = Number(answer.output.match(/since=(\d+)/)![1]);
      const rest = await mcp.callOk<{ output: string }>("terminal_read", {
        terminalId,
        since,
        maxBytes: 64 * 1024,
      });
      // It goes on from where the page stopped.
      const shown = answer.output.split("\n").filter((line) => /^\d+$/.test(line)).map(Number);
      ok(
        ("\n" + rest.output).includes(`\n${Math.max(0, ...shown) + 1}\n`),
        rest.output.slice(0, 99),
      );
    }
    const whole = await run(mcp, terminalId, "echo short");
    assertEquals([whole.output, (whole as Run & { truncated: boolean }).truncated], [
      "short\n",
      false,
    ]);
  },
);

for (const shell of ["bash", "zsh"]) {
  shellTest(
    `${shell}: a wait for a pattern after a line wider than the terminal never matches its echo`,
    async (mcp) => {
      // zsh returns to the start of the second row after a wrap, readline pads a row a
      // double-width character does not fit in: the echo was not recognised, and the wait
      // matched DONE-TOKEN in it at once (found by attack helpers: ASCII, then CJK and
      // combining marks, whose cells the cleaner did not count as the terminal does).
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "true");
      // Two of them, one a column further: whatever the prompt's width, one of them has a
      // double-width character at a row's last column.
      const lines = ["y".repeat(250), "日本".repeat(80), "x" + "日本".repeat(80)];
      for (const wide of lines) {
        const answer = await mcp.callOk<{ condition: string; output: string }>(
          "terminal_write",
          {
            terminalId,
            input: `sleep 0.3; echo '${wide}' DONE-TOKEN`,
            pattern: "DONE-TOKEN",
            timeoutMs: 15_000,
          },
        );
        assertEquals(answer.condition, "pattern");
        ok(!answer.output.includes("sleep"), `the echo was answered: ${answer.output}`);
        ok(answer.output.includes(`${wide} DONE-TOKEN`), answer.output);
        await mcp.callOk("terminal_wait", { terminalId, prompt: true, timeoutMs: 15_000 });
      }
    },
    { ignore: !linux || !has(shell) },
  );
}

for (const shell of ["bash", "zsh"]) {
  shellTest(
    `${shell}: a line written at the prompt comes first: a run right after it is refused, never answered with it`,
    async (mcp) => {
      // The written line had not shown its start mark yet: the shell counted as at its prompt,
      // and the run was answered with the written command's output and exit code (found by an
      // attack helper: 10 of 10 when both calls are sent at once).
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "true");
      for (let i = 0; i < 6; i++) {
        const marker = 1000 + i;
        const written = mcp.callOk("terminal_write", {
          terminalId,
          input: `sleep 0.3; echo theirs-$((${i} + 1000)); (exit 7)`,
        });
        // Sent at once, or after the write's answer.
        if (i % 2 === 1) await written;
        const ran = await mcp.call("terminal_run", {
          terminalId,
          command: `echo mine-$((${i} + 2000)); (exit 8)`,
          timeoutMs: 15_000,
        });
        await written;
        const text = JSON.stringify(ran.content);
        if (ran.isError) {
          match(text, /has a line entered that its shell has not started|is running/);
        } else {
          // It went first (the write's line then waited for it): its own answer.
          const own = ran.structuredContent as unknown as Run;
          assertEquals([own.output, own.exitCode], [`mine-${2000 + i}\n`, 8]);
        }
        if (i % 2 === 1) ok(ran.isError, "a run after the write's answer went through");
        let settled = false;
        ok(
          await eventually(() => settled, 15_000, async () => {
            const { output } = await mcp.callOk<{ output: string }>("terminal_read", {
              terminalId,
              tailLines: 5,
            });
            settled = output.includes(`theirs-${marker}`) &&
              (await listed(mcp, terminalId)).state === "prompt";
          }),
          "the written line did not finish",
        );
      }
    },
    { ignore: !linux || !has(shell) },
  );
}

/** A command line that runs until `~/name` exists (a test makes it once it has typed). */
const untilFile = (name: string) => `until [ -f ~/${name} ]; do sleep 0.05; done`;

for (const shell of ["bash", "zsh"]) {
  shellTest(
    `${shell}: lines typed while a command runs, or a second line, come before a run: it waits its turn`,
    async (mcp, home) => {
      // The shell says before each prompt whether a line waits to be read at it. Without that, a run
      // retried until accepted was answered with the typed-ahead line's output and exit code
      // (20 of 20), and a wait for the prompt after two lines answered after the first.
      const terminalId = await open(mcp, shell);
      await run(mcp, terminalId, "true");
      /** A run retried while refused as busy, as an agent would. */
      const runWhenFree = async (command: string) => {
        for (let tries = 0; tries < 5000; tries++) {
          const ran = await mcp.call("terminal_run", { terminalId, command, timeoutMs: 15_000 });
          if (!ran.isError) return ran.structuredContent as unknown as Run;
          // Busy, or between a command's end and the shell's word on what waits: not yet free.
          match(JSON.stringify(ran.content), /is running|not started yet|has not said yet/);
        }
        throw new Error("the run was never accepted");
      };
      /**
       * A run after Ctrl+C. About 1 in 30 runs under load, bash shows no new prompt after a
       * Ctrl+C that lands as it comes back from a command (not understood yet): the server says
       * so and advises Enter, which is what an agent does then.
       */
      const runAfterCtrlC = async (command: string) => {
        const ran = await mcp.call("terminal_run", { terminalId, command, timeoutMs: 15_000 });
        if (!ran.isError) return ran.structuredContent as unknown as Run;
        match(JSON.stringify(ran.content), /has shown no prompt since/);
        await mcp.callOk("terminal_write", { terminalId, input: "", prompt: true });
        return await run(mcp, terminalId, command);
      };
      for (let i = 0; i < 6; i++) {
        if (i % 2 === 0) {
          await mcp.callOk("terminal_write", { terminalId, input: "sleep 0.3; echo first" });
          await mcp.callOk("terminal_write", {
            terminalId,
            input: `echo theirs-$((${i} + 10)); (exit 7)`,
          });
        } else {
          await mcp.callOk("terminal_write", {
            terminalId,
            input: `sleep 0.3; echo first\necho theirs-$((${i} + 10)); (exit 7)`,
          });
        }
        const mine = await runWhenFree(`echo mine-$((${i} + 20)); (exit 8)`);
        assertEquals([i, mine.output, mine.exitCode], [i, `mine-${i + 20}\n`, 8]);
        const { output } = await mcp.callOk<{ output: string }>("terminal_read", { terminalId });
        match(output, new RegExp(`theirs-${i + 10}\\n`));
      }
      // Part of a line typed while a command runs: the line editor holds it at the prompt (the
      // run was appended to it, and ran mangled). The command runs until a file says the text
      // was typed (after a sleep, the prompt could come first on a slow turn: then the text is
      // typed at the prompt, another case, and the wait below waits for a prompt after it).
      await mcp.callOk("terminal_write", { terminalId, input: untilFile("typed-part") });
      await mcp.callOk("terminal_write", {
        terminalId,
        input: "echo part",
        appendNewline: false,
      });
      Deno.writeTextFileSync(`${home}/typed-part`, "");
      await mcp.callOk("terminal_wait", { terminalId, prompt: true, timeoutMs: 15_000 });
      const held = await mcp.call("terminal_run", { terminalId, command: "echo x" });
      match(
        JSON.stringify(held.content),
        /may have text typed at its prompt|has text typed at its prompt|input typed while a command ran/,
      );
      await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
      assertEquals((await runAfterCtrlC("echo cleared")).output, "cleared\n");
      // Escape typed while a command runs: the line editor holds it as a prefix, unseen (the
      // run's first letter was taken with it: `cho`).
      await mcp.callOk("terminal_write", { terminalId, input: untilFile("typed-escape") });
      await mcp.callOk("terminal_write", { terminalId, keys: ["escape"] });
      Deno.writeTextFileSync(`${home}/typed-escape`, "");
      await mcp.callOk("terminal_wait", { terminalId, prompt: true, timeoutMs: 15_000 });
      const prefixed = await mcp.call("terminal_run", { terminalId, command: "echo x" });
      // (Typed before the command's start mark came, it is typed at the prompt: refused too.)
      match(
        JSON.stringify(prefixed.content),
        /may hold keys typed while a command ran|has text typed at its prompt|input typed while a command ran/,
      );
      await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
      assertEquals((await runAfterCtrlC("echo after-escape")).output, "after-escape\n");
      // Two lines, and a wait for the prompt: it answers after both.
      const waited = await mcp.callOk<Waited>("terminal_write", {
        terminalId,
        input: "sleep 0.2; echo one\necho two-$((6 * 7)); (exit 3)",
        prompt: true,
        timeoutMs: 15_000,
      });
      assertEquals(waited.condition, "prompt");
      match(waited.output, /two-42\n/);
      assertEquals(waited.lastExitCode, 3);
    },
    { ignore: !linux || !has(shell) },
  );
}

shellTest(
  "rc files that export every variable export nothing of the marks",
  async (mcp) => {
    // `set -a` and `setopt allexport` exported the wrapped prompt: `env` printed marks (zsh).
    for (const shell of ["bash", "zsh"].filter(has)) {
      const terminalId = await open(mcp, shell);
      const seen = await run(mcp, terminalId, "env | grep -ac '133;'; echo end");
      assertEquals([shell, seen.output, seen.exitCode], [shell, "0\nend\n", 0]);
      await mcp.callOk("terminal_release", { terminalId });
    }
  },
  { files: { ".bashrc": "set -a\n", ".zshrc": "setopt allexport\n" } },
);

shellTest(
  "a line written before ~/.bashrc asks its question is the question's: runs go on after it",
  async (mcp) => {
    // Written before the question (nothing read the terminal yet), it was counted as a line
    // for the prompt: every run after was refused as busy, until Ctrl+C.
    const terminalId = await open(mcp, "bash");
    await mcp.callOk("terminal_write", { terminalId, input: "yes" });
    const ran = await run(mcp, terminalId, "echo answered-$answer");
    assertEquals([ran.condition, ran.output], ["done", "answered-yes\n"]);
  },
  { files: { ".bashrc": 'sleep 0.5; read -r -p "continue? " answer\n' } },
);

shellTest(
  "an exported PS1 is not passed on with the nonce: a nested shell sends no marks",
  async (mcp) => {
    // PS1 carries the nonce once wrapped: exported (here from the environment, as an rc's
    // `export PS1` does), every child had it, and a nested `bash --norc` sent marks as the
    // terminal's shell: a run then answered inside it (found by an attack helper).
    for (const shell of ["bash", "zsh", "sh"].filter(has)) {
      const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
        shell,
        env: { HOME: home, PS1: "EX$ " },
      });
      const seen = await run(mcp, terminalId, "printenv PS1; echo end");
      assertEquals([shell, seen.output], [shell, "end\n"]);
      if (has("bash")) {
        const nested = await run(mcp, terminalId, "bash --norc", 1_500);
        assertEquals([shell, nested.condition], [shell, "timeout"]);
        const busy = await mcp.call("terminal_run", { terminalId, command: "echo x" });
        match(JSON.stringify(busy.content), /is running bash --norc/);
      }
      await mcp.callOk("terminal_release", { terminalId });
    }
  },
);

shellTest(
  "Ctrl+C during bash's startup files: the rest of them is skipped, as bash does, and the marks still come",
  async (mcp) => {
    // Interrupted, bash skipped the rest of its init file too: the marks were never put in
    // place, and every run waited for a prompt that never came (found by an attack helper).
    const terminalId = await open(mcp, "bash");
    await mcp.callOk("terminal_wait", { terminalId, pattern: "rc-starts", timeoutMs: 15_000 });
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const ran = await run(mcp, terminalId, "echo hi-$((6 * 7))");
    assertEquals([ran.condition, ran.exitCode, ran.output], ["done", 0, "hi-42\n"]);
    assertEquals((await run(mcp, terminalId, "(exit 4)")).exitCode, 4);
    // What the file set before the interruption stays: its PROMPT_COMMAND runs at each prompt.
    const { output } = await mcp.callOk<{ output: string }>("terminal_read", { terminalId });
    match(output, /pc-ran/);
    ok(!output.includes("rc-rest"), output);
    assertEquals((await listed(mcp, terminalId)).shellIntegration, "active");
  },
  {
    files: {
      // The sleeping child says it has started: a Ctrl+C typed between bash's fork and its
      // handing the terminal to the child reached bash alone, and the sleep ran its 30 s.
      ".bashrc": "PROMPT_COMMAND='echo pc-ran'\nsh -c 'echo rc-starts; exec sleep 30'\n" +
        "echo rc-rest\n",
    },
  },
);

shellTest(
  "a line typed early to a shell whose integration never starts is still matched",
  async (mcp) => {
    // Its startup file replaces bash with sh: no prompt mark will ever come. The first prompt
    // is waited for until the shell is seen to have replaced itself (its program no longer
    // carries the nonce; it was a 10 s guess from the start); then the echo alone is skipped,
    // as without integration, and terminal_run says why it cannot run.
    const terminalId = await open(mcp, "bash");
    const matched = await mcp.callOk<{ condition: string; output: string }>("terminal_write", {
      terminalId,
      input: "echo P-$((40 + 2))",
      pattern: "P-42",
      timeoutMs: 30_000,
    });
    assertEquals(matched.condition, "pattern");
    match(matched.output, /^P-42\n/);
    const refused = await mcp.call("terminal_run", { terminalId, command: "true" });
    match(
      text(refused),
      /^'terminalId': terminal \S+'s shell replaced itself with another program/,
    );
  },
  { files: { ".bashrc": "exec sh\n" } },
);

shellTest("zsh with a real ~/.zshrc and ZDOTDIR given back", async (mcp) => {
  const terminalId = await open(mcp, "zsh");
  assertEquals((await run(mcp, terminalId, "greet")).output, "zsh-alias\n");
  assertEquals((await run(mcp, terminalId, 'echo "[${ZDOTDIR-unset}]"')).output, "[unset]\n");
  assertEquals((await run(mcp, terminalId, "(exit 3)")).exitCode, 3);
}, {
  ignore: !linux || !has("zsh"),
  files: { ".zshrc": "alias greet='echo zsh-alias'\n" },
});

shellTest(
  "terminal_run refuses what it cannot do: busy, typed text, several lines, no integration",
  async (mcp) => {
    const terminalId = await open(mcp, "bash");
    const slow = await run(mcp, terminalId, "sleep 5", 200);
    assertEquals(slow.condition, "timeout");
    const busy = await mcp.call("terminal_run", { terminalId, command: "echo x" });
    ok(busy.isError);
    match(JSON.stringify(busy.content), /is running sleep 5/);
    // The advice names the tools that take it (the engine's hint, worded by the MCP front end).
    match(text(busy), /wait for it \(terminal_wait with prompt\), answer it \(terminal_write\)/);
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    assertEquals(
      (await mcp.callOk<Waited>("terminal_wait", { terminalId, prompt: true, timeoutMs: 10_000 }))
        .condition,
      "prompt",
    );
    // A run right after Ctrl+C waits (2 s at most) for the shell to report the interruption.
    assertEquals((await run(mcp, terminalId, "sleep 30", 200)).condition, "timeout");
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    const after = await run(mcp, terminalId, "echo after-$((6 * 7))");
    assertEquals([after.condition, after.output, after.exitCode], ["done", "after-42\n", 0]);
    await mcp.callOk("terminal_write", { terminalId, input: "echo half", appendNewline: false });
    const typed = await mcp.call("terminal_run", { terminalId, command: "echo x" });
    match(JSON.stringify(typed.content), /typed at its prompt/);
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_u"] });
    assertEquals((await run(mcp, terminalId, "echo cleared")).output, "cleared\n");
    const lines = await mcp.call("terminal_run", { terminalId, command: "echo a\necho b" });
    match(JSON.stringify(lines.content), /'command'|command/);
    ok(lines.isError);
    const plain = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: "bash",
      shellIntegration: false,
      env: { HOME: home },
    });
    const none = await mcp.call("terminal_run", { terminalId: plain.terminalId, command: "true" });
    match(JSON.stringify(none.content), /without shell integration/);
    match(text(none), /^'terminalId': .*\(terminal_write and terminal_wait\)$/);
    assertEquals((await listed(mcp, plain.terminalId)).shellIntegration, "none");
  },
);

Deno.test({
  name: "REST: POST /api/terminals/:id/run, and state, cwd and last exit code in list and stats",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer();
    try {
      const created = await request(server, "POST", "/api/terminals", {
        body: { shell: "sh", cwd: "/" },
      });
      const id = created.json.data.terminalId;
      const ran = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "cd /tmp && echo rest-$((40 + 2)) && (exit 3)" },
      });
      assertEquals(ran.status, 200);
      assertEquals(
        [ran.json.data.output, ran.json.data.exitCode, ran.json.data.cwd],
        ["rest-42\n", 3, "/tmp"],
      );
      const list = await request(server, "GET", "/api/terminals");
      const entry = list.json.data.terminals.find((terminal: { id: string }) => terminal.id === id);
      assertEquals([entry.state, entry.cwd, entry.lastExitCode], ["prompt", "/tmp", 3]);
      const stats = await request(server, "GET", `/api/terminals/${id}/stats`);
      assertEquals([stats.json.data.state, stats.json.data.lastExitCode], ["prompt", 3]);
      const slow = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "sleep 3", timeoutMs: 100 },
      });
      assertEquals(slow.json.data.condition, "timeout");
      const busy = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "true" },
      });
      assertEquals([busy.status, busy.json.error.code], [409, "TERMINAL_BUSY"]);
      // REST errors speak REST: its endpoints and field names, never an MCP tool's.
      const mcpWords = /terminal_[a-z]+|ctrl_c|terminalId/;
      assertEquals(busy.json.error.details.hint, "wait-answer-or-interrupt");
      match(
        busy.json.error.message,
        new RegExp(`is running sleep 3 .*: wait for it \\(GET /api/terminals/${id}/stats `),
      );
      ok(!mcpWords.test(busy.json.error.message), busy.json.error.message);
      const lines = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "echo a\necho b" },
      });
      assertEquals(
        [lines.status, lines.json.error.details.field, lines.json.error.details.hint],
        [400, "command", "one-line"],
      );
      match(
        lines.json.error.message,
        new RegExp(`anything else \\(POST /api/terminals/${id}/input\\)`),
      );
      ok(!mcpWords.test(lines.json.error.message), lines.json.error.message);
      const bad = await request(server, "POST", `/api/terminals/${id}/run`, {
        body: { command: "" },
      });
      assertEquals(bad.status, 400);
      await request(server, "DELETE", `/api/terminals/${id}`);
      const plain = await request(server, "POST", "/api/terminals", {
        body: { shell: "sh", shellIntegration: false },
      });
      const plainId = plain.json.data.terminalId;
      const none = await request(server, "POST", `/api/terminals/${plainId}/run`, {
        body: { command: "true" },
      });
      // The terminal is the path's :id here (terminalId over MCP).
      assertEquals([none.status, none.json.error.details.field], [400, "id"]);
      match(
        none.json.error.message,
        new RegExp(
          `without shell integration .*\\(POST /api/terminals/${plainId}/input, then GET ` +
            `/api/terminals/${plainId}/output\\)$`,
        ),
      );
      ok(!mcpWords.test(none.json.error.message), none.json.error.message);
      await request(server, "DELETE", `/api/terminals/${plainId}`);
    } finally {
      await server.stop();
    }
  },
});

shellTest(
  "a run whose output the terminal no longer keeps says so, in sh (no C mark) as in bash",
  async (mcp) => {
    // sh marks no output start: the run's output started after the echo of its line, which the
    // terminal had dropped, and the oldest line kept was taken for that start. `seq` answered
    // from 2990003 on with `truncated: false`.
    for (const shell of ["sh", "bash"]) {
      const created = await mcp.callOk<{ terminalId: string }>("terminal_create", {
        shell,
        cwd: "/",
        env: { HOME: home },
        outputByteLimit: 1024 * 1024,
      });
      const { terminalId } = created;
      const ran = await run(mcp, terminalId, "seq 1 300000");
      assertEquals([shell, ran.condition, ran.truncated], [shell, "done", true]);
      match(
        ran.output,
        /^\.\.\. \[\d+ bytes omitted; no longer kept; the oldest line kept is \d+\]/,
      );
      ok(ran.output.endsWith("\n299999\n300000\n"), ran.output.slice(-100));
      await mcp.callOk("terminal_release", { terminalId });
    }
  },
);
