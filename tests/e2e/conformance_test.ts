/**
 * The official MCP conformance suite (npm:@modelcontextprotocol/conformance) against /mcp.
 * The suite cannot send a bearer token, so a small transparent proxy in front of the server
 * adds it; the server keeps every check it has (Host, Origin with its port, token). The baseline lists only scenarios
 * that need the suite's own demo tools, resources, prompts or completions.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { startHttpServer } from "../helpers/http.ts";

const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";
const BASELINE = fileURLToPath(new URL("../conformance/baseline.yml", import.meta.url));

Deno.test({
  name: "the MCP conformance suite passes against /mcp (baseline: demo-only scenarios)",
  ignore: Deno.build.os === "windows",
  async fn() {
    const server = await startHttpServer();
    // A transparent proxy: what the suite sends reaches the server as sent, Host included (the
    // suite's DNS-rebinding scenario sends Host and Origin naming localhost on the proxy's
    // port, and wants them accepted as this server's own), plus the token. fetch would put
    // the server's own address in Host, so node:http carries the requests.
    const upstream = new URL(server.url);
    const proxy = createServer((request, response) => {
      const forwarded = httpRequest({
        hostname: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, authorization: `Bearer ${server.token}` },
      }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      forwarded.on("error", () => response.destroy());
      response.on("close", () => forwarded.destroy());
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxyPort = (proxy.address() as AddressInfo).port;
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
          `http://localhost:${proxyPort}/mcp`,
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
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await server.stop();
      Deno.removeSync(scratch, { recursive: true });
    }
  },
});
