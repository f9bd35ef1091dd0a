/**
 * `deno task bench`: measures winterm-mcp on this machine and writes docs/benchmarks.md.
 *
 * - PTY throughput of the platform layer and of the engine, against the machine's raw PTY path
 *   and node-pty (`@lydell/node-pty`) measured in the same run, in rounds of one run each in a
 *   balanced order (`script -qc CMD /dev/null > /dev/null`, the same producer); a ratio is the
 *   median of the rounds' own ratios;
 * - `get_version` latency while 64 terminals each print 100 lines a second, and while one and
 *   four commands flood their PTYs; a quiet caller's, while other clients read four screens
 *   being redrawn, and answers of 2 MiB of output edited in place;
 * - server memory after 1,000 commands of 1 MB each (bounded by the output budget);
 * - `run_command` of `echo` until completed, through the real server and the SDK client;
 * - `terminal_run` of `echo` in bash (shell integration), and how soon after a program's prompt
 *   a wait for input answers;
 * - server start until `initialize` is answered;
 * - server memory with 50 live terminals, and the time to shut down with them;
 * - `terminal_read` latency on a 100,000-line buffer, and memory with 50 idle shells;
 * - the REST API under 50 concurrent clients for a minute;
 * - REST latency on fresh connections while 1,000 idle connections are held open;
 * - process trees: one look at the process table, ending a command that left 20 escaped
 *   processes, and a new server ending what a SIGKILLed one left (Linux);
 * - a terminal's WebSocket stream: 40 MB through it, and the time from a REST write to its
 *   answer on the stream.
 * - the agent-task suite (tests/helpers/agent_tasks.ts): calls and bytes an agent reads per
 *   task, against each task's budget, in a table of its own.
 * - what the tool list costs a client (tests/helpers/tool_list.ts): the bytes of `tools/list`
 *   shown to a model and in all, against issue 39's goals, and per tool in a table of its own.
 * - HTTP under a pipelining flood without the token (connections that pipeline requests for
 *   the 614 KB script and read nothing): RSS during and after, the token-bearer's latency;
 *   270 SDK clients keeping their event streams: who is answered (Linux).
 * - a sandboxed start against an unconfined one (Linux), and the launcher design not taken.
 *
 * - this machine's pace, first: what a fresh page of memory, a call on Deno's blocking pool and
 *   a program's start cost here, which the absolute goals (start-up, echo) rest on.
 *
 * Every figure that has one is written beside its reference, measured in the same run (runs
 * interleaved where they repeat), and the ratio of the two, so that a regression shows as a
 * ratio rather than as a guess about a noisy machine. Medians of repeated runs. Linux/macOS
 * only (ConPTY's figures: scripts/bench_windows.ts in the Windows test bed).
 *
 * `--only NAME,...` runs some of them (machine, throughput, echo, shell, startup, memory, terminals, http,
 * idle-crowd, loaded, flooded, screen-reads, large-answers, commands, trees, conpty, agent,
 * tool-list, streams, pipelined, sdk-crowd, sandbox) and `--quick` shortens each;
 * either prints the table without writing docs/benchmarks.md (a smoke run).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import nodePty from "@lydell/node-pty";
import { type SandboxSpec, spawn } from "../src/pty/mod.ts";
import { CommandService } from "../src/engine/command/mod.ts";
import { Agent, AGENT_TASKS } from "../tests/helpers/agent_tasks.ts";
import { measureToolList, TOOL_LIST_GOALS } from "../tests/helpers/tool_list.ts";
import {
  Client,
  connect,
  type Connection,
  MAIN,
  START_ENV,
  START_FLAGS,
  text,
} from "../tests/helpers/mcp.ts";
import { rawRequest, request, startHttpServer } from "../tests/helpers/http.ts";
import { eventually, processesWith, tempDir, uniqueMarker } from "../tests/helpers/process.ts";
import { C, cString, cStringArray, libc, OPAQUE_BYTES } from "../src/pty/posix/libc.ts";
import { processTable } from "../src/pty/posix/process_table.ts";
import { signalTrees } from "../src/pty/posix/tree.ts";
import { openStream } from "../tests/helpers/stream.ts";
import { bundle } from "./compile.ts";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { LoadReport, LoadRequest } from "./bench_load.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const { values: flags } = parseArgs({
  args: Deno.args,
  options: { only: { type: "string" }, quick: { type: "boolean" } },
});
const QUICK = flags.quick ?? false;
const ONLY = flags.only?.split(",").map((name) => name.trim());
const MB = 1_000_000;
const PAYLOAD_MB = 40;
/** 40 MB of 64-byte text lines: what a build log or `cat` of a big file looks like. */
const PRODUCER = `yes 'the quick brown fox jumps over the lazy dog 0123456789 abcd' | head -c ${
  PAYLOAD_MB * MB
}`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function repeat(times: number, fn: () => Promise<unknown>): Promise<number[]> {
  const results: number[] = [];
  for (let i = 0; i < times; i++) results.push(await timed(fn));
  return results;
}

async function rawPty(): Promise<number> {
  const status = await new Deno.Command("script", {
    args: ["-qc", PRODUCER, "/dev/null"],
    stdout: "null",
    stderr: "null",
    stdin: "null",
  }).output();
  if (!status.success) throw new Error("script(1) failed");
  return 0;
}

async function ourPty(): Promise<number> {
  const child = await spawn({
    file: "sh",
    args: ["-c", PRODUCER],
    cwd: ROOT,
    env: Deno.env.toObject(),
  });
  let bytes = 0;
  child.onData((data) => bytes += data.length);
  await child.exited;
  return bytes;
}

/** node-pty, the PTY library most Node programs use, moving the same bytes. */
async function nodePtyRun(): Promise<number> {
  let bytes = 0;
  await new Promise<void>((resolve) => {
    const child = nodePty.spawn("sh", ["-c", PRODUCER], {
      cols: 160,
      rows: 40,
      cwd: ROOT,
      env: Deno.env.toObject(),
    });
    child.onData((data: string) => bytes += data.length);
    child.onExit(() => resolve());
  });
  return bytes;
}

async function engine(service: CommandService): Promise<number> {
  const { command } = await service.run({
    command: PRODUCER,
    shellType: "sh",
  });
  await command.done;
  return command.read({ maxBytes: 1 }).stdout.length;
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]);
}

/**
 * The part of a process's RSS that is Deno's own cache databases (`v8_code_cache_v2` and the
 * like, SQLite files that `deno run` maps from its cache folder): it depends on the state of
 * the machine's cache, not on the program. Fragmented by months of edits, the code cache made
 * the same idle server 1 MiB larger from one checkout than from a fresh copy of it.
 */
function cacheKiB(pid: number): number {
  let kib = 0, inCache = false;
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inCache = /_cache_v\d+(-shm)?$/.test(line);
    else if (inCache && line.startsWith("Rss:")) kib += Number(line.split(/\s+/)[1]);
  }
  return kib;
}

interface Row {
  what: string;
  figure: string;
  /** What the figure is compared with, measured in the same run. */
  reference?: string;
  /** The figure over its reference (or as the note says). */
  ratio?: string;
  note?: string;
}

