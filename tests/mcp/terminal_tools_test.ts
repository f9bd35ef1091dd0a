/**
 * Persistent terminals through the real server over stdio, driven by the SDK client: shells
 * and REPLs that keep state, waiting on patterns, idleness and exits, smart reads, ACP's
 * output/kill/release, the screen view, limits.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import {
  Client,
  type Connection,
  MAIN,
  serverTest,
  START_ENV,
  START_FLAGS,
  text,
} from "../helpers/mcp.ts";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { eventually, processesWith, uniqueMarker } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

interface Created {
  terminalId: string;
  pid: number;
  status: string;
}

interface Waited {
  condition: string;
  output: string;
  match: { text: string; groups: (string | null)[] } | null;
  nextReadFrom: number;
  elapsedMs: number;
  exitStatus?: { exitCode: number | null; signal: string | null };
}

interface Read {
  output: string;
  totalLines: number;
  nextReadFrom: number;
  hasMore: boolean;
  truncated: boolean;
  stats: { linesShown: number; linesOmitted: number; totalBytes: number };
  screen?: { cursorX: number; cursorY: number; alternate: boolean };
  exitStatus?: { exitCode: number | null; signal: string | null };
}

const withServer = (
  name: string,
  fn: (mcp: Connection) => Promise<void>,
  env: Record<string, string> = {},
) => serverTest(name, fn, { ignore: !posix, env });

/** Returns once the terminal's output holds `text` (read raw, as it arrived). */
async function arrived(mcp: Connection, terminalId: string, text: string): Promise<void> {
  let output = "";
  ok(
    await eventually(() => output.includes(text), undefined, async () => {
      output = (await mcp.callOk<{ output: string }>("terminal_output", { terminalId })).output;
    }),
    `${text} never arrived: ${output}`,
  );
}

const wait = (mcp: Connection, args: Record<string, unknown>) =>
  mcp.callOk<Waited>("terminal_wait", args);

withServer("an interactive bash keeps its state (cd, variables) across writes", async (mcp) => {
  // Without rc files: a machine's ~/.bashrc (pyenv init, say) is not what is under test.
  const { terminalId, status } = await mcp.callOk<Created>("terminal_create", {
    command: "bash",
    args: ["--norc", "--noprofile", "-i"],
    cwd: "/",
  });
  assertEquals(status, "active");
  await mcp.callOk("terminal_write", { terminalId, input: "cd /tmp && GREETING=persistent" });
  await mcp.callOk("terminal_write", { terminalId, input: 'echo "[$PWD][$GREETING]"' });
  const seen = await wait(mcp, {
    terminalId,
    pattern: "\\[/tmp\\]\\[persistent\\]",
    timeoutMs: 10_000,
    since: 0,
  });
  assertEquals(seen.condition, "pattern");
  await mcp.callOk("terminal_write", { terminalId, input: "exit 7" });
  const done = await wait(mcp, { terminalId, exit: true, timeoutMs: 10_000 });
  assertEquals([done.condition, done.exitStatus], ["exit", { exitCode: 7, signal: null }]);
  await mcp.callOk("terminal_release", { terminalId });
});

withServer("a python3 REPL", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "python3",
    args: ["-q"],
  });
  await wait(mcp, { terminalId, pattern: ">>> $", timeoutMs: 10_000, since: 0 });
  await mcp.callOk("terminal_write", { terminalId, input: "x = 6 * 7" });
  await mcp.callOk("terminal_write", { terminalId, input: "print('answer', x)" });
  const answer = await wait(mcp, {
    terminalId,
    pattern: "^answer (\\d+)",
    flags: "m",
    timeoutMs: 10_000,
    since: 0,
  });
  assertEquals(answer.match?.groups, ["42"]);
  await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_d"] });
  assertEquals((await wait(mcp, { terminalId, timeoutMs: 10_000 })).exitStatus, {
    exitCode: 0,
    signal: null,
  });
  await mcp.callOk("terminal_release", { terminalId });
});

