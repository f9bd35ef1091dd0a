/**
 * MCP over the server's stdin and stdout, on Deno's own streams: one JSON-RPC message a line,
 * parsed and serialised by the SDK's own functions (`deserializeMessage` checks each message
 * against the SDK's schema, as its `StdioServerTransport` does).
 *
 * Why not the SDK's `StdioServerTransport`: it works on `node:process`'s streams, and under
 * Deno importing `node:process` and reading its `stdin` put about 40 ms in front of the
 * `initialize` answer (measured here against a server that imports nothing); it does not notice
 * the end of stdin (typescript-sdk#2002); and its reader copies everything it holds on each
 * chunk (quadratic in a message's size); it refuses JSON-RPC batches. This one finds line ends
 * in new bytes only, keeps the SDK's 10 MiB bound on a message (and json_shape.ts's on its
 * shape), serves batches, and writes answers in order through one writer.
 *
 * @example
 * ```ts
 * import { Server } from "./sdk.ts";
 * import { StdioTransport } from "./stdio.ts";
 * const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: {} });
 * const transport = new StdioTransport();
 * transport.ended.then(() => console.error("stdin ended"));
 * await server.connect(transport);
 * ```
 * @module
 */
import { concatBytes } from "../bytes.ts";
import { answerBytes, isLargeAnswer } from "./large_answers.ts";
import { waitFor } from "../engine/mod.ts";
import {
  batchProblem,
  jsonShape,
  jsonShapeProblem,
  MAX_BATCH_MESSAGES,
  messageId,
  roundedIds,
} from "../json_shape.ts";
import { answerableId, whatIsWrong } from "./refusal.ts";
import {
  deserializeMessage,
  type JSONRPCMessage,
  serializeMessage,
  type Transport,
} from "./sdk.ts";

/** The longest message accepted (the SDK's stdio transports use the same bound). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** The longest error message sent for a line that is no message (the SDK's reasons can be long). */
const MAX_ERROR_MESSAGE = 1000;
/** Bytes read at once. */
const READ_SIZE = 64 * 1024;
/** Answers queued beyond this make `send` wait until they are written. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** Input read and held, at most, while answers cannot be written (see `#read`). */
const HELD_MAX_BYTES = 1024 * 1024;
/** What the read loop gets when answers could be written again before more input came. */
const DRAINED: unique symbol = Symbol("drained");
/**
 * Answers under this go out before larger answers queued earlier (JSON-RPC answers may come in
 * any order): a small answer waits for the one large line being written, not for every one
 * queued (fifty answers of 4 MB ahead held a `get_version` 3-4 s). Only answers pass answers:
 * notifications keep their order with everything (a command's output before its exit).
 */
const LARGE_LINE_BYTES = 64 * 1024;
/**
 * Cancelled ids kept taken, at most (their characters, a number counting 8): beyond it the
 * oldest are forgotten. The SDK sends no answer for most cancelled requests, so nothing else
 * ends them, and 400 cancelled requests with ids of 2 MB held 350 MB for good.
 */
const CANCELLED_MAX_SIZE = 1024 * 1024;

/** A line waiting to be written; `answer`: it answers a request (or a batch). */
interface Line {
  bytes: Uint8Array;
  answer: boolean;
}
const LF = 0x0a, CR = 0x0d;
const encoder = new TextEncoder();
const [OPEN_BRACKET, COMMA, CLOSE_BRACKET_LF] = ["[", ",", "]\n"].map((text) =>
  encoder.encode(text)
);

/**
 * A batch's answers together take at most this (each with its separator): an answer that would
 * take them over is replaced by an error that says so. Each answer alone stays under about
 * 6.1 MiB (see docs/limits.md), so a batch's array stays under what an SDK client accepts
 * ({@link MAX_MESSAGE_BYTES}), and a batch of 100 reads cannot hold hundreds of MiB.
 */
export const MAX_BATCH_ANSWER_BYTES = 8 * 1024 * 1024;
/** Room kept under that bound for the refusals an unnamed one can always take (see `add`). */
const REFUSAL_ROOM = MAX_BATCH_MESSAGES * 512;

