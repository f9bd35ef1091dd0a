/**
 * The bundle the executables are compiled from (scripts/compile.ts), served as users run an
 * executable: over stdio, and over HTTP with a terminal's WebSocket stream. An executable is
 * `deno compile` of this bundle with the start task's permissions; a test cannot build one
 * (`deno compile` downloads its runtime), and the bundle run by `deno run` with the same
 * permissions is the nearest thing. What main.ts loads from npm (iconv-lite, ws: CommonJS, each
 * given a `require` by the bundle) is used here, so a bundle whose npm code cannot load fails.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { connect } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { openStream } from "../helpers/stream.ts";
import { withBundle } from "../helpers/bundle.ts";

Deno.test({
  name:
    "bundle: serves over stdio and HTTP, its npm code (iconv-lite, ws) loaded when first used, its screens' Worker beside it",
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
          // The screen's emulator runs in a Worker of its own, bundled beside main.js.
          const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
            command: "printf '\\033[2J\\033[3;5Hon the screen\\n'; sleep 30",
          });
          let screen = "";
          for (let read = 0; read < 100 && !screen.includes("on the screen"); read++) {
            screen = (await mcp.callOk<{ output: string }>("terminal_read", {
              terminalId,
              mode: "screen",
            })).output;
          }
          assertEquals(screen, "\n\n    on the screen\n");
          await mcp.callOk("terminal_release", { terminalId });
        } finally {
          await mcp.close();
        }
      });
      await t.step(
        "HTTP: a terminal's stream, typed into; no node_modules beside the bundle is run",
        async () => {
          // ws asks `require` for its optional add-on bufferutil with its first stream. A
          // require made by createRequire looked for it in node_modules folders beside and above
          // the bundle, and ran it (an executable's bundle sits under the temp folder).
          const planted = `${dirname(main)}/node_modules/bufferutil`;
          const marker = `${dirname(main)}/planted-module-ran`;
          Deno.mkdirSync(planted, { recursive: true });
          Deno.writeTextFileSync(`${planted}/package.json`, '{"name":"bufferutil"}');
          Deno.writeTextFileSync(
            `${planted}/index.js`,
            `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n` +
              "module.exports = { mask() {}, unmask() {} };\n",
          );
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
              stream.send({ type: "takeover" });
              await stream.until(() => stream.messages.some((m) => m.holder === "you"), "control");
              stream.ws.send(new TextEncoder().encode("echo bundled-$((6*7))\r"));
              await stream.until(() => stream.output().includes("bundled-42"), "typed output");
            } finally {
              stream.close();
            }
          } finally {
            await server.stop();
          }
          ok(!existsSync(marker), "the bundle ran a module from node_modules beside it");
        },
      );
      await t.step("HTTP: the web view's files are in the bundle (src/generated/)", async () => {
        // An executable reads no file beside itself: the page, its script and its styles come
        // from the bundle (web_assets.ts, a chunk loaded with the first request for them).
        const { ASSETS } = await import("../../src/generated/web_assets.ts");
        const server = await startHttpServer([], {}, { entry: main });
        try {
          for (const [name, { etag }] of Object.entries(ASSETS)) {
            const path = name === "index.html" ? "/" : `/assets/${name}`;
            const response = await fetch(server.url + path);
            const bytes = new Uint8Array(await response.arrayBuffer());
            assertEquals(response.status, 200, path);
            // The ETag is the first half of the uncompressed bytes' SHA-256 (build_web.ts).
            const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
            const hex = Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0"));
            assertEquals(`"${hex.join("")}"`, etag, path);
          }
        } finally {
          await server.stop();
        }
      });
    });
  },
});
