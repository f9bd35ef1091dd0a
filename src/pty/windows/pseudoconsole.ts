/**
 * The pseudoconsole (ConPTY): created on the child's ends of two pipes, resized, and closed.
 * Closing may block (before Windows 11 24H2) until conhost has written its last output, so it
 * runs on Deno's blocking pool, never on the reading path.
 *
 * @module
 */
import { SpawnError } from "../types.ts";
import { coord, type Handle, kernel32 } from "./kernel32.ts";

/** True when this Windows has ConPTY (Windows 10 1809 and later). */
export function hasPseudoConsole(): boolean {
  return kernel32().CreatePseudoConsole !== null;
}

/**
 * A pseudoconsole of `cols` x `rows` reading `input` and writing `output` (the child's ends,
 * which conhost duplicates: the caller closes its copies once the child has started). Throws
 * {@link SpawnError} with the HRESULT when it cannot be made.
 */
export function createPseudoConsole(
  cols: number,
  rows: number,
  input: Handle,
  output: Handle,
): Handle {
  const console = new BigUint64Array(1);
  const hr = kernel32().CreatePseudoConsole!(
    coord(cols, rows),
    input,
    output,
    0,
    new Uint8Array(console.buffer),
  );
  if (hr !== 0) throw new SpawnError("ENOSYS", `CreatePseudoConsole failed: ${hresult(hr)}`);
  return Deno.UnsafePointer.create(console[0]);
}

/** Resizes; throws with the HRESULT when Windows refuses (Wine: E_NOTIMPL). */
export function resizePseudoConsole(console: Handle, cols: number, rows: number): void {
  const hr = kernel32().ResizePseudoConsole!(console, coord(cols, rows));
  if (hr !== 0) throw new Error(`resize failed: ResizePseudoConsole returned ${hresult(hr)}`);
}

/** Closes the pseudoconsole off the calling thread; conhost then ends the output pipe. */
export function closePseudoConsole(console: Handle): Promise<void> {
  return kernel32().ClosePseudoConsole!(console);
}

function hresult(hr: number): string {
  return `HRESULT 0x${(hr >>> 0).toString(16)}`;
}