/** `a / b` with two decimals, as the ratio column shows it. */
function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}x`;
}

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The producer through run_command with wait_ms: one call, until the answer is back. */
async function throughMcp(mcp: Connection): Promise<number> {
  const answer = await mcp.callOk<{ status: string; stdout: string }>("run_command", {
    command: PRODUCER,
    shell_type: "sh",
    wait_ms: 120_000,
  });
  if (answer.status !== "completed") throw new Error(`run_command: ${answer.status}`);
  return answer.stdout.length;
}

/**
 * Orders of `n` contenders in which each one comes right after each other one equally often
 * (Williams' balanced Latin square: `n` orders for an even `n`, `2n` for an odd one).
 *
 * @example
 * ```ts ignore
 * balancedOrders(3); // [[0,1,2],[1,2,0],[2,0,1],[2,1,0],[0,2,1],[1,0,2]]
 * ```
 */
function balancedOrders(n: number): number[][] {
  const first = [0];
  for (let low = 1, high = n - 1; first.length < n;) {
    first.push(first.length % 2 ? low++ : high--);
  }
  const orders = first.map((_, shift) => first.map((i) => (i + shift) % n));
  return n % 2 ? [...orders, ...orders.map((order) => [...order].reverse())] : orders;
}

/** The per-round ratios `a[i] / b[i]` (runs of one round are side by side). */
function roundRatios(a: number[], b: number[]): number[] {
  return a.map((value, i) => value / b[i]);
}

async function throughput(rows: Row[]): Promise<void> {
  // The runs spread widely on a 2-core machine (the producer, the kernel's PTY work and the
  // reader share the cores), and the machine's pace drifts from one minute to the next: each
  // round runs every contender once, and a ratio is the median of the rounds' own ratios.
  // The rounds' orders follow a balanced Latin square, so that each contender runs right after
  // each other one equally often (a rotation kept the same neighbours: `run_command` always
  // came right after `script`, and paid for whatever that left behind).
  // Each reader's CPU time, which spreads much less, stands beside its wall time.
  const service = new CommandService({ maxBufferSize: 64 * 1024 * 1024 });
  const mcp = await connect();
  const wall = { raw: [] as number[], mcp: [] as number[], node: [] as number[] };
  const [layer, withEngine] = [[] as number[], [] as number[]];
  const cpu = {
    mcp: [] as number[],
    node: [] as number[],
    layer: [] as number[],
    engine: [] as number[],
  };
  /** Wall time of `run`, and the CPU time `pid` spent meanwhile into `cpuTimes`. */
  const measured = async (run: () => Promise<unknown>, pid: number, cpuTimes: number[]) => {
    const before = cpuMs(pid);
    const ms = await timed(run);
    cpuTimes.push(cpuMs(pid) - before);
    return ms;
  };
  const contenders = [
    async () => wall.raw.push(await timed(rawPty)),
    async () => wall.mcp.push(await measured(() => throughMcp(mcp), mcp.pid, cpu.mcp)),
    async () => wall.node.push(await measured(nodePtyRun, Deno.pid, cpu.node)),
    async () => layer.push(await measured(ourPty, Deno.pid, cpu.layer)),
    async () => withEngine.push(await measured(() => engine(service), Deno.pid, cpu.engine)),
  ];
  const orders = balancedOrders(contenders.length);
  const runs = QUICK ? 1 : 3 * orders.length;
  try {
    for (let run = 0; run < runs; run++) {
      for (const i of orders[run % orders.length]) await contenders[i]();
    }
  } finally {
    await mcp.close();
  }
  const rate = (ms: number) => `${(PAYLOAD_MB / (ms / 1000)).toFixed(1)} MB/s`;
  const perMb = (times: number[]) => `${(median(times) / PAYLOAD_MB).toFixed(1)} ms of CPU a MB`;
  const shown = (ms: number, times?: number[]) =>
    `${ms.toFixed(0)} ms (${rate(ms)}${times ? `; ${perMb(times)}` : ""})`;
  const [rawMs, mcpMs, nodeMs] = [median(wall.raw), median(wall.mcp), median(wall.node)];
  /**
   * The ratio of the rounds (see above), the middle half of the rounds' ratios (how far one
   * round is from telling), and the ratio of the medians.
   */
  const paired = (a: number[], b: number[]) => {
    const rounds = roundRatios(a, b);
    const [low, high] = [percentile(rounds, 25), percentile(rounds, 75)];
    return `${median(rounds).toFixed(2)}x (rounds' middle half ${low.toFixed(2)}-${
      high.toFixed(2)
    }x; of the medians: ${ratio(median(a), median(b))})`;
  };
  rows.push(
    {
      what: `${PAYLOAD_MB} MB through a PTY by \`run_command\` with \`wait_ms\` (one call, SDK ` +
        "client over stdio, until the answer is back; the server's CPU)",
      figure: shown(mcpMs, cpu.mcp),
      reference: `node-pty 1.1 (\`@lydell/node-pty\`), spawn to exit: ${shown(nodeMs, cpu.node)}`,
      ratio: paired(wall.mcp, wall.node),
      note: "time over node-pty's, the median of the rounds' ratios; goal: at most 1.00x",
    },
    {
      what: `${PAYLOAD_MB} MB by \`run_command\` (the same runs), as a share of the raw PTY path`,
      figure: rate(mcpMs),
      reference: `\`script -qc CMD /dev/null > /dev/null\`: ${shown(rawMs)}`,
      ratio: paired(wall.raw, wall.mcp),
      note: "rate over raw's, the median of the rounds' ratios; goal: at least 0.95x",
    },
    {
      what: "winterm PTY layer (src/pty) in-process: spawn to exit, every byte delivered",
      figure: shown(median(layer), cpu.layer),
      reference: `raw PTY path: ${shown(rawMs)}`,
      ratio: paired(wall.raw, layer),
      note: "rate over raw's",
    },
    {
      what:
        "winterm engine in-process (PTY layer + output buffer, run_command's path and its 10 MiB kept)",
      figure: shown(median(withEngine), cpu.engine),
      reference: `raw PTY path: ${shown(rawMs)}`,
      ratio: paired(wall.raw, withEngine),
      note: "rate over raw's",
    },
  );
}

/** Resident memory of a process, in MiB. */
function rssMiB(pid: number): number {
  return rssKiB(pid) / 1024;
}

