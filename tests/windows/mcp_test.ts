/**
 * The MCP server run by deno.exe on Windows (or under Wine), driven over stdio by the SDK
 * client: run_command, query, input, terminate, timeouts. Under Wine, programs on a
 * pseudoconsole write to CON to reach it (see the test bed's notes).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runningUnderWine } from "../../src/pty/mod.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { type CommandQuery, type Connection, runToEnd, serverTest } from "../helpers/mcp.ts";
import { eventually } from "../helpers/process.ts";
import { listProcesses } from "../helpers/windows.ts";
import { limitedTest } from "../helpers/limited.ts";

const windows = Deno.build.os === "windows";

const withServer = (name: string, fn: (mcp: Connection) => Promise<void>) =>
  serverTest(name, fn, { ignore: !windows });

withServer("run_command through cmd on a pseudoconsole, and the exit code", async (mcp) => {
  const result = await runToEnd(mcp, {
    command: "echo hello from cmd>CON & exit 5",
    shell_type: "cmd",
  });
  assertEquals([result.status, result.exit_code], ["completed", 5]);
  match(result.stdout, /hello from cmd/);
});

withServer("the default shell, and get_version's report of the shells found", async (mcp) => {
  const version = await mcp.callOk<
    { shells: { powershell: string | null; cmd: string | null }; platform: string }
  >(
    "get_version",
  );
  assertEquals(version.platform, "windows");
  ok(version.shells.cmd?.toLowerCase().endsWith("cmd.exe"), JSON.stringify(version.shells));
  if (runningUnderWine()) assertEquals(version.shells.powershell, null); // Wine's stub is not one
  if (version.shells.powershell === null) {
    const result = await runToEnd(mcp, { command: "echo default shell>CON" });
    match(result.stdout, /default shell/);
  } else {
    const result = await runToEnd(mcp, { command: "Write-Output 'default: PowerShell'" });
    match(result.stdout, /default: PowerShell/);
  }
});

withServer("pipe mode: stdout and stderr apart, Chinese output intact", async (mcp) => {
  // encoding utf-8 switches cmd to code page 65001, in which it can write Chinese whatever the
  // system's code page (437 cannot represent it).
  const result = await runToEnd(mcp, {
    command: "echo out & echo err 1>&2 & echo 中文输出",
    shell_type: "cmd",
    use_pty: false,
    encoding: "utf-8",
  });
  match(result.stdout, /out\s+中文输出/);
  match(result.stderr, /err/);
});

withServer("send_command_input answers a prompt", async (mcp) => {
  const { token } = await mcp.callOk<{ token: string }>("run_command", {
    command: 'cmd.exe /d /v:on /c "set /p ANSWER=<CON & echo got [!ANSWER!]>CON"',
    shell_type: "executable",
  });
  // Sent at once: the console keeps input until the program reads it.
  await mcp.callOk("send_command_input", { token, input: "forty two" });
  const result = await mcp.callOk<CommandQuery>("query_command_status", { token, wait_ms: 30_000 });
  assertEquals(result.exit_code, 0);
  match(result.stdout, /got \[forty two\]/);
});

withServer("stdin is read on a pseudoconsole and through pipes, then end of input", async (mcp) => {
  // On a console each line of stdin is typed, Enter ending it; then Ctrl+Z, Enter.
  const typed = await runToEnd(mcp, {
    command: 'cmd.exe /d /v:on /c "set /p A=<CON & set /p B=<CON & echo got [!A!] [!B!]>CON"',
    shell_type: "executable",
    stdin: "forty two\nsix\n",
  });
  assertEquals(typed.exit_code, 0);
  match(typed.stdout, /got \[forty two\] \[six\]/);
  // Read to its end: the console's Ctrl+Z, Enter ends it (the console echoes the input first).
  const sorted = await runToEnd(mcp, {
    command: "sort <CON >CON",
    shell_type: "cmd",
    stdin: "pear\napple\n",
  });
  assertEquals(sorted.exit_code, 0);
  match(sorted.stdout, /apple\r?\npear\n$/);
  // Through pipes, as it is (the program's line ends are its own), then the pipe closed: more
  // copies it all and ends.
  const piped = await runToEnd(mcp, {
    command: "more",
    shell_type: "cmd",
    use_pty: false,
    stdin: "pear\r\napple\r\n",
  });
  assertEquals(piped.exit_code, 0);
  match(piped.stdout, /pear\r?\napple/);
});

withServer("terminate_command ends the tree; a timeout does too", async (mcp) => {
  const pings = () => listProcesses().filter((p) => /ping/i.test(p.exe));
  const before = new Set(pings().map((p) => p.pid));
  const { token } = await mcp.callOk<{ token: string }>("run_command", {
    command: "ping -n 100 127.0.0.1 >CON",
    shell_type: "cmd",
  });
  ok(await eventually(() => pings().some((p) => !before.has(p.pid))), "ping did not start");
  const done = await mcp.callOk<{ success: boolean }>("terminate_command", { token });
  ok(done.success);
  const result = await mcp.callOk<CommandQuery>("query_command_status", { token });
  assertEquals([result.status, result.exit_code], ["terminated", -1]);
  ok(await eventually(() => !pings().some((p) => !before.has(p.pid))), "ping survived terminate");

  const timed = await runToEnd(mcp, {
    command: "ping -n 100 127.0.0.1 >CON",
    shell_type: "cmd",
    timeout: 1,
  });
  assertEquals([timed.status, timed.exit_code, timed.timeout_occurred], ["completed", -1, true]);
  ok(await eventually(() => !pings().some((p) => !before.has(p.pid))), "ping survived the timeout");
});

limitedTest({
  name: "over HTTP: the REST API drives a terminal; health needs no token, the rest does",
  ignore: !windows,
  async fn() {
    const server = await startHttpServer();
    try {
      assertEquals(
        (await request(server, "GET", "/api/health", { token: null })).json.data.status,
        "healthy",
      );
      assertEquals((await request(server, "GET", "/api/terminals", { token: null })).status, 401);
      const created = await request(server, "POST", "/api/terminals", {
        body: { command: "cmd.exe", args: ["/d", "/c", "echo via rest>CON"] },
      });
      assertEquals(created.status, 201);
      const id = created.json.data.terminalId;
      let output = "";
      ok(
        await eventually(() => output.includes("via rest"), 15_000, async () => {
          output = (await request(server, "GET", `/api/terminals/${id}/output`)).json.data.output;
        }),
        output,
      );
      assertEquals((await request(server, "DELETE", `/api/terminals/${id}`)).json.success, true);
    } finally {
      await server.stop("SIGINT");
    }
  },
});

withServer(
  "one call: run_command with wait_ms; pagers off where Windows tools honour it",
  async (mcp) => {
    // cmd leaves an undefined (or empty) variable as it is written.
    const done = await mcp.callOk<CommandQuery>("run_command", {
      command: "echo [%GIT_PAGER%][%GH_PAGER%][%GLAB_PAGER%][%PAGER%]& exit 2",
      shell_type: "cmd",
      use_pty: false,
      wait_ms: 30_000,
    });
    assertEquals([done.status, done.exit_code], ["completed", 2]);
    assertEquals(done.stdout.trim(), "[cat][cat][cat][%PAGER%]");
    const aws = await mcp.callOk<CommandQuery>("run_command", {
      command: "set AWS_PAGER",
      shell_type: "cmd",
      use_pty: false,
      wait_ms: 30_000,
    });
    assertEquals(aws.stdout.trim(), "AWS_PAGER="); // set, and empty: the AWS CLI's "no pager"
    // The caller's own choice wins.
    const own = await mcp.callOk<CommandQuery>("run_command", {
      command: "echo [%GIT_PAGER%]",
      shell_type: "cmd",
      use_pty: false,
      env: { GIT_PAGER: "more" },
      wait_ms: 30_000,
    });
    assertEquals(own.stdout.trim(), "[more]");
  },
);
