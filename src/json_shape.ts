/**
 * Bounds on the shape of a JSON message, checked before it is parsed: a client's message is
 * refused for its shape, not after the server spent itself on it. Measured here, a message of
 * 8 MB (under the stdio bound of 10 MiB) with 600,000 keys blocked the event loop for 2 to 4 s
 * and peaked at about 350 MB: `JSON.parse`, the SDK's schema check, then the tool's. At the
 * bounds below, the same work is a few tens of milliseconds.
 *
 * What is counted are the commas and colons outside strings (an object of n keys has n colons
 * and n - 1 commas, an array of n items n - 1 commas), and how deep objects and arrays nest; a
 * string never closed ends the counting (and the parser says what is wrong). For JSON-RPC, the
 * ids written as numbers are read as written: one a double would round is refused too.
 * Strings are skipped whole (their closing quote found with `indexOf`), so a large text costs
 * little to look at: measured, 34 ms for those 600,000 keys, 56 ms for 10 MB of a string
 * that is mostly escaped quotes, the worst case found.
 *
 * @example
 * ```ts
 * import { jsonShape, jsonShapeProblem, roundedIds } from "./json_shape.ts";
 * jsonShape('{"a":[1,2,"x,y:z"]}').separators;            // 3
 * jsonShapeProblem(jsonShape("[".repeat(100)));            // "it nests objects and arrays 100 deep, more than 64"
 * // Item 1 of the batch: its id is read as 9007199254740992, which another request may hold.
 * roundedIds(jsonShape('[{"id":1},{"id":9007199254740993}]')).has(1); // true
 * ```
 * @module
 */

/** Commas and colons outside strings that a message may hold (50,000 keys, or 100,000 items). */
export const MAX_JSON_SEPARATORS = 100_000;
/**
 * Messages in a JSON-RPC batch, at most (the SDK's HTTP transport has the same bound): its
 * answers go back as one line, which must stay far below what a string can hold (2,000
 * tools/list answers made one of 106 MB; 16,000 were never answered), and each message's id
 * costs a look.
 */
export const MAX_BATCH_MESSAGES = 100;
/** How deep objects and arrays may nest in a message. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, COLON = 0x3a;
/** JSON's white space: space, tab, line feed, carriage return. */
const WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const OPEN_ARRAY = 0x5b, OPEN_OBJECT = 0x7b, CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;

/** What {@link jsonShape} finds. */
export interface JsonShape {
  /** Commas and colons outside strings (up to an unclosed string). */
  separators: number;
  /** How deep objects and arrays nest (likewise). */
  depth: number;
  /** The text is an array: for JSON-RPC, a batch. */
  batch: boolean;
  /** Its items, if it is an array (an empty one counts 1). */
  items: number;
  /**
   * The ids written as numbers, as written, of the message (an object; item 0) or of each
   * message of a batch (an array of objects; its items counted from 0).
   */
  numberIds: { item: number; written: string; at: number }[];
  /**
   * The ids written as strings of at most {@link MOST_STRING_ID_CHARACTERS} characters, as
   * JSON literals (quotes and escapes included), likewise: a message refused unread for its
   * shape is answered with its id where it has one.
   */
  stringIds: { item: number; literal: string; at: number }[];
  /** Where the message's own "id" keys are, whatever their values (a lone message's). */
  idKeys: number[];
  /** A lone message has its own "method" key: it is a request or a notification. */
  method: boolean;
  /** Something other than white space follows the first value: the text is no one message. */
  trailing: boolean;
  /** A string in it is never closed: the counts stop there, and the parser says what is wrong. */
  unclosed: boolean;
}