async function loadedLatency(rows: Row[]): Promise<void> {
  const terminals = 64, durationMs = QUICK ? 5_000 : 30_000;
  // 100 lines a second each, on a schedule (not drifting with the time a print takes).
  const printer = [
    "import time",
    "start, i = time.monotonic(), 0",
    "while True:",
    "    i += 1",
    "    print(f'line {i}: steady output of a busy terminal, as a dev server or a build', flush=True)",
    "    time.sleep(max(0, start + i / 100 - time.monotonic()))",
  ].join("\n");
  const mcp = await connect();
  const calls = async (ms: number) => {
    const times: number[] = [];
    const started = performance.now();
    while (performance.now() - started < ms) {
      times.push(await timed(() => mcp.callOk("get_version")));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return times;
  };
  try {
    await calls(500); // the tools load with the first call
    const quiet = await calls(QUICK ? 2_000 : 10_000);
    const ids: string[] = [];
    for (let i = 0; i < terminals; i++) {
      ids.push(
        (await mcp.callOk<{ terminalId: string }>("terminal_create", {
          command: "python3",
          args: ["-c", printer],
        })).terminalId,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const before = await outputSoFar(mcp, ids);
    const cpuBefore = cpuMs(mcp.pid);
    const started = performance.now();
    const times = await calls(durationMs);
    const cpu = cpuMs(mcp.pid) - cpuBefore;
    const seconds = (performance.now() - started) / 1000;
    const after = await outputSoFar(mcp, ids);
    const linesPerSecond = (after.lines - before.lines) / terminals / seconds;
    const mb = (after.bytes - before.bytes) / MB;
    const p99 = (values: number[]) => percentile(values, 99);
    rows.push({
      what: `\`get_version\` while ${terminals} terminals each print 100 lines a second ` +
        `(SDK client over stdio, ${durationMs / 1000} s)`,
      figure: `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${p99(times).toFixed(1)} ms ` +
        `(${times.length} calls; ${linesPerSecond.toFixed(0)} lines/s a terminal seen)`,
      reference: `the same server with no terminal: p50 ${percentile(quiet, 50).toFixed(1)} ms, ` +
        `p99 ${p99(quiet).toFixed(1)} ms`,
      ratio: `${ratio(p99(times), p99(quiet))} p99`,
      note: "goal: p99 at most 50 ms",
    }, {
      what: `the server's CPU time for that output (${(mb / seconds).toFixed(2)} MB/s from ` +
        `${terminals} terminals, ${seconds.toFixed(0)} s)`,
      figure: `${(cpu / mb).toFixed(0)} ms of CPU per MB`,
      reference: `${(cpu / seconds / 10).toFixed(1)}% of one core`,
      note: "user + system time of the server process",
    });
  } finally {
    await mcp.close();
  }
}

/** `get_version` while commands flood their PTYs: how long the event loop waits for the reader. */
async function floodedLatency(rows: Row[]): Promise<void> {
  const mcp = await connect();
  const calls = async (count: number) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await timed(() => mcp.callOk("get_version")));
    return times;
  };
  const shown = (times: number[]) =>
    `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`;
  try {
    await calls(50); // the tools load with the first call
    const count = QUICK ? 100 : 500;
    const quiet = await calls(count);
    for (const floods of [1, 4]) {
      const tokens: string[] = [];
      for (let i = 0; i < floods; i++) {
        tokens.push(
          (await mcp.callOk<{ token: string }>("run_command", {
            command: PRODUCER.replace(`${PAYLOAD_MB * MB}`, "100000000000"),
            shell_type: "sh",
            timeout: 600,
          })).token,
        );
      }
      const times = await calls(count);
      for (const token of tokens) await mcp.callOk("terminate_command", { token });
      rows.push({
        what: `\`get_version\` while ${floods} command${floods > 1 ? "s" : ""} flood${
          floods > 1 ? "" : "s"
        } ${
          floods > 1 ? "their PTYs" : "its PTY"
        } (\`yes\`; SDK client over stdio, ${count} calls)`,
        figure: shown(times),
        reference: `the same server, quiet: ${shown(quiet)}`,
        ratio: `${ratio(percentile(times, 99), percentile(quiet, 99))} p99`,
        note: "a lone flood is read on the thread pool; several share the reactor's turns of 2 ms",
      });
    }
  } finally {
    await mcp.close();
  }
}

/** Bytes a second each terminal redraws its screen with, in screenReadLatency. */
const REDRAW_RATE = 500_000;

/**
 * A Python program that redraws an 80x24 screen at REDRAW_RATE bytes a second (on a schedule,
 * in blocks of 64 KiB made once, so that it costs little CPU): cursor moves, colours, erasures,
 * deleted and inserted characters, now and then inserted and deleted lines.
 */
const SCREEN_PRINTER = [
  "import random, sys, time",
  "out, r = sys.stdout.buffer, random.Random(7)",
  "parts = []",
  "while sum(map(len, parts)) < 65536:",
  "    y, x = r.randint(1, 24), r.randint(1, 70)",
  "    parts.append(f'\\x1b[{y};{x}H\\x1b[3{r.randint(0, 7)}mcell {r.randint(0, 99999)}" +
  "\\x1b[0m\\x1b[K\\x1b[{r.randint(1, 5)}P\\x1b[{r.randint(1, 5)}@'.encode())",
  "    if r.random() < 0.05: parts.append(f'\\x1b[{y};1H\\x1b[2L\\x1b[M'.encode())",
  "block = b''.join(parts)",
  "start, sent = time.monotonic(), 0",
  "while True:",
  "    out.write(block)",
  "    out.flush()",
  "    sent += len(block)",
  `    time.sleep(max(0, start + sent / ${REDRAW_RATE} - time.monotonic()))`,
].join("\n");

/**
 * A Python program that prints 10 MB of lines edited in place as progress displays and line
 * editors do (carriage returns, erasures, moves back and forth, deleted and inserted
 * characters), about 40% of it left once cleaned: 4 MB of text, twice what an answer holds.
 */
const EDITED_LINES = [
  "import sys",
  "out, n, total = sys.stdout.buffer, 0, 0",
  "while total < 10_000_000:",
  "    parts = []",
  "    for _ in range(1000):",
  "        n += 1",
  "        parts.append(f'\\x1b[1mitem {n}\\x1b[0m: progress 10%\\r\\x1b[Kitem {n}: progress 55%" +
  "\\x1b[3D99%\\x1b[2P\\x1b[4@ ok\\x1b[K done, next one\\x1b[12D\\x1b[1Ptail of the line\\n')",
  "    data = ''.join(parts).encode()",
  "    out.write(data)",
  "    total += len(data)",
  "out.flush()",
].join("\n");

/** An MCP client over Streamable HTTP to `server` (main.ts --http). */
async function httpMcpClient(server: { url: string; token: string }): Promise<Client> {
  const client = new Client({ name: "winterm-bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url + "/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  return client;
}

/**
 * A quiet caller's `get_version` latency (a call every 20 ms), first with nothing else going on
 * and then while `loops` are made without pause by other SDK clients (in a Worker, see
 * scripts/bench_load.ts), on the same HTTP server; with what the load did.
 */
async function quietCallerUnderLoad(
  server: { url: string; token: string },
  loops: LoadRequest["loops"],
): Promise<{ quiet: number[]; loaded: number[]; load: LoadReport; seconds: number }> {
  const quiet = await httpMcpClient(server);
  const calls = async (ms: number) => {
    const times: number[] = [];
    const started = performance.now();
    while (performance.now() - started < ms) {
      times.push(await timed(() => quiet.callTool({ name: "get_version", arguments: {} })));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return times;
  };
  const worker = new Worker(new URL("./bench_load.ts", import.meta.url), { type: "module" });
  try {
    await calls(500); // the tools load with the first call
    const quietTimes = await calls(QUICK ? 2_000 : 10_000);
    const messages: unknown[] = [];
    let arrived = () => {};
    worker.onmessage = ({ data }) => {
      messages.push(data);
      arrived();
    };
    const next = async () => {
      while (messages.length === 0) await new Promise<void>((resolve) => arrived = resolve);
      return messages.shift();
    };
    worker.postMessage({ url: server.url, token: server.token, loops } satisfies LoadRequest);
    await next(); // "ready"
    await new Promise((resolve) => setTimeout(resolve, 1000)); // under way
    const started = performance.now();
    const loaded = await calls(QUICK ? 5_000 : 30_000);
    const seconds = (performance.now() - started) / 1000;
    worker.postMessage("stop");
    const load = await next() as LoadReport;
    if (load.failure) throw new Error(`the load failed: ${load.failure}`);
    return { quiet: quietTimes, loaded, load, seconds };
  } finally {
    worker.terminate();
    await quiet.close();
  }
}

/** How a quiet caller's latency under a load is shown, beside its own quiet figures. */
function quietCallerRow(
  what: string,
  { quiet, loaded }: { quiet: number[]; loaded: number[] },
  note: string,
): Row {
  const shown = (times: number[]) =>
    `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`;
  return {
    what,
    figure: `${shown(loaded)} (${loaded.length} calls)`,
    reference: `the same caller before the load: ${shown(quiet)}`,
    ratio: `${ratio(percentile(loaded, 99), percentile(quiet, 50))} p99/quiet p50`,
    note,
  };
}

/**
 * `get_version` of a quiet caller while 4 terminals (80x24) redraw their screens (REDRAW_RATE
 * bytes a second each) and other clients read those screens without pause (terminal_read, mode
 * screen): how long the screen emulator holds the event loop.
 */
async function screenReadLatency(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  const mcp = await httpMcpClient(server);
  try {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await mcp.callTool({
        name: "terminal_create",
        arguments: { command: "python3", args: ["-c", SCREEN_PRINTER], cols: 80, rows: 24 },
      });
      ids.push((created.structuredContent as { terminalId: string }).terminalId);
    }
    const loops = ids.map((terminalId) => ({
      name: "terminal_read",
      arguments: { terminalId, mode: "screen" },
    }));
    const measured = await quietCallerUnderLoad(server, loops);
    const reads = measured.load.calls.reduce((a, b) => a + b, 0);
    rows.push(quietCallerRow(
      `\`get_version\` while 4 terminals (80x24) redraw their screens at ${REDRAW_RATE / 1000} ` +
        "KB/s each and 4 other clients read the screens without pause (SDK clients over HTTP)",
      measured,
      `goal: p99 at most 50 ms; ${(reads / measured.seconds).toFixed(1)} screen reads/s`,
    ));
  } finally {
    await mcp.close();
    await server.stop();
  }
}

/**
 * `get_version` of a quiet caller while other clients read answers of 2 MiB out of 10 MB of
 * output edited in place (query_command_status and terminal_read with the largest max_bytes):
 * how long building and sending an answer holds the event loop.
 */
async function largeAnswerLatency(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  const mcp = await httpMcpClient(server);
  const maxBytes = 2 * 1024 * 1024;
  try {
    const run = await mcp.callTool({
      name: "run_command",
      arguments: {
        command: "python3",
        shell_type: "executable",
        args: ["-c", EDITED_LINES],
        wait_ms: 120_000,
        timeout: 600,
      },
    });
    if (run.isError) throw new Error(`the producer: ${JSON.stringify(run.content)}`);
    const { token, status } = run.structuredContent as { token: string; status: string };
    if (status !== "completed") throw new Error(`the producer: ${status}`);
    const created = await mcp.callTool({
      name: "terminal_create",
      arguments: { command: "python3", args: ["-c", EDITED_LINES] },
    });
    const { terminalId } = created.structuredContent as { terminalId: string };
    await mcp.callTool(
      {
        name: "terminal_wait",
        arguments: { terminalId, exit: true, timeoutMs: 120_000 },
      },
      undefined,
      { timeout: 130_000 },
    );
    const query = { name: "query_command_status", arguments: { token, max_bytes: maxBytes } };
    const read = { name: "terminal_read", arguments: { terminalId, maxBytes } };
    const measured = await quietCallerUnderLoad(server, [query, read, query, read]);
    const answers = measured.load.calls.reduce((a, b) => a + b, 0);
    rows.push(quietCallerRow(
      "`get_version` while 4 other clients read answers of 2 MiB out of 10 MB of output " +
        "edited in place (query_command_status, terminal_read; SDK clients over HTTP)",
      measured,
      `goal: p99 at most 50 ms; ${(answers / measured.seconds).toFixed(1)} answers/s`,
    ));
  } finally {
    await mcp.close();
    await server.stop();
  }
}

async function outputSoFar(
  mcp: Connection,
  ids: string[],
): Promise<{ lines: number; bytes: number }> {
  let lines = 0, bytes = 0;
  for (const terminalId of ids) {
    const stats = await mcp.callOk<{ totalLines: number; totalBytes: number }>(
      "terminal_stats",
      { terminalId },
    );
    lines += stats.totalLines;
    bytes += stats.totalBytes;
  }
  return { lines, bytes };
}

async function commandMemory(rows: Row[]): Promise<void> {
  const commands = QUICK ? 300 : 1000, budgetMiB = 256, batch = 8;
  const mcp = await connect();
  try {
    const idle = rssMiB(mcp.pid);
    const tokens: string[] = [];
    for (let i = 0; i < commands; i += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, commands - i) }, async () => {
        const { token } = await mcp.callOk<{ token: string }>("run_command", {
          command: "head -c 1000000 /dev/zero | tr '\\0' x",
          use_pty: false,
        });
        await mcp.callOk("query_command_status", { token, wait_ms: 60_000, max_bytes: 1 });
        tokens.push(token);
      }));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = rssMiB(mcp.pid);
    let kept = 0;
    for (const token of tokens) {
      const answer = await mcp.callOk<{ status: string }>("query_command_status", {
        token,
        max_bytes: 1,
      });
      if (answer.status !== "not_found") kept++;
    }
    rows.push({
      what: `server memory (RSS) after ${commands} commands of 1 MB of output each ` +
        `(WINTERM_OUTPUT_BUDGET_BYTES ${budgetMiB} MiB)`,
      figure: `${after.toFixed(1)} MiB; ${kept} commands still queryable`,
      reference: `the same server idle (${idle.toFixed(1)} MiB) + the budget (${budgetMiB} MiB)`,
      ratio: ratio(after, idle + budgetMiB),
      note: "bounded by the output budget, not by the number of commands (at most 1.00x " +
        "plus garbage not yet collected)",
    });
  } finally {
    await mcp.close();
  }
  await lineFeedFloods(rows);
}

/**
 * Commands that print more than they keep, in the costliest shape for a line index: bare line
 * feeds (two bytes a line through a PTY). What stays is what their buffers keep.
 */
