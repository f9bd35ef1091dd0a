/**
 * The bounded output pipeline through the real server (started as the README says), attacked
 * as a program and a client can: hostile escape parameters printed by commands and terminals
 * and read back every way, catastrophic patterns, limits asked for beyond the operator's,
 * floods, answers too big to read, viewers joining a stream. Meanwhile another caller must keep being answered, and the
 * server must stay within its memory.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";
import { Client, type Connection, serverTest, text } from "../helpers/mcp.ts";
import { type HttpServer, request, startHttpServer } from "../helpers/http.ts";
import { openStream } from "../helpers/stream.ts";
import { eventually } from "../helpers/process.ts";
import { startRaw } from "../helpers/raw_server.ts";
import { initializeRequest } from "../helpers/jsonrpc.ts";

const linux = Deno.build.os === "linux";
const MIB = 1024 * 1024;

interface Query {
  status: string;
  stdout: string;
  stdout_length: number;
  stdout_next_offset: number;
  stdout_truncated: boolean;
  last_output_timestamp: number | null;
  message: string;
}

interface Read {
  output: string;
  truncated: boolean;
  screen?: { unrenderedBytes: number };
}

/** An MCP client over Streamable HTTP to `server`, and its calls. */
async function httpClient(server: HttpServer): Promise<{ client: Client; callOk: CallOk }> {
  const client = new Client({ name: "winterm-tests", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url + "/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  const callOk: CallOk = async <T>(name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: 120_000,
    });
    ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as T;
  };
  return { client, callOk };
}

const withServer = (
  name: string,
  fn: (mcp: Connection) => Promise<void>,
  env: Record<string, string> = {},
) => serverTest(name, fn, { ignore: !linux, env });

/** The server's resident memory in MiB (Linux /proc; the test runs with --allow-all). */
function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
}

/** Calls a tool that must succeed; returns its structured content. */
type CallOk = <T = Record<string, unknown>>(
  name: string,
  args?: Record<string, unknown>,
) => Promise<T>;

/**
 * Another caller: asks get_version over and over (through `call`) while `work` runs, and
 * returns how many answers came and whether they came in time: the slowest under 1 s (work
 * that holds the server up, as a 30,000,000-column CHA once did for seconds, fails it) and 19
 * in 20 under 200 ms (a busy 2-core machine running tests in parallel delays one now and then).
 */
