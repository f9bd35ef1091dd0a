/**
 * Large answers are serialized in slices: a tool's answer whose texts hold more than
 * {@link LARGE_ANSWER_CHARACTERS} becomes its bytes through `JSON.stringify` in steps (see
 * src/json_steps.ts), run in slices (src/engine/slices.ts), before a transport sends it: stdio
 * (stdio.ts) and Streamable HTTP (src/http/sse_answers.ts).
 *
 * Why: a tool answer of 2 MiB of output is a message of 4-5 MB (its text holds the answer's
 * JSON, escaped again), which `JSON.stringify` and UTF-8 made in one go: 30-60 ms of the event
 * loop at once, the whole of the wait that a quiet caller's `get_version` had behind four
 * clients reading such answers (docs/benchmarks.md, large answers).
 *
 * @example
 * ```ts
 * import { answerBytes, isLargeAnswer } from "./large_answers.ts";
 * const text = JSON.stringify({ output: "x".repeat(100_000) });
 * const message = { jsonrpc: "2.0" as const, id: 1, result: { content: [{ type: "text", text }] } };
 * isLargeAnswer(message); // true
 * const line = await answerBytes(message, "", "\n"); // chunks of JSON.stringify(message) + "\n"
 * ```
 * @module
 */
import { inSlices } from "../engine/mod.ts";
import { jsonBytesSteps } from "../json_steps.ts";
import type { JSONRPCMessage } from "./sdk.ts";

/** An answer whose texts hold more characters than this is serialized in slices. */
export const LARGE_ANSWER_CHARACTERS = 64 * 1024;

/** Whether `message` is a tool's answer whose texts (the MCP result's content) are long. */
export function isLargeAnswer(message: JSONRPCMessage): boolean {
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

/** `prefix + JSON.stringify(message) + suffix` as UTF-8 chunks, made in slices. */
export function answerBytes(
  message: JSONRPCMessage,
  prefix: string,
  suffix: string,
): Promise<Uint8Array[]> {
  return inSlices(() => jsonBytesSteps(message, prefix, suffix));
}