async function lineFeedFloods(rows: Row[]): Promise<void> {
  const commands = QUICK ? 4 : 12, keptMiB = 10;
  const mcp = await connect();
  try {
    await mcp.callOk("run_command", { command: "true", wait_ms: 10_000 });
    const before = rssMiB(mcp.pid);
    for (let i = 0; i < commands; i++) {
      const answer = await mcp.callOk<{ status: string; stdout_dropped_bytes: number }>(
        "run_command",
        { command: "yes '' | head -c 20000000", wait_ms: 60_000, max_bytes: 1 },
      );
      if (answer.status !== "completed") throw new Error(`line feeds: ${answer.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = rssMiB(mcp.pid);
    rows.push({
      what: `server memory (RSS) after ${commands} commands of 20 MB of bare line feeds each ` +
        `(40 MB through the PTY; ${keptMiB} MiB kept each)`,
      figure: `${after.toFixed(1)} MiB`,
      reference: `the same server before them (${before.toFixed(1)} MiB) + what they keep ` +
        `(${commands * keptMiB} MiB)`,
      ratio: ratio(after, before + commands * keptMiB),
      note: "the line index and dropped output count for little (with a start kept per line and " +
        "dropped blocks held, before 2026-11-22: 1,744 MiB, 9.68x)",
    });
  } finally {
    await mcp.close();
  }
}

/**
 * What this machine charges for the things every start, spawn and flood does, measured first so
 * that figures from different days (or virtual machines) can be told apart from regressions: a
 * run whose start-up and echo figures moved with these moved with the machine.
 */
async function machinePace(rows: Row[]): Promise<void> {
  // A fresh page's first touch: large buffers come straight from mmap, untouched.
  const PAGE = 4096, BYTES = 64 * 1024 * 1024, faults: number[] = [];
  for (let run = 0; run < 5; run++) {
    const buffer = new Uint8Array(BYTES);
    const started = performance.now();
    for (let at = 0; at < BYTES; at += PAGE) buffer[at] = 1;
    faults.push((performance.now() - started) * 1000 / (BYTES / PAGE));
  }
  rows.push({
    what: "this machine: the first touch of a fresh page of memory (64 MiB, 5 times)",
    figure: `median ${median(faults).toFixed(2)} µs a 4 KiB page`,
    note: "paid by every start (a server's tens of MiB), every spawn and every fresh buffer",
  });
  // A trip through Deno's blocking pool: a thread woken, and the answer handed back.
  const lib = libc(), trips: number[] = [];
  for (let i = 0; i < 520; i++) {
    const started = performance.now();
    await lib.poll(new Uint8Array(8), 0n, 0);
    if (i >= 20) trips.push((performance.now() - started) * 1000);
  }
  rows.push({
    what: "this machine: a call on Deno's blocking pool (`poll` of nothing, declared nonblocking)",
    figure: `p50 ${percentile(trips, 50).toFixed(0)} µs, p95 ${
      percentile(trips, 95).toFixed(0)
    } µs`,
    note: "what each look of the reactor and each pool read pays on top of its work",
  });
}

/** The program `run_command` starts for `echo hi` (shell_type executable): PATH's echo. */
const ECHO_PATH = ["/usr/bin/echo", "/bin/echo"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}) ?? "/bin/echo";
const ECHO = {
  path: cString(ECHO_PATH),
  argv: cStringArray(["echo", "hi"]),
  devNull: cString("/dev/null"),
};

/**
 * The machine's floor for starting the program the server starts: `posix_spawn` of echo (its
 * output to /dev/null) and a blocking `waitpid`, nothing else. /bin/true, the floor before,
 * starts 1-2 ms sooner here than echo, which sets up its locale.
 */
function plainStart(): Promise<void> {
  const lib = libc(), pid = new Int32Array(1), env = cStringArray([]);
  const actions = new Uint8Array(OPAQUE_BYTES);
  lib.posix_spawn_file_actions_init(actions);
  try {
    lib.posix_spawn_file_actions_addopen(actions, 1, ECHO.devNull, C.O_RDWR, 0);
    const failed = lib.posix_spawn(
      new Uint8Array(pid.buffer),
      ECHO.path,
      actions,
      null,
      ECHO.argv.array,
      env.array,
    );
    if (failed !== 0 || lib.waitpid(pid[0], new Uint8Array(4), 0) !== pid[0]) {
      throw new Error(`posix_spawn of ${ECHO_PATH} failed`);
    }
  } finally {
    lib.posix_spawn_file_actions_destroy(actions);
  }
  return Promise.resolve();
}

/** node-pty starting `echo hi` on a PTY until its exit is known (with the output). */
function nodePtyEcho(): Promise<void> {
  return new Promise((resolve) => {
    const child = nodePty.spawn("echo", ["hi"], { cols: 80, rows: 24, cwd: ROOT });
    child.onExit(() => resolve());
  });
}

async function echoLatency(rows: Row[]): Promise<void> {
  const runs = QUICK ? 50 : 300;
  const mcp = await connect();
  try {
    const once = async () => {
      const done = await mcp.callOk<{ status: string; stdout: string }>("run_command", {
        command: "echo hi",
        shell_type: "executable",
        wait_ms: 10_000,
      });
      if (done.status !== "completed" || done.stdout.trim() !== "hi") {
        throw new Error(`echo did not complete: ${JSON.stringify(done)}`);
      }
    };
    const ours: number[] = [], theirs: number[] = [], plain: number[] = [];
    for (let i = 0; i < 10; i++) await Promise.all([once(), nodePtyEcho(), plainStart()]); // warm-up
    for (let i = 0; i < runs; i++) {
      ours.push(await timed(once));
      theirs.push(await timed(nodePtyEcho));
      plain.push(await timed(plainStart));
    }
    const figure = (times: number[]) =>
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`;
    rows.push({
      what: "`run_command` `echo hi` with `wait_ms` until its answer (completed, exit code, " +
        `output) is back: one call, SDK client over stdio, ${runs} runs`,
      figure: figure(ours),
      reference: `node-pty in-process, spawn of \`echo hi\` to exit: ${figure(theirs)}`,
      ratio: `${ratio(percentile(ours, 50), percentile(theirs, 50))} p50, ${
        ratio(percentile(ours, 95), percentile(theirs, 95))
      } p95`,
      note: "goal: p50 at most 5 ms, p95 at most 15 ms",
    }, {
      what: "the same `run_command` answers, against the machine's floor for starting a program",
      figure: figure(ours),
      reference: `\`posix_spawn\` of ${ECHO_PATH} hi and a blocking \`waitpid\` (no PTY, ` +
        `no server, no event loop): ${figure(plain)}`,
      ratio: `${ratio(percentile(ours, 50), percentile(plain, 50))} p50 (+${
        (percentile(ours, 50) - percentile(plain, 50)).toFixed(1)
      } ms)`,
      note: "the server's share: a PTY, the tree's bookkeeping, the call and its answer",
    });
  } finally {
    await mcp.close();
  }
}

/**
 * Deno's floor for a stdio server: a script that imports nothing and answers `initialize` (and
 * nothing else) as soon as its line arrives.
 */
const FLOOR_SERVER = `const decoder = new TextDecoder(), buffer = new Uint8Array(65536);
let text = "";
for (let n; (n = await Deno.stdin.read(buffer)) !== null;) {
  text += decoder.decode(buffer.subarray(0, n));
  for (let end; (end = text.indexOf("\\n")) >= 0; text = text.slice(end + 1)) {
    const request = JSON.parse(text.slice(0, end));
    if (request.method !== "initialize") continue;
    const result = { protocolVersion: request.params.protocolVersion, capabilities: {},
      serverInfo: { name: "floor", version: "0" } };
    await Deno.stdout.write(new TextEncoder().encode(
      JSON.stringify({ jsonrpc: "2.0", id: request.id, result }) + "\\n"));
  }
}
`;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "bench", version: "1" },
  },
};

/**
 * Starts a stdio server and times, from the spawn, its answer to `initialize`, and (if
 * `listTools`) then its answer to `tools/list`, sent with `notifications/initialized` the moment
 * `initialize` is answered, as clients do. Raw JSON-RPC lines, so no client library is timed.
 * Every contender, the floor too, runs in the environment `deno task start` gives the server:
 * Deno's update check off. On this machine, offline, Deno would otherwise try it at every start
 * (a connected one does once a day), 2 MiB more of every idle figure.
 */
async function answerTimes(
  command: string,
  args: string[],
  listTools: boolean,
  settleMs = 0,
): Promise<{ initialize: number; tools?: number; rssKiB: number; cacheKiB: number }> {
  const started = performance.now();
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { WINTERM_LOG_LEVEL: "warn", ...START_ENV },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  await send(INITIALIZE);
  const times: number[] = [];
  let text = "";
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  while (times.length < (listTools ? 2 : 1)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${command} ${args.join(" ")} ended before answering`);
    text += decoder.decode(value);
    for (let end; (end = text.indexOf("\n")) >= 0; text = text.slice(end + 1)) {
      times.push(performance.now() - started);
      if (times.length === 1 && listTools) {
        await send({ jsonrpc: "2.0", method: "notifications/initialized" });
        await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      }
    }
  }
  if (settleMs) await new Promise((resolve) => setTimeout(resolve, settleMs));
  // `deno task` runs the server as its child: the server's memory is that of the newest deno.
  const server = [child.pid, ...childrenOf(child.pid)]
    .map((pid) => ({ pid, kib: rssKiB(pid) }))
    .reduce((a, b) => b.kib > a.kib ? b : a);
  const cache = cacheKiB(server.pid);
  reader.releaseLock();
  await writer.close();
  await child.status;
  return { initialize: times[0], tools: times[1], rssKiB: server.kib, cacheKiB: cache };
}

function childrenOf(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Shell integration: `terminal_run` of `echo hi` in bash (write to the shell's own end mark,
 * output read), and how long after a program's prompt shows `terminal_wait` with `input`
 * answers (bash's `read -p`; the server looks every 50 ms and soon after output).
 */
async function shellIntegration(rows: Row[]): Promise<void> {
  const home = tempDir("winterm-bench-home-");
  const mcp = await connect();
  try {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: "bash",
      env: { HOME: home },
    });
    const run = () => mcp.callOk("terminal_run", { terminalId, command: "echo hi" });
    await repeat(5, run);
    const times = await repeat(QUICK ? 10 : 50, run);
    rows.push({
      what: "`terminal_run` `echo hi` in bash with shell integration (SDK client over stdio)",
      figure: `median ${median(times).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
    });
    const delays: number[] = [];
    for (let i = 0; i < (QUICK ? 3 : 20); i++) {
      await mcp.callOk("terminal_write", { terminalId, input: "read -p 'name? ' answer" });
      await mcp.callOk("terminal_wait", { terminalId, pattern: "name\\? $", timeoutMs: 10_000 });
      const waited = await mcp.callOk<{ elapsedMs: number }>("terminal_wait", {
        terminalId,
        input: true,
        timeoutMs: 10_000,
      });
      delays.push(waited.elapsedMs);
      await mcp.callOk("terminal_write", { terminalId, input: "x" });
      await mcp.callOk("terminal_wait", { terminalId, prompt: true, timeoutMs: 10_000 });
    }
    rows.push({
      what: "`terminal_wait` with `input`: answered after the prompt of `read -p` showed",
      figure: `median ${median(delays).toFixed(0)} ms, max ${Math.max(...delays)} ms`,
      note: "goal: within 300 ms",
    });
  } finally {
    await mcp.close();
    Deno.removeSync(home, { recursive: true });
  }
}