/** The shape of `text` (see the module documentation). Text that is not JSON is measured too. */
export function jsonShape(text: string): JsonShape {
  let separators = 0, depth = 0, deepest = 0, item = 0;
  const numberIds: JsonShape["numberIds"] = [];
  const stringIds: JsonShape["stringIds"] = [];
  const idKeys: number[] = [];
  let method = false, closed = false, trailing = false;
  const batch = text.trimStart().startsWith("[");
  // A message's own keys are at depth 1; in a batch, at depth 2.
  const keysAt = batch ? 2 : 1;
  const shape = () => ({
    separators,
    depth: deepest,
    batch,
    items: item + 1,
    numberIds,
    stringIds,
    idKeys,
    method,
    trailing,
    unclosed: false,
  });
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (closed && !trailing && depth === 0 && !WHITE_SPACE.has(code)) trailing = true;
    switch (code) {
      case QUOTE: {
        const end = closingQuote(text, i);
        if (end < 0) return { ...shape(), unclosed: true };
        if (!batch && depth === 1 && isKey(text, end)) {
          if (end - i === 7 && text.startsWith("method", i + 1)) method = true;
          if (isIdKey(text, i, end)) idKeys.push(i);
        }
        if (depth === keysAt && isIdKey(text, i, end)) {
          const written = numberValue(text, end + 1);
          if (written !== undefined) numberIds.push({ item, written, at: i });
          const literal = stringValue(text, end + 1);
          if (literal !== undefined) stringIds.push({ item, literal, at: i });
        }
        i = end;
        break;
      }
      case COMMA:
        separators++;
        if (depth === 1 && batch) item++;
        break;
      case COLON:
        separators++;
        break;
      case OPEN_ARRAY:
      case OPEN_OBJECT:
        deepest = Math.max(deepest, ++depth);
        break;
      case CLOSE_ARRAY:
      case CLOSE_OBJECT:
        // Below 0 (a bracket that closes nothing): no one message either.
        if (--depth <= 0) [closed, trailing] = [true, trailing || depth < 0];
        break;
    }
  }
  return shape();
}

/** What is wrong with a shape, in words, or undefined when it is within the bounds. */
export function jsonShapeProblem(shape: JsonShape): string | undefined {
  if (shape.separators > MAX_JSON_SEPARATORS) {
    return `it has ${shape.separators} commas and colons outside strings, more than ` +
      `${MAX_JSON_SEPARATORS} (about ${MAX_JSON_SEPARATORS / 2} keys or ${MAX_JSON_SEPARATORS} ` +
      "array items)";
  }
  if (shape.depth > MAX_JSON_DEPTH) {
    return `it nests objects and arrays ${shape.depth} deep, more than ${MAX_JSON_DEPTH}`;
  }
  return undefined;
}

/** For JSON-RPC: what is wrong with a batch's size, or undefined. */
export function batchProblem(shape: JsonShape): string | undefined {
  if (!shape.batch || shape.items <= MAX_BATCH_MESSAGES) return undefined;
  return `a batch of ${shape.items} messages, more than ${MAX_BATCH_MESSAGES}`;
}

/**
 * For JSON-RPC: the messages (items of a batch; 0 for a lone message) whose id is written as a
 * number that a double does not hold exactly, with what is wrong with it. Such an id is read as
 * another number (`1.0000000000000001` as 1, `9007199254740993` as ...992, `1e-400` as 0) and
 * would be answered as another request's id.
 */
export function roundedIds(shape: JsonShape): Map<number, string> {
  const rounded = new Map<number, string>();
  for (const { item, written } of shape.numberIds) {
    if (rounded.has(item) || PLAIN_SAFE.test(written)) continue;
    const value = Number(written);
    const exact = heldExactly(written);
    // A double beyond 2^53 - 1 is written back as its shortest form (2^60 as ...847000).
    if (exact && (!Number.isInteger(value) || Number.isSafeInteger(value))) continue;
    const shown = written.length > 40 ? `${written.slice(0, 40)}…` : written;
    const read = exact
      ? "is beyond 2^53 - 1: it would be written back as another number"
      : Number.isFinite(value)
      ? `is read as the nearest double, ${value}, another number`
      : "is no number a double holds";
    rounded.set(
      item,
      `its 'id' ${shown} ${read}: an id must be a string, or an integer of at most ` +
        `${Number.MAX_SAFE_INTEGER} (or a number a double holds exactly)`,
    );
  }
  return rounded;
}

/** An integer written plainly that a double holds exactly (up to 15 digits): the usual id. */
const PLAIN_SAFE = /^-?(?:0|[1-9][0-9]{0,14})$/;

/** Characters of a number written as an id that are looked at exactly; a longer one is refused. */
const MOST_ID_CHARACTERS = 400;

