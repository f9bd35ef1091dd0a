/**
 * Searching kept output (`grep`) through the real server: run_command with wait_ms,
 * query_command_status, enhanced_query_command_status and terminal_read over MCP, and the REST
 * API's terminal read; the refusals of a bad search, each naming its field.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, serverTest, text } from "../helpers/mcp.ts";
import { request, withHttp } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";

interface Found {
  token: string;
  status: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_next_offset: number;
  stderr_next_offset: number;
  stdout_truncated: boolean;
  stdout_dropped_bytes: number;
  stdout_matches?: number;
  stderr_matches?: number;
  last_output_timestamp: number | null;
}

/**
 * A test run of `count` results as a runner prints them, those in `failing` failed (an awk
 * condition on the test's number, $1, or the numbers).
 */
function testRun(count: number, failing: number[] | string): string {
  const fails = typeof failing === "string"
    ? failing
    : failing.map((n) => `$1 == ${n}`).join(" || ");
  return `seq 1 ${count} | awk '{ if (${fails}) print "FAIL test_" $1 ": expected 1 got 2"; ` +
    `else print "ok   test_" $1 }'`;
}

/** The line numbers a search shows as matches. */
function matchedLines(output: string): number[] {
  return [...output.matchAll(/^(\d+):/gm)].map((found) => Number(found[1]));
}

/** A failing call's message. */
async function refusal(mcp: Connection, tool: string, args: Record<string, unknown>) {
  const result = await mcp.call(tool, args);
  ok(result.isError, `${tool} ${JSON.stringify(args)} was accepted`);
  return text(result);
}

serverTest("run_command: the failing line of 20,000 in one call, with its offset", async (mcp) => {
  const found = await mcp.callOk<Found>("run_command", {
    command: testRun(20_000, [10_007]),
    wait_ms: 60_000,
    grep: "^FAIL",
    context_lines: 1,
  });
  assertEquals([found.status, found.exit_code, found.stdout_matches], ["completed", 0, 1]);
  const lines = found.stdout.split("\n");
  match(lines[0], /^10006-\d+-ok {3}test_10006$/);
  match(lines[1], /^10007:\d+:FAIL test_10007: expected 1 got 2$/);
  match(lines[2], /^10008-\d+-ok {3}test_10008$/);
  assertEquals([lines.length, found.stdout_truncated], [4, false]);
  // The offset pages there: a read from it starts with the failing line.
  const offset = Number(lines[1].split(":")[1]);
  const page = await mcp.callOk<Found>("query_command_status", {
    token: found.token,
    stdout_offset: offset,
    head_lines: 1,
  });
  assertEquals(page.stdout, "FAIL test_10007: expected 1 got 2\n");
}, { ignore: !posix });

serverTest(
  "query_command_status: more matches than fit, then the rest from the offset",
  async (mcp) => {
    const failing = Array.from({ length: 150 }, (_, i) => 100 + i * 13);
    const started = await mcp.callOk<Found>("run_command", {
      command: testRun(3000, "$1 >= 100 && $1 < 2050 && ($1 - 100) % 13 == 0"),
    });
    const first = await mcp.callOk<Found>("query_command_status", {
      token: started.token,
      wait_ms: 60_000,
      grep: "FAIL",
    });
    assertEquals([first.stdout_matches, first.stdout_truncated], [150, true]);
    const shown = matchedLines(first.stdout);
    assertEquals(shown.length, 100);
    match(
      first.stdout,
      new RegExp(
        `\\.\\.\\. \\[50 more matching lines not shown; search on with ` +
          `stdout_offset=${first.stdout_next_offset}\\] \\.\\.\\.\\n$`,
      ),
    );
    const rest = await mcp.callOk<Found>("query_command_status", {
      token: started.token,
      grep: "FAIL",
      stdout_offset: first.stdout_next_offset,
    });
    assertEquals([rest.stdout_matches, rest.stdout_truncated], [50, false]);
    assertEquals([...shown, ...matchedLines(rest.stdout)], failing);
    // A small max_bytes: fewer lines, the same marker (an answer always shows a match).
    const tiny = await mcp.callOk<Found>("query_command_status", {
      token: started.token,
      grep: "FAIL",
      max_bytes: 1,
    });
    assertEquals(matchedLines(tiny.stdout)[0], 100);
    ok(tiny.stdout.length < 600, tiny.stdout);
    match(
      tiny.stdout,
      /more matching lines not shown; search on with stdout_offset=\d+\] \.\.\.\n$/,
    );
  },
  { ignore: !posix },
);