async function startup(rows: Row[]): Promise<void> {
  const runs = QUICK ? 5 : 21;
  const floor = await Deno.makeTempFile({ suffix: ".ts" });
  Deno.writeTextFileSync(floor, FLOOR_SERVER);
  // Under dist/, as `deno task compile` bundles: deno.json applies (lazy dynamic imports).
  Deno.mkdirSync(`${ROOT}dist`, { recursive: true });
  const bundleDir = await Deno.makeTempDir({ dir: `${ROOT}dist`, prefix: "bench-bundle-" });
  const bundled = await bundle(bundleDir);
  const deno = Deno.execPath();
  const contenders: [string, string[], boolean][] = [
    ["floor", ["run", floor], false],
    ["task", ["task", "--quiet", "start"], true],
    ["run", ["run", ...START_FLAGS, MAIN], true],
    ["bundle", ["run", ...START_FLAGS, bundled], true],
  ];
  const results = new Map(
    contenders.map(([name]) => [name, [] as Awaited<ReturnType<typeof answerTimes>>[]]),
  );
  try {
    // Interleaved, so that a busy moment of the machine does not fall on one contender only.
    for (let run = 0; run < runs + 1; run++) {
      for (const [name, args, listTools] of contenders) {
        const result = await answerTimes(deno, args, listTools);
        if (run > 0) results.get(name)!.push(result); // the first round fills caches
      }
    }
  } finally {
    await Deno.remove(floor);
    await Deno.remove(bundleDir, { recursive: true });
  }
  const initialize = (name: string) => median(results.get(name)!.map((r) => r.initialize));
  const tools = (name: string) => median(results.get(name)!.map((r) => r.tools!));
  const floorMs = initialize("floor");
  const reference = `Deno's floor, a stdio script that imports nothing (\`deno run\`): ` +
    `${floorMs.toFixed(0)} ms`;
  for (
    const [name, label] of [
      ["task", "`deno task start` (the README's command)"],
      ["run", "`deno run` of main.ts with the shipped flags"],
      ["bundle", "the bundle `deno task compile` ships (`deno run`)"],
    ]
  ) {
    const ms = initialize(name);
    rows.push({
      what: `server start to \`initialize\` answered: ${label}`,
      figure: `median ${ms.toFixed(0)} ms (\`tools/list\` answered at ${
        tools(name).toFixed(0)
      } ms)`,
      reference,
      ratio: `${ratio(ms, floorMs)} (+${(ms - floorMs).toFixed(0)} ms)`,
      note: name === "task" ? "goal: at most 120 ms, and at most 95 ms above the floor" : "",
    });
  }
}

async function memoryAndShutdown(rows: Row[]): Promise<void> {
  // Idle: started, initialized, tools listed, then left alone for a moment.
  const floorFile = await Deno.makeTempFile({ suffix: ".ts" });
  Deno.writeTextFileSync(floorFile, FLOOR_SERVER);
  const floor: number[] = [],
    idle: number[] = [],
    floorCache: number[] = [],
    idleCache: number[] = [];
  for (let run = 0; run < (QUICK ? 1 : 3); run++) {
    const bare = await answerTimes(Deno.execPath(), ["run", floorFile], false, 1500);
    const server = await answerTimes(Deno.execPath(), ["run", ...START_FLAGS, MAIN], true, 1500);
    floor.push(bare.rssKiB);
    floorCache.push(bare.cacheKiB);
    idle.push(server.rssKiB);
    idleCache.push(server.cacheKiB);
  }
  await Deno.remove(floorFile);
  const [floorMiB, idleMiB] = [median(floor) / 1024, median(idle) / 1024];
  const mib = (kib: number[]) => `${(median(kib) / 1024).toFixed(1)} MiB`;
  rows.push({
    what: "server memory (RSS) idle: started, `initialize` and `tools/list` answered, 1.5 s later",
    figure: `${idleMiB.toFixed(1)} MiB (${mib(idleCache)} of it Deno's cache databases)`,
    reference: `Deno's floor stdio script, the same way: ${floorMiB.toFixed(1)} MiB (${
      mib(floorCache)
    } of it its cache databases)`,
    ratio: `${ratio(idleMiB, floorMiB)} (+${(idleMiB - floorMiB).toFixed(1)} MiB)`,
    note:
      "goal: at most 50 MiB; Deno's update check off for both, as `deno task start` has it; the cache databases are SQLite files `deno run` maps from its " +
      "cache folder, whose share depends on that cache's state, not on the server",
  });

  const mcp = await connect();
  try {
    await mcp.client.listTools();
    // The engine loads with the first tool call: what that costs is shown on its own, and the
    // shells' share is counted from after it.
    await mcp.callOk("run_command", { command: "true", wait_ms: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = rssMiB(mcp.pid);
    rows.push({
      what: "server memory (RSS) after its first tool call (`run_command true`), 1 s later",
      figure: `${before.toFixed(1)} MiB`,
      reference: `the idle server above: ${idleMiB.toFixed(1)} MiB`,
      ratio: `${ratio(before, idleMiB)} (+${(before - idleMiB).toFixed(1)} MiB)`,
      note: "the engine loads with the first tool call",
    });
    // Without rc files, so that the figure is the server's, not this machine's ~/.bashrc.
    for (let i = 0; i < 50; i++) {
      await mcp.callOk("terminal_create", {
        command: "bash",
        args: ["--norc", "--noprofile", "-i"],
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const busy = rssMiB(mcp.pid);
    rows.push({
      what: "server memory (RSS) with 50 live shells (`terminal_create` of bash --norc -i, idle)",
      figure: `${busy.toFixed(1)} MiB`,
      reference: `the same server before them (after its first call): ${before.toFixed(1)} MiB`,
      ratio: `${ratio(busy, before)} (${((busy - before) * 1024 / 50).toFixed(0)} KiB a shell)`,
      note: "goal: at most 80 MiB",
    });
  } finally {
    const shutdown = await timed(() => mcp.close());
    rows.push({
      what:
        "shutdown with 50 live shells: stdin closed until the server has exited, children killed",
      figure: `${shutdown.toFixed(0)} ms`,
      note: "requirement: under 2 s",
    });
  }
}

async function terminals(rows: Row[]): Promise<void> {
  const mcp = await connect([], { WINTERM_TERMINAL_MAX_LINES: "100000" });
  try {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "seq",
      args: ["1", "100000"],
    });
    await mcp.callOk("terminal_wait", { terminalId, exit: true, timeoutMs: 60_000 });
    const stats = await mcp.callOk<{ bufferSize: number }>("terminal_stats", { terminalId });
    if (stats.bufferSize !== 100_000) {
      throw new Error(`expected 100000 lines, got ${stats.bufferSize}`);
    }
    const read = () => mcp.callOk("terminal_read", { terminalId, mode: "tail", tailLines: 50 });
    await repeat(10, read);
    const times = await repeat(200, read);
    rows.push({
      what:
        "`terminal_read` tail 50 lines of a 100,000-line buffer (SDK client over stdio, round trip)",
      figure: `median ${median(times).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms`,
    });
  } finally {
    await mcp.close();
  }
}

async function httpLoad(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  const clients = 50, durationMs = QUICK ? 5_000 : 60_000;
  try {
    const terminals: string[] = [];
    for (let i = 0; i < 10; i++) {
      terminals.push(
        (await request(server, "POST", "/api/terminals", { body: { shell: "sh" } })).json.data
          .terminalId,
      );
    }
    const calls: [string, (id: string) => [string, string, unknown?]][] = [
      ["health", () => ["GET", "/api/health"]],
      ["list", () => ["GET", "/api/terminals"]],
      ["output", (id) => ["GET", `/api/terminals/${id}/output?mode=tail&tailLines=20`]],
      ["stats", (id) => ["GET", `/api/terminals/${id}/stats`]],
      ["input", (id) => ["POST", `/api/terminals/${id}/input`, { input: "echo load test line" }]],
    ];
    const times: number[] = [];
    let errors = 0;
    const deadline = performance.now() + durationMs;
    const client = async (n: number) => {
      for (let i = n; performance.now() < deadline; i++) {
        const [, make] = calls[i % calls.length];
        const [method, path, body] = make(terminals[i % terminals.length]);
        const started = performance.now();
        const answer = await request(server, method, path, body === undefined ? {} : { body });
        times.push(performance.now() - started);
        if (answer.status >= 400 || answer.json?.success !== true) errors++;
      }
    };
    await Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
    rows.push({
      what:
        `REST API under load: ${clients} concurrent clients for ${
          durationMs / 1000
        } s (health, list, tail output, ` +
        "stats, input on 10 shells)",
      figure:
        `${times.length} requests, ${errors} errors; median ${median(times).toFixed(1)} ms, ` +
        `p99 ${percentile(times, 99).toFixed(1)} ms`,
      note: "goal: no errors, p99 under 100 ms",
    });
  } finally {
    await server.stop();
  }
}

/** Latency of requests on fresh connections while a crowd of idle connections is held open. */
async function httpUnderIdleCrowd(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  const { hostname, port } = new URL(server.url);
  const crowd: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 1000; i++) crowd.push(await Deno.connect({ hostname, port: Number(port) }));
    // Connections younger than a second are spared from eviction: let the crowd settle.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const times: number[] = [];
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      // A new connection each time (fetch would reuse a pooled one).
      const answer = await rawRequest(
        server,
        `GET /api/terminals HTTP/1.1\nhost: localhost\nauthorization: Bearer ${server.token}\n`,
      ).catch(() => undefined);
      times.push(performance.now() - started);
      if (answer?.status !== 200) refused++;
    }
    rows.push({
      what: "REST `GET /api/terminals` from new clients while 1,000 idle connections are held",
      figure: `median ${median(times).toFixed(1)} ms, p99 ${
        percentile(times, 99).toFixed(1)
      } ms; ${refused} of 200 refused`,
      note: "the cap is 256: idle connections make room for newcomers",
    });
  } finally {
    crowd.forEach((conn) => conn.close());
    await server.stop();
  }
}