withServer("terminal_wait returns as soon as a server prints its pattern", async (mcp) => {
  const script = "import time; print('compiling...', flush=True); time.sleep(1.5); " +
    "print('Server listening on http://localhost:3000', flush=True); time.sleep(60)";
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "python3",
    args: ["-c", script],
  });
  const ready = await wait(mcp, {
    terminalId,
    pattern: "listening on (\\S+)",
    timeoutMs: 30_000,
    since: 0,
  });
  assertEquals(ready.condition, "pattern");
  assertEquals(ready.match?.groups, ["http://localhost:3000"]);
  ok(ready.output.includes("compiling...") && ready.exitStatus === undefined);
  await mcp.callOk("terminal_release", { terminalId });
});

withServer("a wait after a write sees the answer even if it came before the wait", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", { shell: "sh" });
  await mcp.callOk("terminal_write", { terminalId, input: "echo early-$((40 + 2))" });
  await arrived(mcp, terminalId, "early-42"); // the answer is there before the wait
  const seen = await wait(mcp, { terminalId, pattern: "early-42", timeoutMs: 5000 });
  assertEquals(seen.condition, "pattern");
  // The answer starts after the echo (a shell slow to start may print its prompt after the
  // terminal echoed the line, so the answer can begin with that prompt).
  ok(
    seen.output.includes("early-42") && !seen.output.includes("echo early-"),
    `the answer starts after the echo: ${seen.output}`,
  );
  // A server's banner printed before anyone waits counts too (nothing written yet).
  const server = await mcp.callOk<Created>("terminal_create", {
    command: "echo banner-ready; sleep 30",
  });
  await arrived(mcp, server.terminalId, "banner-ready");
  assertEquals(
    (await wait(mcp, { terminalId: server.terminalId, pattern: "banner-ready", timeoutMs: 5000 }))
      .condition,
    "pattern",
  );
});

withServer("idle and exit conditions, and a timeout", async (mcp) => {
  const quiet = await mcp.callOk<Created>("terminal_create", {
    command: "python3",
    args: ["-c", "import time; print('burst', flush=True); time.sleep(60)"],
  });
  // The idle clock starts with the wait: wait for the burst first (python3 may take longer than
  // 300 ms to start on a busy machine), then for the quiet after it.
  await wait(mcp, { terminalId: quiet.terminalId, pattern: "burst", timeoutMs: 20_000, since: 0 });
  const idle = await wait(mcp, {
    terminalId: quiet.terminalId,
    idleMs: 300,
    timeoutMs: 20_000,
    since: 0,
  });
  assertEquals(idle.condition, "idle");
  ok(idle.output.includes("burst"));
  const nothing = await wait(mcp, {
    terminalId: quiet.terminalId,
    pattern: "never printed",
    timeoutMs: 300,
  });
  assertEquals(nothing.condition, "timeout");
  await mcp.callOk("terminal_release", { terminalId: quiet.terminalId });

  const ending = await mcp.callOk<Created>("terminal_create", {
    command: "sleep 0.3; echo bye; exit 3",
  });
  const exit = await wait(mcp, { terminalId: ending.terminalId, exit: true, timeoutMs: 20_000 });
  assertEquals([exit.condition, exit.exitStatus], ["exit", { exitCode: 3, signal: null }]);
  // Waiting on an exited terminal answers at once.
  assertEquals(
    (await wait(mcp, { terminalId: ending.terminalId, timeoutMs: 20_000 })).condition,
    "exit",
  );
});

