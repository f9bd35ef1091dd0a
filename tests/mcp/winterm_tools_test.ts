/**
 * The winterm tool set through the real server over stdio, driven by the SDK client.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, serverTest, text } from "../helpers/mcp.ts";
import { initializeRequest } from "../helpers/jsonrpc.ts";
import { eventually, processesWith, tempDir, uniqueMarker } from "../helpers/process.ts";
import { startRaw } from "../helpers/raw_server.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

interface Query {
  status: string;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_length: number;
  stdout_next_offset: number;
  stdout_truncated: boolean;
  stdout_dropped_bytes: number;
  timeout_occurred: boolean;
  execution_time: number | null;
  last_output_timestamp: number | null;
  message: string;
}

async function run(mcp: Connection, args: Record<string, unknown>): Promise<string> {
  const started = await mcp.callOk<{ token: string; status: string }>("run_command", args);
  assertEquals(started.status, "pending");
  return started.token;
}

async function finish(
  mcp: Connection,
  token: string,
  extra: Record<string, unknown> = {},
): Promise<Query> {
  const result = await mcp.callOk<Query>("query_command_status", {
    token,
    wait_ms: 30_000,
    ...extra,
  });
  ok(result.status !== "running", `still running: ${JSON.stringify(result)}`);
  return result;
}

/** Polls until stdout contains `needle`. */
async function untilOutput(mcp: Connection, token: string, needle: string): Promise<Query> {
  let last: Query | undefined;
  const seen = await eventually(() => last?.stdout.includes(needle) ?? false, 10_000, async () => {
    last = await mcp.callOk<Query>("query_command_status", { token });
  });
  ok(seen, `never saw ${JSON.stringify(needle)}: ${JSON.stringify(last?.stdout)}`);
  return last!;
}

const withServer = (
  name: string,
  fn: (mcp: Connection) => Promise<void>,
  ignore = !posix,
  env: Record<string, string> = {},
) => serverTest(name, fn, { ignore, env });

withServer("echo and exit codes, in PTY and pipe mode", async (mcp) => {
  for (const use_pty of [true, false]) {
    const result = await finish(mcp, await run(mcp, { command: "echo hello; exit 3", use_pty }));
    assertEquals(result.status, "completed");
    assertEquals(result.exit_code, 3);
    assertEquals(result.stdout, "hello\n");
    assertEquals(result.message, "completed with exit code 3");
    ok(typeof result.execution_time === "number");
  }
  const ok0 = await finish(mcp, await run(mcp, { command: "true", shell_type: "executable" }));
  assertEquals(ok0.exit_code, 0);
});

withServer("stderr is kept apart in pipe mode, merged on a terminal", async (mcp) => {
  const piped = await finish(
    mcp,
    await run(mcp, { command: "echo out; echo err >&2", use_pty: false }),
  );
  assertEquals([piped.stdout, piped.stderr], ["out\n", "err\n"]);
  const tty = await finish(mcp, await run(mcp, { command: "echo out; echo err >&2" }));
  assertEquals([tty.stdout, tty.stderr], ["out\nerr\n", ""]);
});

withServer("CJK and emoji output arrive intact", async (mcp) => {
  const line = "中文 日本語 한국어 😀🎉 ñé";
  for (const use_pty of [true, false]) {
    const result = await finish(
      mcp,
      await run(mcp, { command: `printf '%s\\n' '${line}'`, use_pty }),
    );
    assertEquals(result.stdout, line + "\n");
    assertEquals(result.stdout_length, new TextEncoder().encode(line).length + (use_pty ? 2 : 1));
  }
});

withServer("escape sequences are cleaned, and kept with raw", async (mcp) => {
  const command =
    `printf '\\033[1;31mred\\033[0m \\033]0;title\\007done\\n'; printf 'progress 10%%\\rprogress 100%%\\n'`;
  const token = await run(mcp, { command });
  const clean = await finish(mcp, token);
  assertEquals(clean.stdout, "red done\nprogress 100%\n");
  const raw = await mcp.callOk<Query>("query_command_status", { token, raw: true });
  ok(raw.stdout.includes("\x1b[1;31mred\x1b[0m") && raw.stdout.includes("\r\n"), raw.stdout);
});

