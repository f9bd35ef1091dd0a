import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { concatBytes } from "../../src/bytes.ts";
import { type JSONRPCMessage, ListToolsRequestSchema, Server } from "../../src/mcp/sdk.ts";
import { MAX_BATCH_ANSWER_BYTES, MAX_MESSAGE_BYTES, StdioTransport } from "../../src/mcp/stdio.ts";
import { fc } from "../helpers/arbitraries.ts";
import { initializeRequest } from "../helpers/jsonrpc.ts";
import { within } from "../helpers/process.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** stdin as chunks of bytes, handed out one read at a time, then the end. */
function chunkedInput(chunks: Uint8Array[]) {
  let next = 0;
  return {
    read(buffer: Uint8Array): Promise<number | null> {
      if (next >= chunks.length) return Promise.resolve(null);
      const chunk = chunks[next];
      const n = Math.min(buffer.length, chunk.length);
      buffer.set(chunk.subarray(0, n));
      if (n < chunk.length) chunks[next] = chunk.subarray(n);
      else next++;
      return Promise.resolve(n);
    },
  };
}

/** stdout that keeps what is written, taking at most `most` bytes a write. */
function collectingOutput(most = Infinity) {
  const written: Uint8Array[] = [];
  return {
    written,
    text: () => decoder.decode(concatBytes(written)),
    write(bytes: Uint8Array): Promise<number> {
      const n = Math.min(most, bytes.length);
      written.push(bytes.slice(0, n));
      return Promise.resolve(n);
    },
  };
}

async function received(chunks: Uint8Array[]): Promise<{ messages: unknown[]; errors: Error[] }> {
  const transport = new StdioTransport(chunkedInput(chunks), collectingOutput());
  const messages: unknown[] = [], errors: Error[] = [];
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  await transport.ended;
  return { messages, errors };
}

function cut(bytes: Uint8Array, fractions: number[]): Uint8Array[] {
  const at = fractions.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const end of [...at, bytes.length]) {
    if (end > start) pieces.push(bytes.subarray(start, end));
    start = end;
  }
  return pieces;
}

const message = fc.record({
  jsonrpc: fc.constant("2.0" as const),
  id: fc.integer({ min: 0, max: 1e9 }),
  method: fc.string({ minLength: 1, maxLength: 20 }),
  params: fc.record({ text: fc.string({ maxLength: 200, unit: "binary" }) }),
});

Deno.test("stdio: every message arrives once, in order, however stdin cuts the bytes", async () => {
  await fc.assert(
    fc.asyncProperty(
      // Ids are unique among requests not answered yet, as JSON-RPC asks (a taken one is refused).
      fc.uniqueArray(message, { maxLength: 8, selector: (m) => m.id }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
      fc.boolean(),
      async (messages, fractions, crlf) => {
        const text = messages.map((m) => JSON.stringify(m) + (crlf ? "\r\n" : "\n")).join("");
        const { messages: got, errors } = await received(cut(encoder.encode(text), fractions));
        assertEquals(errors, []);
        assertEquals(got, JSON.parse(JSON.stringify(messages)));
      },
    ),
  );
});

Deno.test("stdio: a line that is not a message is reported, and the next one still arrives", async () => {
  const good = { jsonrpc: "2.0", id: 1, method: "ping" };
  const { messages, errors } = await received([
    encoder.encode(`{ not json\n{"jsonrpc":"2.0","id":"x","bogus":true}\n`),
    encoder.encode(JSON.stringify(good) + "\n"),
  ]);
  assertEquals(messages, [good]);
  assertEquals(errors.length, 2);
});

Deno.test("stdio: a line that is not a message is answered as JSON-RPC says; blank lines are not", async () => {
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([
      encoder.encode(`{ not json\n\n  \r\n{"jsonrpc":"2.0","id":"x","bogus":1}\n[1]\n`),
    ]),
    output,
  );
  await transport.start();
  await transport.ended;
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  // `[1]` is a batch of one message that is none: answered with an array of one error.
  assertEquals(
    answers.map((answer) => Array.isArray(answer) ? answer : [answer]).map((
      [{ id, error }],
    ) => [id, error.code]),
    [[null, -32700], ["x", -32600], [null, -32600]],
  );
  ok(Array.isArray(answers[2]));
  ok(answers[0].error.message.startsWith("Parse error: "), answers[0].error.message);
});

