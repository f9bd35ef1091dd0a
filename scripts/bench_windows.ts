/**
 * ConPTY throughput on Windows, beside a plain pipe measured in the same run: the same text
 * file `type`d by cmd.exe (1) into a plain pipe read by Deno.Command, (2) through winterm's
 * pipe mode, (3) onto a pseudoconsole through winterm's PTY layer, whose output conhost renders
 * first (ConPTY's ceiling: conhost's rendering, not the reader). Our process's CPU time for each
 * says which side bounds the rate, and so does winterm's largest read: reads take up to 64 KiB
 * and the pipes hold 64 KiB, so a largest read under 64 KiB means the pipe never filled while no
 * read was pending, and the program never waited on our reader. Then the same bytes written 64 KiB at a time by deno.exe,
 * through a plain pipe and through winterm's pipe mode: what our reader does when the writer is
 * not the limit.
 *
 *   deno run -A scripts/bench_windows.ts [--mb 4] [--runs 3] [--json]
 *
 * On Linux, `deno task bench --only conpty` runs it in the Wine test bed. Wine's conhost is not
 * Windows': its figures say where winterm's reader stands against the console it has, not what
 * Windows reaches (on Windows 10/11 conhost renders about 5-13 MB/s).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runningUnderWine, spawn } from "../src/pty/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { mb: { type: "string" }, runs: { type: "string" }, json: { type: "boolean" } },
});
const MB = 1_000_000;
const size = Number(values.mb ?? 4) * MB;
const runs = Number(values.runs ?? 3);

/** Our process's CPU time so far (user + kernel), in ms, from GetProcessTimes. */
const kernel32 = Deno.dlopen("kernel32.dll", {
  GetCurrentProcess: { parameters: [], result: "pointer" },
  GetProcessTimes: {
    parameters: ["pointer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
});
function cpuMs(): number {
  const [created, exited, kernel, user] = [0, 0, 0, 0].map(() => new BigUint64Array(1));
  kernel32.symbols.GetProcessTimes(
    kernel32.symbols.GetCurrentProcess(),
    new Uint8Array(created.buffer),
    new Uint8Array(exited.buffer),
    new Uint8Array(kernel.buffer),
    new Uint8Array(user.buffer),
  );
  return Number(kernel[0] + user[0]) / 10_000; // 100 ns units
}

interface Sample {
  ms: number;
  cpu: number;
  bytes: number;
  /** winterm's largest read (its reads take up to 64 KiB), 0 for a plain pipe. */
  largest: number;
}

/** What a contender received: its bytes, and (winterm's) largest single read. */
interface Received {
  bytes: number;
  largest?: number;
}

async function measured(run: () => Promise<Received>): Promise<Sample> {
  const [started, cpu] = [performance.now(), cpuMs()];
  const { bytes, largest = 0 } = await run();
  return { ms: performance.now() - started, cpu: cpuMs() - cpu, bytes, largest };
}

/**
 * Counts what a winterm child hands on. A read that never came back full means the pipe never
 * filled up while no read was pending: the program never waited on our reader.
 */
async function received(
  spawning: ReturnType<typeof spawn>,
  stdoutOnly = false,
): Promise<Received> {
  const child = await spawning;
  const seen = { bytes: 0, largest: 0 };
  child.onData((data, stream) => {
    if (stdoutOnly && stream !== "stdout") return;
    seen.bytes += data.length;
    seen.largest = Math.max(seen.largest, data.length);
  });
  await child.exited;
  return seen;
}

// In the working directory, under a name that needs no quoting on cmd.exe's command line.
const file = `winterm-bench-${Deno.pid}.txt`;
const line = "the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\r\n";
Deno.writeTextFileSync(file, line.repeat(Math.ceil(size / line.length)));
const cmd = `${Deno.env.get("SystemRoot") ?? "C:\\windows"}\\system32\\cmd.exe`;

const contenders: Record<string, () => Promise<Received>> = {
  "plain pipe (Deno.Command)": async () => {
    const { stdout } = await new Deno.Command(cmd, {
      args: ["/d", "/c", `type ${file}`],
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).output();
    return { bytes: stdout.length };
  },
  "winterm pipe mode": () =>
    received(spawn({
      file: cmd,
      args: ["/d", "/c", `type ${file}`],
      cwd: Deno.cwd(),
      env: Deno.env.toObject(),
      mode: "pipe",
    })),
  // Under Wine a child on a pseudoconsole has no console std handles: `>CON` writes to it.
  "winterm on ConPTY": () =>
    received(spawn({
      file: cmd,
      args: ["/d", "/c", `type ${file} >CON`],
      cwd: Deno.cwd(),
      env: Deno.env.toObject(),
      mode: "pty",
      cols: 120,
      rows: 40,
    })),
};

const producer = "const b = new TextEncoder().encode(" +
  `${JSON.stringify(line)}.repeat(${Math.ceil(64 * 1024 / line.length)})); ` +
  `for (let n = 0; n < ${Math.ceil(size / (64 * 1024))}; n++) ` +
  "for (let o = 0; o < b.length;) o += Deno.stdout.writeSync(b.subarray(o));";
contenders["deno.exe writing 64 KiB at a time, plain pipe (Deno.Command)"] = async () => ({
  bytes: (await new Deno.Command(Deno.execPath(), {
    args: ["eval", producer],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).output()).stdout.length,
});
contenders["deno.exe writing 64 KiB at a time, winterm pipe mode"] = () =>
  received(
    spawn({
      file: Deno.execPath(),
      args: ["eval", producer],
      cwd: Deno.cwd(),
      env: Deno.env.toObject(),
      mode: "pipe",
    }),
    true,
  );

const samples = new Map(Object.keys(contenders).map((name) => [name, [] as Sample[]]));
try {
  for (let run = 0; run < runs; run++) {
    for (const [name, contender] of Object.entries(contenders)) {
      samples.get(name)!.push(await measured(contender));
    }
  }
} finally {
  Deno.removeSync(file);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const msOf = (name: string) => median(samples.get(name)!.map((s) => s.ms));
const rows = [...samples].map(([name, list]) => {
  const reference = name.startsWith("deno.exe")
    ? "deno.exe writing 64 KiB at a time, plain pipe (Deno.Command)"
    : "plain pipe (Deno.Command)";
  const pipeMs = msOf(reference);
  const ms = msOf(name);
  const cpu = median(list.map((s) => s.cpu));
  const largest = Math.max(...list.map((s) => s.largest));
  return {
    what:
      `${size / MB} MB of text lines ${name.startsWith("deno.exe") ? "" : "`type`d by cmd.exe: "}` +
      name +
      (runningUnderWine() ? " (Wine test bed)" : ""),
    figure: `${ms.toFixed(0)} ms (${(size / MB / (ms / 1000)).toFixed(1)} MB/s); our CPU ` +
      `${cpu.toFixed(0)} ms; ${median(list.map((s) => s.bytes))} bytes received` +
      (largest ? `; largest read ${(largest / 1024).toFixed(1)} KiB of 64` : ""),
    reference: `${reference}: ${pipeMs.toFixed(0)} ms`,
    ratio: `${(ms / pipeMs).toFixed(2)}x`,
    note: "time over the plain pipe's" +
      (largest && largest < 64 * 1024
        ? "; no read came back full: the program never waited on winterm's reader"
        : ""),
  };
});
if (values.json) console.log(JSON.stringify(rows));
else for (const row of rows) console.log(`${row.what}: ${row.figure}; ${row.ratio} of pipe`);
