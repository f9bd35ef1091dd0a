/**
 * `deno task bench`: measures winterm-mcp on this machine and writes docs/benchmarks.md.
 *
 * - PTY throughput of the platform layer and of the engine, against the machine's raw PTY path
 *   and node-pty (`@lydell/node-pty`) measured in the same run, runs interleaved
 *   (`script -qc CMD /dev/null > /dev/null`, the same producer);
 * - `get_version` latency while 64 terminals each print 100 lines a second;
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
 *
 * Medians of repeated runs. Linux/macOS only (the Windows figures need a Windows machine).
 *
 * `--only NAME,...` runs some of them (throughput, echo, shell, startup, memory, terminals, http,
 * idle-crowd, loaded, commands, trees, agent, streams) and `--quick` shortens each; either prints the table without writing
 * docs/benchmarks.md (a smoke run).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import nodePty from "@lydell/node-pty";
import { spawn } from "../src/pty/mod.ts";
import { CommandService } from "../src/engine/services/commands.ts";
import { Agent, AGENT_TASKS } from "../tests/helpers/agent_tasks.ts";
import { connect, type Connection, MAIN } from "../tests/helpers/mcp.ts";
import { rawRequest, request, startHttpServer } from "../tests/helpers/http.ts";
import { eventually, processesWith, tempDir, uniqueMarker } from "../tests/helpers/process.ts";
import { processTable } from "../src/pty/posix/process_table.ts";
import { signalTrees } from "../src/pty/posix/tree.ts";
import { openStream } from "../tests/helpers/stream.ts";
import { bundle } from "./compile.ts";

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
  const child = spawn({ file: "sh", args: ["-c", PRODUCER], cwd: ROOT, env: Deno.env.toObject() });
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
  const { command } = service.run({
    command: PRODUCER,
    shellType: "sh",
    maxBufferSize: 64 * 1024 * 1024,
  });
  await command.done;
  return command.read({ maxBytes: 1 }).stdout.length;
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]);
}

interface Row {
  what: string;
  figure: string;
  note?: string;
}

async function throughput(rows: Row[]): Promise<void> {
  const runs = QUICK ? 1 : 5;
  const service = new CommandService({ maxBufferSize: 64 * 1024 * 1024 });
  const raw: number[] = [], layer: number[] = [], withEngine: number[] = [], other: number[] = [];
  // Interleaved, so that a busy moment of the machine does not fall on one contender only.
  for (let run = 0; run < runs; run++) {
    raw.push(await timed(rawPty));
    layer.push(await timed(ourPty));
    withEngine.push(await timed(() => engine(service)));
    other.push(await timed(nodePtyRun));
  }
  const rate = (ms: number) => (PAYLOAD_MB / (ms / 1000)).toFixed(1);
  const rawMs = median(raw);
  rows.push(
    {
      what: "raw PTY path: `script -qc CMD /dev/null > /dev/null`",
      figure: `${rawMs.toFixed(0)} ms (${rate(rawMs)} MB/s)`,
    },
    {
      what: "winterm PTY layer (src/pty): spawn to exit, every byte delivered",
      figure: `${median(layer).toFixed(0)} ms (${rate(median(layer))} MB/s)`,
      note: `${(100 * rawMs / median(layer)).toFixed(0)}% of raw`,
    },
    {
      what: "winterm engine (PTY layer + output buffer, run_command's path)",
      figure: `${median(withEngine).toFixed(0)} ms (${rate(median(withEngine))} MB/s)`,
      note: `${(100 * rawMs / median(withEngine)).toFixed(0)}% of raw (goal: at least 60%)`,
    },
    {
      what: "node-pty 1.1 (`@lydell/node-pty`, same producer, same run): spawn to exit",
      figure: `${median(other).toFixed(0)} ms (${rate(median(other))} MB/s)`,
      note: `the engine takes ${(100 * median(withEngine) / median(other)).toFixed(0)}% of ` +
        "node-pty's time (goal: no slower)",
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
  try {
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
    const linesBefore = await totalLines(mcp, ids);
    const started = performance.now();
    const times: number[] = [];
    while (performance.now() - started < durationMs) {
      times.push(await timed(() => mcp.callOk("get_version")));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const rate = (await totalLines(mcp, ids) - linesBefore) / terminals /
      ((performance.now() - started) / 1000);
    rows.push({
      what: `\`get_version\` while ${terminals} terminals each print 100 lines a second ` +
        `(SDK client over stdio, ${durationMs / 1000} s)`,
      figure:
        `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ` +
        `ms (${times.length} calls; ${rate.toFixed(0)} lines/s a terminal seen)`,
      note: "goal: p99 under 50 ms",
    });
  } finally {
    await mcp.close();
  }
}

async function totalLines(mcp: Connection, ids: string[]): Promise<number> {
  let lines = 0;
  for (const terminalId of ids) {
    lines += (await mcp.callOk<{ totalLines: number }>("terminal_stats", { terminalId }))
      .totalLines;
  }
  return lines;
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
      figure: `${after.toFixed(1)} MiB (idle ${idle.toFixed(1)} MiB); ${kept} commands still ` +
        "queryable",
      note: "bounded by the output budget, not by the number of commands",
    });
  } finally {
    await mcp.close();
  }
}

async function echoLatency(rows: Row[]): Promise<void> {
  const mcp = await connect();
  try {
    const once = async () => {
      const started = await mcp.callOk<{ token: string }>("run_command", {
        command: "echo hi",
        shell_type: "executable",
      });
      const done = await mcp.callOk<{ status: string }>("query_command_status", {
        token: started.token,
        wait_ms: 10_000,
      });
      if (done.status !== "completed") throw new Error(`echo did not complete: ${done.status}`);
    };
    await repeat(5, once); // warm-up
    const times = await repeat(50, once);
    rows.push({
      what:
        "`run_command` `echo hi` until completed (run_command + query with wait_ms, SDK client over stdio)",
      figure: `median ${median(times).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
      note: "goal: within 10 ms",
    });
  } finally {
    await mcp.close();
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
  const bundled = await Deno.makeTempFile({ suffix: ".js" });
  await bundle(bundled);
  for (
    const [label, entry, note] of [
      ["`deno run main.ts`", MAIN, ""],
      ["the bundle `deno task compile` ships", bundled, "goal: within 150 ms"],
    ]
  ) {
    const connections: Connection[] = [];
    const times = await repeat(10, async () => connections.push(await connect([], {}, entry)));
    await Promise.all(connections.map((c) => c.close()));
    rows.push({
      what: `server start to \`initialize\` answered: ${label} (SDK client over stdio)`,
      figure: `median ${median(times).toFixed(0)} ms`,
      note,
    });
  }
  await Deno.remove(bundled);
}

async function memoryAndShutdown(rows: Row[]): Promise<void> {
  const mcp = await connect();
  const idle = rssKiB(mcp.pid);
  for (let i = 0; i < 50; i++) {
    await mcp.callOk("run_command", {
      command: "bash --norc --noprofile -i",
      shell_type: "executable",
      timeout: 3600,
    });
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const busy = rssKiB(mcp.pid);
  rows.push({
    what: "server memory (RSS), idle / with 50 live terminals (interactive bash on a PTY each)",
    figure: `${(idle / 1024).toFixed(1)} MiB / ${(busy / 1024).toFixed(1)} MiB`,
    note: "goal: under 100 MB with 50",
  });
  const shutdown = await timed(() => mcp.close());
  rows.push({
    what:
      "shutdown with 50 live terminals: stdin closed until the server has exited, children killed",
    figure: `${shutdown.toFixed(0)} ms`,
    note: "requirement: under 2 s",
  });
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
  // Memory on a fresh server, so nothing but the shells is measured.
  const fresh = await connect();
  try {
    const idle = rssKiB(fresh.pid);
    // Without rc files, so that the figure is the server's, not this machine's ~/.bashrc.
    for (let i = 0; i < 50; i++) {
      await fresh.callOk("terminal_create", {
        command: "bash",
        args: ["--norc", "--noprofile", "-i"],
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const busy = rssKiB(fresh.pid);
    rows.push({
      what: "server memory (RSS) with 50 idle shells (`terminal_create`, bash --norc -i)",
      figure: `${(busy / 1024).toFixed(1)} MiB (the same server idle: ${
        (idle / 1024).toFixed(1)
      } MiB)`,
      note: "goal: under 100 MB",
    });
  } finally {
    await fresh.close();
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
  const gone = (marker: string) => () => processesWith(`sleep ${marker}`).length === 0;
  const terminated: number[] = [];
  const mcp = await connect([], env);
  try {
    for (let i = 0; i < 5; i++) {
      const marker = uniqueMarker();
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: escapees(marker),
        shell_type: "sh",
      });
      await eventually(() => processesWith(`sleep ${marker}`).length === 20, 10_000);
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

const MEASUREMENTS: [string, string, (rows: Row[]) => Promise<void>][] = [
  ["throughput", "PTY throughput", throughput],
  ["echo", "echo latency", echoLatency],
  ["shell", "shell integration", shellIntegration],
  ["startup", "startup", startup],
  ["memory", "memory and shutdown", memoryAndShutdown],
  ["terminals", "terminals", terminals],
  ["http", "HTTP load (a minute)", httpLoad],
  ["idle-crowd", "HTTP with an idle crowd", httpUnderIdleCrowd],
  ["loaded", "get_version under 64 printing terminals", loadedLatency],
  ["commands", "memory after 1,000 commands of 1 MB", commandMemory],
  ["trees", "process trees", processTrees],
  ["agent", "the agent-task suite", agentTasks],
  ["streams", "WebSocket streams", streams],
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
  "| what | figure | note |",
  "|---|---|---|",
  ...rows.map((row) => `| ${row.what} | ${row.figure} | ${row.note ?? ""} |`),
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
];
if (!ONLY && !QUICK) Deno.writeTextFileSync(`${ROOT}/docs/benchmarks.md`, lines.join("\n"));
console.log(lines.join("\n"));