/** A command that leaves 20 processes behind, in every way there is to leave. */
function escapees(marker: string): string {
  const ways = [
    (n: number) => `sleep ${marker}${n} &`,
    (n: number) => `nohup sleep ${marker}${n} >/dev/null 2>&1 &`,
    (n: number) => `setsid sleep ${marker}${n} >/dev/null 2>&1 &`,
    (n: number) => `(sleep ${marker}${n} >/dev/null 2>&1 &);`,
    (n: number) => `(setsid sleep ${marker}${n} >/dev/null 2>&1 &);`,
  ];
  return Array.from({ length: 20 }, (_, n) => ways[n % ways.length](10 + n)).join(" ") +
    " sleep 3600";
}

async function processTrees(rows: Row[]): Promise<void> {
  if (Deno.build.os !== "linux") return;
  const looks = await repeat(50, () => {
    signalTrees(
      new Map([[{
        mark: "nobody.1",
        roots: [],
        since: 0,
        sessionsOfGoneRoots: false,
      }, new Set([0])]]),
    );
    return Promise.resolve();
  });
  rows.push({
    what: "one look at the process table for a tree's members (Linux /proc through libc)",
    figure: `${median(looks).toFixed(2)} ms with ${processTable().length} processes`,
    note: "done once per burst of exits, and per kill",
  });
  const state = tempDir("winterm-bench-state-");
  const env = { WINTERM_STATE_DIR: state };
  // By prefix: the shell's own command line names every sleep too.
  const sleeps = (marker: string) => processesWith(`sleep ${marker}`, true);
  const gone = (marker: string) => () => sleeps(marker).length === 0;
  const terminated: number[] = [];
  const mcp = await connect([], env);
  try {
    for (let i = 0; i < 5; i++) {
      const marker = uniqueMarker();
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: escapees(marker),
        shell_type: "sh",
        // Not the default 30 s: on a busy machine the 20 took long enough to start that the
        // command timed out before it was terminated.
        timeout: 3600,
      });
      if (!await eventually(() => sleeps(marker).length === 20, 10_000)) {
        throw new Error(`the 20 processes of ${marker} did not all start`);
      }
      terminated.push(
        await timed(async () => {
          await mcp.callOk("terminate_command", { token });
          await eventually(gone(marker), 10_000, () => {});
        }),
      );
    }
  } finally {
    await mcp.close();
  }
  rows.push({
    what: "terminate_command of a command that left 20 processes (&, nohup, setsid, double forks)",
    figure: `${median(terminated).toFixed(0)} ms until none is left`,
  });
  const recovered: number[] = [];
  for (let i = 0; i < 3; i++) {
    const marker = uniqueMarker();
    const victim = await connect([], env);
    await victim.callOk("run_command", { command: escapees(marker), shell_type: "sh" });
    await eventually(() => processesWith(`sleep ${marker}`).length === 20, 10_000);
    Deno.kill(victim.pid, "SIGKILL");
    await victim.close().catch(() => {});
    let next: Connection | undefined;
    recovered.push(
      await timed(async () => {
        next = await connect([], env);
        await eventually(gone(marker), 10_000, () => {});
      }),
    );
    await next?.close();
  }
  Deno.removeSync(state, { recursive: true });
  rows.push({
    what: "after a SIGKILL: the next server started until the 20 processes left are gone",
    figure: `${median(recovered).toFixed(0)} ms (start and initialize included)`,
  });
}

/**
 * ConPTY against a plain pipe (scripts/bench_windows.ts): natively on Windows, elsewhere in the
 * Wine test bed when it is there (its conhost is Wine's: the note says so).
 */
async function conpty(rows: Row[]): Promise<void> {
  const args = ["-A", "scripts/bench_windows.ts", "--json", "--mb", QUICK ? "1" : "4"];
  const testbed = fileURLToPath(new URL("../../shared/wine-testbed/run", import.meta.url));
  const [command, runArgs] = Deno.build.os === "windows"
    ? [Deno.execPath(), ["run", ...args]]
    : [testbed, ["run", "--node-modules-dir=none", ...args]];
  if (Deno.build.os !== "windows" && !existsSync(testbed)) {
    console.error("no Windows and no Wine test bed here: ConPTY not measured");
    return;
  }
  const { code, stdout } = await new Deno.Command(command, {
    args: runArgs,
    cwd: ROOT,
    stdin: "null",
    stderr: "inherit",
    stdout: "piped",
  }).output();
  if (code !== 0) throw new Error("scripts/bench_windows.ts failed");
  const lines = new TextDecoder().decode(stdout).trim().split("\n");
  for (const row of JSON.parse(lines.at(-1)!) as Row[]) {
    rows.push({
      ...row,
      note: `${row.note}${
        Deno.build.os === "windows"
          ? ""
          : "; Wine's conhost and pipes, not Windows' (see docs/windows.md)"
      }`,
    });
  }
}

function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Per task: calls and bytes read against the budget, and the wall time (one run each). */
const agentRows: string[] = [];

async function agentTasks(): Promise<void> {
  const mcp = await connect();
  try {
    for (const task of AGENT_TASKS) {
      if (task.linuxOnly && Deno.build.os !== "linux") continue;
      const agent = new Agent(mcp);
      const ms = await timed(() => task.run(agent));
      agentRows.push(
        `| ${task.name} | ${agent.calls} (${task.calls}) | ${agent.bytes} (${task.bytes}) | ` +
          `${ms.toFixed(0)} ms |`,
      );
    }
  } finally {
    await mcp.close();
  }
}

/** Per tool: the bytes of its entry in `tools/list` (one row each). */
const toolListRows: string[] = [];

/** What `tools/list` costs, as the README starts the server (the default set of tools). */
async function toolList(rows: Row[]): Promise<void> {
  const mcp = await connect();
  try {
    const cost = await measureToolList(mcp.client);
    rows.push({
      what:
        `\`tools/list\` of the default set (${cost.tools.length} tools), as the README starts ` +
        "the server: bytes of JSON shown to a model (each tool's name, description, inputSchema) " +
        "/ the whole result (titles, annotations, outputSchemas too)",
      figure: `${cost.modelVisible} / ${cost.whole} bytes`,
      note: `goal: at most ${TOOL_LIST_GOALS.modelVisible} / ${TOOL_LIST_GOALS.whole}`,
    });
    for (const tool of cost.tools) {
      toolListRows.push(
        `| ${tool.name} | ${tool.modelVisible} | ${tool.description} | ${tool.outputSchema} | ` +
          `${tool.whole} |`,
      );
    }
    toolListRows.push(`| all | ${cost.modelVisible} | | | ${cost.whole} |`);
  } finally {
    await mcp.close();
  }
}

/** A terminal's WebSocket stream: throughput to one client, and a write's answer on it. */
async function streams(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  try {
    const created = await request(server, "POST", "/api/terminals", {
      body: { command: "bash", args: ["--norc", "--noprofile"], env: { PS1: "$ " } },
    });
    const id = created.json.data.terminalId;
    const stream = await openStream(server, `/api/terminals/${id}/stream`);
    // The helper keeps every frame; only the newest bytes matter here (decoding 40 MB on every
    // frame would measure the benchmark).
    let received = 0, tail = "";
    const decoder = new TextDecoder();
    stream.ws.on("message", (data: Uint8Array, binary: boolean) => {
      if (!binary) return;
      received += data.length;
      tail = (tail + decoder.decode(data, { stream: true })).slice(-256);
      stream.frames.length = 0;
    });
    await stream.until(() => stream.messages.length > 0, "the hello");
    const before = received;
    const elapsed = await timed(async () => {
      await request(server, "POST", `/api/terminals/${id}/input`, {
        body: { input: `${PRODUCER}; echo stream-$((6*7))-end` },
      });
      await stream.until(() => tail.includes("stream-42-end"), "the end", 600_000);
    });
    rows.push({
      what: `${PAYLOAD_MB} MB through a terminal to a WebSocket stream client`,
      figure: `${Math.round(elapsed)} ms (${
        ((received - before) / MB / (elapsed / 1000)).toFixed(1)
      } MB/s)`,
      note: "REST write to the end marker on the stream",
    });
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const marker = `answer-${i}-${i * 7}`;
      times.push(
        await timed(async () => {
          await request(server, "POST", `/api/terminals/${id}/input`, {
            body: { input: `echo answer-${i}-$((${i}*7))` },
          });
          await stream.until(() => tail.includes(`${marker}\r\n`), marker);
        }),
      );
    }
    rows.push({
      what: "a REST write of `echo` until its answer arrives on the stream",
      figure: `median ${median(times).toFixed(1)} ms, p90 ${percentile(times, 90).toFixed(1)} ms`,
      note: "30 writes into a live bash",
    });
    stream.close();
  } finally {
    await server.stop();
  }
}

/** What one `terminal_run` of `echo ok-N` should answer, else the kind of wrong answer it was. */
async function okRun(mcp: Connection, terminalId: string, n: number): Promise<string | undefined> {
  const answer = await mcp.call("terminal_run", {
    terminalId,
    command: `echo ok-${n}`,
    timeoutMs: 300_000,
  }, 600_000);
  const run = answer.structuredContent as
    | { condition: string; output: string; exitCode: number | null }
    | undefined;
  return answer.isError
    ? `refused: ${text(answer).slice(0, 80)}`
    : run?.condition !== "done"
    ? `condition ${run?.condition}`
    : run.output !== `ok-${n}\n` || run.exitCode !== 0
    ? `answered ${JSON.stringify(run.output.slice(0, 40))}, exit code ${run.exitCode}`
    : undefined;
}

/** Runs `each(n)` for 0..count-1 at once: the wrong answers by kind, each one's time, the total. */
async function atOnce(count: number, each: (n: number) => Promise<string | undefined>) {
  const wrong = new Map<string, number>();
  const times: number[] = [];
  const elapsed = await timed(() =>
    Promise.all(Array.from({ length: count }, async (_, n) => {
      const start = performance.now();
      const kind = await each(n);
      times.push(performance.now() - start);
      if (kind) wrong.set(kind, (wrong.get(kind) ?? 0) + 1);
    }))
  );
  const wrongCount = [...wrong.values()].reduce((sum, n) => sum + n, 0);
  return {
    figure: `${wrongCount} of ${count} wrong; all answered in ${(elapsed / 1000).toFixed(1)} s ` +
      `(each: p50 ${(median(times) / 1000).toFixed(1)} s, max ${
        (Math.max(...times) / 1000).toFixed(1)
      } s)`,
    note: wrongCount === 0
      ? "goal: 0 wrong"
      : "goal: 0 wrong; " + [...wrong].map(([kind, n]) => `${n}x ${kind}`).join("; "),
  };
}