async function whileAnswering(
  call: CallOk,
  work: () => Promise<void>,
): Promise<{ answers: number; late: string | undefined }> {
  let running = true;
  const times: number[] = [];
  const caller = (async () => {
    while (running) {
      const started = performance.now();
      await call("get_version");
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    await work();
  } finally {
    running = false;
    await caller;
  }
  const sorted = times.toSorted((a, b) => a - b);
  const [slowest, p95] = [sorted.at(-1) ?? 0, sorted[Math.floor(sorted.length * 0.95)] ?? 0];
  const late = slowest >= 1000 || p95 >= 200
    ? `get_version took up to ${slowest.toFixed(0)} ms, ${p95.toFixed(0)} at the 95th percentile`
    : undefined;
  return { answers: times.length, late };
}

/**
 * Output that breaks naive cleaners and emulators: huge parameters to every counting sequence,
 * as shell code printing one of them, and how many times to print it in the flood variant.
 */
const HOSTILE: Record<string, [string, number]> = {
  "CHA 30,000,000 (the issue's 25 bytes)": ["printf 'x\\033[30000000Gy'", 2000],
  "CHA 200,000,000": ["printf '\\033[200000000Gz'", 2000],
  "ICH 10,000,000": ["printf 'ab\\033[G\\033[10000000@cd'", 2000],
  "CUP": ["printf '\\033[2147483647;2147483647Hp'", 2000],
  "IL": ["printf '\\033[2147483647Lq'", 2000],
  "DL": ["printf '\\033[2147483647Mr'", 2000],
  "DCH": ["printf 'abc\\033[G\\033[2147483647Ps'", 2000],
  "ECH": ["printf 'abc\\033[G\\033[2147483647Xt'", 2000],
  "REP": ["printf 'u\\033[2147483647b'", 2000],
  "CUF": ["printf 'v\\033[2147483647Cw'", 2000],
  "SU and SD": ["printf '\\033[2147483647S\\033[2147483647T'", 2000],
  "a 100,000-digit parameter": [
    "printf '\\033['; head -c 100000 /dev/zero | tr '\\0' 9; printf G",
    50,
  ],
  "an OSC string that never ends": ["printf '\\033]0;'; head -c 100000 /dev/zero | tr '\\0' t", 50],
};

// Over HTTP, so that the other caller is another client: over stdio it would share one
// connection, where a big answer in transit delays the next (the SDK client's reading, not the
// server's work).
Deno.test({
  name:
    "hostile escape parameters, printed by a command and a terminal, are read back every way while another client is answered",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer();
    const worker = await httpClient(server), other = await httpClient(server);
    const mcp = { callOk: worker.callOk };
    const before = rssMiB(server.process.pid);
    const { late, answers } = await whileAnswering(other.callOk, async () => {
      for (const [name, [print, times]] of Object.entries(HOSTILE)) {
        // Once, then many times over (what `cat` of a hostile file does).
        const once = `${print}; echo; echo end-of-it`;
        const many = `s=$(${print}); for i in $(seq ${times}); do printf '%s' "$s"; done; ` +
          "echo; echo end-of-it";
        for (const command of [once, many]) {
          const { token } = await mcp.callOk<{ token: string }>("run_command", { command });
          await mcp.callOk("query_command_status", { token, wait_ms: 30_000, max_bytes: 1 });
          // Page by page, as an agent reads it on.
          let clean: Query, cleaned = "", offset = 0;
          do {
            clean = await mcp.callOk<Query>("query_command_status", {
              token,
              stdout_offset: offset,
            });
            // deno-lint-ignore no-control-regex -- looking for control characters
            ok(!/[\x00-\x08\x0b-\x1f]/.test(clean.stdout), `${name}: not clean`);
            cleaned += clean.stdout;
            offset = clean.stdout_next_offset;
          } while (clean.stdout_truncated);
          assertEquals(clean.status, "completed", name);
          ok(cleaned.endsWith("end-of-it\n"), `${name}: ${cleaned.slice(-200)}`);
          const raw = await mcp.callOk<Query>("query_command_status", { token, raw: true });
          ok(raw.stdout.includes("\x1b"), name);

          const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
            command,
          });
          const waited = await mcp.callOk<{ condition: string; output: string }>(
            "terminal_wait",
            { terminalId, pattern: "end-of-it", timeoutMs: 30_000 },
          );
          assertEquals(waited.condition, "pattern", name);
          for (const raw of [false, true]) {
            // A line too big for an answer is shown cut; reading on by nextReadFrom gets the rest.
            let read: Read & { nextReadFrom: number; hasMore: boolean }, all = "", since = 0;
            do {
              read = await mcp.callOk("terminal_read", { terminalId, since, raw });
              all += read.output;
              since = read.nextReadFrom;
            } while (read.hasMore);
            ok(all.includes("end-of-it"), `${name}, raw ${raw}`);
          }
          const tail = await mcp.callOk<Read>("terminal_read", {
            terminalId,
            mode: "tail",
            tailLines: 5,
          });
          ok(tail.output.includes("end-of-it"), name);
          const screen = await mcp.callOk<Read>("terminal_read", { terminalId, mode: "screen" });
          // A terminal takes everything after an unterminated OSC as part of it (line feeds
          // included), so that screen rightly shows nothing more.
          const swallowed = name.includes("OSC");
          ok(
            swallowed || screen.output.includes("end-of-it") || screen.screen!.unrenderedBytes > 0,
            name,
          );
          // A viewer joining now gets the screen as escape sequences, at the screen's bounded cost.
          const stream = await openStream(server, `/api/terminals/${terminalId}/stream`);
          await stream.until(() => stream.frames.length > 0, `${name}: the screen`, 30_000);
          const drawn = stream.frames[0].length;
          ok(drawn < 256 * 1024, `${name}: a screen of ${drawn} bytes`);
          stream.close();
          await mcp.callOk("terminal_output", { terminalId });
          await mcp.callOk("terminal_release", { terminalId });
        }
      }
    });
    ok(answers > 10, `only ${answers} answers`);
    assertEquals(late, undefined);
    const after = rssMiB(server.process.pid);
    ok(after < 300, `server RSS ${after.toFixed(0)} MiB (from ${before.toFixed(0)})`);
    await worker.client.close();
    await other.client.close();
    await server.stop();
  },
});

