/**
 * Smoke test of a built executable (or any server command): a real MCP handshake over stdio
 * with the SDK client, the tool list, get_version, then commands run to completion and a
 * persistent terminal read as a screen; a non-zero exit, a timeout, Ctrl+C, the stop of a
 * process tree, a policy refusal (a second server with `--policy`) and `--http` (a third, driven
 * over REST and MCP Streamable HTTP). On Windows also: cmd and PowerShell, each through pipes and
 * on a pseudoconsole (PowerShell 7 and Windows PowerShell 5.1, each named; required unless under
 * Wine, which has none), and legacy code-page output (GBK through `encoding: 936`, which runs
 * `chcp 936`; skipped where the system lacks that code page).
 *
 *   deno run -A scripts/smoke.ts dist/winterm-mcp.exe
 *   deno run -A scripts/smoke.ts deno run -A dist/winterm-mcp.js
 *
 * Every step has a bound: a hang fails it, and the run goes on to the next.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runningUnderWine } from "../src/pty/mod.ts";

const [binary, ...args] = Deno.args;
if (!binary) {
  console.error("usage: smoke.ts EXECUTABLE [ARGS...]");
  Deno.exit(2);
}
const windows = Deno.build.os === "windows";
const wine = runningUnderWine() !== null;
/** Under Wine a program on a pseudoconsole reaches it only by writing to CON. */
const toConsole = wine ? ">CON" : "";
/** How long one step may take. */
const STEP_LIMIT_MS = 120_000;

const failures: string[] = [];

/** Starts a server over stdio with extra arguments, and connects a client to it. */
async function connect(extra: string[] = []): Promise<Client> {
  const client = new Client({ name: "winterm-smoke", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: binary,
      args: [...args, ...extra],
      env: Deno.env.toObject(),
      stderr: "inherit",
    }),
  );
  return client;
}

