/**
 * What runs on Windows, and how it ends, through the real server: exit code 259, the policy
 * against ComSpec and PATHEXT in the request (with the audit log naming what ran), a `git.bat`
 * planted in the working directory, and graceful stops that let programs clean up.
 *
 * Under Wine, conhost reads a pseudoconsole's input only once the console has written output,
 * so the pipe-mode stop below writes to CON first; and Wine ends deno.exe on Ctrl+C without
 * running its SIGINT listener, so that test runs on Windows only.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runningUnderWine } from "../../src/pty/mod.ts";
import { type CommandQuery, type Connection, runToEnd, serverTest, text } from "../helpers/mcp.ts";
import { eventually, tempDir } from "../helpers/process.ts";

const windows = Deno.build.os === "windows";

/** A command's answer, with the signal that ended it. */
type Ended = CommandQuery & { signal: string | null };

const withServer = (
  name: string,
  fn: (mcp: Connection) => Promise<void>,
  options: { ignore?: boolean; args?: string[] } = {},
) => serverTest(name, fn, { ignore: options.ignore ?? !windows, args: options.args });

withServer("exit code 259 (STILL_ACTIVE) completes, on pipes and on a terminal", async (mcp) => {
  for (const use_pty of [false, true]) {
    const result = await runToEnd(mcp, { command: "exit 259", shell_type: "cmd", use_pty });
    assertEquals([result.status, result.exit_code], ["completed", 259]);
  }
  const deno = await runToEnd(mcp, {
    command: "deno",
    executable: Deno.execPath(),
    args: ["eval", "Deno.exit(259)"],
    shell_type: "executable",
    use_pty: false,
  });
  assertEquals([deno.status, deno.exit_code], ["completed", 259]);
});

withServer(
  "exit codes are DWORDs: 0xFFFFFFFF is not the -1 of a stop, 0xC000013A alone no SIGINT",
  async (mcp) => {
    for (const use_pty of [false, true]) {
      // cmd's `exit -1` is exit code 0xFFFFFFFF: it was answered -1, as a terminated command is.
      const minusOne = await runToEnd(mcp, {
        command: "exit -1",
        shell_type: "cmd",
        use_pty,
      }) as Ended;
      assertEquals([minusOne.status, minusOne.exit_code, minusOne.signal], [
        "completed",
        4294967295,
        null,
      ]);
      // 0xC000013A, what a console's Ctrl+C gives, chosen by the program with nobody pressing
      // Ctrl+C: its exit code, not "killed by SIGINT".
      const own = await runToEnd(mcp, {
        command: "exit -1073741510",
        shell_type: "cmd",
        use_pty,
      }) as Ended;
      assertEquals([own.status, own.exit_code, own.signal], ["completed", 0xc000013a, null]);
    }
  },
);

withServer(
  "send_command_input of Ctrl+C alone interrupts a command in pipe mode too",
  async (mcp) => {
    // (Under Wine the console must have written something before it reads Ctrl+C.)
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command:
        "echo started>CON & echo started & ping -n 300 127.0.0.1 >NUL & echo not interrupted",
      shell_type: "cmd",
      use_pty: false,
      timeout: 600,
    });
    let seen = "";
    ok(
      await eventually(() => seen.includes("started"), 15_000, async () => {
        seen = (await mcp.callOk<CommandQuery>("query_command_status", { token })).stdout;
      }),
      seen,
    );
    await mcp.callOk("send_command_input", { token, input: "\u0003", append_newline: false });
    const done = await mcp.callOk<Ended>("query_command_status", { token, wait_ms: 60_000 });
    if (done.status === "running") await mcp.callOk("terminate_command", { token });
    // The 0x03 went to the pipe, where ping never looks: it ran its five minutes. Typed into the
    // console, it ends ping, and cmd with the rest of its line.
    assertEquals([done.status, done.stdout.includes("not interrupted")], ["completed", false]);
  },
);

/** A folder with build.bat and a policy denying hostname, and where the audit log goes. */
function policyFixture(policy: Record<string, unknown>) {
  const dir = tempDir("winterm policy ");
  Deno.writeTextFileSync(`${dir}\\build.bat`, "@echo build ran\r\n");
  Deno.writeTextFileSync(`${dir}\\policy.json`, JSON.stringify(policy));
  return {
    dir,
    args: ["--policy", `${dir}\\policy.json`, "--audit", `${dir}\\audit.jsonl`],
    audit: () =>
      Deno.readTextFileSync(`${dir}\\audit.jsonl`).trim().split("\n").map((line) =>
        JSON.parse(line)
      ),
  };
}