Deno.test("stdio: a line that is not UTF-8 is refused unread, not read with U+FFFD in it", async () => {
  // A CESU-8 surrogate (ED A0 80) inside a command ran with three U+FFFD in its place.
  const output = collectingOutput();
  const head = encoder.encode('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a');
  const tail = encoder.encode('","arguments":{}}}\n');
  const transport = new StdioTransport(
    chunkedInput([concatBytes([head, Uint8Array.of(0xed, 0xa0, 0x80), tail])]),
    output,
  );
  const seen: unknown[] = [];
  transport.onmessage = (message) => seen.push(message);
  await transport.start();
  await transport.ended;
  await transport.flushed();
  const [answer] = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals([answer.id, answer.error.code, seen.length], [null, -32700, 0]);
  match(answer.error.message, /not UTF-8/);
});

Deno.test("stdio: a message the schema refuses is answered with the field and the rule, not the check's dump", async () => {
  const output = collectingOutput();
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { progressToken: { a: 1 } } } },
    { jsonrpc: "2.0", id: 2, params: {} },
    { jsonrpc: "2.0", id: 3, method: "tools/list", params: 7 },
    { jsonrpc: "2.0", id: 4, method: "tools/list", extra: 1 },
    { jsonrpc: "2.0", id: true, method: "tools/list" },
  ].map((line) => JSON.stringify(line) + "\n");
  const transport = new StdioTransport(chunkedInput([encoder.encode(lines.join(""))]), output);
  await transport.start();
  await transport.ended;
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.map(({ id, error }) => [id, error.code, error.message]), [
    [
      1,
      -32600,
      "Invalid Request: 'params._meta.progressToken': expected string or number, received object",
    ],
    [2, -32600, "Invalid Request: 'method': expected string, missing"],
    [3, -32600, "Invalid Request: 'params': expected object, received number"],
    // A request with a key too many, not a response missing `result`.
    [4, -32600, `Invalid Request: '(the message)': Unrecognized key: "extra"`],
    [null, -32600, "Invalid Request: 'id': expected a string or an integer, received true"],
  ]);
});

Deno.test("stdio: a message over the size bound is refused and skipped, and the next one is served", async () => {
  const output = collectingOutput();
  const huge = [encoder.encode('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"')].concat(
    Array.from({ length: 170 }, () => new Uint8Array(64 * 1024).fill(0x61)),
    [encoder.encode('"}}\n{"jsonrpc":"2.0","id":2,"method":"y"}\n')],
  );
  const transport = new StdioTransport(chunkedInput(huge), output);
  const errors: Error[] = [], messages: unknown[] = [];
  transport.onerror = (error) => errors.push(error);
  transport.onmessage = (message) => messages.push(message);
  await transport.start();
  await transport.ended;
  await transport.flushed();
  assertEquals(messages, [{ jsonrpc: "2.0", id: 2, method: "y" }]);
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.map(({ id, error }) => [id, error.code]), [[null, -32600]]);
  ok(
    answers[0].error.message.includes(`over ${MAX_MESSAGE_BYTES} bytes`),
    answers[0].error.message,
  );
  ok(errors.some((error) => error.message.includes(String(MAX_MESSAGE_BYTES))), String(errors));
});

Deno.test("stdio: the size bound is exact, wherever the line feed falls", async () => {
  // A message of exactly `size` bytes; its line feed arrives in the read that takes it over.
  const message = (id: number, size: number) => {
    const head = `{"jsonrpc":"2.0","id":${id},"method":"x","params":{"a":"`;
    return head + "a".repeat(size - head.length - 3) + '"}}';
  };
  const output = collectingOutput();
  const lines = [
    message(1, MAX_MESSAGE_BYTES) + "\n",
    message(2, MAX_MESSAGE_BYTES + 1) + "\n",
    message(3, 80) + "\n",
    // The CR of a CRLF is no part of the message.
    message(4, MAX_MESSAGE_BYTES) + "\r\n",
    message(5, MAX_MESSAGE_BYTES + 1) + "\r\n",
  ];
  const transport = new StdioTransport(chunkedInput([encoder.encode(lines.join(""))]), output);
  const messages: { id: number }[] = [];
  transport.onmessage = (message) => messages.push(message as { id: number });
  await transport.start();
  await transport.ended;
  await transport.flushed();
  assertEquals(messages.map(({ id }) => id), [1, 3, 4]);
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.map(({ id, error }) => [id, error.code]), [[null, -32600], [null, -32600]]);
  ok(answers[0].error.message.includes(`over ${MAX_MESSAGE_BYTES} bytes`));
});

