/**
 * WorstFit through the real server on Windows (under Wine at code pages 1252, 936 and 932): an
 * argument that the ANSI code page would turn into other characters is refused naming `args`;
 * opted in, a program reading its command line through GetCommandLineA shows what the refusal
 * spared it (at 1252 a fullwidth quote is a quote there, and one argument became several).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { Buffer } from "node:buffer";
import iconv from "iconv-lite";
import { splitWindows } from "../../src/engine/launching/argv.ts";
import { ansiMismatch, systemCodePages } from "../../src/pty/mod.ts";
import { type Connection, runToEnd, serverTest, text } from "../helpers/mcp.ts";

const windows = Deno.build.os === "windows";
const ANSI = systemCodePages()?.ansi ?? 0;
/** A character this system's ANSI code page turns into another: a look-alike where there is one. */
const CHANGED = windows ? ["\uff02", "\u00a5", "\u{1f600}"].find((char) => ansiMismatch(char)) : "";

/** Prints the bytes of the command line as the ANSI API gives it. */
const PRINT_ANSI_COMMAND_LINE = `
const k = Deno.dlopen("kernel32.dll", { GetCommandLineA: { parameters: [], result: "pointer" } });
const view = new Deno.UnsafePointerView(k.symbols.GetCommandLineA());
const bytes = [];
for (let i = 0; view.getUint8(i) !== 0; i++) bytes.push(view.getUint8(i));
console.log(JSON.stringify(bytes));`;

const withServer = (name: string, fn: (mcp: Connection) => Promise<void>) =>
  serverTest(name, fn, { ignore: !windows });

withServer(
  "an argument the ANSI code page changes is refused naming args, unless opted in",
  async (mcp) => {
    const evil = `${CHANGED} --evil ${CHANGED}`;
    const request = {
      command: "deno",
      executable: Deno.execPath(),
      args: ["eval", PRINT_ANSI_COMMAND_LINE, evil, "next"],
      shell_type: "executable",
      use_pty: false,
    };
    const refused = await mcp.call("run_command", request);
    ok(refused.isError, JSON.stringify(refused));
    match(text(refused), new RegExp(`^'args': the argument .* holds '${CHANGED}'`, "u"));
    match(text(refused), new RegExp(`ANSI code page \\(${ANSI}\\)`));
    match(text(refused), /WorstFit.*allow_ansi_mismatch: true/s);

    const allowed = await runToEnd(mcp, { ...request, allow_ansi_mismatch: true });
    assertEquals(allowed.exit_code, 0, allowed.stderr);
    const bytes = Buffer.from(JSON.parse(allowed.stdout) as number[]);
    const ansiLine = iconv.decode(bytes, `cp${ANSI}`);
    const seen = ansiMismatch(CHANGED!)!.seen;
    ok(ansiLine.includes(`${seen} --evil ${seen}`), ansiLine);
    if (ANSI === 1252) {
      // The case: the ANSI view holds "" --evil "": --evil is an argument of its own there.
      const argv = splitWindows(ansiLine);
      ok(argv.includes("--evil"), JSON.stringify(argv));
    }

    // terminal_create names its own field and opt-in.
    const terminal = await mcp.call("terminal_create", {
      command: Deno.execPath(),
      args: ["eval", "0", evil],
    });
    ok(terminal.isError);
    match(text(terminal), /^'args': .*allowAnsiMismatch: true/s);
  },
);

withServer("a shell's command line is not checked: cmd reads it as Unicode", async (mcp) => {
  const result = await runToEnd(mcp, {
    command: `echo ${CHANGED}ok`,
    shell_type: "cmd",
    use_pty: false,
  });
  assertEquals(result.exit_code, 0);
  match(result.stdout, /ok/);
});
