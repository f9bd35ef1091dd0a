/**
 * Code pages through the real server on Windows (and under Wine, three times in CI: code page
 * 437, 936 with WINE_TESTBED_LANG=zh_CN.UTF-8, 932 with ja_JP.UTF-8). What a system's code page
 * cannot represent is asked for with `encoding`; everything else must come out right by itself.
 *
 * Wine's `type` puts a `?` at 511-byte write boundaries of a GBK file (a Wine bug): the files
 * here are far shorter. Under Wine a program on a pseudoconsole writes to CON to reach it.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import iconv from "iconv-lite";
import { runningUnderWine, systemCodePages } from "../../src/pty/mod.ts";
import { type CommandQuery, type Connection, runToEnd, serverTest, text } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { eventually, tempDir } from "../helpers/process.ts";
import { nativeText, oemLabel } from "../helpers/windows.ts";

const windows = Deno.build.os === "windows";
/** The system's OEM code page (0 elsewhere: the tests are ignored there). */
const OEM = systemCodePages()?.oem ?? 0;
const CHINESE = OEM === 936;
/** A double-byte OEM code page (936, 932, 949, 950), where Wine's `type` breaks UTF-8 bytes. */
const DOUBLE_BYTE = [932, 936, 949, 950].includes(OEM);
/** What a GBK file needs on a system whose code page is not GBK. */
const GBK_UNLESS_CHINESE = CHINESE ? {} : { encoding: "gbk" };

/** A folder with the test files: GBK and UTF-8 text, a GBK batch file. */
function files(): {
  dir: string;
  gbk: string;
  native: string;
  utf8: string;
  bat: string;
  tail: string;
} {
  const dir = tempDir("winterm enc ");
  const write = (name: string, bytes: Uint8Array) => {
    Deno.writeFileSync(`${dir}\\${name}`, bytes);
    return `${dir}\\${name}`;
  };
  return {
    dir,
    gbk: write("gbk.txt", iconv.encode("GBK文本：中文输出\r\n", "gbk")),
    native: write("native.bat", iconv.encode(`@echo ${nativeText("line")}\r\n`, oemLabel())),
    utf8: write("utf8.txt", new TextEncoder().encode("UTF-8 文本：ü é 😀\r\n")),
    bat: write("gbk.bat", iconv.encode("@echo 批处理：中文\r\n", "gbk")),
    // The very last bytes of the output are one multi-byte character.
    tail: write("tail.txt", iconv.encode("结尾是中", "gbk")),
  };
}

const withServer = (name: string, fn: (mcp: Connection) => Promise<void>, ignore = !windows) =>
  serverTest(name, fn, { ignore });