Deno.test("stdio: a message of too many keys or too deep is refused unread, and the next is served", async () => {
  const output = collectingOutput();
  const keys = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 0]));
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: keys } },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "x",
      params: { a: JSON.parse("[".repeat(70) + "]".repeat(70)) },
    },
    { jsonrpc: "2.0", id: 3, method: "y" },
  ].map((line) => JSON.stringify(line) + "\n");
  const transport = new StdioTransport(chunkedInput([encoder.encode(lines.join(""))]), output);
  const messages: unknown[] = [];
  transport.onmessage = (message) => messages.push(message);
  await transport.start();
  await transport.ended;
  await transport.flushed();
  assertEquals(messages, [{ jsonrpc: "2.0", id: 3, method: "y" }]);
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  // Unread, but their ids are in sight: the callers hear why instead of waiting.
  assertEquals(answers.map(({ id, error }) => [id, error.code, error.message]), [
    [
      1,
      -32600,
      "Invalid Request: it has 120009 commas and colons outside strings, more than 100000 " +
      "(about 50000 keys or 100000 array items); it was not read",
    ],
    [
      2,
      -32600,
      "Invalid Request: it nests objects and arrays 72 deep, more than 64; it was not read",
    ],
  ]);
});

Deno.test("stdio: a message refused unread whose id is under way is answered with id null", async () => {
  const output = collectingOutput();
  const deep = JSON.parse("[".repeat(70) + "]".repeat(70));
  const lines = [
    { jsonrpc: "2.0", id: "a", method: "slow" },
    { jsonrpc: "2.0", id: "a", method: "x", params: { deep } }, // "a" is under way
  ].map((line) => JSON.stringify(line) + "\n");
  const transport = new StdioTransport(chunkedInput([encoder.encode(lines.join(""))]), output);
  transport.onmessage = () => {};
  await transport.start();
  await transport.ended;
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.map(({ id }) => id), [null]);
});

