/**
 * Our Windows command lines and environment blocks against the real thing: quoting round-trips
 * random argument lists through shell32's CommandLineToArgvW, and environment blocks
 * round-trip through a child process.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { splitWindows } from "../../src/engine/launching/argv.ts";
import { quoteWindowsCommandLine } from "../../src/pty/windows/command_line.ts";
import { windowsEnvironment } from "../../src/pty/windows/environment.ts";
import { fc, stringOf } from "../helpers/arbitraries.ts";
import { start } from "../helpers/process.ts";
import { commandLineToArgv } from "../helpers/windows.ts";
import { limitedTest } from "../helpers/limited.ts";

const windows = Deno.build.os === "windows";
const PIECES = [
  "a",
  "b",
  " ",
  "  ",
  "\t",
  '"',
  '""',
  "\\",
  "\\\\",
  '\\"',
  "中",
  "😀",
  "&",
  "^",
  "%",
  "'",
  "x y",
];

limitedTest({
  name: "quoted argument lists come back unchanged from CommandLineToArgvW",
  ignore: !windows,
  fn() {
    const program = fc.constantFrom(
      "C:\\Program Files\\App\\app.exe",
      "C:\\bin\\tool.exe",
      "tool.exe",
    );
    const args = fc.array(stringOf(PIECES, 6), { maxLength: 6 });
    fc.assert(
      fc.property(program, args, (program, args) => {
        const line = quoteWindowsCommandLine([program, ...args]);
        assertEquals(commandLineToArgv(line), [program, ...args], line);
      }),
      { numRuns: 400 },
    );
  },
});

limitedTest({
  name: "our splitter agrees with CommandLineToArgvW on random command lines",
  ignore: !windows,
  fn() {
    fc.assert(
      fc.property(stringOf([...PIECES, '"""', '\\\\\\"'], 12), (rest) => {
        const line = "prog.exe " + rest;
        assertEquals(splitWindows(line), commandLineToArgv(line), JSON.stringify(line));
      }),
      { numRuns: 400 },
    );
  },
});

limitedTest({
  name: "environment blocks round-trip through a child: deduplicated ignoring case, Unicode intact",
  ignore: !windows,
  async fn() {
    const env: Record<string, string> = {
      ...Deno.env.toObject(),
      WINTERM_ZETA: "last",
      winterm_alpha: "lower",
      WINTERM_ALPHA: "upper wins, it came later",
      WINTERM_UNICODE: "中文 ünïcode 😀",
      WINTERM_SPACES: "  leading and trailing  ",
      WINTERM_EMPTY_LOOKING: "=",
    };
    const script = "console.log(JSON.stringify(Object.entries(Deno.env.toObject())))";
    const run = await start(Deno.execPath(), ["eval", script], { mode: "pipe", env });
    assertEquals((await run.exited).exitCode, 0, run.stderr());
    const seen = new Map<string, string>(JSON.parse(run.stdout()));
    const expected = windowsEnvironment(env);
    for (
      const [name, value] of expected.filter(([name]) => name.toUpperCase().startsWith("WINTERM_"))
    ) {
      assertEquals(seen.get(name), value, name);
    }
    assertEquals(seen.has("winterm_alpha"), false);
  },
});