withServer("terminal_wait sends progress while it waits, and can be cancelled", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "sleep",
    args: ["30"],
  });
  const progress: number[] = [];
  const timedOut = await mcp.client.callTool(
    { name: "terminal_wait", arguments: { terminalId, pattern: "never", timeoutMs: 2500 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  assertEquals((timedOut.structuredContent as unknown as Waited).condition, "timeout");
  ok(progress.length >= 1, "no progress notifications");
  // Cancelled by the client: the call ends at once, and the server goes on serving.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const started = Date.now();
  let cancelled = false;
  await mcp.client.callTool(
    { name: "terminal_wait", arguments: { terminalId, pattern: "never", timeoutMs: 60_000 } },
    undefined,
    { signal: controller.signal },
  ).catch(() => cancelled = true);
  ok(cancelled && Date.now() - started < 30_000);
  assertEquals((await wait(mcp, { terminalId, idleMs: 50, timeoutMs: 5000 })).condition, "idle");
  await mcp.callOk("terminal_release", { terminalId });
});

withServer(
  "pages of long lines stop before a line that does not fit: none is lost",
  async (mcp) => {
    // 100 lines of 1,000 characters, read in pages of 16 KiB: each page stops at its last whole
    // line (a page that cut line 16 and went on past it never showed the rest of it to anyone).
    const lines = Array.from(
      { length: 100 },
      (_, i) => String(i).padStart(3, "0") + "y".repeat(997),
    );
    const script =
      "for i in $(seq 0 99); do printf '%03d' $i; head -c 997 /dev/zero | tr '\\0' y; " +
      "echo; done";
    const { terminalId } = await mcp.callOk<Created>("terminal_create", {
      command: "sh",
      args: ["-c", script],
    });
    await wait(mcp, { terminalId, timeoutMs: 10_000 });
    const shown: string[] = [];
    for (let since = 0, pages = 0; pages < 50; pages++) {
      const page = await mcp.callOk<Read>("terminal_read", { terminalId, since, maxBytes: 16384 });
      ok(!page.output.includes("omitted"), `page from line ${since}: ${page.output.slice(-200)}`);
      shown.push(
        ...page.output.split("\n").filter((line) => line !== ""),
      );
      since = page.nextReadFrom;
      if (!page.hasMore) break;
    }
    assertEquals(shown, lines);
  },
);

withServer("Ctrl+C by key name interrupts the program", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "sleep",
    args: ["30"],
  });
  // It runs once created (the spawn returns after its exec): Ctrl+C reaches it at once.
  await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
  const done = await wait(mcp, { terminalId, timeoutMs: 10_000 });
  assertEquals(done.exitStatus, { exitCode: null, signal: "SIGINT" });
});

withServer("head-tail and since arithmetic against known line counts", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "seq",
    args: ["1", "1000"],
  });
  await wait(mcp, { terminalId, timeoutMs: 10_000 });
  const ends = await mcp.callOk<Read>("terminal_read", {
    terminalId,
    mode: "head-tail",
    headLines: 3,
    tailLines: 2,
  });
  // The marker says exactly what is left out (lines 3 to 997, "4\\r\\n" to "998\\r\\n": raw
  // bytes, as the terminal sent them) and how to read it.
  const omitted = Array.from({ length: 995 }, (_, i) => `${i + 4}\r\n`).join("").length;
  assertEquals(
    ends.output,
    `1\n2\n3\n... [995 lines, ${omitted} bytes omitted; read them with since=3] ...\n999\n1000\n`,
  );
  assertEquals([ends.totalLines, ends.stats.linesShown, ends.stats.linesOmitted, ends.truncated], [
    1000,
    5,
    995,
    true,
  ]);
  // A summary (full, no since) shows maxLines lines in all, the odd one at the end, the marker
  // between them not counted (an odd maxLines showed one more: 3 gave 4).
  for (const maxLines of [1, 2, 3, 4, 7]) {
    const summary = await mcp.callOk<Read>("terminal_read", { terminalId, maxLines });
    const [head, tail] = [Math.floor(maxLines / 2), Math.ceil(maxLines / 2)];
    const lines = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => `${from + i}\n`).join("");
    const skipped = Array.from({ length: 1000 - maxLines }, (_, i) => `${head + i + 1}\r\n`)
      .join("").length;
    assertEquals(
      summary.output,
      lines(1, head) +
        `... [${
          1000 - maxLines
        } lines, ${skipped} bytes omitted; read them with since=${head}] ...\n` +
        lines(1001 - tail, tail),
      `maxLines ${maxLines}`,
    );
    assertEquals([summary.stats.linesShown, summary.stats.linesOmitted, summary.truncated], [
      maxLines,
      1000 - maxLines,
      true,
    ]);
  }
  const page = await mcp.callOk<Read>("terminal_read", { terminalId, since: 100, maxLines: 10 });
  assertEquals(page.output, Array.from({ length: 10 }, (_, i) => `${101 + i}\n`).join(""));
  assertEquals([page.nextReadFrom, page.hasMore], [110, true]);
  const rest = await mcp.callOk<Read>("terminal_read", { terminalId, since: 995 });
  assertEquals([rest.output, rest.nextReadFrom, rest.hasMore], [
    "996\n997\n998\n999\n1000\n",
    1000,
    false,
  ]);
  const tail = await mcp.callOk<Read>("terminal_read", { terminalId, mode: "tail", tailLines: 2 });
  assertEquals(tail.output, "999\n1000\n");
  assertEquals(tail.exitStatus, { exitCode: 0, signal: null });
  const head = await mcp.callOk<Read>("terminal_read", {
    terminalId,
    mode: "head",
    headLines: 2,
    since: 10,
  });
  assertEquals([head.output, head.stats.linesOmitted], ["11\n12\n", 988]);
  const stats = await mcp.callOk<Record<string, unknown>>("terminal_stats", { terminalId });
  assertEquals(stats, {
    terminalId,
    totalLines: 1000,
    totalBytes: ends.stats.totalBytes,
    estimatedTokens: Math.ceil(ends.stats.totalBytes / 4),
    bufferSize: 1000,
    oldestLine: 0,
    newestLine: 999,
    isActive: false,
    state: "exited",
    running: null,
    cwd: Deno.cwd(),
    // The program's own, once it has exited (no shell reports one).
    lastExitCode: 0,
    shellIntegration: "none",
  });
});

