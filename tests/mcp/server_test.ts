/**
 * The MCP server over a real transport (stdio's, fed lines): what the SDK's protocol layer gets
 * wrong is put right here.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { Type } from "@sinclair/typebox";
import { createMcpServer } from "../../src/mcp/server.ts";
import { StdioTransport } from "../../src/mcp/stdio.ts";
import { defineTool } from "../../src/mcp/tool.ts";

Deno.test('a call with id 0 or "" is cancelled like any other (the SDK skips falsy ids)', async () => {
  const aborted: unknown[] = [];
  const waiting = defineTool({
    name: "wait_for_cancel",
    title: "Waits until cancelled",
    description: "Waits until cancelled.",
    input: Type.Object({ id: Type.Union([Type.String(), Type.Number()]) }),
    output: Type.Object({}),
    annotations: {},
    handler: (args, context) =>
      new Promise((_, reject) => {
        const cancelled = () => {
          aborted.push(args.id);
          reject(new Error("cancelled"));
        };
        if (context.signal.aborted) return cancelled();
        context.signal.addEventListener("abort", cancelled);
      }),
  });
  const lines: string[] = [];
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  const feed = (line: string) => {
    queue.push(new TextEncoder().encode(line + "\n"));
    wake?.();
  };
  let ended = false;
  const end = () => {
    ended = true;
    wake?.();
  };
  const input = {
    async read(buffer: Uint8Array): Promise<number | null> {
      while (queue.length === 0 && !ended) await new Promise<void>((resolve) => wake = resolve);
      const chunk = queue.shift();
      if (!chunk) return null;
      buffer.set(chunk);
      return chunk.length;
    },
  };
  const output = {
    write(bytes: Uint8Array): Promise<number> {
      lines.push(...new TextDecoder().decode(bytes).split("\n").filter(Boolean));
      return Promise.resolve(bytes.length);
    },
  };
  const server = createMcpServer([waiting], "local");
  const transport = new StdioTransport(input, output);
  await server.connect(transport);
  const message = (body: object) => feed(JSON.stringify({ jsonrpc: "2.0", ...body }));
  message({
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  message({ method: "notifications/initialized" });
  for (const id of [0, ""]) {
    message({ id, method: "tools/call", params: { name: "wait_for_cancel", arguments: { id } } });
  }
  // Both calls under way (their handlers wait), then cancelled.
  const started = Date.now();
  while (lines.length < 1 && Date.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const requestId of [0, ""]) {
    message({ method: "notifications/cancelled", params: { requestId, reason: "test" } });
  }
  const deadline = Date.now() + 10_000;
  while (aborted.length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assertEquals(aborted.sort(), ["", 0].sort());
  end();
  await transport.ended;
  await server.close();
  // No answer for the cancelled calls: only initialize's.
  ok(lines.every((line) => JSON.parse(line).id === 1), lines.join("\n"));
});
