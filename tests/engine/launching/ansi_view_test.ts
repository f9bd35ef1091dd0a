/**
 * The WorstFit check (src/engine/launching/ansi_view.ts) with a made-up ANSI view, as Windows
 * at code page 1252 has it: which texts are checked, which field a refusal names, and what it
 * says. The real view (WideCharToMultiByte) is tested under Windows (tests/windows/).
 */
import { deepStrictEqual as assertEquals, match, throws } from "node:assert/strict";
import { checkAnsiView, launchTexts } from "../../../src/engine/launching/ansi_view.ts";
import { EngineError } from "../../../src/engine/errors.ts";
import { mcpWording } from "../../../src/mcp/wording.ts";
import type { AnsiMismatch } from "../../../src/pty/mod.ts";

/** Code page 1252's best fits for a few characters; others it has, or shows as `?`. */
const BEST_FIT: Record<string, string> = { "＂": '"', "＼": "\\", "ā": "a", "中": "?" };

function view1252(text: string): AnsiMismatch | undefined {
  let index = 0;
  for (const char of text) {
    if (BEST_FIT[char]) return { index, char, seen: BEST_FIT[char], codePage: 1252 };
    index += char.length;
  }
  return undefined;
}

const fields = { program: "executable", cwd: "cwd", args: "args" };

Deno.test("a fullwidth quote in an argument is refused, naming args, the character and the opt-in", () => {
  const texts = launchTexts({
    program: "C:\\php\\php-cgi.exe",
    args: ["-n", "\uff02 --evil \uff02", "next"],
    cwd: "C:\\work",
  }, fields);
  throws(() => checkAnsiView(texts, "allowAnsiMismatch", view1252), (error: unknown) => {
    if (!(error instanceof EngineError)) return false;
    assertEquals([error.kind, error.field], ["invalid_input", "args"]);
    match(error.message, /the argument "＂ --evil ＂" holds '＂' \(U\+FF02\)/);
    match(error.message, /ANSI code page \(1252\) sees as '"'/);
    match(error.message, /WorstFit/);
    match(error.message, /allowAnsiMismatch: true/);
    // The opt-in is named by key: each front end spells it (run_command: allow_ansi_mismatch).
    match(
      error.worded(mcpWording({ allowAnsiMismatch: "allow_ansi_mismatch" }), false),
      /Pass allow_ansi_mismatch: true/,
    );
    return true;
  });
});

Deno.test("the program path and the working directory are checked, each naming its field", () => {
  const program = launchTexts({ program: "C:\\tools＼x.exe", args: [], cwd: "C:\\" }, fields);
  throws(() => checkAnsiView(program, "o", view1252), { field: "executable" });
  const cwd = launchTexts({ program: "C:\\x.exe", args: ["ok"], cwd: "C:\\中文" }, {
    program: "command",
    cwd: "cwd",
  });
  throws(() => checkAnsiView(cwd, "allowAnsiMismatch", view1252), (error: unknown) => {
    assertEquals((error as EngineError).field, "cwd");
    match(
      (error as EngineError).message,
      /the working directory holds '中'.*sees as '\?'.*allowAnsiMismatch/s,
    );
    return true;
  });
  // Arguments split from `command` are named so.
  const split = launchTexts({ program: "C:\\x.exe", args: ["ā"], cwd: "C:\\" }, {
    ...fields,
    args: "command",
  });
  throws(() => checkAnsiView(split, "o", view1252), { field: "command" });
});

Deno.test("what reads the same in the ANSI view passes; without a view (POSIX) everything does", () => {
  const texts = launchTexts({
    program: "C:\\Program Files\\x.exe",
    args: ["café", "naïve €", "plain", ""],
    cwd: "C:\\Users\\José",
  }, fields);
  checkAnsiView(texts, "o", view1252);
  checkAnsiView(launchTexts({ program: "/bin/x", args: ["\uff02"], cwd: "/" }, fields), "o");
});
