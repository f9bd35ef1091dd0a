/**
 * The official MCP conformance suite (npm:@modelcontextprotocol/conformance) against /mcp.
 * The suite cannot send a bearer token, so a small proxy in front of the server adds it; the
 * server keeps every check it has (Host, Origin, token). The baseline lists only scenarios
 * that need the suite's own demo tools, resources, prompts or completions.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startHttpServer } from "../helpers/http.ts";

const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";
const BASELINE = fileURLToPath(new URL("../conformance/baseline.yml", import.meta.url));

Deno.test({
  name: "the MCP conformance suite passes against /mcp (baseline: demo-only scenarios)",
  ignore: Deno.build.os === "windows",
  async fn() {
    const server = await startHttpServer();
    const proxy = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        const url = new URL(request.url);
        const headers = new Headers(request.headers);
        headers.set("authorization", `Bearer ${server.token}`);
        const upstream = await fetch(server.url + url.pathname + url.search, {
          method: request.method,
          headers,
          body: request.body,
        });
        return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
      },
    );
    // Outside the project, so the suite's results and packages land in a scratch folder.
    const scratch = Deno.makeTempDirSync({ prefix: "winterm-conformance-" });
    try {
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-all",
          CONFORMANCE,
          "server",
          "--url",
          `http://localhost:${proxy.addr.port}/mcp`,
          "--expected-failures",
          BASELINE,
        ],
        cwd: scratch,
        stdin: "null",
      }).output();
      const report = new TextDecoder().decode(stdout);
      if (code !== 0) {
        console.error(report.slice(-4000), new TextDecoder().decode(stderr).slice(-2000));
      }
      assertEquals(code, 0);
    } finally {
      await proxy.shutdown();
      await server.stop();
      Deno.removeSync(scratch, { recursive: true });
    }
  },
});