{
  const fixture = windows ? policyFixture({ programs: { deny: ["hostname"] } }) : undefined;
  withServer(
    "under a policy, ComSpec and PATHEXT from the request are refused, and audited",
    async (mcp) => {
      const { dir } = fixture!;
      const hostname = `${Deno.env.get("SystemRoot")}\\System32\\hostname.exe`;
      for (const env of [{ ComSpec: hostname }, { comspec: hostname }, { PATHEXT: ".BAT.;.EXE" }]) {
        const result = await mcp.call("run_command", {
          command: ".\\build",
          shell_type: "executable",
          working_directory: dir,
          env,
          use_pty: false,
        });
        ok(result.isError, JSON.stringify(result));
        match(text(result), /may not be set \(always protected on Windows under a policy/);
      }
      // Without them the batch file runs, through the system's own cmd.exe.
      const run = await runToEnd(mcp, {
        command: ".\\build",
        shell_type: "executable",
        working_directory: dir,
        use_pty: false,
      });
      assertEquals(run.stdout, "build ran\n");
      const records = fixture!.audit();
      assertEquals(records.filter((r) => r.event === "refused").length, 3);
      const start = records.find((r) => r.event === "start");
      match(start.program, /build\.bat$/i);
      match(start.interpreter, /\\system32\\cmd\.exe$/i);
      Deno.removeSync(dir, { recursive: true });
    },
    { args: fixture?.args },
  );
}

{
  const fixture = windows ? policyFixture({ programs: { allow: ["build"] } }) : undefined;
  withServer(
    "the policy judges every image that runs: a batch file needs cmd.exe allowed too",
    async (mcp) => {
      const result = await mcp.call("run_command", {
        command: ".\\build.bat.",
        shell_type: "executable",
        working_directory: fixture!.dir,
        use_pty: false,
      });
      ok(result.isError);
      match(text(result), /cmd\.exe is not in programs\.allow \(it is what runs the batch file/i);
      const refused = fixture!.audit().find((r) => r.event === "refused");
      match(refused.program, /build\.bat$/i); // trailing dot removed, as Windows opens it
      match(refused.interpreter, /cmd\.exe$/i);
      Deno.removeSync(fixture!.dir, { recursive: true });
    },
    { args: fixture?.args },
  );
}

withServer(
  "without a policy, a ComSpec in the request does not choose the interpreter",
  async (mcp) => {
    const { dir } = policyFixture({});
    try {
      const hostname = `${Deno.env.get("SystemRoot")}\\System32\\hostname.exe`;
      const run = await runToEnd(mcp, {
        command: ".\\build.bat",
        shell_type: "executable",
        working_directory: dir,
        env: { ComSpec: hostname },
        use_pty: false,
      });
      assertEquals(run.stdout, "build ran\n");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
);

withServer("a git.bat planted in the working directory is not run for `git`", async (mcp) => {
  const dir = tempDir("winterm repo ");
  try {
    Deno.writeTextFileSync(`${dir}\\git.bat`, "@echo planted git ran\r\n");
    const result = await mcp.call("run_command", {
      command: "git --version",
      shell_type: "executable",
      working_directory: dir,
      use_pty: false,
    });
    if (result.isError) {
      match(text(result), /the working directory is not searched: use \.\\git/);
    } else {
      const { token } = result.structuredContent as { token: string };
      const done = await mcp.callOk<CommandQuery>("query_command_status", {
        token,
        wait_ms: 30_000,
      });
      ok(!done.stdout.includes("planted"), done.stdout);
    }
    const explicit = await runToEnd(mcp, {
      command: ".\\git --version",
      shell_type: "executable",
      working_directory: dir,
      use_pty: false,
    });
    assertEquals(explicit.stdout, "planted git ran\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

serverTest(
  "terminate sends Ctrl+C first: the tree stops by itself, long before the kill would come",
  async (mcp) => {
    for (const use_pty of [true, false]) {
      // (Pipe mode under Wine: the console must have written something before it reads Ctrl+C.)
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: "echo started>CON & echo started & ping -n 60 127.0.0.1 >NUL",
        shell_type: "cmd",
        use_pty,
      });
      let seen = "";
      ok(
        await eventually(() => seen.includes("started"), 15_000, async () => {
          seen = (await mcp.callOk<CommandQuery>("query_command_status", { token })).stdout;
        }),
        seen,
      );
      const started = performance.now();
      await mcp.callOk("terminate_command", { token });
      const done = await mcp.callOk<CommandQuery>("query_command_status", { token });
      assertEquals(done.status, "terminated");
      // The job would be ended after WINTERM_KILL_GRACE_MS (30 s here); ping -n 60 runs a
      // minute: only the Ctrl+C can have ended it this soon.
      const took = performance.now() - started;
      ok(took < 10_000, `use_pty ${use_pty}: terminate took ${took} ms`);
    }
  },
  { ignore: !windows, env: { WINTERM_KILL_GRACE_MS: "30000" } },
);

withServer(
  "a graceful stop runs a program's own Ctrl+C handler (deno SIGINT listener)",
  async (mcp) => {
    const dir = tempDir("winterm sigint ");
    try {
      const marker = `${dir}\\cleaned.txt`;
      const script = `Deno.addSignalListener("SIGINT", () => {` +
        `Deno.writeTextFileSync(${
          JSON.stringify(marker)
        }, "x"); console.log("cleaned up"); Deno.exit(3); });` +
        `console.log("ready"); setTimeout(() => {}, 60000);`;
      const { token } = await mcp.callOk<{ token: string }>("run_command", {
        command: "deno",
        executable: Deno.execPath(),
        args: ["eval", script],
        shell_type: "executable",
        use_pty: false,
      });
      let seen = "";
      ok(
        await eventually(() => seen.includes("ready"), 30_000, async () => {
          seen = (await mcp.callOk<CommandQuery>("query_command_status", { token })).stdout;
        }),
      );
      await mcp.callOk("terminate_command", { token });
      const done = await mcp.callOk<CommandQuery>("query_command_status", { token });
      match(done.stdout, /cleaned up/);
      ok(Deno.statSync(marker).isFile);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
  { ignore: !windows || runningUnderWine() !== null },
);
