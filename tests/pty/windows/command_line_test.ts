/**
 * The Windows rules that are pure logic, on any OS: which files run as batch files (after
 * Windows' own trailing dot and space removal), what a batch file's command line and
 * interpreter are, which PATHEXT entries count, and how PowerShell is set up (there is no
 * PowerShell under Wine: its arguments are checked here).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import fc from "fast-check";
import { powershellPrelude } from "../../../src/engine/launching/shells.ts";
import { windowsExtensions, windowsOpenedPath } from "../../../src/pty/resolve.ts";
import { buildCommandLine, isBatchFile } from "../../../src/pty/windows/command_line.ts";

const CMD = "C:\\Windows\\System32\\cmd.exe";

Deno.test("batch files are recognised after trailing dots and spaces (CVE-2024-24576 class)", () => {
  for (
    const name of ["x.bat", "X.BAT", "x.cmd", "x.bat.", "x.bat ", "x.bat. . .", "C:\\a b\\x.CmD.."]
  ) {
    ok(isBatchFile(name), name);
  }
  for (const name of ["x.exe", "x.bat.exe", "x.batx", "bat", "C:\\x.bat\\y.exe", "x.ps1"]) {
    ok(!isBatchFile(name), name);
  }
  fc.assert(
    fc.property(
      fc.stringMatching(/^[a-z]{1,8}$/),
      fc.constantFrom(".bat", ".cmd", ".BAT", ".Cmd"),
      fc.stringMatching(/^[. ]{0,6}$/),
      (stem, extension, trailer) => {
        const path = `C:\\dir\\${stem}${extension}${trailer}`;
        ok(isBatchFile(path));
        assertEquals(windowsOpenedPath(path), `C:\\dir\\${stem}${extension}`);
        const line = buildCommandLine(path, ["a b"], { cmd: CMD });
        assertEquals(line.application, CMD);
        assertEquals(line.interpreter, CMD);
        // The script is named as Windows opens it, inside cmd's /s /c quoting.
        match(line.commandLine, new RegExp(`/s /c ""C:\\\\dir\\\\${stem}\\${extension}" "a b""$`));
      },
    ),
  );
});

Deno.test("dots-only names are left alone; a program that is not a batch file runs itself", () => {
  assertEquals(windowsOpenedPath("C:\\dir\\.."), "C:\\dir\\..");
  assertEquals(windowsOpenedPath("."), ".");
  const line = buildCommandLine("C:\\bin\\tool.exe", ["a b"], { cmd: CMD });
  assertEquals(line, { application: "C:\\bin\\tool.exe", commandLine: 'C:\\bin\\tool.exe "a b"' });
});

Deno.test("PATHEXT entries that end in a dot or space, or are not extensions, are ignored", () => {
  assertEquals(windowsExtensions(".COM;.EXE;.BAT.;.CMD ;exe;.;.PY"), [
    ".COM",
    ".EXE",
    ".CMD",
    ".PY",
    ".PS1",
  ]);
  assertEquals(windowsExtensions(undefined), [".COM", ".EXE", ".BAT", ".CMD", ".PS1"]);
});

Deno.test("PowerShell: UTF-8 without a BOM, progress silenced and input set only in pipe mode", () => {
  const pipe = powershellPrelude(65001, true);
  match(pipe, /New-Object System\.Text\.UTF8Encoding \$false/);
  ok(!pipe.includes("[Text.Encoding]::UTF8"), "the BOM-writing encoding");
  match(pipe, /\[Console\]::OutputEncoding=/);
  match(pipe, /\$OutputEncoding=/);
  match(pipe, /\[Console\]::InputEncoding=/);
  match(pipe, /\$ProgressPreference='SilentlyContinue'/);
  const terminal = powershellPrelude(65001, false);
  ok(!terminal.includes("ProgressPreference") && !terminal.includes("InputEncoding"), terminal);
  match(powershellPrelude(936, true), /\[Text\.Encoding\]::GetEncoding\(936\)/);
});