/** A batch's answers so far (as sent), and the ids of its requests still waiting for theirs. */
class Batch {
  readonly waiting = new Set<string | number>();
  readonly #answers: Uint8Array[] = [];
  #bytes = 0;
  readonly #queued = Promise.withResolvers<void>();

  /** Settles once the batch's line is queued (see StdioTransport.send). */
  get queued(): Promise<void> {
    return this.#queued.promise;
  }

  /** Notes the batch's line queued. */
  markQueued(): void {
    this.#queued.resolve();
  }

  get answered(): boolean {
    return this.#answers.length > 0;
  }

  /** Adds an answer, or the error that takes its place if the answers would be too large. */
  add(message: JSONRPCMessage): void {
    let answer = encoder.encode(JSON.stringify(message));
    const room = MAX_BATCH_ANSWER_BYTES - REFUSAL_ROOM - this.#bytes - 1;
    if (answer.length > room) {
      const id = (message as { id?: string | number }).id ?? null;
      const refusal = (id: string | number | null) =>
        encoder.encode(JSON.stringify(errorMessage(
          id,
          -32000,
          `this request's answer (${answer.length} bytes) was dropped: with the answers before ` +
            `it in its batch it would have taken over ${MAX_BATCH_ANSWER_BYTES} bytes; ` +
            "send the request on its own",
        )));
      answer = refusal(id);
      // Its id alone can be too long for the room left (ids of 100 KB): then it goes unnamed,
      // in the room kept for that (a batch holds at most MAX_BATCH_MESSAGES).
      if (answer.length > room) answer = refusal(null);
    }
    this.#answers.push(answer);
    this.#bytes += answer.length + 1;
  }

  /** The batch's answer: one line, the array of its answers. */
  line(): Uint8Array {
    const parts: Uint8Array[] = [OPEN_BRACKET];
    for (const [index, answer] of this.#answers.entries()) {
      if (index > 0) parts.push(COMMA);
      parts.push(answer);
    }
    parts.push(CLOSE_BRACKET_LF);
    return concatBytes(parts);
  }
}

