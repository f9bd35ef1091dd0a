/**
 * Named keys and the bytes a terminal sends for them (xterm conventions, which ConPTY also
 * understands): what `terminal_write` types for `keys: ["up", "enter"]`.
 *
 * @example
 * ```ts
 * import { keySequence } from "./keys.ts";
 * keySequence("ctrl_c"); // "\x03"
 * keySequence("up");     // "\x1b[A"
 * ```
 * @module
 */

const NAMED: Record<string, string> = {
  enter: "\r",
  tab: "\t",
  shift_tab: "\x1b[Z",
  escape: "\x1b",
  backspace: "\x7f",
  delete: "\x1b[3~",
  insert: "\x1b[2~",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  f1: "\x1bOP",
  f2: "\x1bOQ",
  f3: "\x1bOR",
  f4: "\x1bOS",
  f5: "\x1b[15~",
  f6: "\x1b[17~",
  f7: "\x1b[18~",
  f8: "\x1b[19~",
  f9: "\x1b[20~",
  f10: "\x1b[21~",
  f11: "\x1b[23~",
  f12: "\x1b[24~",
};

// ctrl_a .. ctrl_z are 0x01 .. 0x1a (ctrl_c interrupts, ctrl_d ends input, ctrl_z suspends).
for (let code = 0; code < 26; code++) {
  NAMED[`ctrl_${String.fromCharCode(97 + code)}`] = String.fromCharCode(code + 1);
}
Object.assign(NAMED, { ctrl_backslash: "\x1c", ctrl_bracket: "\x1b", ctrl_underscore: "\x1f" });

/** Every key name. */
export const KEY_NAMES: readonly string[] = Object.keys(NAMED);

/** The bytes (as text) for a key name. */
export function keySequence(name: string): string {
  const sequence = NAMED[name];
  if (sequence === undefined) throw new Error(`unknown key '${name}'`);
  return sequence;
}