withServer("outputByteLimit keeps the newest bytes, cut at a character boundary", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "printf",
    args: ["%s", "开始-€€€€-中文结束"],
    outputByteLimit: 14,
  });
  await wait(mcp, { terminalId, timeoutMs: 10_000 });
  const out = await mcp.callOk<{ output: string; truncated: boolean }>("terminal_output", {
    terminalId,
  });
  // The newest 14 bytes ("-中文结束" is 13) start inside a "€": the cut moves to the next character.
  assertEquals(out, {
    output: "-中文结束",
    truncated: true,
    exitStatus: { exitCode: 0, signal: null },
  });
  assertEquals(new TextEncoder().encode(out.output).length <= 14, true);
});

withServer(
  "ACP: kill, then output and exit status, then release; the id is invalid afterwards",
  async (mcp) => {
    const marker = uniqueMarker();
    const { terminalId, pid } = await mcp.callOk<Created>("terminal_create", {
      command: "sh",
      args: ["-c", `echo started; sleep ${marker}1 & sleep ${marker}2`],
      env: [{ name: "ACP_STYLE", value: "yes" }],
    });
    await wait(mcp, { terminalId, pattern: "started", timeoutMs: 10_000, since: 0 });
    const killed = await mcp.callOk<{ exitStatus: unknown }>("terminal_kill", { terminalId });
    assertEquals(killed.exitStatus, { exitCode: null, signal: "SIGHUP" });
    if (linux) {
      ok(
        await eventually(() => processesWith(`sleep ${marker}`).length === 0),
        "the tree survived the kill",
      );
    }
    const out = await mcp.callOk<{ output: string; exitStatus: unknown }>("terminal_output", {
      terminalId,
    });
    match(out.output, /started/);
    assertEquals(out.exitStatus, { exitCode: null, signal: "SIGHUP" });
    assertEquals(await mcp.callOk("terminal_wait_for_exit", { terminalId }), {
      exitCode: null,
      signal: "SIGHUP",
    });
    const listed = await mcp.callOk<
      { terminals: { terminalId: string; status: string; pid: number }[] }
    >("terminal_list");
    assertEquals(listed.terminals.find((t) => t.terminalId === terminalId)?.status, "exited");
    assertEquals(listed.terminals.find((t) => t.terminalId === terminalId)?.pid, pid);
    await mcp.callOk("terminal_release", { terminalId });
    for (
      const [tool, args] of [["terminal_output", {}], ["terminal_read", {}], [
        "terminal_release",
        {},
      ], ["terminal_write", { input: "x" }]] as const
    ) {
      const gone = await mcp.call(tool, { terminalId, ...args });
      ok(gone.isError);
      match(text(gone), /'terminalId': no terminal term_/);
    }
  },
);