/** An error answer (the message cut to {@link MAX_ERROR_MESSAGE}). */
function errorMessage(id: string | number | null, code: number, message: string): JSONRPCMessage {
  const error = { code, message: message.slice(0, MAX_ERROR_MESSAGE) };
  // `id: null` is JSON-RPC's own answer to a message whose id cannot be read.
  return { jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage;
}

/**
 * Why a request whose id is in use is refused: by a request under way (with id null: its own
 * would answer the other), or by one the client cancelled, which it no longer waits for (with
 * its id: that answer is never sent).
 */
function taken(id: string | number, cancelled: boolean): JSONRPCMessage {
  const json = JSON.stringify(id);
  const shown = `id ${json.length > 40 ? `${json.slice(0, 40)}…` : json}`;
  return cancelled
    ? errorMessage(
      id,
      -32600,
      `Invalid Request: ${shown} is the id of a request you cancelled; ids are not reused in a ` +
        "session (use a new id)",
    )
    : errorMessage(
      null,
      -32600,
      `Invalid Request: ${shown} is taken by a request not answered yet`,
    );
}

/** See the module documentation. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Settles when stdin ends (end of file, or it failed): the client is gone. */
  readonly ended: Promise<void>;
  /** Settles if stdout fails (the client stopped reading for good). */
  readonly outputFailed: Promise<Error>;
  #endedNow!: () => void;
  #outputFailedNow!: (error: Error) => void;
  #closed = false;
  /** The unfinished line: chunks after the last line end. */
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** Inside a line over MAX_MESSAGE_BYTES: its bytes up to the next line feed are dropped. */
  #skipping = false;
  #queue: Line[] = [];
  #queuedBytes = 0;
  #writing: Promise<void> | undefined;
  #drained: (() => void)[] = [];
  #outputGone = false;
  /** No line is begun any more (see {@link lastLine}). */
  #ending = false;
  /** Ids of the requests received and not answered yet. */
  readonly #unanswered = new Set<string | number>();
  /** The batch each request that came in one belongs to, until it is answered. */
  readonly #batches = new Map<string | number, Batch>();
  /**
   * Ids of requests the client cancelled before they were answered: still taken (MCP has a
   * session never reuse an id), and an answer made for one after all is not sent.
   */
  readonly #cancelled = new Set<string | number>();
  /** The size of {@link #cancelled}'s ids (see {@link CANCELLED_MAX_SIZE}). */
  #cancelledSize = 0;
  #allAnswered: (() => void)[] = [];
  /** JSON text is UTF-8: a line that is not is refused, not read with U+FFFD in it. */
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });

  constructor(
    private readonly input: { read(buffer: Uint8Array): Promise<number | null> } = Deno.stdin,
    private readonly output: { write(bytes: Uint8Array): Promise<number> } = Deno.stdout,
  ) {
    this.ended = new Promise((resolve) => this.#endedNow = resolve);
    this.outputFailed = new Promise((resolve) => this.#outputFailedNow = resolve);
  }

  start(): Promise<void> {
    this.#read();
    return Promise.resolve();
  }

  /**
   * Queues a message; waits only while more than {@link HIGH_WATER_BYTES} are queued. An answer to
   * a request that came in a batch waits for the batch's other answers, and goes with them: it
   * settles once they are queued, so that what is sent after it goes out after it.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    const id = "id" in message && !("method" in message) ? message.id : undefined;
    if (this.#dropCancelled(id)) return;
    const batch = id === undefined ? undefined : this.#batches.get(id);
    if (batch) {
      this.#batches.delete(id!);
      batch.waiting.delete(id!);
      batch.add(message);
    }
    // A large answer is made in slices (see large_answers.ts), and counts as unanswered until
    // it is queued: what is sent meanwhile may go before it, and a cancel may come meanwhile.
    const line = batch ? undefined : {
      bytes: isLargeAnswer(message)
        ? concatBytes(await answerBytes(message, "", "\n"))
        : encoder.encode(serializeMessage(message)),
      answer: id !== undefined,
    };
    if (line && this.#dropCancelled(id)) return;
    if (id !== undefined && this.#unanswered.delete(id) && this.#unanswered.size === 0) {
      for (const resolve of this.#allAnswered.splice(0)) resolve();
    }
    if (batch && batch.waiting.size > 0) return batch.queued;
    await (batch ? this.#queueBatch(batch) : this.#queueLine(line!));
  }

  /**
   * Whether `id`'s request was cancelled, its answer then dropped (the SDK answers some cancelled
   * requests all the same: an id of 0 or ""; and one cancelled while its answer was made). The
   * id is free again once its answer is dropped.
   */
  #dropCancelled(id: string | number | undefined): boolean {
    if (id === undefined || !this.#cancelled.delete(id)) return false;
    this.#cancelledSize -= idSize(id);
    return true;
  }

  /** Queues a batch's answers, as one line (see {@link send}). */
  #queueBatch(batch: Batch): Promise<void> {
    const queued = this.#queueLine({ bytes: batch.line(), answer: true });
    batch.markQueued();
    return queued;
  }

  /** Queues a line of output (see {@link send}). */
  async #queueLine(line: Line): Promise<void> {
    if (this.#outputGone) return;
    this.#queue.push(line);
    this.#queuedBytes += line.bytes.length;
    this.#writing ??= this.#write();
    if (this.#queuedBytes > HIGH_WATER_BYTES) {
      await new Promise<void>((resolve) => this.#drained.push(resolve));
    }
  }

  /**
   * Settles once no more than {@link HIGH_WATER_BYTES} wait to be written (or output is gone):
   * large answers are made one at a time, each once there is room for it (see
   * src/engine/answer_turns.ts), so a client that reads slowly does not have them pile up here.
   */
  room(): Promise<void> {
    if (this.#outputGone || this.#queuedBytes <= HIGH_WATER_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /** Stops handing on messages (a pending read cannot be cancelled: what it brings is dropped). */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#pending = [];
      this.onclose?.();
    }
    return Promise.resolve();
  }

  /**
   * Settles once every request received so far has been answered (its answer sent), or after
   * `timeoutMs`: a client may send its last requests and close stdin at once, as a pipe does.
   */
  answered(timeoutMs: number): Promise<void> {
    if (this.#unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#allAnswered.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Settles once everything sent so far is written (or stdout failed). */
  async flushed(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /**
   * Begins no more lines, and settles once the lines being written are written whole, or after
   * `ms`: a server that must exit now does not cut an answer in two for a client that reads it
   * (2 MiB answers to a slow reader ended mid-line at the exit's deadline).
   */
  async lastLine(ms: number): Promise<void> {
    this.#ending = true;
    if (this.#writing) await waitFor(this.#writing, ms);
  }

  async #read(): Promise<void> {
    // While answers cannot be written (more than HIGH_WATER_BYTES queued), stdin is read on
    // into `held`, at most HELD_MAX_BYTES, and served once they are written: a client that
    // sends and never reads (junk lines each get an answer) cannot grow the queue without
    // bound, and one that closes stdin without reading is still seen to have gone (the
    // server waited for it for good).
    let next = this.#readChunk();
    const held: Uint8Array[] = [];
    let heldBytes = 0;
    try {
      while (!this.#closed) {
        const stuck = this.#queuedBytes > HIGH_WATER_BYTES && !this.#outputGone;
        if (!stuck && held.length > 0) {
          for (const bytes of held.splice(0)) this.#take(bytes);
          heldBytes = 0;
          continue;
        }
        if (stuck && heldBytes >= HELD_MAX_BYTES) {
          await this.room();
          continue;
        }
        const chunk = stuck
          ? await Promise.race([next, this.room().then((): typeof DRAINED => DRAINED)])
          : await next;
        if (chunk === DRAINED) continue;
        if (chunk === null) {
          // Its last requests are served (their answers wait for room like any), then it ends.
          for (const bytes of held.splice(0)) this.#take(bytes);
          // A last message without its line feed is served all the same.
          if (this.#pendingBytes > 0) this.#take(new Uint8Array([LF]));
          break;
        }
        next = this.#readChunk();
        if (stuck) {
          held.push(chunk);
          heldBytes += chunk.length;
        } else this.#take(chunk);
      }
    } catch (error) {
      this.onerror?.(error as Error);
    }
    this.#endedNow();
  }

  /** The next bytes of stdin, in a buffer of their own (null at its end). */
  async #readChunk(): Promise<Uint8Array | null> {
    const buffer = new Uint8Array(READ_SIZE);
    const n = await this.input.read(buffer);
    return n === null ? null : buffer.subarray(0, n);
  }

  /**
   * Splits stdin into lines. A line over MAX_MESSAGE_BYTES is answered -32600 (id null: it is
   * not read) as soon as it is known to be too long, and its rest is skipped up to its line feed;
   * the lines after it are served as usual.
   */
  #take(bytes: Uint8Array): void {
    let start = 0;
    for (let end = bytes.indexOf(LF); end >= 0 && !this.#closed; end = bytes.indexOf(LF, start)) {
      const skipped = this.#skipping;
      // A line ending in CRLF: its CR is no part of the message.
      const last = end > start ? bytes[end - 1] : this.#pending.at(-1)?.at(-1);
      const size = this.#pendingBytes + end - start - (last === CR ? 1 : 0);
      if (!skipped && size > MAX_MESSAGE_BYTES) this.#refuseTooLong();
      else if (!skipped) this.#deliver(concatBytes([...this.#pending, bytes.subarray(start, end)]));
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#skipping = false;
      start = end + 1;
    }
    if (start === bytes.length || this.#closed || this.#skipping) return;
    this.#pendingBytes += bytes.length - start;
    // One byte more may be the CR of a CRLF: the line feed tells.
    if (this.#pendingBytes > MAX_MESSAGE_BYTES + 1) {
      this.#refuseTooLong();
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#skipping = true;
      return;
    }
    this.#pending.push(bytes.slice(start));
  }

  #refuseTooLong(): void {
    const tooLong = `a message over ${MAX_MESSAGE_BYTES} bytes; the rest of its line is skipped`;
    this.onerror?.(new Error(tooLong));
    this.#sendError(null, -32600, `Invalid Request: ${tooLong}`);
  }

  #deliver(line: Uint8Array): void {
    let text: string;
    try {
      text = this.#decoder.decode(line).replace(/\r$/, "");
    } catch {
      const why = "the message is not UTF-8 (JSON text is); it was not read";
      this.onerror?.(new Error(why));
      return this.#sendError(null, -32700, `Parse error: ${why}`);
    }
    if (text.trim() === "") return;
    const shape = jsonShape(text);
    const bounds = jsonShapeProblem(shape) ?? batchProblem(shape);
    // A lone message whose id would be read as another number is refused unread too.
    const rounded = bounds ? new Map<number, string>() : roundedIds(shape);
    const problem = bounds ?? (shape.batch ? undefined : rounded.get(0));
    if (problem) {
      this.onerror?.(new Error(`a message refused unread: ${problem}`));
      // Not parsed, but its id is answered where the shape shows it exactly and it is not one
      // under way (the caller hears why instead of waiting for its time-out); else null.
      const shown = bounds ? messageId(shape) : undefined;
      const id = shown === undefined || this.#isTaken(shown) ? null : shown;
      return this.#sendError(id, -32600, `Invalid Request: ${problem}; it was not read`);
    }
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (error) {
      this.onerror?.(error as Error);
      this.#refuse(text, error as Error, rounded);
      return;
    }
    this.#hand(message);
  }

  /**
   * Hands a message on, noting a request as waiting for its answer. A request whose id is taken
   * by one under way is refused (see {@link taken}; a batch's are looked at as it is taken
   * apart, `inBatch`); a cancellation is noted (see {@link #cancel}).
   */
  #hand(message: JSONRPCMessage, inBatch = false): void {
    if ("method" in message && "id" in message) {
      if (!inBatch && this.#isTaken(message.id)) {
        // Queued as it is: `send` would take an answer with a cancelled id for the late one.
        const refusal = taken(message.id, this.#onlyCancelled(message.id));
        return void this.#queueLine({
          bytes: encoder.encode(serializeMessage(refusal)),
          answer: true,
        });
      }
      this.#unanswered.add(message.id);
    } else if ("method" in message && message.method === "notifications/cancelled") {
      const { requestId } = (message.params ?? {}) as { requestId?: string | number };
      if (requestId !== undefined) this.#cancel(requestId);
    }
    this.onmessage?.(message);
  }

  /** Whether a request with this id is under way (its id may not be used again meanwhile). */
  #isTaken(id: string | number): boolean {
    return this.#unanswered.has(id) || this.#batches.has(id) || this.#cancelled.has(id);
  }

  /** Whether the only request with this id under way is one the client cancelled. */
  #onlyCancelled(id: string | number): boolean {
    return this.#cancelled.has(id) && !this.#unanswered.has(id) && !this.#batches.has(id);
  }

  /**
   * The client cancelled a request under way: nothing waits for its answer (its batch goes
   * without it), and an answer made all the same is not sent. Its id stays taken.
   */
  #cancel(id: string | number): void {
    if (!this.#unanswered.has(id)) return; // answered already, or never asked
    this.#cancelled.add(id);
    this.#cancelledSize += idSize(id);
    for (const oldest of this.#cancelled) {
      if (this.#cancelledSize <= CANCELLED_MAX_SIZE) break;
      this.#cancelled.delete(oldest);
      this.#cancelledSize -= idSize(oldest);
    }
    const batch = this.#batches.get(id);
    if (batch) {
      this.#batches.delete(id);
      batch.waiting.delete(id);
      // A batch whose every request was cancelled gets no answer (JSON-RPC sends no `[]`).
      if (batch.waiting.size === 0 && batch.answered) {
        void this.#queueBatch(batch);
      }
    }
    if (this.#unanswered.delete(id) && this.#unanswered.size === 0) {
      for (const resolve of this.#allAnswered.splice(0)) resolve();
    }
  }

  /**
   * A JSON-RPC batch (protocol 2025-03-26 has clients send them, and the SDK's HTTP transport
   * takes them): each message is handed on, and the answers to its requests go back together,
   * as one array, once the last one is made. A message the schema refuses is answered in that
   * array (with id null if its id would be read as another number, `rounded`, see
   * json_shape.ts); a batch of notifications alone gets no answer; an empty one is refused.
   */
  #deliverBatch(items: unknown[], rounded: Map<number, string>): void {
    if (items.length === 0) return this.#sendError(null, -32600, "Invalid Request: an empty batch");
    const batch = new Batch();
    const messages: JSONRPCMessage[] = [];
    for (const [index, item] of items.entries()) {
      const roundedId = rounded.get(index);
      if (roundedId !== undefined) {
        batch.add(errorMessage(null, -32600, `Invalid Request: ${roundedId}; it was not read`));
        continue;
      }
      try {
        const message = deserializeMessage(JSON.stringify(item));
        if ("method" in message && "id" in message) {
          if (this.#isTaken(message.id)) {
            batch.add(taken(message.id, this.#onlyCancelled(message.id)));
            continue;
          }
          batch.waiting.add(message.id);
          this.#batches.set(message.id, batch);
        }
        messages.push(message);
      } catch (error) {
        this.onerror?.(error as Error);
        const why = `Invalid Request: ${whatIsWrong(error as Error, item)}`;
        batch.add(errorMessage(answerableId(item), -32600, why));
      }
    }
    if (batch.waiting.size === 0 && batch.answered) {
      void this.#queueBatch(batch);
    }
    // Their ids were looked at above, and are this batch's now.
    for (const message of messages) this.#hand(message, true);
  }

  /**
   * Answers a line that is no single JSON-RPC message as JSON-RPC 2.0 says (a batch is taken
   * apart, see {@link #deliverBatch}): -32700 when it is not JSON,
   * else -32600 with its id where it has a usable one (null otherwise), so that a client waiting
   * for its answer hears why instead of nothing.
   */
  #refuse(text: string, error: Error, rounded: Map<number, string>): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return void this.#sendError(null, -32700, `Parse error: ${error.message}`);
    }
    if (Array.isArray(parsed)) return this.#deliverBatch(parsed, rounded);
    this.#sendError(answerableId(parsed), -32600, `Invalid Request: ${whatIsWrong(error, parsed)}`);
  }

  #sendError(id: string | number | null, code: number, message: string): void {
    void this.send(errorMessage(id, code, message));
  }

  async #write(): Promise<void> {
    try {
      while (this.#queue.length > 0 && !this.#ending) {
        const lines = this.#nextLines();
        const chunk = concatBytes(lines.map((line) => line.bytes));
        for (let at = 0; at < chunk.length;) at += await this.output.write(chunk.subarray(at));
        this.#queuedBytes -= chunk.length;
        if (this.#queuedBytes <= HIGH_WATER_BYTES) this.#releaseSenders();
      }
    } catch (error) {
      this.#outputGone = true;
      this.#queue = [];
      this.#queuedBytes = 0;
      this.#outputFailedNow(error as Error);
    } finally {
      this.#writing = undefined;
      this.#releaseSenders();
    }
  }

  /**
   * Takes the lines to write next: everything up to the first large answer, in order; if that is
   * the first line, the small answers that follow it with only large answers between (see
   * {@link LARGE_LINE_BYTES}), else it alone.
   */
  #nextLines(): Line[] {
    const queue = this.#queue;
    const large = (line: Line) => line.answer && line.bytes.length >= LARGE_LINE_BYTES;
    let first = queue.findIndex(large);
    if (first < 0) first = queue.length;
    if (first > 0) {
      this.#queue = queue.slice(first);
      return queue.slice(0, first);
    }
    const passing: Line[] = [];
    let end = 1;
    for (; end < queue.length && queue[end].answer; end++) {
      if (!large(queue[end])) passing.push(queue[end]);
    }
    const taken = passing.length > 0 ? passing : [queue[0]];
    this.#queue = queue.filter((line) => !taken.includes(line));
    return taken;
  }

  #releaseSenders(): void {
    for (const resolve of this.#drained.splice(0)) resolve();
  }
}

/** What an id counts against {@link CANCELLED_MAX_SIZE}. */
function idSize(id: string | number): number {
  return typeof id === "string" ? id.length : 8;
}
