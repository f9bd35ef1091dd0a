/**
 * Fair turns, through the real server: while one caller's screen is caught up with a flood, or
 * its answer of 2 MiB is built out of 10 MB of lines edited in place, other calls are answered
 * (src/engine/slices.ts). Judged by order (calls answered while the long one is still pending),
 * never by how long anything took.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, type Connection, serverTest } from "../helpers/mcp.ts";
import { type HttpServer, request, withHttp } from "../helpers/http.ts";
import { eventually } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const MIB = 1024 * 1024;

/** A line a progress display edits in place (carriage return, erasures, moves, edits). */
const EDITED = String.raw`x 10%%\r\033[Kitem: 55%%\033[3D99%%\033[2P\033[1@ ok\033[K`;
/** A cursor-heavy redraw of a full-screen program. */
const REDRAW = String.raw`\033[5;9H\033[31mx\033[0m\033[K\033[2P\033[3@\033[12;40Hcell\033[1L`;

/** A call, and how many `get_version` calls were answered while it was pending. */
async function answeredMeanwhile(
  long: Promise<unknown>,
  getVersion: () => Promise<unknown>,
): Promise<number> {
  let pending = true;
  const done = long.finally(() => pending = false);
  let answered = 0;
  while (pending) {
    await getVersion();
    if (pending) answered++;
  }
  await done;
  return answered;
}

serverTest(
  "a 2 MiB answer of 10 MB of lines edited in place lets other calls through while it is built",
  async (mcp: Connection) => {
    const run = await mcp.callOk<{ token: string; status: string }>("run_command", {
      command: `yes "$(printf '${EDITED}')" | head -c 10000000`,
      shell_type: "sh",
      wait_ms: 60_000,
    });
    assertEquals(run.status, "completed");
    const query = mcp.callOk<{ stdout: string; stdout_truncated: boolean }>(
      "query_command_status",
      { token: run.token, max_bytes: 2 * MIB },
    );
    const answered = await answeredMeanwhile(query, () => mcp.callOk("get_version"));
    const { stdout, stdout_truncated } = await query;
    ok(stdout_truncated && stdout.includes("bytes omitted"), "a head, a marker and a tail");
    // Built in one go, nothing else is answered until it is done (one call, read with it).
    ok(answered >= 3, `${answered} calls answered while the answer was built`);
  },
  { ignore: !posix },
);

/** An MCP client over Streamable HTTP to `server`. */
async function httpClient(server: HttpServer): Promise<Client> {
  const client = new Client({ name: "winterm-tests", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url + "/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  return client;
}

withHttp(
  "a screen read of a terminal flooding it with redraws lets another client's calls through",
  async (server) => {
    const [reader, other] = [await httpClient(server), await httpClient(server)];
    try {
      const created = await reader.callTool({
        name: "terminal_create",
        arguments: { command: `yes "$(printf '${REDRAW}')"`, cols: 80, rows: 24 },
      });
      const { terminalId } = created.structuredContent as { terminalId: string };
      const getVersion = async () => {
        const result = await other.callTool({ name: "get_version", arguments: {} });
        ok(!result.isError);
      };
      // Megabytes to catch up on, and more coming faster than the emulator takes them: each
      // read feeds it for its whole time budget.
      let printed = 0;
      const stats = async () => {
        const result = await other.callTool({ name: "terminal_stats", arguments: { terminalId } });
        printed = (result.structuredContent as { totalBytes: number }).totalBytes;
      };
      ok(await eventually(() => printed >= 4 * MIB, 60_000, stats), `${printed} bytes printed`);
      for (let read = 0; read < 2; read++) {
        const screen = reader.callTool({
          name: "terminal_read",
          arguments: { terminalId, mode: "screen" },
        });
        const answered = await answeredMeanwhile(screen, getVersion);
        const result = await screen;
        ok(!result.isError, JSON.stringify(result.content));
        ok(answered >= 3, `${answered} calls answered while the screen was caught up`);
      }
      await reader.callTool({ name: "terminal_release", arguments: { terminalId } });
    } finally {
      await Promise.all([reader.close(), other.close()]);
    }
  },
);

withHttp(
  "REST: a read of 2 MiB out of 10 MB of lines edited in place lets other requests through",
  async (server) => {
    const created = await request(server, "POST", "/api/terminals", {
      body: { command: "sh", args: ["-c", `yes "$(printf '${EDITED}')" | head -c 10000000`] },
    });
    const id = created.json.data.terminalId;
    let printed = 0;
    const stats = async () => {
      printed = (await request(server, "GET", `/api/terminals/${id}/stats`)).json.data.totalBytes;
    };
    ok(await eventually(() => printed >= 10_000_000, 60_000, stats), `${printed} bytes printed`);
    const read = request(
      server,
      "GET",
      `/api/terminals/${id}/output?maxBytes=${2 * MIB}&since=0&maxLines=100000`,
    );
    const answered = await answeredMeanwhile(read, () => request(server, "GET", "/api/terminals"));
    const { status, json } = await read;
    assertEquals([status, json.success], [200, true]);
    ok(json.data.truncated && json.data.totalLines >= 200_000, JSON.stringify(json.data.stats));
    // Read at once (as it was), nothing else was answered until it was done.
    ok(answered >= 3, `${answered} requests answered while the answer was built`);
  },
);