const started = performance.now();
const client = await connect();
console.log(`initialize answered in ${(performance.now() - started).toFixed(0)} ms`);
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`);

async function call<T>(name: string, args: Record<string, unknown>, on = client): Promise<T> {
  const result = await on.callTool({ name, arguments: args }, undefined, {
    timeout: STEP_LIMIT_MS,
  });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Runs a step within its bound, and records it as passed or failed. */
async function step(label: string, body: () => Promise<string | true>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overdue = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`not done within ${STEP_LIMIT_MS} ms`), STEP_LIMIT_MS);
  });
  const outcome = await Promise.race([
    body().catch((error: Error) => error.message),
    overdue,
  ]);
  clearTimeout(timer);
  if (outcome === true) {
    console.log(`ok   ${label}`);
  } else {
    console.log(`FAIL ${label}: ${outcome}`);
    failures.push(label);
  }
}

interface Finished {
  status: string;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timeout_occurred: boolean;
}

/** Runs a command to its end (within the step bound). */
async function runToEnd(args: Record<string, unknown>): Promise<Finished> {
  const { token } = await call<{ token: string }>("run_command", args);
  return await call<Finished>("query_command_status", { token, wait_ms: STEP_LIMIT_MS - 10_000 });
}

/** Runs a command to its end and checks that it succeeded with this output. */
function check(label: string, args: Record<string, unknown>, expect: RegExp): Promise<void> {
  return step(label, async () => {
    const result = await runToEnd(args);
    const passed = result.status === "completed" && result.exit_code === 0 &&
      expect.test(result.stdout);
    return passed || JSON.stringify(result);
  });
}

const version = await call<{ shells: { powershell: string | null; cmd: string | null } }>(
  "get_version",
  {},
);
console.log("get_version:", JSON.stringify(version));

// (Under Wine the default shell is cmd: PowerShell is missing there.)
await check("default shell", { command: `echo smoke-ok${toConsole}` }, /smoke-ok/);
if (windows) {
  await check(
    "cmd, pipes",
    { command: "echo cmd-pipe", shell_type: "cmd", use_pty: false },
    /cmd-pipe/,
  );
  await check(
    "cmd, pseudoconsole",
    { command: `echo cmd-pty${toConsole}`, shell_type: "cmd" },
    /cmd-pty/,
  );
  const systemRoot = Deno.env.get("SystemRoot") ?? "C:\\Windows";
  const powershells = [
    ...(version.shells.powershell ? [["the default PowerShell", undefined]] : []),
    ...(wine ? [] : [[
      "Windows PowerShell 5.1",
      `${systemRoot}\\System32\\WindowsPowerShell\\v1.0\\powershell.exe`,
    ]]),
  ];
  for (const [name, executable] of powershells) {
    for (const use_pty of [false, true]) {
      await check(
        `${name}, ${use_pty ? "pseudoconsole" : "pipes"}`,
        {
          command: "Write-Output ('ps-' + 'ok ü 中')",
          shell_type: "powershell",
          use_pty,
          ...(executable ? { executable } : {}),
        },
        /ps-ok ü 中/,
      );
    }
  }
  if (!version.shells.powershell && !wine) {
    console.log("FAIL no PowerShell found on Windows");
    failures.push("PowerShell");
  }
  await legacyCodePage();
}

// A persistent terminal: output waited for, then seen as a screen.
await step("terminal and screen", async () => {
  const [command, args] = windows
    ? ["cmd.exe", ["/d", "/c", `echo screen-ok${toConsole}`]]
    : ["sh", ["-c", "echo screen-ok"]];
  const { terminalId } = await call<{ terminalId: string }>("terminal_create", { command, args });
  const waited = await call<{ condition: string }>("terminal_wait", {
    terminalId,
    pattern: "screen-ok",
    timeoutMs: 30_000,
    since: 0,
  });
  const screen = await call<{ output: string }>("terminal_read", { terminalId, mode: "screen" });
  await call("terminal_release", { terminalId });
  return (waited.condition === "pattern" && /screen-ok/.test(screen.output)) ||
    JSON.stringify(screen.output);
});

await step("a non-zero exit", async () => {
  const result = await runToEnd(
    windows ? { command: "exit 3", shell_type: "cmd" } : { command: "exit 3" },
  );
  return (result.status === "completed" && result.exit_code === 3) || JSON.stringify(result);
});

await step("a timeout", async () => {
  const result = await runToEnd({
    command: windows ? "ping -n 60 127.0.0.1 >NUL" : "sleep 60",
    ...(windows ? { shell_type: "cmd" } : {}),
    timeout: 2,
  });
  return (result.timeout_occurred && result.exit_code === -1) || JSON.stringify(result);
});

await step("Ctrl+C ends the program of a terminal", async () => {
  // (Under Wine a console reads Ctrl+C only once it has written something.)
  const [command, args] = windows
    ? ["cmd.exe", ["/d", "/c", `echo ready${toConsole} & ping -n 60 127.0.0.1 >NUL`]]
    : ["sh", ["-c", "echo ready; sleep 60"]];
  const { terminalId } = await call<{ terminalId: string }>("terminal_create", { command, args });
  const ready = await call<{ condition: string }>("terminal_wait", {
    terminalId,
    pattern: "ready",
    timeoutMs: 30_000,
    since: 0,
  });
  await call("terminal_write", { terminalId, keys: ["ctrl_c"] });
  const ended = await call<{ condition: string }>("terminal_wait", {
    terminalId,
    exit: true,
    timeoutMs: 30_000,
  });
  await call("terminal_release", { terminalId });
  return (ready.condition === "pattern" && ended.condition === "exit") ||
    `ready: ${ready.condition}, then: ${ended.condition}`;
});

await step("terminate_command ends the whole tree", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "winterm-smoke-" });
  try {
    const sep = windows ? "\\" : "/";
    const sleep = "setInterval(() => {}, 1000)";
    const child = `Deno.writeTextFileSync(Deno.args[0], String(Deno.pid)); ${sleep}`;
    const parent =
      `new Deno.Command(Deno.execPath(), { args: ["eval", ${
        JSON.stringify(child)
      }, Deno.args[0] + ${JSON.stringify(sep + "child.pid")}] }).spawn(); ` +
      `Deno.writeTextFileSync(Deno.args[0] + ${
        JSON.stringify(sep + "parent.pid")
      }, String(Deno.pid)); ${sleep}`;
    const { token } = await call<{ token: string }>("run_command", {
      command: "deno",
      executable: Deno.execPath(),
      args: ["eval", parent, dir],
      shell_type: "executable",
      timeout: 600,
    });
    const pids = await until(() => {
      try {
        const read = ["parent", "child"].map((name) =>
          Number(Deno.readTextFileSync(`${dir}${sep}${name}.pid`))
        );
        return read.every((pid) => pid > 0) ? read : undefined;
      } catch {
        return undefined;
      }
    });
    if (!pids) return "the tree did not start";
    await call("terminate_command", { token });
    const gone = await until(() => pids.every((pid) => !alive(pid)) || undefined);
    return gone === true || `still running after terminate: ${pids.filter(alive).join(", ")}`;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

await step("a policy refusal (a server with --policy)", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "winterm-smoke-" });
  const policy = `${dir}${windows ? "\\" : "/"}policy.json`;
  Deno.writeTextFileSync(policy, JSON.stringify({ programs: { deny: ["hostname"] } }));
  const guarded = await connect(["--policy", policy]);
  try {
    const result = await guarded.callTool(
      {
        name: "run_command",
        arguments: { command: "hostname", shell_type: "executable", wait_ms: 30_000 },
      },
      undefined,
      { timeout: STEP_LIMIT_MS },
    );
    const text = JSON.stringify(result.content);
    return (result.isError === true && /refused by policy/.test(text)) || text;
  } finally {
    await guarded.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

await step("--http: health, the REST API with its token, MCP over Streamable HTTP", async () => {
  const token = crypto.randomUUID().replaceAll("-", "");
  const server = new Deno.Command(binary, {
    args: [...args, "--http", "--port", "0"],
    env: { ...Deno.env.toObject(), WINTERM_TOKEN: token },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    let said = "";
    let url: string | undefined;
    const reader = server.stderr.pipeThrough(new TextDecoderStream()).getReader();
    while (url === undefined) {
      const { value, done } = await reader.read();
      if (done) return `the server ended before serving: ${said}`;
      said += value;
      url = said.match(/serving MCP at (http:\/\/\S+)\/mcp/)?.[1];
    }
    reader.releaseLock();
    server.stderr.pipeTo(new WritableStream()).catch(() => {});
    const health = await fetch(`${url}/api/health`);
    await health.body?.cancel();
    const anonymous = await fetch(`${url}/api/terminals`);
    await anonymous.body?.cancel();
    const listed = await fetch(`${url}/api/terminals`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await listed.body?.cancel();
    const statuses = [health.status, anonymous.status, listed.status];
    if (statuses.join() !== "200,401,200") return `health, anonymous, with token: ${statuses}`;
    const remote = new Client({ name: "winterm-smoke-http", version: "1.0.0" });
    await remote.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const over = await call<{ stdout: string; exit_code: number }>("run_command", {
      command: "echo http-ok",
      ...(windows ? { shell_type: "cmd", use_pty: false } : {}),
      wait_ms: 30_000,
    }, remote);
    await remote.close();
    return (over.exit_code === 0 && /http-ok/.test(over.stdout)) || JSON.stringify(over);
  } finally {
    try {
      server.kill();
    } catch {
      // ended already
    }
    await server.status;
  }
});

await client.close();
if (failures.length > 0) {
  console.error(`smoke test failed: ${failures.join(", ")}`);
  Deno.exit(1);
}
console.log("smoke test passed");

/**
 * GBK output from cmd, through `encoding: 936` (which runs `chcp 936`): through pipes (with a
 * UTF-8 writer in the same stream, as cmd running deno), on a pseudoconsole, and a GBK file.
 */
async function legacyCodePage(): Promise<void> {
  const probe = await runToEnd({ command: "chcp 936", shell_type: "cmd", use_pty: false });
  if (!/936/.test(probe.stdout)) {
    console.log(`skip legacy code page: this system has no code page 936 (${probe.stderr})`);
    return;
  }
  const deno = `"${Deno.execPath()}" eval "console.log('deno 中文')"`;
  await check(
    "GBK through pipes (encoding 936), UTF-8 in the same stream",
    { command: `echo cmd 中文输出 & ${deno}`, shell_type: "cmd", use_pty: false, encoding: "936" },
    /cmd 中文输出\s+deno 中文/,
  );
  await check(
    "GBK on a pseudoconsole (encoding 936)",
    { command: `echo 中文输出${toConsole}`, shell_type: "cmd", encoding: "936" },
    /中文输出/,
  );
  const dir = Deno.makeTempDirSync({ prefix: "winterm-smoke-" });
  try {
    const file = `${dir}\\gbk.txt`;
    // "GBK文本：中文" in GBK.
    Deno.writeFileSync(
      file,
      Uint8Array.from([
        0x47,
        0x42,
        0x4b,
        0xce,
        0xc4,
        0xb1,
        0xbe,
        0xa3,
        0xba,
        0xd6,
        0xd0,
        0xce,
        0xc4,
        0x0d,
        0x0a,
      ]),
    );
    await check(
      "a GBK file typed through pipes (encoding 936)",
      { command: `type "${file}"`, shell_type: "cmd", use_pty: false, encoding: "936" },
      /GBK文本：中文/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** Polls `probe` until it gives a value, for at most a minute. */
async function until<T>(probe: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Whether a process with this id is running. */
function alive(pid: number): boolean {
  if (!windows) {
    try {
      Deno.kill(pid, "SIGCONT");
      return true;
    } catch {
      return false;
    }
  }
  const kernel = Deno.dlopen("kernel32.dll", {
    OpenProcess: { parameters: ["u32", "i32", "u32"], result: "pointer" },
    WaitForSingleObject: { parameters: ["pointer", "u32"], result: "u32" },
    CloseHandle: { parameters: ["pointer"], result: "i32" },
  });
  try {
    // SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION; WAIT_TIMEOUT: not signalled, running.
    const handle = kernel.symbols.OpenProcess(0x00100000 | 0x1000, 0, pid);
    if (handle === null) return false;
    const running = kernel.symbols.WaitForSingleObject(handle, 0) === 258;
    kernel.symbols.CloseHandle(handle);
    return running;
  } finally {
    kernel.close();
  }
}