withServer(
  "the issue's sequences clean to what a terminal shows, in bounded answers",
  async (mcp) => {
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command: "printf 'x\\033[30000000Gy\\n\\033[200000000G\\nab\\033[10000000@cd\\n'",
    });
    const clean = await mcp.callOk<Query>("query_command_status", { token, wait_ms: 10_000 });
    // The cursor stops at the last column of the command's terminal (160 columns), as it would
    // on screen; a terminal's own width likewise.
    assertEquals(clean.stdout, "x" + " ".repeat(158) + "y\n\nabcd\n");
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "printf 'x\\033[30000000Gy\\n'",
      cols: 50,
    });
    await mcp.callOk("terminal_wait", { terminalId, exit: true, timeoutMs: 10_000 });
    const read = await mcp.callOk<Read>("terminal_read", { terminalId });
    assertEquals(read.output, "x" + " ".repeat(48) + "y\n");
  },
);

withServer(
  "output dropped by the buffer limit leaves no fragment of an escape sequence in any read",
  async (mcp) => {
    // Before the fix, the oldest kept output began inside a colour or link sequence, and every
    // read of it (whole, from offset 0, the tail) began with text such as "114m" or "65".
    const colours = "''.join('\\x1b[38;5;%dmX' % (i % 200) for i in range(3000))";
    const links = "''.join('\\x1b]8;;http://example.com/%d\\x1b\\\\L' % i for i in range(300))";
    for (const [program, letter] of [[colours, "X"], [links, "L"]]) {
      for (const use_pty of [false, true]) {
        const done = await mcp.callOk<Query & { token: string; stdout_dropped_bytes: number }>(
          "run_command",
          {
            command: `python3 -c "import sys; sys.stdout.write(${program})"`,
            use_pty,
            max_buffer_size: 1025,
            wait_ms: 30_000,
          },
        );
        ok(done.stdout_dropped_bytes > 0, "the buffer limit dropped output");
        const reads = [
          done.stdout,
          (await mcp.callOk<Query>("query_command_status", { token: done.token, stdout_offset: 0 }))
            .stdout,
          (await mcp.callOk<Query>("query_command_status", { token: done.token, tail_lines: 1 }))
            .stdout,
        ];
        for (const read of reads) {
          match(read, new RegExp(`^${letter}+$`), `pty ${use_pty}: ${read}`);
        }
        const raw = await mcp.callOk<Query>("query_command_status", {
          token: done.token,
          raw: true,
        });
        match(raw.stdout, new RegExp(`^(\x1b|${letter})`), `pty ${use_pty}: ${raw.stdout}`);
      }
    }
  },
);

withServer(
  "catastrophic patterns answer within their timeout, and others are answered meanwhile",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; sleep 60",
    });
    await mcp.callOk("terminal_wait", { terminalId, pattern: "!", timeoutMs: 10_000 });
    const { late } = await whileAnswering(mcp.callOk, async () => {
      for (const pattern of ["(a+)+$", "(a|aa)+$", "(a|a)*b", "^(a+)+$", "(\\w+\\s?)*$"]) {
        const started = performance.now();
        const waited = await mcp.callOk<{ condition: string }>("terminal_wait", {
          terminalId,
          pattern,
          flags: "m",
          timeoutMs: 2000,
        });
        const elapsed = performance.now() - started;
        ok(waited.condition === "timeout" || waited.condition === "pattern", pattern);
        ok(elapsed < 3000, `${pattern}: answered after ${elapsed.toFixed(0)} ms`);
      }
    });
    assertEquals(late, undefined);
    // What RE2 cannot do is refused, naming the construct and the field.
    for (
      const [pattern, construct] of [
        ["(a)\\1", /'pattern': a backreference \(\\1\) is not supported/],
        ["a(?=b)", /'pattern': a lookahead/],
        ["(?<!x)a", /'pattern': a negative lookbehind/],
      ] as const
    ) {
      const refused = await mcp.call("terminal_wait", { terminalId, pattern, timeoutMs: 100 });
      ok(refused.isError);
      match(text(refused), construct);
      match(text(refused), /RE2 syntax/);
    }
  },
);