withServer(
  "cmd type through pipes: a GBK file, a UTF-8 file, a multi-byte last character",
  async (mcp) => {
    const { dir, gbk, utf8, tail } = files();
    try {
      const gbkRun = await runToEnd(mcp, {
        command: `type "${gbk}"`,
        shell_type: "cmd",
        use_pty: false,
        ...GBK_UNLESS_CHINESE,
      });
      assertEquals(gbkRun.stdout, "GBK文本：中文输出\n"); // (answers are cleaned: CRLF is LF)
      // Wine's `type` passes text through the console's code page (Windows' copies the bytes):
      // under 936 or 932 that breaks UTF-8 bytes, unless cmd runs in 65001.
      const utf8Run = await runToEnd(mcp, {
        command: `type "${utf8}"`,
        shell_type: "cmd",
        use_pty: false,
        ...(DOUBLE_BYTE && runningUnderWine() ? { encoding: "utf-8" } : {}),
      });
      assertEquals(utf8Run.stdout, "UTF-8 文本：ü é 😀\n");
      const tailRun = await runToEnd(mcp, {
        command: `type "${tail}"`,
        shell_type: "cmd",
        use_pty: false,
        ...GBK_UNLESS_CHINESE,
      });
      assertEquals(tailRun.stdout, "结尾是中");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
);

withServer(
  "cmd type on a pseudoconsole: conhost translates the console's code page",
  async (mcp) => {
    const { dir, gbk, utf8 } = files();
    try {
      // Without chcp 65001, a GBK file is right on a Chinese system as it is; elsewhere the
      // console is switched to 936 by `encoding`.
      const gbkRun = await runToEnd(mcp, {
        command: `type "${gbk}">CON`,
        shell_type: "cmd",
        ...(CHINESE ? {} : { encoding: "936" }),
      });
      match(gbkRun.stdout, /GBK文本：中文输出/);
      const utf8Run = await runToEnd(mcp, {
        command: `type "${utf8}">CON`,
        shell_type: "cmd",
        encoding: "utf-8",
      });
      // (Not the emoji: a console cell holds no character beyond U+FFFF under Wine's conhost.)
      match(utf8Run.stdout, /UTF-8 文本：ü é/);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
);

withServer(
  "batch files in the system's code page and in GBK, a UTF-8 writer (deno.exe) through pipes",
  async (mcp) => {
    const { dir, bat, native } = files();
    try {
      // A batch file in the system's own code page needs nothing.
      const nativeRun = await runToEnd(mcp, {
        command: "native.bat",
        executable: native,
        shell_type: "executable",
        use_pty: false,
      });
      assertEquals([nativeRun.exit_code, nativeRun.stdout], [0, `${nativeText("line")}\n`]);
      // A GBK one: cmd reads it in the console's code page and writes back the same bytes where
      // that code page is single-byte (437: every byte is a character); a Japanese cmd (932)
      // reads other characters in them, and writes those.
      if (CHINESE || !DOUBLE_BYTE) {
        const batRun = await runToEnd(mcp, {
          command: "gbk.bat",
          executable: bat,
          shell_type: "executable",
          use_pty: false,
          ...GBK_UNLESS_CHINESE,
        });
        assertEquals([batRun.exit_code, batRun.stdout], [0, "批处理：中文\n"]);
      }
      const writer = await runToEnd(mcp, {
        command: "deno",
        executable: Deno.execPath(),
        args: [
          "eval",
          "console.log('中文 ü é 😀'); Deno.stdout.writeSync(new TextEncoder().encode('end 中'))",
        ],
        shell_type: "executable",
        use_pty: false,
        // deno reads its command line as Unicode: what the ANSI code page lacks cannot reach it
        // changed (see WorstFit in docs/windows.md).
        allow_ansi_mismatch: true,
      });
      assertEquals(writer.stdout, "中文 ü é 😀\nend 中");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
);

withServer("set /p through pipes reads input in the console's code page", async (mcp) => {
  const prompt = async (input: string, extra: Record<string, unknown> = {}) => {
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command: 'cmd /d /v:on /c "set /p ANSWER=& echo got [!ANSWER!]"',
      shell_type: "executable",
      use_pty: false,
      ...extra,
    });
    const sent = await mcp.call("send_command_input", { token, input });
    if (sent.isError) await mcp.callOk("terminate_command", { token });
    const result = await mcp.callOk<CommandQuery>("query_command_status", {
      token,
      wait_ms: 30_000,
    });
    return { sent, result };
  };
  const native = nativeText();
  const { result } = await prompt(native);
  assertEquals(result.stdout, `got [${native}]\n`);
  // UTF-8 input, declared: a cmd shell is switched to 65001 (chcp), so it reads UTF-8. (A cmd
  // started as a program stays in the console's code page, and reads other characters in UTF-8
  // bytes wherever that code page does not map every byte: 932.)
  const declared = await prompt("中文输入", {
    command: "set /p ANSWER=& call echo got [%^ANSWER%]",
    shell_type: "cmd",
    encoding: "utf-8",
  });
  assertEquals(declared.result.stdout, "got [中文输入]\n");
  // Text the program's code page cannot hold is refused, not sent as '?'.
  const refused = await prompt("ok 😀");
  ok(refused.sent.isError, JSON.stringify(refused.sent));
  match(text(refused.sent), new RegExp(`'😀' cannot be written in ${oemLabel()}`, "u"));
});

withServer("input through pipes follows a chcp in the command", async (mcp) => {
  // The console switched to UTF-8 (65001) by the command itself: cmd reads its input in it.
  const { token } = await mcp.callOk<{ token: string }>("run_command", {
    command: "chcp 65001>nul & set /p ANSWER=ready: & call echo got [%^ANSWER%]",
    shell_type: "cmd",
    use_pty: false,
  });
  let seen = "";
  ok(
    await eventually(() => seen.includes("ready:"), 30_000, async () => {
      seen = (await mcp.callOk<CommandQuery>("query_command_status", { token })).stdout;
    }),
    seen,
  );
  // Text no code page but UTF-8 holds all of: it was refused (cp437), or sent in the code page
  // the command started with, which cmd then read as UTF-8.
  const sent = await mcp.call("send_command_input", { token, input: "中文 café ü" });
  if (sent.isError) await mcp.callOk("terminate_command", { token });
  ok(!sent.isError, text(sent));
  const result = await mcp.callOk<CommandQuery>("query_command_status", { token, wait_ms: 30_000 });
  assertEquals(result.stdout, "ready: got [中文 café ü]\n");
});

withServer("UTF-16 output (cmd /u) through pipes", async (mcp) => {
  // cmd /u writes its own output as UTF-16LE, no byte order mark: NUL-interleaved ASCII first.
  const result = await runToEnd(mcp, {
    command: "cmd /d /u /c echo hello 中文 ü",
    shell_type: "cmd",
    use_pty: false,
  });
  assertEquals([result.exit_code, result.stdout], [0, "hello 中文 ü\n"]);
});

withServer("set /p on a terminal: Chinese input whatever the code page", async (mcp) => {
  const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    command: "cmd.exe",
    args: ["/d", "/v:on", "/c", "set /p ANSWER=<CON & echo got [!ANSWER!]>CON"],
  });
  // Typed at once: the console keeps input until the program reads it.
  await mcp.callOk("terminal_write", { terminalId, input: "中文输入" });
  const seen = await mcp.callOk<{ condition: string; output: string }>("terminal_wait", {
    terminalId,
    pattern: "got \\[中文输入\\]",
    timeoutMs: 15_000,
    since: 0,
  });
  assertEquals(seen.condition, "pattern", seen.output);
  await mcp.callOk("terminal_release", { terminalId });
});

withServer("an encoding that cannot apply is refused, naming the field", async (mcp) => {
  const wrong = await mcp.call("run_command", { command: "x", encoding: "klingon" });
  ok(wrong.isError);
  match(text(wrong), /encoding.*unknown encoding 'klingon'/s);
  const pointless = await mcp.call("terminal_create", {
    command: Deno.execPath(),
    args: ["--version"],
    encoding: "gbk",
  });
  ok(pointless.isError);
  match(text(pointless), /only the cmd and powershell shells/);
  // Each front end says how its client gets pipes (the engine named its own usePty to all).
  match(text(pointless), /run it with pipes .*\(run_command with use_pty: false\)$/);
  const onTerminal = await mcp.call("run_command", {
    command: "deno",
    executable: Deno.execPath(),
    args: ["--version"],
    shell_type: "executable",
    encoding: "gbk",
  });
  ok(onTerminal.isError);
  match(text(onTerminal), /^'encoding': .*\(run_command with use_pty: false\)$/);
  const server = await startHttpServer();
  try {
    const rest = await request(server, "POST", "/api/terminals", {
      body: { command: Deno.execPath(), args: ["--version"], encoding: "gbk" },
    });
    assertEquals([rest.status, rest.json.error.code], [400, "INVALID_INPUT"]);
    match(rest.json.error.message, /\(over MCP: the API starts terminals only\)$/);
    ok(!/use_?pty/i.test(rest.json.error.message), rest.json.error.message);
  } finally {
    await server.stop();
  }
});
