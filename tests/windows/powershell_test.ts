/**
 * Both PowerShells where they exist, each named explicitly (real Windows only: Wine has none):
 * PowerShell 7 (`pwsh`) and Windows PowerShell 5.1 (`powershell.exe`), the one every Windows
 * has. Commands through pipes and on a terminal (UTF-8 out, exit codes), and the prompt
 * wrapper of a terminal's shell integration (exit codes, cwd).
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { type Connection, runToEnd, serverTest } from "../helpers/mcp.ts";
import { powerShells } from "../helpers/windows.ts";

interface Run {
  condition: string;
  output: string;
  exitCode: number | null;
  cwd: string | null;
}

const run = (mcp: Connection, terminalId: string, command: string) =>
  mcp.callOk<Run>("terminal_run", { terminalId, command, timeoutMs: 60_000 }, 90_000);

for (const { name, path } of powerShells()) {
  serverTest(
    `${name}: commands through pipes and a terminal, UTF-8 out, exit codes`,
    async (mcp) => {
      for (const use_pty of [false, true]) {
        const result = await runToEnd(mcp, {
          command: "Write-Output ('ps-' + 'ok ü 中'); exit 7",
          shell_type: "powershell",
          executable: path,
          use_pty,
        });
        assertEquals(result.exit_code, 7, `use_pty ${use_pty}: ${JSON.stringify(result)}`);
        match(result.stdout, /ps-ok ü 中/);
      }
    },
  );

  serverTest(`${name}: the prompt wrapper reports exit codes and the cwd`, async (mcp) => {
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      shell: path,
      cwd: "C:\\",
    });
    const native = await run(mcp, terminalId, "cmd /d /c exit 3");
    assertEquals(native.exitCode, 3);
    const moved = await run(mcp, terminalId, "Set-Location $env:SystemRoot; 'in-42'");
    assertEquals([moved.output.trim(), moved.exitCode], ["in-42", 0]);
    match(moved.cwd!, /^C:\\windows$/i);
    assertEquals((await run(mcp, terminalId, "Get-Item C:\\no-such-file-here")).exitCode, 1);
    await mcp.callOk("terminal_release", { terminalId });
  });
}
