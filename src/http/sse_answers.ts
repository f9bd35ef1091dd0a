/**
 * A large answer's server-sent event is made in slices before the SDK's transport sends it.
 *
 * The SDK writes an event in one go (`JSON.stringify` of the whole message, then UTF-8): here a
 * large answer (see src/mcp/large_answers.ts) is serialized and encoded in slices first, and
 * the transport's event writer, given that message, enqueues those bytes: the same event, byte
 * for byte.
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
import { answerBytes, isLargeAnswer } from "../mcp/large_answers.ts";
import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";

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
    if (isLargeAnswer(message)) {
      made.set(message, await answerBytes(message, "event: message\ndata: ", "\n\n"));
    }
    try {
      await send(message, options);
    } finally {
      made.delete(message);
    }
  };
}