Deno.test("stdio: an id a double does not hold exactly is refused with id null, unread", async () => {
  const output = collectingOutput();
  const ids = ["9007199254740993", "1e400", "1.0000000000000001", "1e-400"];
  const lines = [
    ...ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`),
    '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2.50000000000000001,"method":"ping"}]',
    // Exactly the number a double holds, however written: served (answered as 2 and 0).
    '{"jsonrpc":"2.0","id":0.2e1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":-0,"method":"ping"}',
    '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}',
    '{"jsonrpc":"2.0","id":-7,"method":"ping","params":{"id":1.5}}',
  ];
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const messages: { id: number }[] = [];
  transport.onmessage = (message) => messages.push(message as { id: number });
  await transport.start();
  await transport.ended;
  await transport.flushed();
  // In a batch, only the message with such an id is refused. An id elsewhere is no id.
  assertEquals(messages.map(({ id }) => id), [1, 2, -0, Number.MAX_SAFE_INTEGER, -7]);
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.map(({ id, error }) => [id, error.code]), ids.map(() => [null, -32600]));
  for (const [index, id] of ids.entries()) {
    ok(answers[index].error.message.startsWith(`Invalid Request: its 'id' ${id} is `), id);
    ok(answers[index].error.message.endsWith("; it was not read"), id);
  }
  // The batch's answer waits for its ping's (no server here): the refusal alone is not sent.
});

Deno.test("stdio: answers are written whole and in order, even a few bytes a write", async () => {
  const output = collectingOutput(7);
  const transport = new StdioTransport(chunkedInput([]), output);
  const sent = Array.from({ length: 50 }, (_, id) => ({
    jsonrpc: "2.0" as const,
    id,
    result: { text: "中文 😀 ".repeat(id) },
  }));
  await Promise.all(sent.map((m) => transport.send(m)));
  await transport.flushed();
  assertEquals(output.text().trimEnd().split("\n").map((line) => JSON.parse(line)), sent);
});

Deno.test("stdio: a large answer is made in slices: JSON.stringify's line, unanswered until queued", async () => {
  // Made in slices, it was counted answered before it was queued: a server whose stdin had
  // ended could close between the two, and the answer was never written.
  const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read" } };
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(JSON.stringify(request) + "\n")]),
    output,
  );
  const output_ = { text: '"quoted" \\ 中文 😀 \ud83d \u0000 line\n'.repeat(20_000) };
  const answer = {
    jsonrpc: "2.0" as const,
    id: 1,
    result: {
      content: [{ type: "text", text: JSON.stringify(output_) }],
      structuredContent: output_,
    },
  };
  transport.onmessage = () => void transport.send(answer);
  await transport.start();
  await transport.ended;
  await transport.answered(10_000);
  await transport.flushed();
  ok(output.written.length > 0, "nothing was written");
  assertEquals(output.text(), JSON.stringify(answer) + "\n");
});

Deno.test("stdio: a large answer whose request is cancelled while it is made is not sent", async () => {
  // The cancel was looked for before the answer was made in slices, not after: an answer the
  // transport had taken the cancel for went out all the same.
  const request = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read" } };
  const cancel = {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 7, reason: "gone" },
  };
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(`${JSON.stringify(request)}\n${JSON.stringify(cancel)}\n`)]),
    output,
  );
  /** Holds its slice past its time: the cancel is read before the answer is made. */
  const slow = {
    toJSON() {
      const until = performance.now() + 10;
      while (performance.now() < until) { /* working */ }
      return "slow";
    },
  };
  const text = "x".repeat(200_000);
  const answer = {
    jsonrpc: "2.0" as const,
    id: 7,
    result: { content: [{ type: "text", text }], structuredContent: { slow, text } },
  };
  const sent: Promise<void>[] = [];
  transport.onmessage = (message) => {
    if ("id" in message) sent.push(transport.send(answer));
  };
  await transport.start();
  await transport.ended;
  await Promise.all(sent);
  await transport.answered(10_000);
  await transport.flushed();
  assertEquals(output.text(), "");
});

Deno.test("stdio: at the exit the line being written is finished whole, and no other begun", async () => {
  // The exit's deadline cut a 2 MiB answer to a slow reader in two: a partial JSON line.
  const output = collectingOutput(4096);
  const transport = new StdioTransport(chunkedInput([]), output);
  const line = (id: number) => ({
    jsonrpc: "2.0" as const,
    id,
    result: { text: "x".repeat(200_000) },
  });
  const first = transport.send(line(1));
  const second = transport.send(line(2));
  await transport.lastLine(60_000);
  await Promise.all([first, second]);
  assertEquals(output.text(), JSON.stringify(line(1)) + "\n");
});

Deno.test("stdio: a failing stdout is reported once and later answers are dropped", async () => {
  let writes = 0;
  const transport = new StdioTransport(chunkedInput([]), {
    write: () => (writes++, Promise.reject(new Error("broken pipe"))),
  });
  await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
  const error = await transport.outputFailed;
  assertEquals(error.message, "broken pipe");
  await transport.send({ jsonrpc: "2.0", id: 2, result: {} });
  await transport.flushed();
  assertEquals(writes, 1);
});

Deno.test("stdio: requests read before stdin ends are answered before the server closes", async () => {
  // Closing the server aborts the handlers still making answers: before the fix the server closed
  // as soon as stdin ended, and `printf '<initialize>\n' | winterm-mcp` often answered nothing.
  const initialize = initializeRequest("pipe");
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(JSON.stringify(initialize) + "\n")]),
    output,
  );
  const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: {} });
  await server.connect(transport);
  await transport.ended;
  await transport.answered(10_000);
  await server.close();
  await transport.flushed();
  assertEquals(JSON.parse(output.text()).id, 1);
});

Deno.test("stdio: a batch is served, its answers go back together, one array; refusals in it", async () => {
  const initialize = initializeRequest("batch");
  const lines = [
    JSON.stringify(initialize),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},' +
    '{"jsonrpc":"2.0","id":7,"method":7},{"jsonrpc":"2.0","id":8,"method":"tools/list"},' +
    '{"jsonrpc":"2.0","id":1e-400,"method":"ping"}]',
    '[{"jsonrpc":"2.0","method":"notifications/y"}]',
    "[]",
    '[{"jsonrpc":"2.0","id":9,"method":"nope/nope"}]',
  ];
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  await server.connect(transport);
  await transport.ended;
  await transport.answered(10_000);
  await server.close();
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  ok(answers.some((answer) => answer.id === 1 && answer.result), "initialize answered");
  // The batch of five: the refused ones in its array (one whose id would be read as 1 with id
  // null), the two requests' answers with them.
  const batch = answers.find((answer) => Array.isArray(answer) && answer.length === 4);
  ok(batch, JSON.stringify(answers));
  const byId = Object.fromEntries(batch.map((answer: { id: unknown }) => [answer.id, answer]));
  assertEquals(byId.a.result, {});
  assertEquals(byId[8].result, { tools: [] });
  assertEquals(byId[7].error.code, -32600);
  match(byId[null as unknown as number].error.message, /'id' 1e-400 is read as the nearest double/);
  // Notifications alone: no answer. An empty batch: refused. A lone request in a batch: an array.
  const rest = answers.filter((answer) => answer !== batch && answer.id !== 1);
  assertEquals(rest.length, 2, JSON.stringify(rest));
  const empty = rest.find((answer) => !Array.isArray(answer));
  assertEquals(empty, {
    jsonrpc: "2.0",
    id: null,
    error: { code: -32600, message: "Invalid Request: an empty batch" },
  });
  const lone = rest.find((answer) => Array.isArray(answer));
  assertEquals([lone?.length, lone?.[0].id, lone?.[0].error.code], [1, 9, -32601]);
});

Deno.test("stdio: a batch's answers together stay under the bound; the ones over it say so", async () => {
  // Five answers of 3 MB each: two fit under the bound, the other three are refused in place.
  const big = { name: "big", description: "x".repeat(3_000_000), inputSchema: { type: "object" } };
  const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
  const lines = [
    JSON.stringify(initializeRequest("big batch")),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    JSON.stringify([10, 11, 12, 13, 14].map(list)),
  ];
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [big] }));
  await server.connect(transport);
  await transport.ended;
  await transport.answered(10_000);
  await server.close();
  await transport.flushed();
  const line = output.text().trim().split("\n").find((text) => text.startsWith("["))!;
  ok(encoder.encode(line).length <= MAX_BATCH_ANSWER_BYTES, `${line.length} characters`);
  const answers = JSON.parse(line) as {
    id: number;
    result?: unknown;
    error?: { code: number; message: string };
  }[];
  assertEquals(answers.map((answer) => answer.id).sort(), [10, 11, 12, 13, 14]);
  assertEquals(answers.filter((answer) => answer.result).length, 2);
  for (const refused of answers.filter((answer) => answer.error)) {
    assertEquals(refused.error!.code, -32000);
    match(
      refused.error!.message,
      /would have taken over 8388608 bytes; send the request on its own/,
    );
  }
});

Deno.test("stdio: a batch is bounded, a cancelled request does not hold it, a taken id is refused", async () => {
  const ping = (id: number | string) => ({ jsonrpc: "2.0", id, method: "ping" });
  const lines = [
    JSON.stringify(Array.from({ length: 101 }, (_, i) => ping(i + 100))),
    // 1 is never answered (nobody here answers): its cancellation lets the batch go.
    JSON.stringify([ping(1), { jsonrpc: "2.0", id: 2, result: {} }, ping(2), ping(2)]),
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1 },
    }),
    JSON.stringify(ping(2)),
  ];
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const handed: unknown[] = [];
  transport.onmessage = (message) => {
    handed.push(message);
    // Answer ping 2 at once, as a server would.
    if ("id" in message && message.id === 2 && "method" in message) {
      void transport.send({ jsonrpc: "2.0", id: 2, result: {} });
    }
  };
  await transport.start();
  await transport.ended;
  await transport.answered(1000);
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers[0], {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: "Invalid Request: a batch of 101 messages, more than 100; it was not read",
    },
  });
  // The second batch: ping 2's answer, and its repeated id refused, in one array.
  assertEquals(answers[1].map((answer: { id: unknown }) => answer.id).sort(), [2, null]);
  match(answers[1].find((a: { id: unknown }) => a.id === null).error.message, /id 2 is taken/);
  // Ping 2 again, once the first was answered: served.
  assertEquals(answers.slice(2), [{ jsonrpc: "2.0", id: 2, result: {} }]);
});

Deno.test("stdio: a cancelled request's id stays taken and its late answer is not sent; a last line without its line feed is served", async () => {
  const request = (id: number | string) => ({ jsonrpc: "2.0", id, method: "slow" });
  const cancel = (id: number | string) => ({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id },
  });
  const lines = [
    request(0),
    cancel(0),
    request(0), // taken: the SDK may still answer the first (it does for an id of 0); the
    // client waits for no answer with that id but this refusal, which has the id therefore
    [request(7), cancel(7)], // all cancelled: no answer, and no `[]`
    { jsonrpc: "2.0", id: 8, method: "notifications/cancelled", params: { requestId: 8 } },
  ].map((line) => JSON.stringify(line));
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n" + JSON.stringify(request(9)))]),
    output,
  );
  const handed: { id?: unknown; method?: string }[] = [];
  transport.onmessage = (message) => handed.push(message as { id?: unknown; method?: string });
  await transport.start();
  await transport.ended;
  // Every request answered as the SDK would, the cancelled ones too.
  for (const id of [0, 7, 8, 9]) await transport.send({ jsonrpc: "2.0", id, result: { id } });
  await transport.flushed();
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers, [
    {
      jsonrpc: "2.0",
      id: 0,
      error: {
        code: -32600,
        message:
          "Invalid Request: id 0 is the id of a request you cancelled; ids are not reused in a " +
          "session (use a new id)",
      },
    },
    { jsonrpc: "2.0", id: 8, result: { id: 8 } }, // a request of that name cancels nothing
    { jsonrpc: "2.0", id: 9, result: { id: 9 } }, // the last line, without its line feed
  ]);
});

Deno.test("stdio: cancelled ids are kept taken up to 1 MiB of them, the oldest forgotten first", async () => {
  // 20 ids of 100 KB: 2 MB. The SDK answers none of them: only the bound lets them go.
  const ids = Array.from({ length: 20 }, (_, i) => `${i}-`.padEnd(100_000, "x"));
  const lines = [
    ...ids.flatMap((id) => [
      { jsonrpc: "2.0", id, method: "slow" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } },
    ]),
    { jsonrpc: "2.0", id: ids[0], method: "slow" }, // forgotten: served again
    { jsonrpc: "2.0", id: ids[19], method: "slow" }, // still taken
  ].map((line) => JSON.stringify(line));
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const handed: { id?: unknown; method?: string }[] = [];
  transport.onmessage = (message) => handed.push(message as { id?: unknown; method?: string });
  await transport.start();
  await transport.ended;
  await transport.flushed();
  const requests = handed.filter((message) => message.method === "slow");
  assertEquals(requests.length, 21);
  assertEquals(requests[20].id, ids[0]);
  const answers = output.text().trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(answers.length, 1);
  assertEquals(answers[0].id, ids[19]);
  match(
    answers[0].error.message,
    /^Invalid Request: id "19-x+… is the id of a request you cancelled; ids are not reused in a session \(use a new id\)$/,
  );
});

Deno.test("stdio: answered() gives up after its time when a request stays unanswered", async () => {
  const transport = new StdioTransport(
    chunkedInput([encoder.encode('{"jsonrpc":"2.0","id":7,"method":"tools/list"}\n')]),
    collectingOutput(),
  );
  await transport.start();
  await transport.ended;
  await transport.answered(50); // nobody answers: it settles anyway
  await transport.send({ jsonrpc: "2.0", id: 7, result: {} });
  await transport.answered(60_000); // answered: at once
});

Deno.test("stdio: a client that sends junk and never reads stops being read, not queued for", async () => {
  // stdin offers 16 MiB of junk lines (each answered with -32700); stdout takes nothing.
  const junk = new TextEncoder().encode("junk {not json\n".repeat(4096));
  let offered = 0;
  const input = {
    read(buffer: Uint8Array): Promise<number | null> {
      if (offered >= 16 * 1024 * 1024) return Promise.resolve(null);
      const n = Math.min(buffer.length, junk.length);
      buffer.set(junk.subarray(0, n));
      offered += n;
      return Promise.resolve(n);
    },
  };
  const transport = new StdioTransport(input, { write: () => new Promise<number>(() => {}) });
  let ended = false;
  transport.ended.then(() => ended = true);
  await transport.start();
  // Wait until reading stops (or the whole flood was taken: the defect).
  let last = -1, still = 0;
  while (!ended && still < 200) {
    still = offered === last ? still + 1 : 0;
    last = offered;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  ok(!ended && offered < 8 * 1024 * 1024, `read ${offered} bytes with nothing written`);
  await transport.close();
});

Deno.test("stdio: a batch of answers with enormous ids stays under the bound too", async () => {
  // A refusal repeats its request's id: 95 pings with ids of 104,000 characters made one line
  // of 10.4 MB, refusals included, over the bound and over what an SDK client accepts.
  const id = (i: number) => `${i}-${"x".repeat(104_000)}`;
  const pings = Array.from(
    { length: 95 },
    (_, i) => ({ jsonrpc: "2.0", id: id(i), method: "ping" }),
  );
  const lines = [
    JSON.stringify(initializeRequest("long ids")),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    JSON.stringify(pings),
  ];
  const output = collectingOutput();
  const transport = new StdioTransport(
    chunkedInput([encoder.encode(lines.join("\n") + "\n")]),
    output,
  );
  const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: {} });
  await server.connect(transport);
  await transport.ended;
  await transport.answered(10_000);
  await server.close();
  await transport.flushed();
  const line = output.text().trim().split("\n").find((text) => text.startsWith("["))!;
  ok(encoder.encode(line).length <= MAX_BATCH_ANSWER_BYTES, `${line.length} characters`);
  const answers = JSON.parse(line) as { id: string | null; error?: { code: number } }[];
  assertEquals(answers.length, 95);
  ok(answers.some((answer) => answer.id === null && answer.error?.code === -32000));
});

Deno.test("stdio: small answers pass large ones waiting to be written; notifications keep their order", async () => {
  // Large notifications (a command's streamed output) were passed by its small exit notice.
  const written: string[] = [];
  let release = () => {};
  const output = {
    write(bytes: Uint8Array): Promise<number> {
      for (const line of decoder.decode(bytes).split("\n").filter(Boolean)) {
        const message = JSON.parse(line);
        written.push(message.method ? message.params.name : `answer ${message.id}`);
      }
      return new Promise((resolve) => release = () => resolve(bytes.length));
    },
  };
  const transport = new StdioTransport(chunkedInput([]), output);
  const big = "x".repeat(70_000);
  const note = (name: string, text = "") =>
    transport.send({ jsonrpc: "2.0", method: "notifications/x", params: { name, text } });
  const answer = (id: number, text = "") =>
    transport.send({ jsonrpc: "2.0", id, result: { text } } as JSONRPCMessage);
  void note("first");
  // The first write is under way; the rest queue behind it.
  void answer(1, big);
  void answer(2, big);
  void note("output", big);
  void note("exit");
  void answer(3);
  void answer(4, big);
  void answer(5);
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assertEquals(written, [
    "first",
    "answer 1",
    "answer 2",
    "output",
    "exit",
    "answer 3",
    "answer 5",
    "answer 4",
  ]);
});

Deno.test("stdio: a client that closes stdin and never reads is seen to have gone", async () => {
  // Its answers fill the queue (300 KB of junk lines, 2 MB of refusals), so stdin waited for
  // them to be written, which never happened: the server never saw the end of its input, and
  // never stopped. (What it sends while it does not read is held up to 1 MiB.)
  const junk = new TextEncoder().encode("junk {not json\n".repeat(4096));
  let offered = 0;
  const input = {
    read(buffer: Uint8Array): Promise<number | null> {
      if (offered >= 300_000) return Promise.resolve(null);
      const n = Math.min(buffer.length, junk.length);
      buffer.set(junk.subarray(0, n));
      offered += n;
      return Promise.resolve(n);
    },
  };
  const transport = new StdioTransport(input, { write: () => new Promise<number>(() => {}) });
  await transport.start();
  await within(transport.ended, 10_000, "the end of stdin was never seen");
  await transport.close();
});