/** Whether the number as written (JSON's grammar) is exactly the double it is read as. */
function heldExactly(written: string): boolean {
  const value = Number(written);
  const parts = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(written);
  if (!parts || !Number.isFinite(value) || written.length > MOST_ID_CHARACTERS) return false;
  const [, whole, fraction = "", exponent = "0"] = parts;
  // As written: digits × 10^power. As read: mantissa × 2^twos.
  const digits = BigInt(whole + fraction);
  const power = Number(exponent) - fraction.length;
  if (value === 0 || digits === 0n) return value === 0 && digits === 0n;
  if (Math.abs(power) > 2 * MOST_ID_CHARACTERS) return false;
  const bits = new DataView(new Float64Array([Math.abs(value)]).buffer).getBigUint64(0, true);
  const biased = Number(bits >> 52n), fractionBits = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fractionBits : fractionBits | (1n << 52n);
  const twos = (biased === 0 ? 1 : biased) - 1075;
  const positive = (n: number) => BigInt(Math.max(n, 0));
  return digits * 10n ** positive(power) * 2n ** positive(-twos) ===
    mantissa * 2n ** positive(twos) * 10n ** positive(-power);
}

/**
 * Whether the string from `open` to `close` (its quotes) is "id", however escaped: each letter
 * as itself or as its \u escape (no other escape gives an i or a d). Matched, not decoded: a
 * key with a bad escape must cost no more than any other (decoding 2 million of them with
 * `JSON.parse`, each one throwing, held the server for 20 s).
 */
function isIdKey(text: string, open: number, close: number): boolean {
  const length = close - open - 1;
  if (length === 2) return text.startsWith("id", open + 1);
  return length <= 12 && ESCAPED_ID.test(text.slice(open + 1, close));
}

/** "id" with one letter or both written as \u escapes (their hex digits have no letters). */
const ESCAPED_ID = /^(?:i|\\u0069)(?:d|\\u0064)$/;

/**
 * The number written as the value of the key that ends at `from` (a colon, then the number,
 * with white space around), or undefined if what follows is no key with a number.
 */
function numberValue(text: string, from: number): string | undefined {
  const colon = /[ \t\n\r]*:[ \t\n\r]*/y;
  colon.lastIndex = from;
  if (!colon.exec(text)) return undefined;
  const number = /-?[0-9][0-9.eE+-]*|-/y;
  number.lastIndex = colon.lastIndex;
  return number.exec(text)?.[0];
}

/** Whether the string that ends at `close` is a key (a colon follows, after white space). */
function isKey(text: string, close: number): boolean {
  let at = close + 1;
  while (WHITE_SPACE.has(text.charCodeAt(at))) at++;
  return text.charCodeAt(at) === COLON;
}

/** String ids longer than this are not kept (nor answered with when refused unread). */
export const MOST_STRING_ID_CHARACTERS = 1000;

/**
 * The string written as the value of the key that ends at `from`, as its JSON literal, or
 * undefined if what follows is no key with a string of at most
 * {@link MOST_STRING_ID_CHARACTERS} characters.
 */
function stringValue(text: string, from: number): string | undefined {
  const colon = /[ \t\n\r]*:[ \t\n\r]*/y;
  colon.lastIndex = from;
  if (!colon.exec(text) || text.charCodeAt(colon.lastIndex) !== QUOTE) return undefined;
  const end = closingQuote(text, colon.lastIndex);
  if (end < 0 || end - colon.lastIndex - 1 > MOST_STRING_ID_CHARACTERS) return undefined;
  return text.slice(colon.lastIndex, end + 1);
}

/**
 * The id of a lone message (not a batch), as it would be read, if the shape shows one exactly:
 * a string, or an integer written plainly. Undefined otherwise (none, a batch, a number that
 * may be rounded, a string with a bad escape): then a refusal's id is null.
 */
export function messageId(shape: JsonShape): string | number | undefined {
  // A request's only: never a response's, nor one of a text that is no one message.
  if (shape.batch || !shape.method || shape.trailing) return undefined;
  // Of a key given twice, the parser keeps the last: its value must be the one read.
  const last = shape.idKeys.at(-1);
  const number = shape.numberIds.at(-1), string = shape.stringIds.at(-1);
  if (last === undefined || (last !== number?.at && last !== string?.at)) return undefined;
  if (string && (!number || string.at > number.at)) {
    try {
      return JSON.parse(string.literal);
    } catch {
      return undefined;
    }
  }
  return number && PLAIN_SAFE.test(number.written) ? Number(number.written) : undefined;
}

/** The index of the quote that closes the string opened at `open`, or -1 if none does. */
function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    // An odd run of backslashes escapes the quote; an even one is escaped backslashes.
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}
