/**
 * ConPTY throughput on Windows, beside a plain pipe measured in the same run: the same text
 * file `type`d by cmd.exe (1) into a plain pipe read by Deno.Command, (2) through winterm's
 * pipe mode, (3) onto a pseudoconsole through winterm's PTY layer, whose output conhost renders
 * first (ConPTY's ceiling: conhost's rendering, not the reader). Our process's CPU time for each
 * says which side bounds the rate. Then the same bytes written 64 KiB at a time by deno.exe,
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
}

async function measured(run: () => Promise<number>): Promise<Sample> {
  const [started, cpu] = [performance.now(), cpuMs()];
  const bytes = await run();
  return { ms: performance.now() - started, cpu: cpuMs() - cpu, bytes };
}

// In the working directory, under a name that needs no quoting on cmd.exe's command line.
const file = `winterm-bench-${Deno.pid}.txt`;
const line = "the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\r\n";
Deno.writeTextFileSync(file, line.repeat(Math.ceil(size / line.length)));
const cmd = `${Deno.env.get("SystemRoot") ?? "C:\\windows"}\\system32\\cmd.exe`;

const contenders: Record<string, () => Promise<number>> = {
  "plain pipe (Deno.Command)": async () => {
    const { stdout } = await new Deno.Command(cmd, {
      args: ["/d", "/c", `type ${file}`],
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).output();
    return stdout.length;
  },
  "winterm pipe mode": async () => {
    const child = spawn({
      file: cmd,
      args: ["/d", "/c", `type ${file}`],
      cwd: Deno.cwd(),
      env: Deno.env.toObject(),
      mode: "pipe",
    });
    let bytes = 0;
    child.onData((data) => bytes += data.length);
    await child.exited;
    return bytes;
  },
  // Under Wine a child on a pseudoconsole has no console std handles: `>CON` writes to it.
  "winterm on ConPTY": async () => {
    const child = spawn({
      file: cmd,
      args: ["/d", "/c", `type ${file} >CON`],
      cwd: Deno.cwd(),
      env: Deno.env.toObject(),
      mode: "pty",
      cols: 120,
      rows: 40,
    });
    let bytes = 0;
    child.onData((data) => bytes += data.length);
    await child.exited;
    return bytes;
  },
};

const producer = "const b = new TextEncoder().encode(" +
  `${JSON.stringify(line)}.repeat(${Math.ceil(64 * 1024 / line.length)})); ` +
  `for (let n = 0; n < ${Math.ceil(size / (64 * 1024))}; n++) ` +
  "for (let o = 0; o < b.length;) o += Deno.stdout.writeSync(b.subarray(o));";
contenders["deno.exe writing 64 KiB at a time, plain pipe (Deno.Command)"] = async () =>
  (await new Deno.Command(Deno.execPath(), {
    args: ["eval", producer],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).output()).stdout.length;
contenders["deno.exe writing 64 KiB at a time, winterm pipe mode"] = async () => {
  const child = spawn({
    file: Deno.execPath(),
    args: ["eval", producer],
    cwd: Deno.cwd(),
    env: Deno.env.toObject(),
    mode: "pipe",
  });
  let bytes = 0;
  child.onData((data, stream) => stream === "stdout" && (bytes += data.length));
  await child.exited;
  return bytes;
};

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
  return {
    what:
      `${size / MB} MB of text lines ${name.startsWith("deno.exe") ? "" : "`type`d by cmd.exe: "}` +
      name +
      (runningUnderWine() ? " (Wine test bed)" : ""),
    figure: `${ms.toFixed(0)} ms (${(size / MB / (ms / 1000)).toFixed(1)} MB/s); our CPU ` +
      `${cpu.toFixed(0)} ms; ${median(list.map((s) => s.bytes))} bytes received`,
    reference: `${reference}: ${pipeMs.toFixed(0)} ms`,
    ratio: `${(ms / pipeMs).toFixed(2)}x`,
    note: "time over the plain pipe's",
  };
});
if (values.json) console.log(JSON.stringify(rows));
else for (const row of rows) console.log(`${row.what}: ${row.figure}; ${row.ratio} of pipe`);
