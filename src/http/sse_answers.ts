/**
 * Answers on a request's event stream: a large one's event is made in slices before the SDK's
 * transport sends it, and the next is made only once the stream has room ({@link streamRooms}).
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
import type { CallRoom } from "../mcp/server.ts";

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

/** How often a stream whose reader has not taken what it holds is looked at again. */
const ROOM_POLL_MS = 10;

/**
 * What the SDK's transport keeps of its event streams (private in its types, SDK 1.x): which
 * stream each request's answer goes to, each stream's controller, the answers made so far.
 */
export interface StreamBookkeeping {
  _requestToStreamMapping: Map<string | number, string>;
  _streamMapping: Map<string, { controller?: ReadableStreamDefaultController<Uint8Array> }>;
  _requestResponseMap: Map<string | number, unknown>;
}

/**
 * A room for each call's answer on its request's event stream (see src/mcp/server.ts,
 * setCallRooms): it settles once the answers made before it for that stream are handed over
 * (`answered` says so for this one, to the next) and the stream holds nothing its reader has
 * not taken, or once the stream is gone (closed, cancelled, its client away). The stream is
 * looked at every {@link ROOM_POLL_MS} while it holds something: a stream says how full it is,
 * not when it empties. Its reader takes what it holds as fast as the connection takes it (see
 * send_budget.ts), so a client that reads nothing gets no second answer made for it.
 */
export function streamRooms(
  transport: WebStandardStreamableHTTPServerTransport,
): CallRoom {
  const kept = transport as unknown as StreamBookkeeping;
  /** Each stream's last answer given room, handed over once this settles. */
  const last = new Map<string, Promise<void>>();
  const controllerOf = (stream: string) => kept._streamMapping.get(stream)?.controller;
  return async (requestId, answered) => {
    const stream = kept._requestToStreamMapping.get(requestId);
    if (stream === undefined) return;
    const before = last.get(stream);
    last.set(stream, answered);
    void answered.then(() => last.get(stream) === answered && last.delete(stream));
    await before;
    for (;;) {
      const free = controllerOf(stream)?.desiredSize;
      if (free === undefined || free === null || free > 0) return;
      await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
    }
  };
}