withServer(
  "a terminal asking outputByteLimit 1 GiB is held to the server's limit; a 60 MB flood costs under 100 MB",
  async (mcp) => {
    const before = rssMiB(mcp.pid);
    const created = await mcp.callOk<{ terminalId: string; notice?: string }>("terminal_create", {
      command: "yes 'a line of output that goes on and on, 0123456789' | head -c 60000000",
      outputByteLimit: 1024 * MIB,
    });
    match(created.notice ?? "", /outputByteLimit 1073741824 lowered to the server's 1048576/);
    const done = await mcp.callOk<{ condition: string }>("terminal_wait", {
      terminalId: created.terminalId,
      exit: true,
      timeoutMs: 120_000,
    });
    assertEquals(done.condition, "exit");
    const stats = await mcp.callOk<{ totalBytes: number }>("terminal_stats", {
      terminalId: created.terminalId,
    });
    ok(stats.totalBytes >= 60_000_000, `only ${stats.totalBytes} bytes`);
    const out = await mcp.callOk<{ output: string; truncated: boolean }>("terminal_output", {
      terminalId: created.terminalId,
    });
    ok(out.truncated && new TextEncoder().encode(out.output).length <= MIB);
    const grown = rssMiB(mcp.pid) - before;
    ok(grown < 100, `RSS grew by ${grown.toFixed(0)} MiB`);
  },
  { WINTERM_TERMINAL_MAX_BYTES: String(MIB) },
);

withServer(
  "memory the output budget gave up goes back to the OS: 300 commands of 1 MB under a 64 MiB budget",
  async (mcp) => {
    const budgetMiB = 64;
    const before = rssMiB(mcp.pid);
    const command = async () => {
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: "head -c 1000000 /dev/zero | tr '\\0' x",
        use_pty: false,
      });
      const done = await mcp.callOk<{ status: string }>("query_command_status", {
        token,
        wait_ms: 60_000,
        max_bytes: 1,
      });
      assertEquals(done.status, "completed");
    };
    for (let i = 0; i < 300; i += 10) await Promise.all(Array.from({ length: 10 }, command));
    // Kept by glibc's heap once the collector freed them, the evicted buffers held the server
    // at 180-190 MiB here; handed back, 140-150. What the collector has not freed yet cannot be
    // handed back: commands go on (each evicts one, and the collector runs) until it is.
    const bound = before + 2 * budgetMiB;
    ok(
      await eventually(() => rssMiB(mcp.pid) <= bound, 30_000, command),
      `server RSS ${rssMiB(mcp.pid).toFixed(0)} MiB, over ${bound.toFixed(0)} (idle ` +
        `${before.toFixed(0)} + twice the budget)`,
    );
  },
  { WINTERM_OUTPUT_BUDGET_BYTES: String(64 * MIB) },
);

