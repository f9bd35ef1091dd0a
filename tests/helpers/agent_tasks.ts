/**
 * Tasks agents really do, each as an agent would do it through the real server: the fewest
 * calls the tool descriptions teach, every answer read whole. An {@link Agent} counts the calls
 * and the bytes of answer text it read (what lands in a model's context); each task has a
 * budget for both. Used by tests/e2e/agent_tasks_test.ts (which asserts the budgets) and by
 * scripts/bench.ts (which writes the table into docs/benchmarks.md).
 *
 * Setup a person would have done anyway (a git repository, a file to edit) is made directly,
 * and checks of what is left running look at /proc: neither counts as the agent's.
 *
 * @module
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import type { Connection } from "./mcp.ts";
import { eventually, processesWith, tempDir } from "./process.ts";

const encoder = new TextEncoder();

/** An agent's view of the server: tool calls, counted with the bytes of their answers. */
export class Agent {
  calls = 0;
  bytes = 0;
  /** Every call made, as a model would have written it from the tool list. */
  readonly sent: { name: string; args: Record<string, unknown> }[] = [];
  constructor(private readonly mcp: Connection) {}

  /** Calls a tool that must succeed; its answer's text counts as read. */
  async call<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T> {
    this.sent.push({ name, args });
    const result = await this.mcp.call(name, args, 120_000);
    this.calls++;
    for (const block of result.content) {
      if (block.type === "text") this.bytes += encoder.encode(block.text).length;
    }
    ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as T;
  }
}

/** A task and what it may cost. */
export interface AgentTask {
  name: string;
  /** At most this many calls. */
  calls: number;
  /** At most this many bytes of answers read. */
  bytes: number;
  /** Linux only (it looks at /proc, or needs a program only here). */
  linuxOnly?: boolean;
  run(agent: Agent): Promise<void>;
}

interface Command {
  token: string;
  status: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_next_offset: number;
  stdout_truncated: boolean;
  timeout_occurred: boolean;
}

interface Waited {
  condition: string;
  output: string;
  match: { groups: (string | null)[] } | null;
  exitStatus?: { exitCode: number | null; signal: string | null };
}

/** A marker unique to this run, so that leftover checks see only this run's processes. */
function marker(): number {
  return 7_000_000 + Math.floor(Math.random() * 999_999);
}

const BASH = { command: "bash", args: ["--norc", "--noprofile", "-i"] };
const PROMPT = "[#$] $";

