/**
 * `JSON.stringify` in steps: the same text, made a piece at a time, so that an answer of
 * megabytes is serialized in slices (see src/engine/slices.ts) rather than in one go.
 *
 * Why: an answer holding 2 MiB of output is serialized twice (the tool result's text, then the
 * JSON-RPC message around it, which escapes that text again) and encoded as UTF-8: measured
 * here, 40-70 ms of the event loop in one piece, the whole of the wait that a quiet caller's
 * `get_version` had behind four clients reading such answers.
 *
 * A string longer than {@link PIECE_CHARACTERS} is escaped a piece at a time (never between the
 * two halves of a surrogate pair, which `JSON.stringify` would then escape one by one), and the
 * steps may pause after each piece, and after every few items of a long array or object.
 * Plain objects and arrays are walked; any other value (one with `toJSON`, a boxed primitive, a
 * number) is handed to `JSON.stringify` whole, so the text is `JSON.stringify`'s in every case.
 *
 * @example
 * ```ts
 * import { jsonBytesSteps, jsonTextSteps } from "./json_steps.ts";
 * const value = { output: "line\n".repeat(100_000), exit_code: 0 };
 * const steps = jsonTextSteps(value);
 * let step = steps.next();
 * while (!step.done) step = steps.next(); // or run them in slices
 * step.value === JSON.stringify(value); // true
 * const chunks = jsonBytesSteps(value, "data: ", "\n\n");
 * ```
 * @module
 */
import type { Steps } from "./engine/slices.ts";

/** Characters of a long string escaped in one piece. */
export const PIECE_CHARACTERS = 32 * 1024;
/** Characters of JSON text gathered before they are encoded into one chunk of bytes. */
const CHUNK_CHARACTERS = 64 * 1024;
/** Items of an array or object walked between two chances to pause. */
const ITEMS_PER_STEP = 512;

/** `JSON.stringify(value)`, in steps ({@link jsonSteps}); `undefined` where it gives that. */
export function* jsonTextSteps(value: unknown, piece = PIECE_CHARACTERS): Steps<string> {
  const parts: string[] = [];
  const whole = yield* jsonSteps(value, (text) => parts.push(text), piece);
  return whole ? parts.join("") : undefined as unknown as string;
}

/**
 * `prefix + JSON.stringify(value) + suffix` as UTF-8, in chunks of about
 * {@link CHUNK_CHARACTERS} characters each, made in steps.
 */
export function* jsonBytesSteps(
  value: unknown,
  prefix = "",
  suffix = "",
  piece = PIECE_CHARACTERS,
): Steps<Uint8Array[]> {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let pending: string[] = [prefix];
  let size = prefix.length;
  const flush = () => {
    chunks.push(encoder.encode(pending.join("")));
    pending = [];
    size = 0;
  };
  yield* jsonSteps(value, (text) => {
    pending.push(text);
    size += text.length;
    if (size >= CHUNK_CHARACTERS) flush();
  }, piece);
  pending.push(suffix);
  flush();
  return chunks;
}

/**
 * Hands `put` the text of `JSON.stringify(value)` piece by piece, in steps; returns false where
 * `JSON.stringify` gives `undefined` (and `put` was given nothing). Throws what it throws (a
 * cycle, a BigInt).
 */
export function* jsonSteps(
  value: unknown,
  put: (text: string) => void,
  piece = PIECE_CHARACTERS,
): Steps<boolean> {
  if (typeof value === "string") {
    if (value.length <= piece) put(JSON.stringify(value));
    else yield* stringSteps(value, put, piece);
    return true;
  }
  if (!walkable(value)) {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    put(text);
    return true;
  }
  yield* containerSteps(value, put, piece, new Set());
  return true;
}

/** A plain array or object: walked here; anything else goes to `JSON.stringify` whole. */
function walkable(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A long string's JSON text, a piece at a time. */
function* stringSteps(text: string, put: (text: string) => void, piece: number): Steps<void> {
  put('"');
  for (let from = 0; from < text.length;) {
    let to = Math.min(text.length, from + piece);
    if (to < text.length && splitsPair(text, to)) to++; // keep the pair whole
    put(JSON.stringify(text.slice(from, to)).slice(1, -1));
    from = to;
    yield;
  }
  put('"');
}

/** Whether `at` falls between a high surrogate and the low one that completes it. */
function splitsPair(text: string, at: number): boolean {
  const high = text.charCodeAt(at - 1), low = text.charCodeAt(at);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/**
 * An array's or a plain object's JSON text; `ancestors` finds a cycle as `JSON.stringify` does.
 * An item that is not walked goes to `JSON.stringify` under its own key, so that a `toJSON`
 * is called with the key, once, and what is dropped is dropped alike.
 */
function* containerSteps(
  value: object,
  put: (text: string) => void,
  piece: number,
  ancestors: Set<object>,
): Steps<void> {
  if (ancestors.has(value)) throw new TypeError("Converting circular structure to JSON");
  ancestors.add(value);
  const array = Array.isArray(value);
  put(array ? "[" : "{");
  const keys = array ? undefined : Object.keys(value);
  const count = array ? value.length : keys!.length;
  let first = true;
  for (let i = 0; i < count; i++) {
    const key = array ? String(i) : keys![i];
    const item = (value as Record<string, unknown>)[key];
    const name = JSON.stringify(key);
    let text: string | undefined;
    if (typeof item !== "string" && !walkable(item)) {
      const wrapped = JSON.stringify({ [key]: item }); // `{}` where the item is dropped
      if (wrapped.length > 2) text = wrapped.slice(name.length + 2, -1);
      else if (!array) continue;
      else text = "null";
    }
    if (!first) put(",");
    first = false;
    if (!array) put(`${name}:`);
    if (text !== undefined) put(text);
    else if (typeof item === "string") yield* jsonSteps(item, put, piece);
    else yield* containerSteps(item as object, put, piece, ancestors);
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
  }
  put(array ? "]" : "}");
  ancestors.delete(value);
}
