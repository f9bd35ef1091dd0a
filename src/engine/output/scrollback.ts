/**
 * What a viewer that joins late is given besides the screen: the output kept before it, which
 * its terminal draws first, so that what scrolled off is there to scroll back to; then the
 * screen, redrawn over whatever that output left on it.
 *
 * The screen's snapshot (screen.ts) is made for a fresh terminal: it sets what differs from a
 * fresh terminal's state, and assumes the rest. After other output (this history, or output a
 * viewer drew before it fell behind) the terminal is not fresh: {@link TO_FRESH_SCREEN} makes
 * it so, all but the scrollback, which a full reset (RIS) would clear too.
 *
 * @example
 * ```ts
 * import { StreamOutput } from "./stream.ts";
 * import { historyBefore, toFreshScreen } from "./scrollback.ts";
 * const output = new StreamOutput({ maxBytes: 1024 });
 * output.append(new TextEncoder().encode("one\ntwo\nthree\n"));
 * new TextDecoder().decode(historyBefore(output, output.end, 8)); // "three\n": whole lines only
 * toFreshScreen(80); // written before a snapshot: the screen as a fresh terminal's
 * ```
 * @module
 */
import type { ByteRange } from "./buffer.ts";

/** What is read of the kept output (a terminal's StreamOutput). */
export interface KeptOutput {
  readonly start: number;
  lineAt(offset: number): number;
  lineStart(line: number): number;
  readBytes(from: number, to: number): ByteRange;
}

/**
 * The kept output before `offset`, at most `maxBytes` of it, from the first line that starts
 * within that many bytes (a cut line would start with the rest of a sequence, shown as text).
 * Empty when no line starts there.
 */
export function historyBefore(output: KeptOutput, offset: number, maxBytes: number): Uint8Array {
  if (maxBytes <= 0 || offset <= output.start) return new Uint8Array();
  const from = Math.max(output.start, offset - maxBytes);
  const line = output.lineAt(from);
  const start = output.lineStart(line) === from ? from : output.lineStart(line + 1);
  if (start >= offset) return new Uint8Array();
  return output.readBytes(start, offset).bytes;
}

/** The columns of a fresh terminal's tab stops: every 8th. */
const TAB_EVERY = 8;

/**
 * Escape sequences that make a terminal showing anything as a fresh one of `cols` columns
 * (cursor home), keeping its scrollback:
 * - CAN ends a sequence left unfinished (its bytes are the snapshot's to finish);
 * - back to the normal screen (a full-screen program's alternate one is left);
 * - a soft reset (DECSTR): the cursor shown, the attributes, the scroll region, origin mode,
 *   insert mode, the keypad and cursor keys, character sets, the saved cursor, autowrap;
 * - what that leaves: mouse reporting, focus events, bracketed paste, newline mode (LNM),
 *   the cursor's blinking and shape, reverse video, the colour palette and default colours,
 *   the tab stops;
 * - the screen erased (ED 2, which moves nothing into the scrollback), the cursor home.
 */
export function toFreshScreen(cols: number): Uint8Array {
  let tabs = "\x1b[3g";
  for (let column = TAB_EVERY + 1; column <= cols; column += TAB_EVERY) {
    tabs += `\x1b[1;${column}H\x1bH`;
  }
  return encoder.encode(
    "\x18\x1b[?1049l\x1b[!p" +
      "\x1b[?9;1000;1002;1003;1004;1006;1016;2004;12;5l\x1b[20l\x1b[0 q" +
      "\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\\x1b]112\x1b\\" +
      tabs + "\x1b[H\x1b[2J",
  );
}

const encoder = new TextEncoder();