withServer("a signal of one's choosing, and wait_for_exit with a timeout", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "sleep",
    args: ["30"],
  });
  const early = await mcp.call("terminal_wait_for_exit", { terminalId, timeoutMs: 200 });
  ok(early.isError);
  match(text(early), /still running/);
  const sent = await mcp.callOk<{ exitStatus?: unknown }>("terminal_kill", {
    terminalId,
    signal: "SIGUSR1",
  });
  assertEquals(sent.exitStatus, { exitCode: null, signal: "SIGUSR1" });
});

withServer("screen mode shows a full-screen program's final screen", async (mcp) => {
  const draw = [
    "import sys, time",
    "w = sys.stdout.write",
    "w('\\x1b[?1049h\\x1b[2J\\x1b[H')", // alternate screen, cleared
    "w('+' + '-' * 18 + '+\\r\\n')",
    "for i in range(3): w('|' + ' ' * 18 + '|\\r\\n')",
    "w('+' + '-' * 18 + '+')",
    "w('\\x1b[3;6HSTATUS: OK')", // drawn by cursor moves
    "w('\\x1b[2;3H10%'); w('\\x1b[2;3H100%')", // redrawn in place
    "w('\\x1b[6;1H'); sys.stdout.flush(); time.sleep(30)",
  ].join("\n");
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    command: "python3",
    args: ["-c", draw],
    cols: 40,
    rows: 10,
  });
  // Drawn (python3 may take longer than 300 ms to start on a busy machine), then quiet.
  await wait(mcp, { terminalId, pattern: "100%", timeoutMs: 10_000, since: 0 });
  await wait(mcp, { terminalId, idleMs: 300, timeoutMs: 10_000, since: 0 });
  const screen = await mcp.callOk<Read>("terminal_read", { terminalId, mode: "screen" });
  assertEquals(
    screen.output,
    [
      "+------------------+",
      "| 100%             |",
      "|    STATUS: OK    |",
      "|                  |",
      "+------------------+",
      "",
    ].join("\n"),
  );
  assertEquals(screen.screen, {
    cols: 40,
    rows: 10,
    cursorX: 0,
    cursorY: 5,
    alternate: true,
    unrenderedBytes: 0,
  });
  await mcp.callOk("terminal_resize", { terminalId, cols: 30, rows: 8 });
  const resized = await mcp.callOk<Read>("terminal_read", { terminalId, mode: "screen" });
  assertEquals([resized.screen?.alternate, resized.output.split("\n")[0]], [
    true,
    "+------------------+",
  ]);
  await mcp.callOk("terminal_release", { terminalId });
});

withServer(
  "a screen read is bounded by maxBytes (16 KiB by default), top rows first, the rest counted",
  async (mcp) => {
    // 100 rows of 500 columns, then quiet: 50 KB of screen.
    const { terminalId } = await mcp.callOk<Created>("terminal_create", {
      command: "python3",
      args: [
        "-c",
        "import sys, time\nfor i in range(100): sys.stdout.write(('%03d' % i) * 166 + 'xx')\nsys.stdout.flush(); time.sleep(30)",
      ],
      cols: 500,
      rows: 100,
    });
    await wait(mcp, { terminalId, pattern: "099xx", timeoutMs: 10_000, since: 0 });
    const bounded = await mcp.callOk<Read>("terminal_read", { terminalId, mode: "screen" });
    ok(bounded.truncated, "a 50 KB screen in 16 KiB");
    const bytes = new TextEncoder().encode(JSON.stringify(bounded.output)).length;
    ok(bytes <= 16 * 1024 + 200, `${bytes} bytes of screen`);
    ok(bounded.output.startsWith("000".repeat(166) + "xx\n001001"), bounded.output.slice(0, 40));
    match(bounded.output, /\.\.\. \[\d+ lines, \d+ bytes omitted; over maxBytes\] \.\.\.\n$/);
    assertEquals(bounded.stats.linesShown + bounded.stats.linesOmitted, 100);
    assertEquals(bounded.output.split("\n").length - 2, bounded.stats.linesShown);
    const whole = await mcp.callOk<Read>("terminal_read", {
      terminalId,
      mode: "screen",
      maxBytes: 100_000,
    });
    assertEquals([whole.truncated, whole.stats.linesShown, whole.stats.linesOmitted], [
      false,
      100,
      0,
    ]);
    ok(whole.output.includes("099".repeat(166) + "xx"));
    await mcp.callOk("terminal_release", { terminalId });
  },
);

