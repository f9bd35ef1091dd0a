/**
 * Input as programs get it, through the real server: input that is no text (a lone surrogate)
 * refused by every front end that takes it (issue 39).
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { serverTest, text } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";
import type { Waited } from "../helpers/shells.ts";

const posix = Deno.build.os !== "windows";

interface Ran {
  status: string;
  exit_code: number | null;
  stdout: string;
  message: string;
}

serverTest(
  "input that is no text (a lone surrogate) is refused naming its field: send_command_input, terminal_write",
  async (mcp) => {
    const started = await mcp.callOk<{ token: string }>("run_command", {
      command: "od -An -c",
      use_pty: false,
    });
    const sent = await mcp.call("send_command_input", { token: started.token, input: "a\ud83db" });
    ok(sent.isError);
    match(text(sent), /^'input': a lone surrogate \(U\+D83D\) at index 1 \(UTF-16 code units\)/);
    // Nothing of it was written: what follows arrives alone.
    await mcp.callOk("send_command_input", { token: started.token, input: "ok", eof: true });
    const done = await mcp.callOk<Ran>("query_command_status", {
      token: started.token,
      wait_ms: 30_000,
    });
    match(done.stdout, /^\s+o\s+k\s+\\n\n$/);

    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "cat",
    });
    const typed = await mcp.call("terminal_write", { terminalId, input: "x\udfffy" });
    ok(typed.isError);
    match(text(typed), /^'input': a lone surrogate \(U\+DFFF\) at index 1 /);
    await mcp.callOk<Waited>("terminal_write", { terminalId, input: "fine", pattern: "fine" });
    const { output } = await mcp.callOk<{ output: string }>("terminal_read", { terminalId });
    ok(!output.includes("\ufffd") && !output.includes("x"), output);
    await mcp.callOk("terminal_release", { terminalId });
  },
  { ignore: !posix },
);

Deno.test({
  name: "REST input that is no text is refused naming input; the terminal gets nothing of it",
  ignore: !posix,
  async fn() {
    const server = await startHttpServer();
    try {
      const created = await request(server, "POST", "/api/terminals", { body: { command: "cat" } });
      const id = created.json.data.terminalId;
      const refused = await request(server, "POST", `/api/terminals/${id}/input`, {
        body: { input: "q\ud800" },
      });
      assertEquals([refused.status, refused.json.error.code], [400, "INVALID_INPUT"]);
      assertEquals(refused.json.error.details.field, "input");
      match(refused.json.error.message, /a lone surrogate \(U\+D800\) at index 1 /);
      await request(server, "POST", `/api/terminals/${id}/input`, { body: { input: "after" } });
      let output = "";
      ok(
        await eventually(() => output.includes("after\nafter"), 10_000, async () => {
          output = (await request(server, "GET", `/api/terminals/${id}/output`)).json.data.output;
        }),
        output,
      );
      ok(!output.includes("\ufffd") && !output.includes("q"), output);
    } finally {
      await server.stop();
    }
  },
});
