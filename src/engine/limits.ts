/**
 * The server's limits applied to what a client asks: a size over the server's maximum is
 * lowered to it, and the answer says so (the front end words it with its own field names).
 *
 * @example
 * ```ts
 * import { clampSize } from "./limits.ts";
 * clampSize(16 << 20, 2 << 20); // { value: 2097152, clamped: { requested: 16777216, limit: 2097152 } }
 * clampSize(1000, 2 << 20);     // { value: 1000 }
 * ```
 * @module
 */

/** A requested size the server lowered to its limit. */
export interface Clamped {
  requested: number;
  limit: number;
}

/** `requested`, or `limit` if it is more (and then how it was lowered). */
export function clampSize(requested: number, limit: number): { value: number; clamped?: Clamped } {
  return requested > limit ? { value: limit, clamped: { requested, limit } } : { value: requested };
}

/** Command lines are shown up to this many characters. */
const DISPLAY_CHARS = 1000;

/** A command line for answers and lists: long ones are shortened and say by how much. */
export function shortDisplay(text: string): string {
  if (text.length <= DISPLAY_CHARS) return text;
  return `${text.slice(0, DISPLAY_CHARS)}… (${text.length - DISPLAY_CHARS} more characters)`;
}
