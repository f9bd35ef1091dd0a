/**
 * Windows environment blocks: `NAME=value\0...\0\0` in UTF-16, names unique ignoring case
 * (the last one given wins) and sorted by their upper-cased form, as CreateProcessW expects.
 * Pure functions: usable (and tested) on any OS.
 *
 * @example
 * ```ts
 * import { windowsEnvironment } from "./environment.ts";
 * windowsEnvironment({ b: "2", A: "1", B: "3" }); // [["A", "1"], ["B", "3"]]
 * ```
 * @module
 */

/** The entries of `env` as Windows keeps them: deduplicated ignoring case, sorted. */
export function windowsEnvironment(env: Record<string, string>): [string, string][] {
  const byUpper = new Map<string, [string, string]>();
  for (const [name, value] of Object.entries(env)) byUpper.set(name.toUpperCase(), [name, value]);
  return [...byUpper.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, entry]) => entry);
}

/** The UTF-16LE environment block for CreateProcessW (CREATE_UNICODE_ENVIRONMENT). */
export function environmentBlock(env: Record<string, string>): Uint8Array<ArrayBuffer> {
  const text = windowsEnvironment(env).map(([name, value]) => `${name}=${value}\0`).join("") ||
    "\0";
  const units = new Uint16Array(text.length + 1);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return new Uint8Array(units.buffer);
}
