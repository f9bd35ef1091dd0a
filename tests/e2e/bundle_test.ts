/**
 * The bundle the executables are compiled from (scripts/compile.ts), served as users run an
 * executable: over stdio, and over HTTP with a terminal's WebSocket stream. An executable is
 * `deno compile` of this bundle with the start task's permissions; a test cannot build one
 * (`deno compile` downloads its runtime), and the bundle run by `deno run` with the same
 * permissions is the nearest thing. What main.ts loads from npm (iconv-lite, ws: CommonJS, each
 * given a `require` by the bundle) is used here, so a bundle whose npm code cannot load fails.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { connect } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { openStream } from "../helpers/stream.ts";
import { withBundle } from "../helpers/bundle.ts";

Deno.test({
  name: "bundle: serves over stdio and HTTP, its npm code (iconv-lite, ws) loaded when first used",
  ignore: Deno.build.os === "windows",
  async fn(t) {
    await withBundle(async (main) => {
      await t.step("stdio: a command's GBK output decoded", async () => {
        const mcp = await connect([], {}, main);
        try {
          const { tools } = await mcp.client.listTools();
          ok(tools.some((tool) => tool.name === "run_command"));
          const done = await mcp.callOk<{ status: string; stdout: string }>("run_command", {
            command: "printf '\\304\\343\\272\\303'", // 你好 in GBK
            encoding: "gbk",
            wait_ms: 30_000,
          });
          assertEquals([done.status, done.stdout], ["completed", "你好"]);
        } finally {
          await mcp.close();
        }
      });
      await t.step("HTTP: a terminal's output on its WebSocket stream", async () => {
        const server = await startHttpServer([], {}, { entry: main });
        try {
          const created = await request(server, "POST", "/api/terminals", {
            body: { command: "bash", args: ["--norc", "--noprofile"], env: { PS1: "$ " } },
          });
          assertEquals(created.status, 201, JSON.stringify(created.json));
          const id = created.json.data.terminalId;
          const stream = await openStream(server, `/api/terminals/${id}/stream`);
          try {
            await stream.until(() => stream.messages.length >= 1, "the hello");
            assertEquals(stream.messages[0].type, "hello");
            const typed = await request(server, "POST", `/api/terminals/${id}/input`, {
              body: { input: "echo bundled-$((6*7))" },
            });
            assertEquals(typed.status, 200, JSON.stringify(typed.json));
            await stream.until(() => stream.output().includes("bundled-42"), "live output");
          } finally {
            stream.close();
          }
        } finally {
          await server.stop();
        }
      });
    });
  },
});
