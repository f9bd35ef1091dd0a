/**
 * Input as programs get it, through the real server: run_command's `stdin` (written, then end
 * of input, on a terminal and on pipes, whatever its size; a program that never reads it holds
 * nothing up), input that is no text refused by every front end that takes it, and a line
 * typed while a shell starts shown once (issue 39).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, serverTest, text } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { eventually, exists, processesWith, tempDir, uniqueMarker } from "../helpers/process.ts";
import { has, home, linux, open, shellTest, type Waited } from "../helpers/shells.ts";

const posix = Deno.build.os !== "windows";
const MIB = 1024 * 1024;

interface Ran {
  status: string;
  exit_code: number | null;
  stdout: string;
  message: string;
}

/** run_command with stdin, waited for; the answer. */
async function withStdin(mcp: Connection, args: Record<string, unknown>): Promise<Ran> {
  const done = await mcp.callOk<Ran>("run_command", { wait_ms: 60_000, ...args }, 90_000);
  assertEquals(done.status, "completed", JSON.stringify(done).slice(0, 500));
  return done;
}

/** The last line of a command's output. */
const lastLine = (output: string) => output.trimEnd().split("\n").at(-1)!.trim();

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

serverTest("stdin is written, then end of input, on a terminal and on pipes", async (mcp) => {
  for (const use_pty of [true, false]) {
    const lines = await withStdin(mcp, { command: "wc -l", stdin: "a\nb\nc\n", use_pty });
    assertEquals([lines.exit_code, lastLine(lines.stdout)], [0, "3"]);
    // A terminal echoes what is typed; the count follows.
    assertEquals(lines.stdout, use_pty ? "a\nb\nc\n3\n" : "3\n");
    // Text left without a line end: on a terminal EOF then only hands it over; twice ends it.
    const open = await withStdin(mcp, { command: "wc -c", stdin: "abc", use_pty });
    assertEquals(lastLine(open.stdout), use_pty ? "abc3" : "3");
    const none = await withStdin(mcp, { command: "wc -c", stdin: "", use_pty });
    assertEquals(lastLine(none.stdout), "0");
    // Tab passes; text beyond ASCII is written in UTF-8.
    const bytes = await withStdin(mcp, { command: "od -An -tx1", stdin: "\té\n", use_pty });
    match(bytes.stdout, /09 c3 a9 0a\n$/);
  }
}, { ignore: !posix });

serverTest(
  "stdin far larger than a terminal keeps arrives whole: 1 MiB on one line, in lines, multibyte",
  async (mcp) => {
    // A terminal in line mode keeps 4095 bytes of a line (1024 on macOS); the rest is handed
    // over in parts. Lines of every length about the limit, and characters across it.
    const around = Array.from({ length: 40 }, (_, i) => "é".repeat(2040 + i) + "x".repeat(i % 3));
    const inputs = [
      "x".repeat(MIB),
      ("y".repeat(99) + "\n").repeat(MIB / 100),
      around.join("\n"),
      around.map((line) => line + "€😀").join("\n") + "\n",
    ];
    for (const stdin of inputs) {
      for (const use_pty of [true, false]) {
        const done = await withStdin(mcp, {
          command: "sha256sum",
          stdin,
          use_pty,
          tail_lines: 1,
        });
        // On a terminal the echo of a last line left open stands before it.
        const hash = `${await sha256(stdin)}  -\n`;
        ok(done.stdout.endsWith(hash), `use_pty ${use_pty}: ${done.stdout.slice(-100)}`);
      }
    }
    for (const use_pty of [true, false]) {
      const counted = await withStdin(mcp, {
        command: "wc -c",
        stdin: "x".repeat(MIB),
        use_pty,
        tail_lines: 1,
      });
      ok(counted.stdout.endsWith(`${MIB}\n`), counted.stdout.slice(-100));
    }
  },
  { ignore: !posix },
);

