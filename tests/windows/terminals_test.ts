/**
 * Persistent terminals on Windows through the real server: waits, reads, the screen, keys,
 * kill and release. Under Wine a console program only reaches the pseudoconsole by writing to
 * CON; the server starts an interactive cmd there with its input and output on CON.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, serverTest } from "../helpers/mcp.ts";
import { eventually } from "../helpers/process.ts";
import { listProcesses } from "../helpers/windows.ts";

const windows = Deno.build.os === "windows";

interface Waited {
  condition: string;
  output: string;
  exitStatus?: { exitCode: number | null; signal: string | null };
}

const withServer = (name: string, fn: (mcp: Connection) => Promise<void>, ignore = !windows) =>
  serverTest(name, fn, { ignore });

withServer(
  "a program's terminal: wait on a pattern and for the exit, read, screen",
  async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "cmd.exe",
      args: [
        "/d",
        "/c",
        "echo first line>CON & ping -n 2 127.0.0.1 >CON & echo last line>CON & exit 4",
      ],
    });
    const reply = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      pattern: "Reply from",
      timeoutMs: 30_000,
      since: 0,
    });
    assertEquals(reply.condition, "pattern");
    const done = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      exit: true,
      timeoutMs: 30_000,
    });
    assertEquals(done.exitStatus, { exitCode: 4, signal: null });
    const read = await mcp.callOk<{ output: string }>("terminal_read", {
      terminalId,
      mode: "head-tail",
      headLines: 1,
      tailLines: 1,
    });
    match(read.output, /first line/);
    match(read.output, /last line/);
    const screen = await mcp.callOk<{ output: string }>("terminal_read", {
      terminalId,
      mode: "screen",
    });
    match(screen.output, /^first line\n/);
    await mcp.callOk("terminal_release", { terminalId });
  },
);

withServer("Ctrl+C by key name, kill of the tree, release", async (mcp) => {
  const pings = () => listProcesses().filter((p) => /ping/i.test(p.exe)).map((p) => p.pid);
  const before = new Set(pings());
  const interrupted = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    command: "cmd.exe",
    args: ["/d", "/c", "ping -n 100 127.0.0.1 >CON"],
  });
  await mcp.callOk("terminal_wait", {
    terminalId: interrupted.terminalId,
    pattern: "Reply from",
    timeoutMs: 30_000,
    since: 0,
  });
  await mcp.callOk("terminal_write", { terminalId: interrupted.terminalId, keys: ["ctrl_c"] });
  const after = await mcp.callOk<Waited>("terminal_wait", {
    terminalId: interrupted.terminalId,
    timeoutMs: 15_000,
  });
  assertEquals(after.condition, "exit");

  const killed = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    command: "cmd.exe",
    args: ["/d", "/c", "ping -n 100 127.0.0.1 >CON"],
  });
  await mcp.callOk("terminal_wait", {
    terminalId: killed.terminalId,
    pattern: "Reply from",
    timeoutMs: 30_000,
    since: 0,
  });
  // terminal_kill closes the console first (CTRL_CLOSE_EVENT, as a closing window sends), and
  // ends the job after the grace period: either way the tree is gone and the exit reported.
  const result = await mcp.callOk<{ exitStatus: { exitCode: number | null } }>("terminal_kill", {
    terminalId: killed.terminalId,
  });
  assertEquals(typeof result.exitStatus.exitCode, "number");
  ok(await eventually(() => pings().every((pid) => before.has(pid))), "ping survived the kill");
  const released = await mcp.callOk<{ released: boolean }>("terminal_release", {
    terminalId: killed.terminalId,
  });
  ok(released.released);
});

withServer("an interactive cmd keeps its state across writes", async (mcp) => {
  const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    shell: "cmd",
  });
  await mcp.callOk("terminal_write", { terminalId, input: "set WINTERM_STATE=kept" });
  await mcp.callOk("terminal_write", { terminalId, input: "cd /d %SystemRoot%" });
  await mcp.callOk("terminal_write", { terminalId, input: "echo [%CD%][%WINTERM_STATE%]" });
  const seen = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    pattern: "\\[[A-Z]:\\\\Windows\\]\\[kept\\]",
    flags: "i",
    timeoutMs: 15_000,
    since: 0,
  });
  assertEquals(seen.condition, "pattern");
  await mcp.callOk("terminal_release", { terminalId });
}, !windows);
