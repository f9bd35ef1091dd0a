/**
 * Answers that read output take turns: one at a time, each in a task of its own.
 *
 * Why: building an answer of 2 MiB of output (reading it, measuring it as JSON, the front end's
 * serialization) takes 75-500 ms of the event loop (the more the output edits its lines in
 * place, the longer), and does not wait on anything. A hundred
 * such calls at once (separate requests, or one JSON-RPC batch) ran back to back: every other
 * client waited 10-30 s, and their answers, made all at once, held over 1 GB. Taking turns, an
 * answer waits for the one before it to be made and sent on its way, and whatever else came in
 * meanwhile (a `get_version`, a health check, a keystroke) is served between the two; at most
 * one such answer is being made at any time. A lone answer waits for nothing. A front end whose
 * answers share one stream (stdio) says when that stream has room ({@link setAnswerRoom}): a
 * turn begins only then, so answers a slow reader has not taken do not pile up in memory.
 *
 * Within its turn, an answer that reads output is built in slices ({@link inAnswerSlices}, see
 * slices.ts): between two, the event loop serves the rest, so that no call waits long for one
 * answer either.
 *
 * @example
 * ```ts
 * import { inAnswerTurn } from "./answer_turns.ts";
 * const answer = await inAnswerTurn(() => ({ output: "read the output and build the answer" }));
 * ```
 * @module
 */

import { inSlices, type Steps } from "./slices.ts";
import { Turns } from "./turns.ts";

const turns = new Turns(1);
let sharedRoom: () => Promise<void> = () => Promise.resolve();

/** Sets what a turn waits for before it begins: room for one more answer where they go. */
export function setAnswerRoom(wait: () => Promise<void>): void {
  sharedRoom = wait;
}

/** Who waits for an answer: a front end's call. */
export interface AnswerCaller {
  /** Aborted when the caller gives up: a call waiting for its turn leaves the line. */
  signal?: AbortSignal;
  /**
   * Settles once the place this caller's answers go can take one more (a stream its reader has
   * emptied): the call takes its place in line only then. Without it, a client that sent a
   * batch of 100 reads and never read took the server past a gigabyte: every answer was made,
   * and waited, whole, for a reader that never came.
   */
  room?: () => Promise<void>;
  /** The client it is for (an MCP session): turns go round the clients (see turns.ts). */
  client?: object;
}

/**
 * Builds an answer in its turn (see the module documentation): the caller's front end sends it
 * on its way before the next turn begins, in a later task. A call cancelled (`signal`) while it
 * waits leaves the line and rejects with the signal's reason: no one would read its answer.
 */
export async function inAnswerTurn<T>(
  build: () => T | Promise<T>,
  { signal, room, client }: AnswerCaller = {},
): Promise<T> {
  if (room) {
    await room();
    signal?.throwIfAborted();
  }
  const done = await turns.take(signal, client);
  try {
    signal?.throwIfAborted();
    await sharedRoom();
    signal?.throwIfAborted();
    return await build();
  } finally {
    done();
  }
}

/**
 * Builds an answer in its turn ({@link inAnswerTurn}), in slices: `work` makes the steps (see
 * slices.ts), which take what they read at their start (output frozen then, the state it goes
 * with), so that the answer describes one moment however long it takes.
 */
export function inAnswerSlices<T>(work: () => Steps<T>, caller: AnswerCaller = {}): Promise<T> {
  return inAnswerTurn(() => inSlices(work, caller.signal), caller);
}

/**
 * A read's answer in slices: in its turn ({@link inAnswerSlices}), unless the read is a search
 * (`grep`). A search's answer is small (within the read's byte budget) and its work bounded (see
 * output/grep.ts), where the turns are there for large answers being made: it is built in
 * slices in no turn. A caller's ten searches, each holding the one turn for its 2 s of work,
 * made every other client's reads wait behind them (a ten-line answer came after 27 s).
 */
export function inReadSlices<T>(
  read: { grep?: unknown },
  work: () => Steps<T>,
  caller: AnswerCaller = {},
): Promise<T> {
  return read.grep ? inSlices(work, caller.signal) : inAnswerSlices(work, caller);
}