withServer("the working directory, with spaces and non-ASCII in its name", async (mcp) => {
  const dir = Deno.makeTempDirSync({ prefix: "dir with space 中文 " });
  try {
    const result = await finish(mcp, await run(mcp, { command: "pwd", working_directory: dir }));
    assertEquals(result.stdout, Deno.realPathSync(dir) + "\n");
    const missing = await mcp.call("run_command", {
      command: "pwd",
      working_directory: dir + "/nope",
    });
    ok(missing.isError);
    match(text(missing), /'working_directory':.*does not exist/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

withServer("environment variables reach the command; the server's token does not", async (mcp) => {
  const result = await finish(
    mcp,
    await run(mcp, {
      command: 'echo "$GREETING|${WINTERM_TOKEN:-unset}|$PAGER"',
      env: { GREETING: "hi there" },
    }),
  );
  assertEquals(result.stdout, "hi there|unset|cat\n");
});

withServer("python3 -i driven by send_command_input", async (mcp) => {
  const token = await run(mcp, { command: "python3 -i -q", shell_type: "executable", timeout: 60 });
  await untilOutput(mcp, token, ">>> ");
  await mcp.callOk("send_command_input", { token, input: "x = 21" });
  await mcp.callOk("send_command_input", { token, input: "print('answer', x * 2)" });
  await untilOutput(mcp, token, "answer 42");
  await mcp.callOk("send_command_input", { token, input: "exit()" });
  const result = await finish(mcp, token);
  assertEquals(result.exit_code, 0);
});

withServer("Ctrl+C sent as input interrupts sleep", async (mcp) => {
  // It runs once started (the spawn returns after its exec): Ctrl+C reaches it at once.
  const token = await run(mcp, { command: "sleep 30", shell_type: "executable" });
  const sent = await mcp.callOk<{ success: boolean }>("send_command_input", {
    token,
    input: "\u0003",
    append_newline: false,
  });
  ok(sent.success);
  const result = await finish(mcp, token);
  assertEquals([result.status, result.signal], ["completed", "SIGINT"]);
});

withServer("end of input with eof", async (mcp) => {
  // Also after a line left without Enter: on a terminal one EOF only hands that text over.
  for (const append_newline of [true, false]) {
    for (const use_pty of [true, false]) {
      const token = await run(mcp, { command: "sort", shell_type: "executable", use_pty });
      await mcp.callOk("send_command_input", { token, input: "b\na", eof: true, append_newline });
      const result = await finish(mcp, token);
      assertEquals(result.exit_code, 0, `use_pty ${use_pty}, append_newline ${append_newline}`);
      ok(result.stdout.endsWith("a\nb\n"), JSON.stringify(result.stdout));
    }
  }
});

serverTest(
  "input a command never reads times out with a clear error, and the server keeps serving",
  async (mcp) => {
    const token = await run(mcp, { command: "sleep 40", use_pty: false });
    const started = performance.now();
    const result = await mcp.call("send_command_input", { token, input: "a".repeat(1024 * 1024) });
    ok(result.isError);
    match(
      text(result),
      /^'input': the program is not reading its input: it took \d+ of 1048577 bytes within 1 s; the rest was not sent$/,
    );
    ok(performance.now() - started < 30_000);
    const status = await mcp.callOk<{ status: string }>("query_command_status", { token });
    assertEquals(status.status, "running");
    await mcp.callOk("terminate_command", { token });
  },
  { ignore: !posix, env: { WINTERM_WRITE_TIMEOUT_MS: "1000" } },
);

withServer("a timeout kills grandchildren and keeps the output", async (mcp) => {
  const marker = uniqueMarker();
  const token = await run(mcp, {
    command: `echo before; sh -c 'sleep ${marker}1' & sleep ${marker}2 & wait`,
    timeout: 1,
  });
  const result = await finish(mcp, token);
  assertEquals([result.status, result.exit_code, result.timeout_occurred], ["completed", -1, true]);
  assertEquals(result.stdout, "before\n");
  ok(
    await eventually(() => processesWith(`sleep ${marker}`).length === 0),
    "grandchildren survived the timeout",
  );
}, !linux);

withServer("terminate_command ends the whole tree", async (mcp) => {
  const marker = uniqueMarker();
  const token = await run(mcp, {
    command: `sleep ${marker}1 & sleep ${marker}2 & echo started; wait`,
    use_pty: false,
  });
  await untilOutput(mcp, token, "started");
  // "started" can be printed before the second background sleep has exec'd.
  ok(
    await eventually(() => processesWith(`sleep ${marker}`, true).length === 2),
    "both background sleeps started",
  );
  const done = await mcp.callOk<{ success: boolean; message: string }>("terminate_command", {
    token,
  });
  ok(done.success);
  const result = await mcp.callOk<Query>("query_command_status", { token });
  assertEquals([result.status, result.exit_code], ["terminated", -1]);
  ok(
    await eventually(() => processesWith(`sleep ${marker}`).length === 0),
    "processes survived terminate",
  );
  const again = await mcp.call("terminate_command", { token });
  ok(again.isError);
  match(text(again), /no longer running \(terminated\)/);
}, !linux);

withServer(
  "10 MB of output captured byte-exact, read in pieces with consistent offsets",
  async (mcp) => {
    const lines = 1_000_000; // "%09d\n": 10 bytes each
    let expected = "";
    for (let i = 0; i < lines; i++) expected += String(i).padStart(9, "0") + "\n";
    const script = `import sys; sys.stdout.write(''.join('%09d\\n' % i for i in range(${lines})))`;
    for (const use_pty of [false, true]) {
      const token = await run(mcp, {
        command: "python3",
        shell_type: "executable",
        args: ["-c", script],
        use_pty,
        max_buffer_size: 16 * 1024 * 1024,
        timeout: 120,
      });
      await finish(mcp, token);
      let offset = 0;
      let received = "";
      for (;;) {
        const part = await mcp.callOk<Query>("query_command_status", {
          token,
          stdout_offset: offset,
          raw: true,
          max_bytes: 2 * 1024 * 1024, // pages of the most an answer holds (16 KiB by default)
        });
        assertEquals(part.stdout_dropped_bytes, 0);
        assertEquals(
          part.stdout_next_offset - offset,
          new TextEncoder().encode(part.stdout).length,
        );
        received += part.stdout;
        offset = part.stdout_next_offset;
        if (!part.stdout_truncated) {
          assertEquals(offset, part.stdout_length);
          break;
        }
      }
      // A terminal turns \n into \r\n (ONLCR); pipes pass bytes as they are.
      assertEquals(offset, use_pty ? 11 * lines : 10 * lines);
      ok((use_pty ? received.replaceAll("\r\n", "\n") : received) === expected, "content differs");
    }
  },
  !posix,
  // The operator allows 16 MiB a stream (the default is 10 MiB).
  { WINTERM_COMMAND_MAX_BYTES: String(16 * 1024 * 1024) },
);

withServer(
  "past max_buffer_size the oldest output is dropped and readers are told",
  async (mcp) => {
    const token = await run(mcp, {
      command: "python3",
      shell_type: "executable",
      args: ["-c", "import sys; sys.stdout.write(''.join('%09d\\n' % i for i in range(200000)))"],
      use_pty: false,
      max_buffer_size: 1024 * 1024,
    });
    const result = await finish(mcp, token, { max_bytes: 16 * 1024 * 1024 });
    const total = 2_000_000, kept = 1024 * 1024;
    assertEquals(result.stdout_length, total);
    assertEquals(result.stdout_dropped_bytes, total - kept);
    assertEquals(result.stdout.length, kept);
    ok(result.stdout.endsWith("000199999\n"));
    ok(result.stdout_truncated);
  },
);

withServer("100 concurrent commands", async (mcp) => {
  const tokens = await Promise.all(
    Array.from(
      { length: 100 },
      (_, i) => run(mcp, { command: `echo start-${i}; sleep 0.5; echo end-${i}` }),
    ),
  );
  const results = await Promise.all(tokens.map((token) => finish(mcp, token)));
  results.forEach((result, i) =>
    assertEquals([result.exit_code, result.stdout], [0, `start-${i}\nend-${i}\n`])
  );
});

withServer(
  "enhanced_query_command_status returns only output after since_timestamp",
  async (mcp) => {
    const token = await run(mcp, { command: "echo first; read go; echo second" });
    const first = await untilOutput(mcp, token, "first");
    ok(first.last_output_timestamp !== null);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await mcp.callOk("send_command_input", { token, input: "go" });
    await finish(mcp, token);
    const later = await mcp.callOk<Query>("enhanced_query_command_status", {
      token,
      since_timestamp: first.last_output_timestamp,
    });
    ok(
      !later.stdout.includes("first") && later.stdout.includes("second"),
      JSON.stringify(later.stdout),
    );
  },
);

withServer("enable_streaming pushes output and the exit as log notifications", async (mcp) => {
  // deno-lint-ignore no-explicit-any
  const messages: any[] = [];
  mcp.client.fallbackNotificationHandler = (notification) => {
    if (notification.method === "notifications/message") messages.push(notification.params?.data);
    return Promise.resolve();
  };
  const token = await run(mcp, {
    command: "echo streamed-1; sleep 0.3; echo streamed-2",
    enable_streaming: true,
  });
  await finish(mcp, token);
  ok(await eventually(() => messages.some((m) => m?.event === "exit")), JSON.stringify(messages));
  const streamed = messages.filter((m) => m.token === token && m.stream === "stdout").map((m) =>
    m.text
  ).join("");
  assertEquals(streamed, "streamed-1\nstreamed-2\n");
});

Deno.test({
  name:
    "enable_streaming: each command's notices come after its answer where they must, the exit last",
  ignore: !posix,
  async fn() {
    // A fast command's exit notice came before the answer that said "submitted" (12 in 100 over
    // a pseudo-terminal). The order is the wire's: raw lines, no client library between.
    const dir = tempDir("winterm order ");
    const server = startRaw({ WINTERM_LOG_LEVEL: "warn" });
    const run = (id: number, args: Record<string, unknown>) => ({
      id,
      method: "tools/call",
      params: { name: "run_command", arguments: { enable_streaming: true, ...args } },
    });
    try {
      await server.send(initializeRequest("order"));
      await server.response(1);
      await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      // Odd calls wait for the end (their output may come first, their exit after the answer),
      // even ones do not (all after "submitted"), on a terminal and on pipes.
      const calls = Array.from({ length: 100 }, (_, i) =>
        run(100 + i, {
          command: i % 4 < 2 ? "true" : `echo out-${i}`,
          use_pty: i % 3 !== 0,
          ...(i % 2 ? { wait_ms: 30_000 } : {}),
        }));
      for (const call of calls) await server.send({ jsonrpc: "2.0", ...call });
      // In a batch, an answer goes with the others: a fast command's notices still follow it.
      await server.send([
        { jsonrpc: "2.0", ...run(300, { command: `echo fast; touch '${dir}/fast'` }) },
        {
          jsonrpc: "2.0",
          ...run(301, {
            command: `while [ ! -e '${dir}/fast' ]; do sleep 0.05; done; sleep 0.5`,
            wait_ms: 30_000,
          }),
        },
      ]);
      const messages = () => server.lines.flatMap((text) => [JSON.parse(text)].flat());
      const done = () => {
        const all = messages();
        const answers = all.filter((m) => m.id >= 100).length;
        const exits = all.filter((m) => m.params?.data?.event === "exit").length;
        return answers === 102 && exits === 102;
      };
      ok(await eventually(done, 60_000), `${messages().length} messages`);
      const answerAt = new Map<string, number>();
      const notices = new Map<string, { at: number; exit: boolean }[]>();
      const waited = new Set<string>();
      server.lines.forEach((text, at) => {
        for (const m of [JSON.parse(text)].flat()) {
          const token = m.result?.structuredContent?.token;
          if (token) {
            answerAt.set(token, at);
            if (m.result.structuredContent.status !== "pending") waited.add(token);
          }
          const data = m.params?.data;
          if (m.method === "notifications/message" && data?.token) {
            notices.set(data.token, [...notices.get(data.token) ?? [], { at, exit: !!data.event }]);
          }
        }
      });
      assertEquals(answerAt.size, 102);
      for (const [token, answer] of answerAt) {
        const own = notices.get(token) ?? [];
        const exit = own.findIndex((notice) => notice.exit);
        ok(exit === own.length - 1, `${token}: the exit is not its last notice`);
        ok(own[exit].at > answer, `${token}: exit at line ${own[exit].at}, answer at ${answer}`);
        if (!waited.has(token)) {
          ok(own.every((notice) => notice.at > answer), `${token}: a notice before "submitted"`);
        }
      }
    } finally {
      await server.closeStdin();
      await server.process.status;
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

withServer("a long wait reports progress", async (mcp) => {
  // The command ends once the first progress has come: however slow the machine, the wait
  // lasts until then.
  const dir = Deno.makeTempDirSync();
  const go = `${dir}/go`;
  const token = await run(mcp, {
    command: `while [ ! -e '${go}' ]; do sleep 0.1; done`,
    timeout: 120,
  });
  const progress: number[] = [];
  const result = await mcp.client.callTool(
    { name: "query_command_status", arguments: { token, wait_ms: 60_000 } },
    undefined,
    {
      onprogress: (p) => {
        progress.push(p.progress);
        Deno.writeTextFileSync(go, "");
      },
      timeout: 90_000,
    },
  );
  Deno.removeSync(dir, { recursive: true });
  assertEquals((result.structuredContent as unknown as Query).status, "completed");
  ok(progress.length >= 1, "no progress notifications");
});

withServer("get_version describes the server", async (mcp) => {
  const version = await mcp.callOk<Record<string, unknown>>("get_version");
  assertEquals(version.name, "winterm-mcp");
  assertEquals(version.platform, Deno.build.os);
  assertEquals((version.runtime_version as Record<string, string>).deno, Deno.version.deno);
  ok("WINTERM_LOG_LEVEL" in (version.env as object));
});

withServer("every bad input is refused clearly and the server keeps serving", async (mcp) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["run_command", {}, /'command' is required/],
    ["run_command", { command: "" }, /'command' must be a string of 1 to 1000 characters/],
    ["run_command", { command: "x".repeat(1001) }, /'command' must be a string of 1 to 1000/],
    ["run_command", { command: 42 }, /'command' must be a string/],
    [
      "run_command",
      { command: "ls", timeout: 0 },
      /'timeout' must be an integer from 1 to 3600 \(got 0\)/,
    ],
    [
      "run_command",
      { command: "ls", timeout: 3601 },
      /'timeout' must be an integer from 1 to 3600/,
    ],
    ["run_command", { command: "ls", timeout: 1.5 }, /'timeout' must be an integer/],
    [
      "run_command",
      { command: "ls", shell_type: "fish" },
      /'shell_type' must be one of "default", "powershell"/,
    ],
    ["run_command", { command: "ls", colour: true }, /'colour' is not a known argument/],
    ["run_command", { command: "ls", env: { "A=B": "x" } }, /'env.A=B' is not allowed here/],
    ["run_command", { command: "ls", env: { A: 1 } }, /'env.A' must be a string/],
    // A NUL (which a C string cannot hold) is refused naming its field, not the program.
    [
      "run_command",
      { command: "ls", env: { A: "x\u0000y" } },
      /'env.A' must be a string .*matching/,
    ],
    [
      "run_command",
      { command: "echo", shell_type: "executable", args: ["x\u0000y"] },
      /'args.0' must be a string .*matching/,
    ],
    ["terminal_create", { env: { A: "x\u0000y" } }, /'env.A' must be a string .*matching/],
    [
      "terminal_create",
      { env: [{ name: "A", value: "x\u0000y" }] },
      /'env.0.value' must be a string .*matching/,
    ],
    [
      "terminal_create",
      { command: "echo", args: ["x\u0000y"] },
      /'args.0' must be a string .*matching/,
    ],
    // Inside a union (an env object, or ACP's list), the field at fault is named.
    ["terminal_create", { env: [{ name: "A" }] }, /'env.0.value' is required/],
    [
      "terminal_create",
      { env: "x" },
      /'env' must be an object of at most 500 entries, or an array of at most 500 items/,
    ],
    [
      "run_command",
      { command: "ls", max_buffer_size: 10 },
      /'max_buffer_size' must be an integer from 1024/,
    ],
    [
      "run_command",
      { command: "no-such-program-xyz", shell_type: "executable" },
      /'command':.*not found on PATH/,
    ],
    [
      "run_command",
      { command: "ls", shell_type: "executable", executable: "/no/such" },
      /'executable':.*not found/,
    ],
    [
      "run_command",
      { command: "ls", shell_type: "executable", executable: Deno.cwd() },
      /'executable': program '.*' is a directory/,
    ],
    [
      "run_command",
      { command: 'echo "unclosed', shell_type: "executable" },
      /'command': unterminated " quote/,
    ],
    ["run_command", { command: "ls", shell_type: "cmd" }, /'shell_type': no cmd shell found/],
    [
      "run_command",
      { command: "ls", args: ["-l"] },
      /'args': args can only be used with shell_type 'executable'/,
    ],
    [
      "query_command_status",
      { token: "t", stdout_offset: -1 },
      /'stdout_offset' must be an integer >= 0/,
    ],
    ["query_command_status", {}, /'token' is required/],
    ["send_command_input", { token: "nope", input: "x" }, /'token': no command with token nope/],
    ["send_command_input", { token: "nope" }, /'input' is required/],
    ["terminate_command", { token: "nope" }, /'token': no command with token nope/],
    ["get_version", { extra: 1 }, /'extra' is not a known argument \(it takes no arguments\)/],
  ];
  for (const [tool, args, expected] of cases) {
    const result = await mcp.call(tool, args);
    ok(result.isError, `${tool} ${JSON.stringify(args)} was accepted`);
    match(text(result), expected);
    assertEquals(
      (await mcp.callOk<{ service_status: string }>("get_version")).service_status,
      "running",
    );
  }
  const unknown = await mcp.call("query_command_status", { token: "never-issued" });
  assertEquals((unknown.structuredContent as unknown as Query).status, "not_found");
  // An unknown tool is a protocol error, and the server still answers afterwards.
  let protocolError = "";
  await mcp.client.callTool({ name: "no_such_tool", arguments: {} }).catch((e) =>
    protocolError = String(e)
  );
  match(protocolError, /Unknown tool: no_such_tool/);
  // Input to a finished command is refused with the reason.
  const token = await run(mcp, { command: "true" });
  await finish(mcp, token);
  const late = await mcp.call("send_command_input", { token, input: "x" });
  match(text(late), /no longer running \(completed\)/);
});

serverTest(
  "a burst of starts takes turns: a get_version sent after 100 of them is answered before most start",
  async (mcp) => {
    const directory = tempDir("winterm-burst-");
    const started = `${directory}/started`;
    try {
      await mcp.callOk("get_version"); // the tools load with the first call
      // Each child adds a line once it runs. Started all at once, their starts (PTY, lookups,
      // spawn) held the event loop until the last was under way: get_version came after all.
      const BURST = 100;
      const burst = Array.from({ length: BURST }, () =>
        mcp.call("run_command", {
          command: `echo x >> '${started}'`,
          shell_type: "sh",
          wait_ms: 60_000,
        }, 120_000));
      await mcp.callOk("get_version");
      const lines = () => Deno.readTextFileSync(started).split("\n").length - 1;
      const soFar = await Deno.stat(started).then(lines, () => 0);
      ok(soFar < BURST / 2, `${soFar} of ${BURST} had started before get_version was answered`);
      const results = await Promise.all(burst);
      assertEquals(results.filter((result) => result.isError).length, 0);
      assertEquals(lines(), BURST);
    } finally {
      Deno.removeSync(directory, { recursive: true });
    }
  },
  { ignore: !posix },
);

serverTest(
  "a file that is neither a program nor a script is refused once, saying so",
  async (mcp) => {
    const directory = tempDir("winterm-garbage-");
    const garbage = `${directory}/garbage`;
    Deno.writeFileSync(garbage, new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]), { mode: 0o755 });
    try {
      const result = await mcp.call("run_command", {
        command: "garbage",
        shell_type: "executable",
        executable: garbage,
      });
      ok(result.isError);
      match(
        text(result),
        /^'executable': cannot start \/.*\/garbage: it is neither a program this system runs nor a script with a #! line \(ENOEXEC: \/.*\/garbage\)$/,
      );
      // A thousand long arguments: the message shows the start of the command line only.
      const long = await mcp.call("run_command", {
        command: "garbage",
        shell_type: "executable",
        executable: garbage,
        args: Array.from({ length: 1000 }, () => "a".repeat(200)),
      });
      ok(long.isError);
      ok(text(long).length < 1000, `a message of ${text(long).length} characters`);
      match(text(long), /a…: it is neither a program/);
      // A named pipe is no program either: it is not "not found".
      const fifo = `${directory}/fifo`;
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
      Deno.chmodSync(fifo, 0o755);
      const piped = await mcp.call("run_command", {
        command: "fifo",
        shell_type: "executable",
        executable: fifo,
      });
      match(text(piped), /^'executable': program '.*fifo' is not a regular file/);
    } finally {
      Deno.removeSync(directory, { recursive: true });
    }
  },
  { ignore: !posix },
);

serverTest(
  "run_command calls cancelled before their answer leave nothing running: nobody holds a token",
  async (mcp) => {
    const marker = uniqueMarker();
    await mcp.callOk("get_version"); // the tools load with the first call
    // Cancelled while most wait in line to start: those were started all the same, and the
    // limit stayed taken by commands nobody could name (found by an attack helper).
    const cancel = new AbortController();
    const calls = Array.from({ length: 40 }, () =>
      mcp.client.callTool(
        { name: "run_command", arguments: { command: `sleep ${marker}`, timeout: 600 } },
        undefined,
        { signal: cancel.signal, timeout: 60_000 },
      ).then(() => "answered", () => "cancelled"));
    cancel.abort();
    const outcomes = await Promise.all(calls);
    ok(outcomes.every((outcome) => outcome === "cancelled"), JSON.stringify(outcomes));
    ok(
      await eventually(() => processesWith(`sleep ${marker}`).length === 0, 30_000),
      `${processesWith(`sleep ${marker}`).length} cancelled commands still run`,
    );
    // And the limit is free again (once their ends are seen).
    let after = "";
    ok(
      await eventually(() => after === "completed", 30_000, async () => {
        const result = await mcp.call("run_command", { command: "echo after", wait_ms: 30_000 });
        after = result.isError
          ? text(result)
          : (result.structuredContent as unknown as Query).status;
      }),
      after,
    );
  },
  { ignore: !posix, env: { WINTERM_MAX_COMMANDS: "10" } },
);

serverTest(
  "a limit reached says which tools free a slot",
  async (mcp) => {
    const token = await run(mcp, { command: "sleep 30" });
    const refused = await mcp.call("run_command", { command: "echo no" });
    ok(refused.isError);
    match(
      text(refused),
      /1 commands are running, the most allowed \(WINTERM_MAX_COMMANDS\): wait for some to end \(query_command_status with wait_ms\), or terminate them \(terminate_command\)/,
    );
    await mcp.callOk("terminate_command", { token });
  },
  { ignore: !posix, env: { WINTERM_MAX_COMMANDS: "1" } },
);