serverTest("grep over pipes: stderr searched apart, and what was dropped is said", async (mcp) => {
  const found = await mcp.callOk<Found>("run_command", {
    command: `${testRun(2000, [1500])}; echo 'warning: disk low' >&2; exit 1`,
    use_pty: false,
    max_buffer_size: 4096,
    wait_ms: 60_000,
    grep: "FAIL|warning",
  });
  assertEquals([found.exit_code, found.stdout_matches, found.stderr_matches], [1, 0, 1]);
  assertEquals(found.stderr, "1:0:warning: disk low\n");
  // Stdout kept its last 4 KiB: the failing line went with the rest; line numbers stay true.
  ok(found.stdout_dropped_bytes > 0);
  match(found.stdout, /^\.\.\. \[\d+ lines, \d+ bytes no longer kept: not searched\] \.\.\.\n$/);
  const tail = await mcp.callOk<Found>("query_command_status", {
    token: found.token,
    grep: "test_2000$",
  });
  match(tail.stdout, /\n2000:\d+:ok {3}test_2000\n$/);
}, { ignore: !posix });

serverTest("enhanced_query_command_status: only what arrived since the time told", async (mcp) => {
  const started = await mcp.callOk<Found>("run_command", {
    command: "echo 'FAIL early'; read go; echo 'FAIL late'; echo fine",
  });
  let first: Found | undefined;
  ok(
    await eventually(() => first?.stdout_matches === 1, 10_000, async () => {
      first = await mcp.callOk<Found>("enhanced_query_command_status", {
        token: started.token,
        grep: "FAIL",
      });
    }),
    "the early line never came",
  );
  match(first!.stdout, /^1:0:FAIL early\n$/);
  await mcp.callOk("send_command_input", { token: started.token, input: "go" });
  await mcp.callOk("query_command_status", { token: started.token, wait_ms: 30_000 });
  const later = await mcp.callOk<Found>("enhanced_query_command_status", {
    token: started.token,
    since_timestamp: first!.last_output_timestamp,
    grep: "FAIL",
    context_lines: 1,
  });
  assertEquals(later.stdout_matches, 1);
  match(later.stdout, /^\d+-\d+-go\n\d+:\d+:FAIL late\n\d+-\d+-fine\n$/);
}, { ignore: !posix });

serverTest("a bad search is refused before anything runs, naming its field", async (mcp) => {
  const run = { command: "echo hi", wait_ms: 10_000 };
  match(
    await refusal(mcp, "run_command", { ...run, grep: "(a+)(?=b)" }),
    /^'grep': a lookahead \(\?=\.\.\.\) is not supported: patterns use RE2 syntax/,
  );
  match(
    await refusal(mcp, "run_command", { ...run, grep: "(" }),
    /^'grep': not a valid regular expression: missing closing \)/,
  );
  match(
    await refusal(mcp, "run_command", { ...run, grep: "x".repeat(1001) }),
    /'grep' must be a string of 1 to 1000 characters/,
  );
  match(
    await refusal(mcp, "run_command", { ...run, grep: "x", context_lines: 21 }),
    /'context_lines' must be an integer from 0 to 20 \(got 21\)/,
  );
  match(
    await refusal(mcp, "run_command", { ...run, context_lines: 2 }),
    /^'context_lines': applies only with grep$/,
  );
  match(
    await refusal(mcp, "run_command", { ...run, grep: "x", tail_lines: 5 }),
    /^'tail_lines': cannot be used with grep/,
  );
  match(
    await refusal(mcp, "run_command", { command: "echo hi", grep: "x" }),
    /^'grep': needs wait_ms/,
  );
  match(
    await refusal(mcp, "query_command_status", { token: "none", grep: "x", head_lines: 1 }),
    /^'head_lines': cannot be used with grep/,
  );
  match(
    await refusal(mcp, "terminal_read", { terminalId: "term_none", grep: "(?<=a)b" }),
    /^'grep': a lookbehind/,
  );
});

