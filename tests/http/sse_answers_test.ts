/**
 * Large answers over Streamable HTTP (src/http/sse_answers.ts), through the real MCP server and
 * the SDK's transport in an MCP session: an answer of megabytes arrives as the event the SDK
 * would write (`JSON.stringify` of the message, byte for byte, hostile text included) but in
 * chunks made in slices, not one piece of megabytes; a small answer is the SDK's own event.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { Type } from "@sinclair/typebox";
import { createMcpServer } from "../../src/mcp/server.ts";
import { inAnswerTurn } from "../../src/engine/mod.ts";
import { defineTool } from "../../src/mcp/tool.ts";
import { McpSessions } from "../../src/http/mcp_sessions.ts";
import { LARGE_ANSWER_CHARACTERS } from "../../src/mcp/large_answers.ts";
import { concatBytes } from "../../src/bytes.ts";
import { initializeRequest } from "../helpers/jsonrpc.ts";

/** Text as hostile as an answer's can be: quotes, backslashes, controls, pairs, lone halves. */
function hostileText(characters: number): string {
  const pieces = ['"', "\\", "\u0000", "\u001b[31m", "😀", "\ud83d", "\ude00", "中文", "é", "\n"];
  let text = "";
  for (let i = 0; text.length < characters; i++) text += `line ${i} ${pieces[i % pieces.length]}`;
  return text;
}

const echo = defineTool({
  name: "echo_text",
  title: "Echoes text",
  description: "Answers with `size` characters of hostile text.",
  input: Type.Object({ size: Type.Integer() }),
  output: Type.Object({ output: Type.String() }),
  annotations: {},
  handler: (args) => Promise.resolve({ output: hostileText(args.size) }),
});

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

/** Posts `body` to the session table; returns the answer's chunks as they were enqueued. */
async function post(
  sessions: McpSessions,
  body: object,
  session?: string,
): Promise<{ chunks: Uint8Array[]; session: string }> {
  const headers: Record<string, string> = { ...HEADERS };
  if (session) headers["mcp-session-id"] = session;
  const answer = await sessions.handle(
    new Request("http://localhost/mcp", { method: "POST", headers, body: JSON.stringify(body) }),
    body,
  );
  const chunks: Uint8Array[] = [];
  for await (const chunk of answer.body!) chunks.push(chunk);
  return { chunks, session: answer.headers.get("mcp-session-id") ?? session! };
}

Deno.test("a large answer is the SDK's event byte for byte, in chunks made in slices", async () => {
  const sessions = new McpSessions(() => createMcpServer([echo], "remote"), {
    idleMs: 60_000,
    maxSessions: 4,
  });
  try {
    const { session } = await post(sessions, initializeRequest("sse-answers"));
    const call = (id: number, size: number) =>
      post(sessions, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo_text", arguments: { size } },
      }, session);
    for (const [id, size] of [[1, 2 * 1024 * 1024], [2, LARGE_ANSWER_CHARACTERS], [3, 200]]) {
      const { chunks } = await call(id, size);
      const event = new TextDecoder().decode(concatBytes(chunks));
      const data = event.match(/^event: message\ndata: (.*)\n\n$/s)?.[1];
      ok(data, event.slice(0, 200));
      const message = JSON.parse(data);
      // The event is what the SDK writes: JSON.stringify of the message it was given.
      assertEquals(event, `event: message\ndata: ${JSON.stringify(message)}\n\n`);
      const { content, structuredContent } = message.result;
      assertEquals(structuredContent.output, hostileText(size));
      assertEquals(content[0].text, JSON.stringify(structuredContent));
      const largest = Math.max(...chunks.map((chunk) => chunk.length));
      if (content[0].text.length > LARGE_ANSWER_CHARACTERS) {
        ok(chunks.length > 1 && largest <= 512 * 1024, `${chunks.length} chunks, ${largest}`);
      } else {
        assertEquals(chunks.length, 1); // the SDK's own writer
      }
    }
  } finally {
    await sessions.closeAll();
  }
});

Deno.test("a client that reads nothing of its event stream gets no second answer made", async () => {
  // A batch of 100 large reads whose client never read took the server past a gigabyte: every
  // answer was made in its turn, and waited whole for the reader.
  let made = 0;
  const read = defineTool({
    name: "read_text",
    title: "Reads text",
    description: "Answers with `size` characters, made in an answer's turn.",
    input: Type.Object({ size: Type.Integer() }),
    output: Type.Object({ output: Type.String() }),
    annotations: {},
    handler: (args, context) =>
      inAnswerTurn(
        () => {
          made++;
          return { output: hostileText(args.size) };
        },
        context,
      ),
  });
  const sessions = new McpSessions(() => createMcpServer([read], "remote"), {
    idleMs: 60_000,
    maxSessions: 4,
  });
  try {
    const { session } = await post(sessions, initializeRequest("unread"));
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "read_text", arguments: { size: 512 * 1024 } },
    });
    const batch = [1, 2, 3, 4, 5].map(call);
    const unread = await sessions.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { ...HEADERS, "mcp-session-id": session },
        body: JSON.stringify(batch),
      }),
      batch,
    );
    // Another request's read, in line after the batch's: answered while the batch waits for
    // its reader, with one of its answers made (in line, all five came first).
    const { chunks } = await post(sessions, call(6), session);
    ok(new TextDecoder().decode(concatBytes(chunks)).includes('"id":6'));
    assertEquals(made, 2);
    // Read, the batch gets every answer.
    const text = await unread.text();
    assertEquals(text.match(/^event: message$/gm)?.length, 5);
    assertEquals(made, 6);
  } finally {
    await sessions.closeAll();
  }
});
