/**
 * `deno task bench`: measures winterm-mcp on this machine and writes docs/benchmarks.md.
 *
 * - PTY throughput of the platform layer and of the engine, against the machine's raw PTY path
 *   measured in the same run (`script -qc CMD /dev/null > /dev/null`, the same producer);
 * - `run_command` of `echo` until completed, through the real server and the SDK client;
 * - server start until `initialize` is answered;
 * - server memory with 50 live terminals, and the time to shut down with them;
 * - `terminal_read` latency on a 100,000-line buffer, and memory with 50 idle shells;
 * - the REST API under 50 concurrent clients for a minute;
 * - REST latency on fresh connections while 1,000 idle connections are held open;
 * - a terminal's WebSocket stream: 40 MB through it, and the time from a REST write to its
 *   answer on the stream.
 *
 * Medians of repeated runs. Linux/macOS only (the Windows figures need a Windows machine).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { spawn } from "../src/pty/mod.ts";
import { CommandService } from "../src/engine/services/commands.ts";
import { connect, type Connection, MAIN } from "../tests/helpers/mcp.ts";
import { rawRequest, request, startHttpServer } from "../tests/helpers/http.ts";
import { openStream } from "../tests/helpers/stream.ts";
import { bundle } from "./compile.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
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

async function engine(service: CommandService): Promise<number> {
  const command = service.run({
    command: PRODUCER,
    shellType: "sh",
    maxBufferSize: 64 * 1024 * 1024,
  });
  await command.done;
  return command.stdout.end;
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
  const runs = 5;
  const raw = await repeat(runs, rawPty);
  const layer = await repeat(runs, ourPty);
  const service = new CommandService();
  const withEngine = await repeat(runs, () => engine(service));
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
  );
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
  const clients = 50, durationMs = 60_000;
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
      note: "REST write to the end marker on the stream; the screen is kept in step",
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

const rows: Row[] = [];
const started = new Date();
console.error("PTY throughput...");
await throughput(rows);
console.error("echo latency...");
await echoLatency(rows);
console.error("startup...");
await startup(rows);
console.error("memory and shutdown...");
await memoryAndShutdown(rows);
console.error("terminals...");
await terminals(rows);
console.error("HTTP load (a minute)...");
await httpLoad(rows);
console.error("HTTP with an idle crowd...");
await httpUnderIdleCrowd(rows);
console.error("streams...");
await streams(rows);

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
];
Deno.writeTextFileSync(`${ROOT}/docs/benchmarks.md`, lines.join("\n"));
console.log(lines.join("\n"));
