/**
 * Bounds on the shape of a JSON message, checked before it is parsed: a client's message is
 * refused for its shape, not after the server spent itself on it. Measured here, a message of
 * 8 MB (under the stdio bound of 10 MiB) with 600,000 keys blocked the event loop for 2 to 4 s
 * and peaked at about 350 MB: `JSON.parse`, the SDK's schema check, then the tool's. At the
 * bounds below, the same work is a few tens of milliseconds.
 *
 * What is counted are the commas and colons outside strings (an object of n keys has n colons
 * and n - 1 commas, an array of n items n - 1 commas), and how deep objects and arrays nest.
 * Strings are skipped whole (their closing quote found with `indexOf`), so a large text costs
 * little to look at: measured, 34 ms for those 600,000 keys, 56 ms for 10 MB of a string
 * that is mostly escaped quotes, the worst case found.
 *
 * @example
 * ```ts
 * import { jsonShape, jsonShapeProblem } from "./json_shape.ts";
 * jsonShape('{"a":[1,2,"x,y:z"]}');   // { separators: 3, depth: 2 }
 * jsonShapeProblem('{"a":[1,2,"x,y:z"]}'); // undefined
 * jsonShapeProblem("[".repeat(100));       // "it nests objects and arrays 100 deep, more than 64"
 * ```
 * @module
 */

/** Commas and colons outside strings that a message may hold (50,000 keys, or 100,000 items). */
export const MAX_JSON_SEPARATORS = 100_000;
/** How deep objects and arrays may nest in a message. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, COLON = 0x3a;
const OPEN_ARRAY = 0x5b, OPEN_OBJECT = 0x7b, CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;

/** The commas and colons outside strings of a JSON text, and how deep it nests. */
export interface JsonShape {
  separators: number;
  depth: number;
}

/**
 * The shape of `text` (see the module documentation), or undefined if a string in it is not
 * closed. Text that is not JSON is measured all the same: the parser describes what is wrong.
 */
export function jsonShape(text: string): JsonShape | undefined {
  let separators = 0, depth = 0, deepest = 0;
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case QUOTE:
        i = closingQuote(text, i);
        if (i < 0) return undefined;
        break;
      case COMMA:
      case COLON:
        separators++;
        break;
      case OPEN_ARRAY:
      case OPEN_OBJECT:
        deepest = Math.max(deepest, ++depth);
        break;
      case CLOSE_ARRAY:
      case CLOSE_OBJECT:
        depth--;
        break;
    }
  }
  return { separators, depth: deepest };
}

/** What is wrong with the shape of `text`, in words, or undefined when it is within the bounds. */
export function jsonShapeProblem(text: string): string | undefined {
  const shape = jsonShape(text);
  if (!shape) return undefined; // an unclosed string: the parser says so
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