serverTest(
  "stdin a program never reads holds nothing up: the call answers, nothing is left running",
  async (mcp) => {
    const marker = uniqueMarker();
    for (const use_pty of [true, false]) {
      for (const command of ["true", `sleep 1.${marker}; echo done`]) {
        const done = await withStdin(mcp, { command, stdin: "x".repeat(MIB), use_pty });
        assertEquals(done.exit_code, 0);
        ok(command === "true" || done.stdout.endsWith("done\n"), done.stdout.slice(-100));
        // Truthful: it did not take it all, and the call did not fail for it.
        match(done.message, /^completed with exit code 0; it did not take all of its stdin \(/);
      }
      // What it does read is no news.
      const read = await withStdin(mcp, { command: "head -c 3", stdin: "abc", use_pty });
      ok(!read.message.includes("stdin"), read.message);
    }
    ok(await eventually(() => processesWith(marker).length === 0, 10_000), "left running");
  },
  { ignore: !posix },
);

serverTest(
  "stdin is written in the program's encoding; what cannot be is refused naming stdin, before anything starts",
  async (mcp) => {
    const dir = tempDir("winterm-stdin-");
    const ran = `${dir}/ran`;
    const coded = await withStdin(mcp, {
      command: "od -An -tx1",
      stdin: "é\n",
      use_pty: false,
      encoding: "cp1252",
    });
    match(coded.stdout, /^ e9 0a\n$/);
    // On pipes a control character is a byte like any other.
    const piped = await withStdin(mcp, {
      command: "od -An -tx1",
      stdin: "a\u0003\rb",
      use_pty: false,
    });
    match(piped.stdout, /^ 61 03 0d 62\n$/);
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { stdin: "中", use_pty: false, encoding: "cp1252" },
        /^'stdin': '中' cannot be written in cp1252, the encoding the program reads/,
      ],
      [
        { stdin: "ok\n\ud800" },
        /^'stdin': a lone surrogate \(U\+D800\) at index 3 \(UTF-16 code units\): half of a pair without its other half is no character; nothing was sent$/,
      ],
      [{ stdin: "\udc00x", use_pty: false }, /^'stdin': a lone surrogate \(U\+DC00\) at index 0 /],
      [
        { stdin: "stop\u0003" },
        /^'stdin': a control character \(U\+0003\) at index 4: on a terminal stdin is typed.* run with use_pty: false for stdin as it is$/,
      ],
      [{ stdin: "line\r\n" }, /^'stdin': a control character \(U\+000D\) at index 4: /],
      [
        { stdin: "é".repeat(MIB / 2 + 1), use_pty: false },
        /^'stdin': 1048578 bytes once encoded for the program, over the 1048576 \(1 MiB\) allowed/,
      ],
      [{ stdin: "x".repeat(MIB + 1) }, /'stdin' must be a string of at most 1048576 characters/],
    ];
    for (const [args, expected] of refusals) {
      const refused = await mcp.call("run_command", { command: `touch ${ran}`, ...args });
      ok(refused.isError, JSON.stringify(args).slice(0, 100));
      match(text(refused), expected);
    }
    ok(!exists(ran), "a refused command ran");
    Deno.removeSync(dir, { recursive: true });
  },
  { ignore: !posix },
);

serverTest(
  "input that is no text (a lone surrogate) is refused naming its field: send_command_input, terminal_write",
  async (mcp) => {
    const started = await mcp.callOk<{ token: string }>("run_command", {
      command: "od -An -c",
      use_pty: false,
    });
    const sent = await mcp.call("send_command_input", { token: started.token, input: "a\ud83db" });
    ok(sent.isError);
    match(text(sent), /^'input': a lone surrogate \(U\+D83D\) at index 1 \(UTF-16 code units\)/);
    // Nothing of it was written: what follows arrives alone.
    await mcp.callOk("send_command_input", { token: started.token, input: "ok", eof: true });
    const done = await mcp.callOk<Ran>("query_command_status", {
      token: started.token,
      wait_ms: 30_000,
    });
    match(done.stdout, /^\s+o\s+k\s+\\n\n$/);

    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "cat",
    });
    const typed = await mcp.call("terminal_write", { terminalId, input: "x\udfffy" });
    ok(typed.isError);
    match(text(typed), /^'input': a lone surrogate \(U\+DFFF\) at index 1 /);
    await mcp.callOk<Waited>("terminal_write", { terminalId, input: "fine", pattern: "fine" });
    const { output } = await mcp.callOk<{ output: string }>("terminal_read", { terminalId });
    ok(!output.includes("\ufffd") && !output.includes("x"), output);
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !posix },
);

serverTest(
  "a program, argument, directory or variable that is no text is refused naming its field, and nothing starts",
  async (mcp) => {
    // Each became U+FFFD: `echo a\ud800b` printed a�b, an env value a�, an argument �x.
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["run_command", { command: "echo a\ud800b" }, /^'command': a lone surrogate \(U\+D800\)/],
      [
        "run_command",
        { command: "echo", executable: "/bin/echo", args: ["a\udc00"], shell_type: "executable" },
        /^'args': a lone surrogate \(U\+DC00\)/,
      ],
      ["run_command", { command: "true", env: { V: "a\ud800" } }, /^'env': a lone surrogate/],
      ["run_command", { command: "true", env: { "W\ud800": "1" } }, /^'env': a lone surrogate/],
      [
        "run_command",
        { command: "true", working_directory: "/tmp\ud800" },
        /^'working_directory': a lone surrogate.*nothing was started$/,
      ],
      [
        "terminal_create",
        { command: "/bin/echo", args: ["\ud800x"] },
        /^'args': a lone surrogate \(U\+D800\) at index 0/,
      ],
      ["terminal_create", { env: { X: "\udfff" } }, /^'env': a lone surrogate \(U\+DFFF\)/],
    ];
    for (const [tool, args, expected] of cases) {
      const refused = await mcp.call(tool, args);
      ok(refused.isError, `${tool} ${JSON.stringify(args)} was not refused`);
      match(text(refused), expected);
    }
  },
  { ignore: !posix },
);