withServer("a slow screen read holds up no read of another terminal", async (mcp) => {
  // Inserting 1000 lines at a time on a 1000x1000 screen: every render spends its whole budget.
  const { terminalId: heavy } = await mcp.callOk<Created>("terminal_create", {
    command: "python3",
    args: [
      "-c",
      "import sys, time\nsys.stdout.write('\\x1b[1000L' * 150000)\nsys.stdout.flush(); time.sleep(60)",
    ],
    cols: 1000,
    rows: 1000,
  });
  const { terminalId: quiet } = await mcp.callOk<Created>("terminal_create", { shell: "sh" });
  // All of it arrived (python3 may take a while to start on a busy machine).
  let arrived = 0;
  const all = await eventually(() => arrived >= 900_000, 30_000, async () => {
    const read = await mcp.callOk<Read>("terminal_read", { terminalId: heavy, mode: "tail" });
    arrived = read.stats.totalBytes;
  });
  ok(all, `${arrived} bytes arrived`);
  // Sent in this order over the one connection, so read by the server in this order.
  const order: string[] = [];
  const screen = mcp.callOk<Read>("terminal_read", { terminalId: heavy, mode: "screen" })
    .then(() => order.push("screen"));
  const tail = mcp.callOk<Read>("terminal_read", { terminalId: quiet, mode: "tail" })
    .then(() => order.push("tail"));
  await Promise.all([screen, tail]);
  // The screen read rendered in its own time; the tail read took its answer turn meanwhile.
  assertEquals(order, ["tail", "screen"]);
  for (const terminalId of [heavy, quiet]) await mcp.callOk("terminal_release", { terminalId });
});

withServer("resize reaches the program", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", {
    shell: "sh",
    cols: 80,
    rows: 24,
  });
  await mcp.callOk("terminal_resize", { terminalId, cols: 132, rows: 43 });
  await mcp.callOk("terminal_write", { terminalId, input: "stty size" });
  assertEquals(
    (await wait(mcp, { terminalId, pattern: "43 132", timeoutMs: 10_000, since: 0 })).condition,
    "pattern",
  );
  const listed = await mcp.callOk<{ terminals: { size: unknown }[] }>("terminal_list");
  assertEquals(listed.terminals[0].size, { cols: 132, rows: 43 });
});