/**
 * 300 bash terminals, then `echo ok-N` in each at once through `terminal_run` (issue 35): every
 * answer must be that command's output and exit code, whatever the machine's pace. Then 300 more,
 * each run sent as soon as its terminal is created (its shell still starting). Reports the
 * wrong answers by kind, how long the runs took, and the server's open descriptors.
 */
async function concurrentRuns(rows: Row[]): Promise<void> {
  const count = QUICK ? 50 : 300;
  const home = tempDir("winterm-bench-home-");
  const mcp = await connect([], { WINTERM_MAX_TERMINALS: String(2 * count) });
  const create = () =>
    mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: "bash",
      env: { HOME: home },
    }, 600_000).then((created) => created.terminalId);
  try {
    const ids = await Promise.all(Array.from({ length: count }, create));
    const started = await atOnce(count, (n) => okRun(mcp, ids[n], n));
    rows.push({
      what: `\`terminal_run\` \`echo ok-N\` in ${count} bash terminals at once (SDK client over ` +
        "stdio): answers that are not the command's output and exit code",
      ...started,
    });
    const starting = await atOnce(count, async (n) => okRun(mcp, await create(), n));
    const descriptors = [...Deno.readDirSync(`/proc/${mcp.pid}/fd`)].length;
    rows.push({
      what: `the same, each run sent as soon as its terminal is created (${count} more shells ` +
        "still starting)",
      ...starting,
      note: `${starting.note}; the server then held ${descriptors} descriptors for ` +
        `${2 * count} terminals (\`ulimit -n\` ${ulimitNoFile()})`,
    });
  } finally {
    await mcp.close();
    Deno.removeSync(home, { recursive: true });
  }
}

/** The soft limit on open descriptors this process (and so the server it starts) has. */
function ulimitNoFile(): string {
  const limits = Deno.readTextFileSync("/proc/self/limits").match(/Max open files\s+(\S+)/);
  return limits?.[1] ?? "unknown";
}

/**
 * A flood without the token: `connections` connections each pipeline `each` requests for the
 * web view's script (614 KB, no gzip) in one write and read nothing, for `seconds`; then they
 * close. The server's RSS idle, at its peak during, and 10 s after; the token-bearer's latency
 * during, on its kept-alive connection and on a new one each time (behind the flood's accepts).
 */