withServer(
  "a query asking 16 MiB per stream gets a readable answer that says it was limited",
  async (mcp) => {
    // Raw output of the characters that JSON escapes most (control characters six bytes each,
    // quotes and backslashes again in the text copy).
    const script = "import sys; sys.stdout.write('\\x01\"\\\\\\x1b' * 4_000_000)";
    const started = await mcp.callOk<{ token: string; message: string; max_buffer_size: number }>(
      "run_command",
      {
        command: "python3",
        args: ["-c", script],
        shell_type: "executable",
        use_pty: false,
        max_buffer_size: 256 * MIB,
      },
    );
    match(started.message, /max_buffer_size 268435456 lowered to the server's 10485760/);
    assertEquals(started.max_buffer_size, 10 * MIB);
    // Up to the most WINTERM_COMMAND_MAX_BYTES may be, a request is lowered, not refused.
    const largest = await mcp.callOk<{ message: string }>("run_command", {
      command: "true",
      shell_type: "sh",
      max_buffer_size: 1024 * MIB,
    });
    match(largest.message, /max_buffer_size 1073741824 lowered to the server's 10485760/);
    await mcp.callOk("query_command_status", { token: started.token, wait_ms: 60_000 });
    for (const raw of [true, false]) {
      const result = await mcp.call("query_command_status", {
        token: started.token,
        max_bytes: 16 * MIB,
        raw,
      });
      ok(!result.isError);
      const answer = result.structuredContent as unknown as Query;
      match(answer.message, /max_bytes 16777216 lowered to 2097152/);
      ok(answer.stdout_truncated && answer.stdout_next_offset > 0);
      // The whole message: the structured answer and its text copy.
      const size = new TextEncoder().encode(JSON.stringify(result)).length;
      ok(size < 7 * MIB, `an answer of ${size} bytes`);
    }
    // The connection survived: the SDK client did not drop it.
    await mcp.callOk("get_version");
  },
);

withServer(
  "following a busy command by since_timestamp misses nothing and repeats nothing",
  async (mcp) => {
    // Many small writes a millisecond: output lands in the millisecond an answer reports.
    const script = "import sys, time\n" +
      "for i in range(20000):\n" +
      "    sys.stdout.write('%05d\\n' % i); sys.stdout.flush()\n" +
      "    if i % 50 == 0: time.sleep(0.001)";
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command: "python3",
      args: ["-c", script],
      shell_type: "executable",
      use_pty: false,
    });
    // From the start (0): a first poll without since_timestamp answers head and tail once the
    // output passes the answer's bound, which a busy machine's first poll did (1,818 lines
    // left out). Each page ends at a time after which exactly the rest follows.
    let since = 0, seen = "", polls = 0, more = true;
    while (more) {
      const answer = await mcp.callOk<Query & { stdout_truncated: boolean }>(
        "enhanced_query_command_status",
        { token, since_timestamp: since },
      );
      seen += answer.stdout;
      if (answer.last_output_timestamp !== null) since = answer.last_output_timestamp;
      more = answer.status === "running" || answer.stdout_truncated;
      polls++;
    }
    const expected = Array.from({ length: 20000 }, (_, i) => String(i).padStart(5, "0") + "\n");
    ok(polls > 5, `only ${polls} polls`);
    assertEquals(seen.split("\n").length, expected.length + 1, "lines missed or repeated");
    ok(seen === expected.join(""), "output missed or repeated");
  },
);

withServer(
  "following by since_timestamp moves on through a millisecond of more than a page",
  async (mcp) => {
    // seq prints many pages within one millisecond: each page that stops inside it must report
    // a time after which exactly the rest follows (it used to repeat the same page forever).
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command: "seq 1 100000",
      wait_ms: 30_000,
    });
    let since = 0, seen = "", pages = 0, truncated = true;
    while (truncated) {
      const answer = await mcp.callOk<Query & { stdout_truncated: boolean }>(
        "enhanced_query_command_status",
        { token, since_timestamp: since },
      );
      seen += answer.stdout;
      truncated = answer.stdout_truncated;
      ok(answer.last_output_timestamp !== null && answer.last_output_timestamp >= since);
      since = answer.last_output_timestamp!;
      ok(++pages <= 200, `still not through after ${pages} pages (at ${seen.length} bytes)`);
    }
    const expected = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join("");
    ok(seen === expected, `output missed or repeated (${seen.length} of ${expected.length})`);
  },
);