serverTest(
  "terminal_read: matches numbered as since counts them, context, refusals",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "bash",
      args: ["--norc", "--noprofile", "-c", `${testRun(500, [200, 203])}; echo done; sleep 60`],
    });
    await mcp.callOk("terminal_wait", { terminalId, pattern: "^done", flags: "m" });
    const found = await mcp.callOk<{
      output: string;
      matches: number;
      nextReadFrom: number;
      hasMore: boolean;
      stats: { linesShown: number };
    }>("terminal_read", { terminalId, grep: "^FAIL", contextLines: 1 });
    assertEquals([found.matches, found.hasMore, found.stats.linesShown], [2, false, 6]);
    assertEquals(
      found.output,
      "198-ok   test_199\n199:FAIL test_200: expected 1 got 2\n200-ok   test_201\n" +
        "201-ok   test_202\n202:FAIL test_203: expected 1 got 2\n203-ok   test_204\n",
    );
    // A number from the answer is where terminal_read reads that line.
    const line = await mcp.callOk<{ output: string }>("terminal_read", {
      terminalId,
      since: 199,
      mode: "head",
      headLines: 1,
    });
    assertEquals(line.output, "FAIL test_200: expected 1 got 2\n");
    const later = await mcp.callOk<{ output: string; matches: number }>("terminal_read", {
      terminalId,
      grep: "FAIL",
      since: 200,
    });
    assertEquals([later.matches, later.output], [1, "202:FAIL test_203: expected 1 got 2\n"]);
    match(
      await refusal(mcp, "terminal_read", { terminalId, grep: "FAIL", mode: "tail" }),
      /^'mode': must be full with grep$/,
    );
    match(
      await refusal(mcp, "terminal_read", { terminalId, grep: "FAIL", mode: "screen" }),
      /^'grep': cannot be used with mode screen$/,
    );
    match(
      await refusal(mcp, "terminal_read", { terminalId, grep: "FAIL", maxLines: 10 }),
      /^'maxLines': cannot be used with grep/,
    );
    match(
      await refusal(mcp, "terminal_read", { terminalId, contextLines: 1 }),
      /^'contextLines': applies only with grep$/,
    );
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !posix },
);

withHttp("REST: the terminal read takes grep and contextLines", async (server) => {
  const created = await request(server, "POST", "/api/terminals", {
    body: { command: "bash", args: ["--norc", "-c", `${testRun(50, [7])}; sleep 60`] },
  });
  const id = created.json.data.terminalId;
  let data: { output: string; matches: number } | undefined;
  const search = `grep=${encodeURIComponent("^FAIL|test_50$")}&contextLines=1`;
  ok(
    await eventually(() => data?.matches === 2, 10_000, async () => {
      data = (await request(server, "GET", `/api/terminals/${id}/output?${search}`)).json.data;
    }),
    JSON.stringify(data),
  );
  assertEquals(
    data!.output,
    "5-ok   test_6\n6:FAIL test_7: expected 1 got 2\n7-ok   test_8\n--\n48-ok   test_49\n" +
      "49:ok   test_50\n",
  );
  const bad = await request(server, "GET", `/api/terminals/${id}/output?grep=(`);
  assertEquals([bad.status, bad.json.error.code], [400, "INVALID_INPUT"]);
  match(bad.json.error.message, /not a valid regular expression/);
  const alone = await request(server, "GET", `/api/terminals/${id}/output?contextLines=2`);
  assertEquals([alone.status, alone.json.error.details.field], [400, "contextLines"]);
  const range = await request(server, "GET", `/api/terminals/${id}/output?grep=x&contextLines=99`);
  assertEquals(range.status, 400);
  match(range.json.error.message, /'contextLines' must be an integer from 0 to 20/);
  await request(server, "DELETE", `/api/terminals/${id}`);
});

serverTest("a caller's searches take no turn from others' reads", async (mcp) => {
  // Each search held the one answer turn for its work (up to 2 s): ten of them made a ten-line
  // answer of another command wait behind all ten (27 s). Judged by order, not by time.
  const big = await mcp.callOk<Found>("run_command", {
    command: "head -c 10000000 /dev/zero | tr '\\0' '\\n'",
    use_pty: false,
    wait_ms: 60_000,
    max_bytes: 100,
  });
  // The pattern compiler loads with the first search: the searches below then start at once.
  await mcp.callOk("query_command_status", { token: big.token, grep: "x", max_bytes: 2000 });
  const gate = await Deno.makeTempDir();
  const small = await mcp.callOk<Found>("run_command", {
    command: `until [ -f ${gate}/go ]; do sleep 0.05; done; seq 1 10`,
    use_pty: false,
  });
  const order: string[] = [];
  const read = mcp.callOk<Found>("query_command_status", { token: small.token, wait_ms: 60_000 })
    .then((answer) => {
      order.push("read");
      return answer;
    });
  const searches = Array.from(
    { length: 6 },
    (_, i) =>
      mcp.callOk<Found>("query_command_status", { token: big.token, grep: "x", max_bytes: 2000 })
        .then(() => order.push(`search ${i}`)),
  );
  // Answered after the server has taken the searches (requests are read in order).
  await mcp.callOk("get_version");
  Deno.writeTextFileSync(`${gate}/go`, "");
  try {
    assertEquals((await read).stdout, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    await Promise.all(searches);
    assertEquals(order[0], "read", `answered in the order ${order.join(", ")}`);
  } finally {
    Deno.removeSync(gate, { recursive: true });
  }
}, { ignore: !posix });
