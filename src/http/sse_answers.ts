/**
 * A large answer's server-sent event is made in slices before the SDK's transport sends it.
 *
 * Why: the SDK writes an event in one go (`JSON.stringify` of the whole message, then UTF-8),
 * and a tool answer of 2 MiB of output is a message of 4-5 MB (its text holds the answer's JSON,
 * escaped again): 30-60 ms of the event loop at once, while four clients read such answers
 * (docs/benchmarks.md, large answers), which every other caller waited behind. Here an answer
 * over {@link LARGE_ANSWER_CHARACTERS} is serialized and encoded in slices first (see
 * src/json_steps.ts, src/engine/slices.ts), and the transport's event writer, given that
 * message, enqueues those bytes: the same event, byte for byte.
 *
 * @example
 * ```ts
 * import { WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";
 * import { sendLargeAnswersInSlices } from "./sse_answers.ts";
 * const transport = new WebStandardStreamableHTTPServerTransport({
 *   sessionIdGenerator: () => crypto.randomUUID(),
 * });
 * sendLargeAnswersInSlices(transport);
 * ```
 * @module
 */
import { inSlices } from "../engine/mod.ts";
import { jsonBytesSteps } from "../json_steps.ts";
import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";

/** An answer whose texts hold more characters than this is made in slices. */
export const LARGE_ANSWER_CHARACTERS = 64 * 1024;

/** The SDK transport's event writer (private in its types, SDK 1.x). */
interface EventWriter {
  writeSSEEvent(
    controller: ReadableStreamDefaultController<Uint8Array>,
    encoder: TextEncoder,
    message: JSONRPCMessage,
    eventId?: string,
  ): boolean;
}

/** Makes `transport` send each large answer as an event made in slices (see the module). */
export function sendLargeAnswersInSlices(
  transport: WebStandardStreamableHTTPServerTransport,
): void {
  const made = new WeakMap<JSONRPCMessage, Uint8Array[]>();
  const writer = transport as unknown as EventWriter;
  const write = writer.writeSSEEvent.bind(transport);
  writer.writeSSEEvent = (controller, encoder, message, eventId) => {
    const chunks = made.get(message);
    if (!chunks || eventId !== undefined) return write(controller, encoder, message, eventId);
    made.delete(message);
    try {
      for (const chunk of chunks) controller.enqueue(chunk);
      return true;
    } catch (error) {
      transport.onerror?.(error as Error);
      return false;
    }
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    if (large(message)) {
      made.set(
        message,
        await inSlices(() => jsonBytesSteps(message, "event: message\ndata: ", "\n\n")),
      );
    }
    try {
      await send(message, options);
    } finally {
      made.delete(message);
    }
  };
}

/** A tool's answer whose texts are long (the MCP result's content). */
function large(message: JSONRPCMessage): boolean {
  if (!("result" in message)) return false;
  const content = (message.result as { content?: unknown }).content;
  if (!Array.isArray(content)) return false;
  let characters = 0;
  for (const item of content) {
    const text = (item as { text?: unknown } | null)?.text;
    if (typeof text === "string") characters += text.length;
  }
  return characters > LARGE_ANSWER_CHARACTERS;
}
