/**
 * A load for scripts/bench.ts, run in a Worker so that what its clients do with the answers
 * (parsing megabytes of JSON, checking them against the tools' schemas) does not hold up the
 * bench's own caller, whose latency is measured: only the server's pace is.
 *
 * It is sent `{ url, token, loops }` (an HTTP server's address and token, and calls): one SDK
 * client over Streamable HTTP for each call, which makes it again and again, each as soon as
 * the one before is answered. Then `"stop"`: the calls under way are let finish, and it answers
 * `{ calls, failures }`, counted for each loop, and closes its clients.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "../tests/helpers/mcp.ts";

/** What a load is asked to do. */
export interface LoadRequest {
  url: string;
  token: string;
  loops: { name: string; arguments: Record<string, unknown> }[];
}

/** What a load did: calls answered, and calls that failed, for each loop. */
export interface LoadReport {
  calls: number[];
  failures: number[];
  /** The first failure's message, if any. */
  failure?: string;
}

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
};

let stopped = false;
let finished: Promise<LoadReport> | undefined;

scope.onmessage = ({ data }: MessageEvent<LoadRequest | "stop">) => {
  if (data === "stop") {
    stopped = true;
    finished?.then((report) => scope.postMessage(report));
    return;
  }
  finished = run(data);
};

async function run({ url, token, loops }: LoadRequest): Promise<LoadReport> {
  const report: LoadReport = {
    calls: loops.map(() => 0),
    failures: loops.map(() => 0),
  };
  const clients = await Promise.all(loops.map(async () => {
    const client = new Client({ name: "winterm-bench-load", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }));
  scope.postMessage("ready");
  await Promise.all(loops.map(async (call, i) => {
    while (!stopped) {
      try {
        const result = await clients[i].callTool(call, undefined, { timeout: 120_000 });
        if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 300));
        report.calls[i]++;
      } catch (error) {
        report.failures[i]++;
        report.failure ??= String(error);
      }
    }
  }));
  await Promise.all(clients.map((client) => client.close()));
  return report;
}