/** The tasks, in the order of the proof. */
export const AGENT_TASKS: AgentTask[] = [
  {
    name: "echo with its exit code",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const done = await agent.call<Command>("run_command", {
        command: "echo hello; exit 3",
        wait_ms: 30_000,
      });
      assertEquals([done.status, done.exit_code, done.stdout], ["completed", 3, "hello\n"]);
    },
  },
  {
    name: "the last 20 lines of 5 MB of output",
    calls: 2,
    bytes: 4096,
    async run(agent) {
      const done = await agent.call<Command>("run_command", {
        command: "seq -f 'line %07g of a long build log' 1 180000",
        wait_ms: 60_000,
        tail_lines: 20,
      });
      assertEquals(done.exit_code, 0);
      const lines = done.stdout.split("\n");
      assertEquals([lines.length, lines[19], lines[20]], [
        21,
        "line 0180000 of a long build log",
        "",
      ]);
    },
  },
  {
    name: "a REPL keeps its state across calls",
    calls: 4,
    bytes: 3072,
    async run(agent) {
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", {
        command: "python3",
        args: ["-q"],
      });
      await agent.call("terminal_write", { terminalId, input: "x = 6 * 7", pattern: ">>> $" });
      const answer = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "print('answer', x)",
        pattern: ">>> $",
      });
      assertEquals(answer.output, "answer 42\n>>> ");
      await agent.call("terminal_release", { terminalId });
    },
  },
  {
    name: "a dev server started, awaited, curled and stopped, nothing left running",
    calls: 4,
    bytes: 4096,
    linuxOnly: true,
    async run(agent) {
      const dir = tempDir("winterm-serve-");
      const tag = `served-${marker()}`;
      Deno.writeTextFileSync(`${dir}/index.html`, `<p>${tag}</p>\n`);
      const server = await agent.call<{ terminalId: string }>("terminal_create", {
        command: "python3 -u -m http.server 0 --bind 127.0.0.1",
        cwd: dir,
      });
      const ready = await agent.call<Waited>("terminal_wait", {
        terminalId: server.terminalId,
        pattern: "port (\\d+)",
      });
      const port = ready.match?.groups[0];
      ok(port, JSON.stringify(ready));
      const page = await agent.call<Command>("run_command", {
        command: `curl -s http://127.0.0.1:${port}/`,
        wait_ms: 30_000,
      });
      match(page.stdout, new RegExp(tag));
      await agent.call("terminal_release", { terminalId: server.terminalId });
      ok(await eventually(() => processesWith("http.server 0").length === 0), "server left");
      Deno.removeSync(dir, { recursive: true });
    },
  },
  {
    name: "Ctrl+C, then the same shell again",
    calls: 5,
    bytes: 2048,
    async run(agent) {
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", BASH);
      const sleeping = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "sleep 60",
        timeoutMs: 300,
      });
      assertEquals(sleeping.condition, "timeout");
      const back = await agent.call<Waited>("terminal_write", {
        terminalId,
        keys: ["ctrl_c"],
        pattern: PROMPT,
      });
      assertEquals(back.condition, "pattern");
      const again = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "echo reused-$((40 + 2))",
        pattern: "reused-42",
      });
      assertEquals(again.condition, "pattern");
      await agentRelease(agent, terminalId);
    },
  },
  {
    name: "a `read -p` prompt answered",
    calls: 3,
    bytes: 2048,
    async run(agent) {
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", {
        command: `bash --norc -c 'read -p "Your name? " name; echo "hello, $name"'`,
      });
      const asked = await agent.call<Waited>("terminal_wait", {
        terminalId,
        pattern: "Your name\\? $",
      });
      assertEquals(asked.condition, "pattern");
      const greeted = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "Ada",
        exit: true,
      });
      assertEquals([greeted.output, greeted.exitStatus?.exitCode], ["hello, Ada\n", 0]);
    },
  },
  {
    // getpass prints its prompt to /dev/tty and reads it there, not from stdin.
    name: "a getpass prompt seen and answered",
    calls: 3,
    bytes: 2048,
    linuxOnly: true,
    async run(agent) {
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", {
        command: `python3 -c "import getpass; ` +
          `print('signed in' if getpass.getpass() == 'hunter2' else 'wrong')"`,
      });
      const asked = await agent.call<Waited>("terminal_wait", { terminalId, input: true });
      assertEquals([asked.condition, asked.output], ["input", "Password: "]);
      const done = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "hunter2",
        exit: true,
      });
      assertEquals([done.output, done.exitStatus?.exitCode], ["\nsigned in\n", 0]);
    },
  },
  {
    name: "vim's screen, then quit",
    calls: 4,
    bytes: 6144,
    async run(agent) {
      const dir = tempDir("winterm-vim-");
      Deno.writeTextFileSync(`${dir}/notes.txt`, "first line\nsecond line\n");
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", {
        command: "vim",
        args: ["-u", "NONE", "-N", "notes.txt"],
        cwd: dir,
      });
      await agent.call("terminal_wait", { terminalId, pattern: "notes.txt" });
      const screen = await agent.call<{ output: string; screen: { alternate: boolean } }>(
        "terminal_read",
        { terminalId, mode: "screen" },
      );
      ok(screen.output.startsWith("first line\nsecond line\n~"), screen.output);
      const quit = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: ":q!",
        exit: true,
      });
      assertEquals(quit.exitStatus?.exitCode, 0);
      Deno.removeSync(dir, { recursive: true });
    },
  },
  {
    name: "`git log` in a terminal (no pager waiting)",
    calls: 3,
    bytes: 8192,
    async run(agent) {
      const dir = tempDir("winterm-git-");
      const git = (...args: string[]) =>
        new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" }).outputSync();
      git("init", "-q");
      for (let i = 1; i <= 60; i++) {
        git(
          "-c",
          "user.name=a",
          "-c",
          "user.email=a@b",
          "commit",
          "-q",
          "--allow-empty",
          "-m",
          `change ${i}`,
        );
      }
      const { terminalId } = await agent.call<{ terminalId: string }>("terminal_create", {
        ...BASH,
        cwd: dir,
      });
      const log = await agent.call<Waited>("terminal_write", {
        terminalId,
        input: "git log --oneline",
        pattern: PROMPT,
      });
      assertEquals(log.condition, "pattern");
      ok(log.output.includes("change 60") && log.output.includes("change 1\n"), log.output);
      await agentRelease(agent, terminalId);
      Deno.removeSync(dir, { recursive: true });
    },
  },
  {
    name: "a progress bar",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const done = await agent.call<Command>("run_command", {
        command: "for i in 10 20 30 40 50 60 70 80 90 100; do printf '\\rbuilding %3d%%' $i; " +
          "sleep 0.02; done; echo; echo built",
        wait_ms: 30_000,
      });
      assertEquals(done.stdout, "building 100%\nbuilt\n");
    },
  },
  {
    name: "CJK and emoji",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const text = "中文 日本語 한국어 😀🎉";
      const done = await agent.call<Command>("run_command", {
        command: `printf '%s\\n' '${text}'`,
        wait_ms: 30_000,
      });
      assertEquals(done.stdout, text + "\n");
    },
  },
  {
    name: "a timeout keeps the output and kills the tree",
    calls: 1,
    bytes: 1024,
    linuxOnly: true,
    async run(agent) {
      const tag = marker();
      const done = await agent.call<Command>("run_command", {
        command: `echo before; sh -c 'sleep ${tag}' & sleep ${tag + 1}; echo after`,
        timeout: 1,
        wait_ms: 30_000,
      });
      assertEquals([done.timeout_occurred, done.exit_code, done.stdout], [true, -1, "before\n"]);
      ok(await eventually(() => processesWith(`sleep ${tag}`).length === 0), "tree survived");
    },
  },
  {
    name: "env and cwd",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const dir = Deno.realPathSync(tempDir("winterm-cwd-"));
      const done = await agent.call<Command>("run_command", {
        command: 'echo "$GREETING" && pwd',
        env: { GREETING: "hi there" },
        working_directory: dir,
        wait_ms: 30_000,
      });
      assertEquals(done.stdout, `hi there\n${dir}\n`);
      Deno.removeSync(dir);
    },
  },
  {
    name: "stderr apart",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const done = await agent.call<Command>("run_command", {
        command: "echo out; echo err >&2; exit 1",
        use_pty: false,
        wait_ms: 30_000,
      });
      assertEquals([done.stdout, done.stderr, done.exit_code], ["out\n", "err\n", 1]);
    },
  },
  {
    name: "following growing output without re-reading",
    calls: 3,
    bytes: 3072,
    async run(agent) {
      const first = await agent.call<Command>("run_command", {
        command: "for i in $(seq 1 40); do echo tick $i; sleep 0.05; done",
        wait_ms: 400,
      });
      assertEquals(first.status, "running");
      let seen = first.stdout, offset = first.stdout_next_offset;
      for (let status = first.status; status === "running";) {
        const next = await agent.call<Command>("query_command_status", {
          token: first.token,
          stdout_offset: offset,
          wait_ms: 30_000,
        });
        seen += next.stdout;
        offset = next.stdout_next_offset;
        status = next.status;
      }
      const ticks = Array.from({ length: 40 }, (_, i) => `tick ${i + 1}\n`).join("");
      assertEquals(seen, ticks);
    },
  },
  {
    name: "stdin, then end of input",
    calls: 3,
    bytes: 2048,
    async run(agent) {
      const started = await agent.call<Command>("run_command", {
        command: "sort",
        shell_type: "executable",
        use_pty: false,
      });
      await agent.call("send_command_input", {
        token: started.token,
        input: "pear\napple",
        eof: true,
      });
      const done = await agent.call<Command>("query_command_status", {
        token: started.token,
        wait_ms: 30_000,
      });
      assertEquals([done.exit_code, done.stdout], [0, "apple\npear\n"]);
    },
  },
  {
    name: "the failing line of 20,000, found in one call",
    calls: 1,
    bytes: 4096,
    async run(agent) {
      // A test run: 20,000 results, one failing, and the runner exits 1 as runners do.
      const done = await agent.call<Command & { stdout_matches: number }>("run_command", {
        command: 'seq 1 20000 | awk \'{ if ($1 == 10007) print "FAIL test_" $1 ": expected 1 ' +
          'got 2"; else print "ok   test_" $1 }\'; exit 1',
        wait_ms: 60_000,
        grep: "FAIL",
        context_lines: 1,
      });
      assertEquals([done.exit_code, done.stdout_matches], [1, 1]);
      match(done.stdout, /^10007:\d+:FAIL test_10007: expected 1 got 2$/m);
    },
  },
  {
    name: "`wc -l` of three lines of stdin",
    calls: 1,
    bytes: 1024,
    async run(agent) {
      const done = await agent.call<Command>("run_command", {
        command: "wc -l",
        stdin: "pear\napple\nfig\n",
        wait_ms: 30_000,
      });
      // On a terminal (the default) what is typed is echoed before the count.
      assertEquals([done.status, done.exit_code, done.stdout], [
        "completed",
        0,
        "pear\napple\nfig\n3\n",
      ]);
    },
  },
];

/** Releases a terminal (one call). */
async function agentRelease(agent: Agent, terminalId: string): Promise<void> {
  await agent.call("terminal_release", { terminalId });
}