withServer(
  "following stdout and stderr together by since_timestamp repeats nothing of either",
  async (mcp) => {
    // stdout all first, then stderr: a page that stops inside stdout must not show stderr that
    // came after the time it reports (it showed stderr's first page again and again), and a
    // page of one byte must not show the other stream's next bytes twice.
    const command = "seq 1 2000; seq 1 2000 >&2; for i in 1 2 3 4 5 6 7 8 9; do " +
      "echo out$i; echo err$i >&2; done";
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command,
      shell_type: "bash",
      use_pty: false,
      wait_ms: 30_000,
    });
    const whole = await mcp.callOk<Query & { stderr: string }>("query_command_status", {
      token,
      stdout_offset: 0,
      stderr_offset: 0,
      max_bytes: 1_000_000,
    });
    for (const maxBytes of [300, 1]) {
      let since = 0, stdout = "", stderr = "", pages = 0, more = true;
      while (more) {
        const answer = await mcp.callOk<
          Query & { stderr: string; stderr_truncated: boolean }
        >("enhanced_query_command_status", { token, since_timestamp: since, max_bytes: maxBytes });
        [stdout, stderr] = [stdout + answer.stdout, stderr + answer.stderr];
        more = answer.stdout_truncated || answer.stderr_truncated;
        ok(answer.last_output_timestamp! >= since && (answer.stdout || answer.stderr || !more));
        since = answer.last_output_timestamp!;
        ok(++pages <= 100_000, `still not through after ${pages} pages`);
        ok(stderr.length <= whole.stderr.length, `stderr repeated (max_bytes ${maxBytes})`);
      }
      ok(stdout === whole.stdout, `stdout missed or repeated (max_bytes ${maxBytes})`);
      ok(stderr === whole.stderr, `stderr missed or repeated (max_bytes ${maxBytes})`);
    }
  },
);

withServer("enable_streaming sends clean text, whatever falls between two flushes", async (mcp) => {
  // deno-lint-ignore no-explicit-any
  const messages: any[] = [];
  mcp.client.fallbackNotificationHandler = (notification) => {
    if (notification.method === "notifications/message") messages.push(notification.params?.data);
    return Promise.resolve();
  };
  // Each escape sequence and each "中" is cut in two, the halves 300 ms apart: a flush (every
  // 200 ms) falls between them.
  const script = "import sys, time\n" +
    "out = sys.stdout.buffer\n" +
    "for i in range(4):\n" +
    "    out.write(b'\\x1b[3'); out.flush(); time.sleep(0.3)\n" +
    "    out.write(b'2mline %d\\x1b[0m \\xe4' % i); out.flush(); time.sleep(0.3)\n" +
    "    out.write(b'\\xb8\\xad\\n'); out.flush()";
  const { token } = await mcp.callOk<{ token: string }>("run_command", {
    command: "python3",
    args: ["-c", script],
    shell_type: "executable",
    enable_streaming: true,
  });
  await mcp.callOk("query_command_status", { token, wait_ms: 30_000 });
  ok(await eventually(() => messages.some((m) => m?.event === "exit")), "no exit notification");
  const streamed = messages.filter((m) => m.token === token && m.stream === "stdout")
    .map((m) => m.text).join("");
  const raw = await mcp.callOk<Query>("query_command_status", { token, raw: true });
  assertEquals(streamed, cleanTerminalText(raw.stdout));
  assertEquals(streamed, "line 0 中\nline 1 中\nline 2 中\nline 3 中\n");
});

withServer(
  "retained output has a server-wide budget: finished commands are evicted by bytes",
  async (mcp) => {
    const tokens: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: `head -c 1000000 /dev/zero | tr '\\0' '${i % 10}'`,
        use_pty: false,
      });
      await mcp.callOk("query_command_status", { token, wait_ms: 30_000, max_bytes: 1 });
      tokens.push(token);
    }
    const kept = [];
    for (const token of tokens) {
      const answer = await mcp.callOk<Query>("query_command_status", { token, max_bytes: 1 });
      if (answer.status !== "not_found") kept.push(answer);
    }
    // 4 MiB hold four of them; the oldest went first.
    ok(kept.length >= 3 && kept.length <= 4, `${kept.length} kept`);
    const newest = await mcp.callOk<Query>("query_command_status", {
      token: tokens[tokens.length - 1],
      max_bytes: 1,
    });
    assertEquals(newest.stdout_length, 1_000_000);
    assertEquals(
      (await mcp.callOk<Query>("query_command_status", { token: tokens[0] })).status,
      "not_found",
    );
  },
  { WINTERM_OUTPUT_BUDGET_BYTES: String(4 * MIB) },
);