async function pipelinedAttack(
  rows: Row[],
  connections: number,
  each: number,
  seconds: number,
): Promise<void> {
  const server = await startHttpServer();
  const pid = server.process.pid;
  const { hostname, port } = new URL(server.url);
  const flood: Deno.Conn[] = [];
  try {
    // The script once, and a kept-alive connection, before idle is measured.
    await (await fetch(`${server.url}/assets/app.js`)).arrayBuffer();
    await request(server, "GET", "/api/terminals");
    const idle = rssMiB(pid);
    const ask = new TextEncoder().encode(
      `GET /assets/app.js HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`.repeat(each),
    );
    for (let i = 0; i < connections; i++) {
      const conn = await Deno.connect({ hostname, port: Number(port) });
      flood.push(conn);
      conn.write(ask).catch(() => {});
    }
    let peak = 0;
    const kept: number[] = [], fresh: number[] = [];
    const deadline = performance.now() + seconds * 1000;
    while (performance.now() < deadline) {
      peak = Math.max(peak, rssMiB(pid));
      kept.push(await timed(() => request(server, "GET", "/api/terminals")));
      fresh.push(
        await timed(() =>
          rawRequest(
            server,
            `GET /api/terminals HTTP/1.1\nhost: localhost\nauthorization: Bearer ${server.token}\n`,
          )
        ),
      );
      peak = Math.max(peak, rssMiB(pid));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    flood.splice(0).forEach((conn) => conn.close());
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const after = rssMiB(pid);
    rows.push({
      what: `HTTP: ${connections} connections without the token each pipeline ${each} requests ` +
        `for the 614 KB script and read nothing (${seconds} s): RSS during / 10 s after they close`,
      figure: `${peak.toFixed(0)} MiB (+${(peak - idle).toFixed(0)}) / ${after.toFixed(0)} MiB ` +
        `(+${(after - idle).toFixed(0)})`,
      reference: `idle ${idle.toFixed(0)} MiB`,
      ratio: ratio(peak, idle),
      note: "goal: within 128 MiB of idle during, 64 MiB after (2.1 GB during and after before)",
    });
    rows.push({
      what: `HTTP: the token-bearer's \`GET /api/terminals\` meanwhile (${connections} x ${each})`,
      figure: `kept-alive connection: median ${median(kept).toFixed(1)} ms, max ${
        Math.max(...kept).toFixed(0)
      } ms; new connection: median ${median(fresh).toFixed(1)} ms, max ${
        Math.max(...fresh).toFixed(0)
      } ms`,
      note: "goal: within 500 ms (a new connection waits behind the flood's own accepts)",
    });
  } finally {
    flood.forEach((conn) => conn.close());
    await server.stop();
  }
}

/** The issue's flood (20 connections of 100), and one within the bound on each (250 of 16). */
async function pipelinedFlood(rows: Row[]): Promise<void> {
  const seconds = QUICK ? 5 : 10;
  await pipelinedAttack(rows, 20, 100, seconds);
  await pipelinedAttack(rows, 250, 16, seconds);
}

/**
 * 270 SDK clients over Streamable HTTP, each keeping its standing event stream (more than the
 * 256 connections allowed): how many connect, then whether the oldest's and the 200th's calls,
 * a newcomer's `initialize` and call, and REST with the token are answered, and every client's
 * call.
 */
async function sdkCrowd(rows: Row[]): Promise<void> {
  const server = await startHttpServer();
  const url = new URL(`${server.url}/mcp`);
  const clients: Client[] = [];
  const connectOne = async (name: string) => {
    const client = new Client({ name, version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    return client;
  };
  const call = (client: Client | undefined) =>
    client
      ? client.callTool({ name: "get_version", arguments: {} }).then(
        (result) => result.isError ? "error" : "ok",
        (error) => String(error).slice(0, 80),
      )
      : Promise.resolve("not connected");
  try {
    const pid = server.process.pid;
    const idle = rssMiB(pid);
    let failed = 0;
    for (let i = 0; i < 270; i++) {
      await connectOne(`client-${i}`).then((client) => clients.push(client), () => failed++);
    }
    // Each client opens its event stream after initializing: wait until the server holds them.
    await eventually(() => [...Deno.readDirSync(`/proc/${pid}/fd`)].length > 270, 30_000);
    const oldest = await call(clients[0]);
    const twoHundredth = await call(clients[199]);
    const started = performance.now();
    const newcomer = await connectOne("newcomer").then(call, (error) => String(error));
    const newcomerMs = performance.now() - started;
    const rest = (await request(server, "GET", "/api/terminals")).status;
    // All at once: 271 requests in flight, more than the 256 connections requests may hold.
    const all = await Promise.all(clients.map(call));
    const answered = all.filter((result) => result === "ok").length;
    // The cap's refusal: 503, or the connection closed before the client had sent its request.
    const busy = all.filter((result) => /UNAVAILABLE|503|fetch failed/.test(result)).length;
    rows.push({
      what: "MCP: 270 SDK clients over HTTP, each keeping its event stream (the cap is 256 " +
        "connections): connected; the oldest's, the 200th's and a newcomer's calls; REST",
      figure: `${clients.length} connected, ${failed} refused; oldest ${oldest}, 200th ` +
        `${twoHundredth}, newcomer ${newcomer} (${newcomerMs.toFixed(0)} ms), REST ${rest}; ` +
        `then every client's call at once: ${answered} answered, ${busy} refused at the ` +
        `connection cap (503 or closed), ${all.length - answered - busy} otherwise`,
      reference: `RSS idle ${idle.toFixed(0)} MiB`,
      ratio: `${(rssMiB(pid) - idle).toFixed(0)} MiB more`,
      note: "before: from about the 257th, every request 503 (the oldest's, REST with the token)",
    });
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await server.stop();
  }
}
/**
 * A confined start's cost (Linux): the platform layer's sandboxed spawn of echo against the same
 * spawn unconfined, 500 ms apart (the spare Worker ready, as when an agent's commands come one
 * at a time) and back to back (each start then makes its Worker); `run_command` with and without
 * `sandbox`; how long a Worker's constructor holds the event loop (once per sandboxed start,
 * after it); and the design not taken: Deno re-run as a launcher that confines its main thread
 * with the same code and execs echo, against the machine's floor (posix_spawn of echo).
 */
async function sandboxCost(rows: Row[]): Promise<void> {
  if (Deno.build.os !== "linux") return;
  const runs = QUICK ? 20 : 100;
  const dir = Deno.realPathSync(tempDir("winterm-bench-sandbox-"));
  const home = Deno.env.get("HOME")!;
  const sandbox: SandboxSpec = {
    mode: "workspace-write",
    writable: [dir],
    hidden: [".ssh", ".aws", ".gnupg"].map((name) => `${home}/${name}`),
    network: { kind: "off" },
  };
  const start = async (confined: boolean) => {
    const child = await spawn({
      file: ECHO_PATH,
      args: ["hi"],
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
      ...(confined ? { sandbox } : {}),
    });
    await child.exited;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const mcp = await connect();
  const launcher = `${dir}/launcher.ts`;
  Deno.writeTextFileSync(
    launcher,
    LAUNCHER.replaceAll("ROOT/", new URL("../", import.meta.url).href),
  );
  const deno = cStringArray([
    Deno.execPath(),
    "run",
    "-A",
    "--no-config",
    launcher,
    ECHO_PATH,
    dir,
  ]);
  const launched = () => {
    const lib = libc(), pid = new Int32Array(1), env = cStringArray([]);
    const actions = new Uint8Array(OPAQUE_BYTES);
    lib.posix_spawn_file_actions_init(actions);
    lib.posix_spawn_file_actions_addopen(actions, 1, ECHO.devNull, C.O_RDWR, 0);
    const failed = lib.posix_spawn(
      new Uint8Array(pid.buffer),
      cString(Deno.execPath()),
      actions,
      null,
      deno.array,
      env.array,
    );
    lib.posix_spawn_file_actions_destroy(actions);
    const status = new Int32Array(1);
    if (failed !== 0 || lib.waitpid(pid[0], new Uint8Array(status.buffer), 0) !== pid[0]) {
      throw new Error("the launcher did not start");
    }
    if (status[0] !== 0) throw new Error(`the launcher failed (status ${status[0]})`);
    return Promise.resolve();
  };
  const command = (confined: boolean) => async () => {
    const done = await mcp.callOk<{ status: string; sandbox?: unknown }>("run_command", {
      command: "echo hi",
      shell_type: "executable",
      working_directory: dir,
      wait_ms: 10_000,
      ...(confined ? { sandbox: { mode: "workspace-write", network: "off" } } : {}),
    });
    if (done.status !== "completed" || !done.sandbox === confined) {
      throw new Error(`echo did not complete as asked: ${JSON.stringify(done)}`);
    }
  };
  try {
    for (let i = 0; i < 3; i++) {
      await start(true), await start(false), await launched();
      await command(true)(), await command(false)();
    }
    const spaced = { confined: [] as number[], plain: [] as number[] };
    const calls = { confined: [] as number[], plain: [] as number[] };
    const burst = { confined: [] as number[], plain: [] as number[] };
    const relaunched: number[] = [], floor: number[] = [], holds: number[] = [];
    for (let i = 0; i < runs; i++) {
      await pause(500);
      spaced.confined.push(await timed(() => start(true)));
      await pause(500);
      spaced.plain.push(await timed(() => start(false)));
      await pause(500);
      calls.confined.push(await timed(command(true)));
      await pause(500);
      calls.plain.push(await timed(command(false)));
    }
    for (let i = 0; i < runs; i++) {
      burst.confined.push(await timed(() => start(true)));
      burst.plain.push(await timed(() => start(false)));
      relaunched.push(await timed(launched));
      floor.push(await timed(plainStart));
    }
    const { WORKER_URL } = await import("../src/pty/posix/sandbox/worker.ts");
    for (let i = 0; i < Math.min(runs, 20); i++) {
      const began = performance.now();
      const worker = new Worker(WORKER_URL, { type: "module" });
      holds.push(performance.now() - began);
      worker.terminate();
      await pause(50);
    }
    const figure = (times: number[]) =>
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`;
    const added = (a: number[], b: number[]) =>
      `${ratio(percentile(a, 50), percentile(b, 50))} p50 (+${
        (percentile(a, 50) - percentile(b, 50)).toFixed(1)
      } ms)`;
    rows.push({
      what: `a sandboxed start of \`echo hi\` on a PTY until its exit (workspace-write, network ` +
        `off; platform layer), 500 ms apart (the spare Worker ready), ${runs} runs`,
      figure: figure(spaced.confined),
      reference: `the same start unconfined: ${figure(spaced.plain)}`,
      ratio: added(spaced.confined, spaced.plain),
      note: "goal: at most +10 ms p50; a Worker confines its thread and spawns",
    }, {
      what: `\`run_command\` \`echo hi\` with \`sandbox\` until its answer, through the server, ` +
        `500 ms apart, ${runs} runs`,
      figure: figure(calls.confined),
      reference: `without sandbox: ${figure(calls.plain)}`,
      ratio: added(calls.confined, calls.plain),
    }, {
      what: `the sandboxed start back to back (no spare ready: each start makes its Worker), ` +
        `${runs} runs`,
      figure: figure(burst.confined),
      reference: `unconfined, back to back: ${figure(burst.plain)}`,
      ratio: added(burst.confined, burst.plain),
    }, {
      what: "what a Worker's constructor holds the event loop (once per sandboxed start, " +
        "100 ms after it)",
      figure: figure(holds),
      note: "Deno waits for the new isolate",
    }, {
      what: "the design not taken: Deno re-run as a launcher that confines its main thread " +
        "(the same code) and execs echo",
      figure: figure(relaunched),
      reference: `\`posix_spawn\` of echo and \`waitpid\`: ${figure(floor)}`,
      ratio: added(relaunched, floor),
      note: "Deno's own start dominates",
    });
  } finally {
    await mcp.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

/** The launcher of the design not taken (see {@link sandboxCost}): confine, then exec. */
const LAUNCHER =
  `import { createRuleset, directoryView } from "ROOT/src/pty/posix/sandbox/landlock.ts";
import { landlockPlan } from "ROOT/src/pty/posix/sandbox/landlock_plan.ts";
import { landlockAbi } from "ROOT/src/pty/posix/sandbox/linux_calls.ts";
import { hostArch, seccompFilter } from "ROOT/src/pty/posix/sandbox/seccomp.ts";
import { confineThread } from "ROOT/src/pty/posix/sandbox/worker.ts";
import { cString, cStringArray } from "ROOT/src/pty/posix/libc.ts";
const [program, workspace] = Deno.args;
const abi = landlockAbi();
const plan = landlockPlan(
  { abi, mode: "workspace-write", writable: [workspace], hidden: [], network: { kind: "off" } },
  directoryView,
);
const failure = confineThread(createRuleset(plan, abi), seccompFilter({ arch: hostArch()!, network: "off" }));
if (failure) throw new Error(failure);
const execv = Deno.dlopen("libc.so.6", { execv: { parameters: ["buffer", "buffer"], result: "i32" } });
const argv = cStringArray([program, "hi"]);
execv.symbols.execv(cString(program), argv.array);
throw new Error("execv failed");
`;

const MEASUREMENTS: [string, string, (rows: Row[]) => Promise<void>][] = [
  ["machine", "this machine's pace", machinePace],
  // Echo before throughput: node-pty's echo, its reference, took 12-16 ms after the 40 MB
  // runs in this process against 4 ms before them.
  ["echo", "echo latency", echoLatency],
  ["throughput", "PTY throughput", throughput],
  ["shell", "shell integration", shellIntegration],
  ["startup", "startup", startup],
  ["memory", "memory and shutdown", memoryAndShutdown],
  ["terminals", "terminals", terminals],
  ["http", "HTTP load (a minute)", httpLoad],
  ["idle-crowd", "HTTP with an idle crowd", httpUnderIdleCrowd],
  ["loaded", "get_version under 64 printing terminals", loadedLatency],
  ["flooded", "get_version while commands flood", floodedLatency],
  ["screen-reads", "get_version while screens are read", screenReadLatency],
  ["large-answers", "get_version while answers of 2 MiB are read", largeAnswerLatency],
  ["commands", "memory after 1,000 commands of 1 MB", commandMemory],
  ["trees", "process trees", processTrees],
  ["conpty", "ConPTY against a plain pipe (Windows, or the Wine test bed)", conpty],
  ["agent", "the agent-task suite", agentTasks],
  ["tool-list", "the tool list's size", toolList],
  ["streams", "WebSocket streams", streams],
  ["concurrent-runs", "terminal_run in 300 terminals at once", concurrentRuns],
  ["pipelined", "HTTP under a pipelining flood", pipelinedFlood],
  ["sdk-crowd", "270 MCP SDK clients over HTTP", sdkCrowd],
  ["sandbox", "the cost of a sandboxed start", sandboxCost],
];
const rows: Row[] = [];
const started = new Date();
for (const [name, label, measure] of MEASUREMENTS) {
  if (ONLY && !ONLY.includes(name)) continue;
  console.error(`${label}...`);
  await measure(rows);
}

const cpu = Deno.readTextFileSync("/proc/cpuinfo").match(/model name\s*:\s*(.*)/)?.[1] ??
  "unknown CPU";
const lines = [
  "# Benchmarks",
  "",
  `Measured by \`deno task bench\` on ${
    started.toISOString().slice(0, 10)
  }: ${Deno.build.os} ${Deno.build.arch}, ` +
  `${navigator.hardwareConcurrency} cores (${cpu}), Deno ${Deno.version.deno}. Medians of repeated runs; ` +
  `throughput moves ${PAYLOAD_MB} MB of 64-byte text lines through a PTY.`,
  "",
  "Each figure stands beside its reference, measured in the same run, and their ratio.",
  "",
  "| what | winterm | reference (same run) | ratio | note |",
  "|---|---|---|---|---|",
  ...rows.map((row) =>
    `| ${row.what} | ${row.figure} | ${row.reference ?? "-"} | ${row.ratio ?? "-"} | ${
      row.note ?? ""
    } |`
  ),
  "",
  ...(agentRows.length
    ? [
      "## Agent tasks",
      "",
      "Each task as an agent does it through the real server (SDK client over stdio), with the",
      "fewest calls the tool descriptions teach: the calls made and the bytes of answer text read",
      "(what lands in the model's context), the budget the test suite holds it to in brackets.",
      "",
      "| task | calls (budget) | bytes read (budget) | wall time |",
      "|---|---|---|---|",
      ...agentRows,
      "",
    ]
    : []),
  ...(toolListRows.length
    ? [
      "## Tool list",
      "",
      "What `tools/list` costs a client, per tool: the bytes of JSON a model is shown (name,",
      "description, inputSchema), of the description alone, of the outputSchema, and of the whole",
      "entry (`all`: the whole result, which wraps the entries).",
      "",
      "| tool | shown to a model | description | outputSchema | whole entry |",
      "|---|---|---|---|---|",
      ...toolListRows,
      "",
    ]
    : []),
];
if (!ONLY && !QUICK) Deno.writeTextFileSync(`${ROOT}/docs/benchmarks.md`, lines.join("\n"));
console.log(lines.join("\n"));