Deno.test({
  name: "REST input that is no text is refused naming input; the terminal gets nothing of it",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer();
    try {
      const created = await request(server, "POST", "/api/terminals", { body: { command: "cat" } });
      const id = created.json.data.terminalId;
      const refused = await request(server, "POST", `/api/terminals/${id}/input`, {
        body: { input: "q\ud800" },
      });
      assertEquals([refused.status, refused.json.error.code], [400, "INVALID_INPUT"]);
      assertEquals(refused.json.error.details.field, "input");
      match(refused.json.error.message, /a lone surrogate \(U\+D800\) at index 1 /);
      await request(server, "POST", `/api/terminals/${id}/input`, { body: { input: "after" } });
      let output = "";
      ok(
        await eventually(() => output.includes("after\nafter"), 10_000, async () => {
          output = (await request(server, "GET", `/api/terminals/${id}/output`)).json.data.output;
        }),
        output,
      );
      ok(!output.includes("\ufffd") && !output.includes("q"), output);
    } finally {
      await server.stop();
    }
  },
});

/** How many times `line` stands in `output`. */
const timesIn = (output: string, line: string) => output.split(line).length - 1;

for (const shell of ["bash", "zsh"]) {
  shellTest(
    `${shell}: a line typed while the shell starts shows once, run at its first prompt`,
    async (mcp) => {
      // Typed while the shell started, the line was echoed by the terminal, then shown again by
      // its line editor at the prompt (typed right after the start without a startup file: 1 in
      // 5 times bash, 4 in 5 zsh; here the startup file makes sure it is typed during it).
      for (let i = 0; i < 2; i++) {
        const terminalId = await open(mcp, shell);
        const answered = await mcp.callOk<Waited>("terminal_write", {
          terminalId,
          input: "echo mark-$((6 * 7))",
          pattern: "mark-42",
        });
        assertEquals(answered.condition, "pattern");
        const { output } = await mcp.callOk<{ output: string }>("terminal_read", { terminalId });
        assertEquals(timesIn(output, "echo mark-$((6 * 7))"), 1, output);
        await mcp.callOk("terminal_release", { terminalId });
      }
    },
    { ignore: !linux || !has(shell), files: { [`.${shell}rc`]: "sleep 0.3\n" } },
  );
}

shellTest(
  "REST: a line written while bash starts shows once",
  async () => {
    const server = await startHttpServer();
    try {
      for (let i = 0; i < 2; i++) {
        const created = await request(server, "POST", "/api/terminals", {
          body: { shell: "bash", cwd: "/", env: { HOME: home } },
        });
        const id = created.json.data.terminalId;
        await request(server, "POST", `/api/terminals/${id}/input`, {
          body: { input: "echo rest-$((6 * 7))" },
        });
        let output = "";
        ok(
          await eventually(() => /rest-42\n/.test(output), 15_000, async () => {
            output = (await request(server, "GET", `/api/terminals/${id}/output`)).json.data.output;
          }),
          output,
        );
        assertEquals(timesIn(output, "echo rest-$((6 * 7))"), 1, output);
        await request(server, "DELETE", `/api/terminals/${id}`);
      }
    } finally {
      await server.stop();
    }
  },
  { files: { ".bashrc": "sleep 0.3\n" } },
);

shellTest(
  "a line typed while startup files run waits for the prompt; Ctrl+C goes at once, after it",
  async (mcp, home) => {
    // The startup file sleeps for 10 minutes: Ctrl+C ends it. Had Ctrl+C waited with the line
    // for the first prompt (the write timeout is 2 minutes here), no prompt came.
    const terminalId = await open(mcp, "bash");
    // Ctrl+C before bash handles it would end bash itself: first the startup file runs.
    ok(await eventually(() => exists(`${home}/looping`), 30_000), "the startup file ran");
    const early = mcp.callOk("terminal_write", { terminalId, input: "echo early" });
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    await early;
    const prompted = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      prompt: true,
      timeoutMs: 60_000,
    });
    assertEquals(prompted.condition, "prompt");
  },
  {
    files: { ".bashrc": "touch ~/looping; sleep 600\n" },
    env: { WINTERM_WRITE_TIMEOUT_MS: "120000" },
  },
);

shellTest(
  "a question the startup files ask is answered at once, not held for the prompt",
  async (mcp) => {
    const terminalId = await open(mcp, "bash");
    await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      pattern: "name\\? $",
      timeoutMs: 30_000,
    });
    // bash's read asks in line mode: the line is its answer (the write timeout is 2 minutes).
    const answered = await mcp.callOk<Waited>("terminal_write", {
      terminalId,
      input: "ada",
      pattern: "hello ada",
      timeoutMs: 30_000,
    });
    assertEquals(answered.condition, "pattern");
  },
  {
    files: { ".bashrc": 'read -p "name? " name; echo "hello $name"\n' },
    env: { WINTERM_WRITE_TIMEOUT_MS: "120000" },
  },
);