withServer("64 terminals live at once; the 65th is refused", async (mcp) => {
  const ids: string[] = [];
  for (let i = 0; i < 64; i++) {
    ids.push((await mcp.callOk<Created>("terminal_create", { shell: "sh" })).terminalId);
  }
  const refused = await mcp.call("terminal_create", { shell: "sh" });
  ok(refused.isError);
  match(text(refused), /64 terminals are open, the most allowed/);
  const listed = await mcp.callOk<{ count: number }>("terminal_list");
  assertEquals(listed.count, 64);
  // Every one of them answers.
  await Promise.all(
    ids.map((terminalId, i) =>
      mcp.callOk("terminal_write", { terminalId, input: `echo alive-${i}` })
    ),
  );
  const answers = await Promise.all(
    ids.map((terminalId, i) =>
      // The answer is on a line of its own, or after the prompt when the shell echoed the
      // typed line before printing its prompt.
      wait(mcp, {
        terminalId,
        pattern: `(^|[#$] )alive-${i}$`,
        flags: "m",
        timeoutMs: 20_000,
        since: 0,
      })
    ),
  );
  // On failure, what each terminal that did not answer shows (load, or input lost?).
  const missing = await Promise.all(
    answers.flatMap((answer, i) => answer.condition === "pattern" ? [] : [i]).map(async (i) => ({
      i,
      answer: answers[i],
      shown: (await mcp.callOk<{ output: string }>("terminal_read", {
        terminalId: ids[i],
        mode: "tail",
        tailLines: 5,
        raw: true,
      })).output,
      stats: await mcp.callOk("terminal_stats", { terminalId: ids[i] }),
      listed: (await mcp.callOk<{ terminals: { terminalId: string; pid: number }[] }>(
        "terminal_list",
      )).terminals.find((terminal) => terminal.terminalId === ids[i]),
      // The shell's state as the kernel sees it (blocked reading the terminal, or not).
      kernel: await (async () => {
        const pid = (await mcp.callOk<{ terminals: { terminalId: string; pid: number }[] }>(
          "terminal_list",
        )).terminals.find((terminal) => terminal.terminalId === ids[i])?.pid;
        const read = (name: string) =>
          Deno.readTextFile(`/proc/${pid}/${name}`).catch((error) => String(error));
        return { stat: await read("stat"), wchan: await read("wchan") };
      })(),
    })),
  );
  ok(missing.length === 0, JSON.stringify(missing));
  await mcp.callOk("terminal_release", { terminalId: ids[0] });
  await mcp.callOk("terminal_create", { shell: "sh" });
});

withServer("idle terminals are released after WINTERM_TERMINAL_IDLE_SECONDS", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", { shell: "sh" });
  let count = 1;
  const gone = await eventually(() => count === 0, 10_000, async () => {
    count = (await mcp.callOk<{ count: number }>("terminal_list")).count;
  });
  ok(gone, "the idle terminal was not released");
  match(text(await mcp.call("terminal_read", { terminalId })), /no terminal/);
}, { WINTERM_TERMINAL_IDLE_SECONDS: "2" });

serverTest(
  "a terminal in line mode refuses a line it would cut short, and says why",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<Created>("terminal_create", {
      command: "sh",
      args: ["-c", "stty -echo; echo ready; wc -c"],
    });
    await wait(mcp, { terminalId, pattern: "ready", timeoutMs: 10_000, since: 0 });
    const refused = await mcp.call("terminal_write", { terminalId, input: "x".repeat(5000) });
    ok(refused.isError);
    match(text(refused), /^'input': the terminal is in line mode .* at most 4095 bytes of a line/);
    const written = await mcp.callOk<{ bytesWritten: number }>("terminal_write", {
      terminalId,
      input: "y".repeat(4095),
    });
    assertEquals(written.bytesWritten, 4096);
    await mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_d"] });
    const done = await wait(mcp, { terminalId, pattern: "4096", timeoutMs: 10_000 });
    assertEquals(done.condition, "pattern");
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !linux },
);

withServer(
  "bytesWritten counts the bytes the terminal took, in its encoding (GBK: 2 bytes a character)",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<Created>("terminal_create", {
      command: "sh",
      args: ["-c", "echo ready; head -c 5 | od -An -tx1"],
      encoding: "gbk",
    });
    await wait(mcp, { terminalId, pattern: "ready", timeoutMs: 10_000, since: 0 });
    // 你好 is c4e3 bac3 in GBK (6 bytes in UTF-8): with Enter, 5 bytes. Counted in UTF-8 (as
    // it was), the answer said 7.
    const written = await mcp.callOk<{ bytesWritten: number; message: string }>(
      "terminal_write",
      { terminalId, input: "你好" },
    );
    assertEquals([written.bytesWritten, written.message], [5, "wrote 5 bytes"]);
    const done = await wait(mcp, { terminalId, exit: true, timeoutMs: 10_000 });
    match(done.output, /c4 e3 ba c3 0a/);
    await mcp.callOk("terminal_release", { terminalId });
  },
);

