/**
 * The Windows platform layer (ConPTY through kernel32, job objects, one completion port)
 * against cmd.exe and friends. Runs on Windows, and on Linux under Wine through the test bed
 * (`deno task test:windows`). Under Wine a child on a pseudoconsole has no console standard
 * handles, so output meant for the terminal is written to CON explicitly.
 */
import { deepStrictEqual as assertEquals, match, ok, rejects, throws } from "node:assert/strict";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";
import { codePageLabel, createDecoder, loadCodePages } from "../../src/engine/output/decode.ts";
import { runningUnderWine, SpawnError } from "../../src/pty/mod.ts";
import { concat, eventually, start, tempDir, within } from "../helpers/process.ts";
import { isInvalid, kernel32 } from "../../src/pty/windows/kernel32.ts";
import { canaryHandle, listProcesses, nativeText } from "../helpers/windows.ts";
import { limitedTest } from "../helpers/limited.ts";

await loadCodePages();

const windows = Deno.build.os === "windows";
const encoder = new TextEncoder();

function screenText(raw: string): string {
  return cleanTerminalText(raw);
}

limitedTest({
  name: "cmd.exe runs on a pseudoconsole; output and exit codes come back",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", ["/d", "/c", "echo hello from conpty>CON & exit 7"]);
    assertEquals(await run.exited, { exitCode: 7, signal: null });
    match(screenText(run.stdout()), /hello from conpty/);
    const zero = await start("cmd.exe", ["/d", "/c", "exit 0"]);
    assertEquals((await zero.exited).exitCode, 0);
    const negative = await start("cmd.exe", ["/d", "/c", "exit -1"]);
    // A DWORD: exit -1 is 0xFFFFFFFF (never the -1 a stopped command is given).
    assertEquals((await negative.exited).exitCode, 0xffffffff);
  },
});

limitedTest({
  name: "input typed into the terminal reaches the program (set /p from CON)",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", [
      "/d",
      "/v:on",
      "/c",
      "set /p LINE=<CON & echo got [!LINE!]>CON",
    ]);
    // Typed at once: the console keeps input until the program reads it.
    await run.child.write(encoder.encode("hello 世界\r"));
    assertEquals((await run.exited).exitCode, 0);
    match(screenText(run.stdout()), /got \[hello 世界\]/);
  },
});

limitedTest({
  name: "SIGKILL ends the whole tree at once (cmd running ping)",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", ["/d", "/c", "ping -n 100 127.0.0.1 >CON"]);
    const pingOf = () =>
      listProcesses().filter((p) => p.ppid === run.child.pid && /ping/i.test(p.exe));
    ok(await eventually(() => pingOf().length === 1), "ping did not start");
    const ping = pingOf()[0].pid;
    run.child.kill("SIGKILL");
    const status = await run.exited;
    assertEquals(status.signal, "SIGKILL");
    ok(
      await eventually(() =>
        !listProcesses().some((p) => p.pid === ping || p.pid === run.child.pid)
      ),
      "tree survived",
    );
  },
});

limitedTest({
  name: "Ctrl+C written to the terminal interrupts the program",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", ["/d", "/c", "ping -n 100 127.0.0.1 >CON"]);
    await run.waitFor("Reply from");
    await run.child.write(new Uint8Array([0x03]));
    // ping -n 100 runs for 99 s unless the Ctrl+C reached it.
    await within(run.exited, 15_000, "Ctrl+C did not interrupt ping");
  },
});

limitedTest({
  name: "what a child leaves running is ended when it exits",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", [
      "/d",
      "/c",
      "start /b ping -n 100 127.0.0.1 >NUL & echo started>CON",
    ]);
    await run.exited;
    ok(
      await eventually(() =>
        !listProcesses().some((p) => p.ppid === run.child.pid && /ping/i.test(p.exe))
      ),
      "background ping survived",
    );
  },
});

limitedTest({
  name: "20 terminals at once",
  ignore: !windows,
  async fn() {
    const runs = await Promise.all(Array.from(
      { length: 20 },
      (_, i) => start("cmd.exe", ["/d", "/c", `echo terminal-${i}>CON & exit ${i}`]),
    ));
    const statuses = await Promise.all(runs.map((run) => run.exited));
    statuses.forEach((status, i) => assertEquals(status.exitCode, i));
    runs.forEach((run, i) => match(screenText(run.stdout()), new RegExp(`terminal-${i}\\b`)));
  },
});