Deno.test({
  name: "MCP and REST shape the same output the same way",
  ignore: !linux,
  async fn() {
    const server = await startHttpServer();
    const client = new Client({ name: "winterm-tests", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url + "/mcp"), {
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      );
      const created = await request(server, "POST", "/api/terminals", {
        body: {
          command: "printf '\\033[1mbold\\033[0m\\r\\n10%%\\r100%%\\n'; seq 1 3000; echo done",
        },
      });
      const terminalId = created.json.data.terminalId;
      const waited = await client.callTool({
        name: "terminal_wait",
        arguments: { terminalId, exit: true, timeoutMs: 10_000 },
      });
      ok(!waited.isError);
      for (const query of ["mode=head-tail&headLines=3&tailLines=2", "since=2&maxLines=10", ""]) {
        const rest = await request(server, "GET", `/api/terminals/${terminalId}/output?${query}`);
        const args = Object.fromEntries(
          [...new URLSearchParams(query)].map(([k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v]),
        );
        const mcp = await client.callTool({
          name: "terminal_read",
          arguments: { terminalId, ...args },
        });
        const fromMcp = mcp.structuredContent as { output: string };
        assertEquals(rest.json.data.output, fromMcp.output, query);
      }
    } finally {
      await client.close();
      await server.stop();
    }
  },
});

withServer(
  "raw pages of invalid UTF-8 go on from where they end, never past the output",
  async (mcp) => {
    // Before the fix, a raw page's next offset was the UTF-8 length of its text: each invalid byte
    // (U+FFFD, three bytes re-encoded) counted three, so pages of 0xFF skipped two thirds of the
    // output and pointed past its end.
    const { token, stdout_length } = await mcp.callOk<Query & { token: string }>("run_command", {
      command: `python3 -c "import os; os.write(1, (b'\\xff' * 99 + b'\\n') * 3000)"`,
      use_pty: false,
      wait_ms: 30_000,
    });
    assertEquals(stdout_length, 300_000);
    let offset = 0, shown = "";
    while (offset < stdout_length) {
      const page = await mcp.callOk<Query>("query_command_status", {
        token,
        stdout_offset: offset,
        max_bytes: 65_536,
        raw: true,
      });
      ok(page.stdout_next_offset > offset && page.stdout_next_offset <= stdout_length);
      shown += page.stdout;
      offset = page.stdout_next_offset;
    }
    assertEquals(shown, ("\uFFFD".repeat(99) + "\n").repeat(3000));
  },
);

Deno.test("many reads of 2 MiB at once take turns: a get_version after them is answered among them, memory stays bounded", async () => {
  // Built back to back, fifty such answers held a get_version sent after them 4 s (a hundred:
  // 14 s, and 1.4 GB of memory), and the answers queued ahead of it went out before it.
  const server = startRaw({ WINTERM_LOG_LEVEL: "warn" });
  try {
    await server.send(initializeRequest("turns"));
    await server.response(1);
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      server.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
    await call(2, "run_command", {
      command: "head -c 30000000 /dev/zero | tr '\\0' x",
      use_pty: false,
      wait_ms: 60_000,
    });
    const started = await server.response(2) as {
      result: { structuredContent: { token: string } };
    };
    const token = started.result.structuredContent.token;
    const reads = Array.from({ length: 40 }, (_, i) => 100 + i);
    const answered = Promise.all([...reads, 99].map((id) => server.response(id)));
    let peak = 0;
    const sampler = setInterval(() => peak = Math.max(peak, rssMiB(server.process.pid)), 20);
    for (const id of reads) {
      await call(id, "query_command_status", {
        token,
        stdout_offset: 0,
        max_bytes: 2 * 1024 * 1024,
      });
    }
    await call(99, "get_version", {});
    await answered;
    clearInterval(sampler);
    const order = server.lines.map((line) => JSON.parse(line).id).filter((id) => id >= 99);
    const before = order.indexOf(99);
    ok(before < 10, `get_version answered after ${before} of the 40 reads: ${order}`);
    // Forty answers of 4 MB, made at once, held some 600 MB; one at a time, with room for each.
    ok(peak < 400, `the server held ${peak} MiB`);
  } finally {
    await server.closeStdin();
    await server.process.status;
  }
});