withServer("bad terminal input is refused clearly", async (mcp) => {
  const { terminalId } = await mcp.callOk<Created>("terminal_create", { shell: "sh" });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["terminal_write", { terminalId }, /'input': give input, keys, or both/],
    [
      "terminal_write",
      { terminalId, keys: ["hyperspace"] },
      /'keys.0' must be one of "enter", "tab"/,
    ],
    [
      "terminal_wait",
      { terminalId, pattern: "(", timeoutMs: 100 },
      /'pattern': not a valid regular expression/,
    ],
    ["terminal_wait", { terminalId, timeoutMs: 100, flags: "g" }, /'flags' must be a string/],
    [
      "terminal_read",
      { terminalId, mode: "sideways" },
      /'mode' must be one of "full", "head", "tail", "head-tail", "screen"/,
    ],
    [
      "terminal_resize",
      { terminalId, cols: 0, rows: 10 },
      /'cols' must be an integer from 1 to 1000/,
    ],
    ["terminal_create", { cwd: "/no/such/dir" }, /'cwd':.*does not exist/],
    // Refused as a directory that is not there, unlike a NUL anywhere else.
    [
      "terminal_create",
      { cwd: "/tmp\u0000x" },
      /^'cwd': may not contain NUL \(the OS ends a path there\)$/,
    ],
    ["terminal_create", { command: "no-such-program-xyz", args: ["x"] }, /'command':.*not found/],
    [
      "terminal_create",
      { command: "ls", outputByteLimit: -1 },
      /'outputByteLimit' must be an integer from 0 to 1073741824 or null \(got -1\)/,
    ],
    ["terminal_create", { shell: "/no/such/shell" }, /'shell':.*not found/],
    ["terminal_create", { shell: "cmd" }, /'shell': no cmd shell found/],
    // A program with its arguments runs with no shell: a shell given was silently ignored.
    [
      "terminal_create",
      { command: "ls", args: ["-l"], shell: "bash" },
      /^'shell': shell cannot apply: command with args runs that program itself, with no shell; drop shell, or give command alone, as a command line that shell runs$/,
    ],
    // Arguments with no command were dropped, and an interactive shell opened.
    [
      "terminal_create",
      { args: ["-c", "echo injected; exit 7"] },
      /^'args': applies only with command \(the program that takes them\)$/,
    ],
    ["terminal_create", { env: [{ name: "A=B", value: "x" }] }, /env/],
    ["terminal_kill", { terminalId, signal: "SIGFOO" }, /'signal' must be one of "SIGHUP"/],
  ];
  for (const [tool, args, expected] of cases) {
    const result = await mcp.call(tool, args);
    ok(result.isError, `${tool} ${JSON.stringify(args)} was accepted`);
    match(text(result), expected);
  }
  assertEquals((await mcp.callOk<{ count: number }>("terminal_list")).count, 1);
});

Deno.test({
  name:
    "out of descriptors: a start is refused as the server's limit, naming ulimit -n, and the server answers on",
  ignore: !linux,
  async fn() {
    // It was refused naming 'shell' ("cannot open /dev/pts/171"), as though the request were
    // at fault. Each terminal holds one descriptor; the server itself about 30.
    const transport = new StdioClientTransport({
      command: "bash",
      args: [
        "-c",
        'ulimit -n 64 && exec "$@"',
        "bash",
        Deno.execPath(),
        "run",
        ...START_FLAGS,
        MAIN,
      ],
      env: { ...Deno.env.toObject(), WINTERM_LOG_LEVEL: "error", ...START_ENV },
      stderr: "inherit",
    });
    const client = new Client({ name: "winterm-tests", version: "1.0.0" });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) =>
      await client.callTool({ name, arguments: args }) as CallToolResult;
    try {
      let refused: CallToolResult | undefined;
      const opened: string[] = [];
      for (let i = 0; i < 64 && !refused; i++) {
        const created = await call("terminal_create", { command: "cat" });
        if (created.isError) refused = created;
        else opened.push((created.structuredContent as unknown as Created).terminalId);
      }
      ok(refused, "64 terminals started under a limit of 64 descriptors");
      match(text(refused), /^cannot start \S+: .*descriptor limit, ulimit -n.*\(EMFILE\)/);
      ok(opened.length > 10, `${opened.length} started`);
      await call("terminal_release", { terminalId: opened[0] });
      ok(!(await call("terminal_create", { command: "cat" })).isError);
    } finally {
      await client.close();
    }
  },
});