limitedTest({
  name: "working directory and environment with spaces and non-ASCII",
  ignore: !windows,
  async fn() {
    let dir: string;
    try {
      dir = tempDir("dir with space 中文 ");
    } catch (error) {
      // Wine in the test bed has no UTF-8 locale and cannot create non-ASCII names on disk.
      if (!runningUnderWine()) throw error;
      console.warn(
        `non-ASCII directory names unavailable under Wine (${
          (error as Error).message
        }); using spaces only`,
      );
      dir = tempDir("dir with space ");
    }
    try {
      const env = {
        ...Deno.env.toObject(),
        WINTERM_TEST_VALUE: "a value with spaces, ünïcode 中文 & symbols",
      };
      // Delayed expansion (!VAR!): the & in the value stays text instead of splitting the line.
      const run = await start("cmd.exe", [
        "/d",
        "/v:on",
        "/c",
        "cd>CON & echo [!WINTERM_TEST_VALUE!]>CON",
      ], { cwd: dir, env });
      await run.exited;
      const text = screenText(run.stdout());
      ok(text.includes(dir), `${JSON.stringify(text)} lacks ${dir}`);
      ok(text.includes("[a value with spaces, ünïcode 中文 & symbols]"), text);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

limitedTest({
  name: "pipe mode: stdout and stderr apart, input, end of input, OEM code page decoded",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", ["/d", "/c", "echo out & echo err 1>&2 & sort"], {
      mode: "pipe",
    });
    await run.child.write(encoder.encode("b\r\na\r\n"));
    await run.child.closeInput();
    assertEquals((await run.exited).exitCode, 0);
    match(run.stdout(), /out\s+a\s+b/);
    match(run.stderr(), /err/);
    throws(() => run.child.resize(100, 30), /PTY mode/);
    // Without chcp, cmd writes to a pipe in the console's OEM code page, which the child reports.
    const native = nativeText();
    const oem = await start("cmd.exe", ["/d", "/c", `echo ${native}`], { mode: "pipe" });
    await oem.exited;
    assertEquals(typeof oem.child.codePage, "number");
    const decoder = createDecoder({
      kind: "mixed",
      codePage: codePageLabel(oem.child.codePage as number)!,
    });
    const text = new TextDecoder().decode(
      concat([decoder.push(oem.bytes("stdout")), decoder.end()]),
    );
    assertEquals(text.trim(), native);
  },
});

limitedTest({
  name:
    "programs are found with the child's PATH and PATHEXT; batch arguments quoted for cmd, or refused",
  ignore: !windows,
  async fn() {
    const dir = tempDir("bat dir ");
    try {
      Deno.writeTextFileSync(`${dir}\\show args.bat`, "@echo [%1] [%2] [%3] [%4]\r\n");
      const env = { ...Deno.env.toObject(), PATH: `${dir};${Deno.env.get("PATH")}` };
      const run = await start("show args", ["a b", "c&d", "plain", "x^y"], { mode: "pipe", env });
      assertEquals((await run.exited).exitCode, 0);
      match(run.stdout(), /\["a b"\] \["c&d"\] \[plain\] \["x\^y"\]/);
      await rejects(
        () => start("show args", ["100%"], { mode: "pipe", env }),
        (error: unknown) =>
          error instanceof SpawnError &&
          /cannot pass "100%" to a batch file safely/.test(error.message),
      );
      await rejects(
        () => start("no-such-program-xyz", []),
        (e: unknown) => e instanceof SpawnError && e.code === "ENOENT",
      );
      await rejects(
        () => start("cmd.exe", [], { cwd: `${dir}\\missing` }),
        (e: unknown) => e instanceof SpawnError && /working directory/.test(e.message),
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

limitedTest({
  name: "resize is applied, or its failure reported with the reason",
  ignore: !windows,
  async fn() {
    const run = await start("cmd.exe", ["/d", "/c", "ping -n 3 127.0.0.1 >NUL"]);
    try {
      run.child.resize(120, 40);
    } catch (error) {
      // Wine answers E_NOTIMPL; Windows applies it.
      match((error as Error).message, /ResizePseudoConsole returned HRESULT 0x[0-9a-f]+/);
    }
    run.child.kill();
    await run.exited;
  },
});

limitedTest({
  name: "a spawn that fails (not an executable) closes each handle exactly once",
  ignore: !windows,
  async fn() {
    const dir = tempDir("winterm-handles-");
    const bogus = `${dir}\\not-a-program.exe`;
    Deno.writeTextFileSync(bogus, "this is text, not a program\r\n");
    // The completion port and the console control handler are made on first use and kept.
    await (await start("cmd.exe", ["/d", "/c", "exit 0"])).exited;
    // Every handle the spawn code opens and closes goes through these bindings: record them.
    // (A scan of the process's handle table would also see the runtime's own threads at work.)
    const calls = recordHandles();
    const canaries = [];
    try {
      for (let round = 0; round < 10; round++) {
        for (const mode of ["pty", "pipe"] as const) {
          // Taken between attempts: a second close of a handle value would hit one of these.
          canaries.push(canaryHandle());
          await rejects(
            () => start(bogus, [], { mode }),
            (error: unknown) => error instanceof SpawnError,
          );
        }
      }
    } finally {
      calls.stop();
    }
    try {
      ok(calls.opened.length >= 20 * 2, `the attempts opened handles (${calls.opened.length})`);
      assertEquals(calls.failedCloses, [], "a close was refused (a handle closed twice?)");
      assertEquals(sorted(calls.closed), sorted(calls.opened), "each handle closed exactly once");
      ok(
        canaries.every((canary) => canary.valid()),
        "a failed spawn closed a handle it did not own",
      );
    } finally {
      for (const canary of canaries) canary.close();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

/** Sorted copy of handle values, for comparing multisets. */
function sorted(values: bigint[]): bigint[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Wraps the kernel32 bindings the platform layer opens and closes handles with, recording each
 * handle opened (pipes, pipe clients, jobs) and each close and its result. (The pseudoconsole is
 * not a kernel handle, and ClosePseudoConsole, bound nonblocking, cannot be wrapped: on this path
 * it has one call, in spawnWindows' failure branch.)
 */
function recordHandles() {
  // deno-lint-ignore no-explicit-any
  const k = kernel32() as any;
  const value = (handle: Deno.PointerValue) => BigInt(Deno.UnsafePointer.value(handle));
  const calls = {
    opened: [] as bigint[],
    closed: [] as bigint[],
    failedCloses: [] as bigint[],
  };
  const originals: Record<string, unknown> = {};
  // deno-lint-ignore no-explicit-any
  const wrap = (name: string, around: (original: any, ...args: any[]) => unknown) => {
    const original = k[name];
    originals[name] = original;
    // deno-lint-ignore no-explicit-any
    k[name] = (...args: any[]) => around(original, ...args);
  };
  for (const name of ["CreateNamedPipeW", "CreateFileW", "CreateJobObjectW"]) {
    // deno-lint-ignore no-explicit-any
    wrap(name, (original, ...args: any[]) => {
      const handle = original(...args);
      if (!isInvalid(handle)) calls.opened.push(value(handle));
      return handle;
    });
  }
  wrap("CloseHandle", (original, handle) => {
    const ok = original(handle);
    (ok ? calls.closed : calls.failedCloses).push(value(handle));
    return ok;
  });
  return {
    ...calls,
    stop: () => Object.assign(k, originals),
  };
}

limitedTest({
  name: "a write to a program that never reads its input times out, saying how much it took",
  ignore: !windows,
  async fn() {
    const run = await start("ping.exe", ["-n", "30", "127.0.0.1"], { mode: "pipe" });
    try {
      const started = performance.now();
      await rejects(
        run.child.write(new Uint8Array(1024 * 1024).fill(0x61), 1000),
        /not reading its input: it took \d+ of 1048576 bytes within 1 s; the rest was not sent/,
      );
      ok(performance.now() - started < 20_000, "the write did not give up");
    } finally {
      run.child.kill("SIGKILL");
      await run.exited;
    }
  },
});
