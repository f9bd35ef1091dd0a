/**
 * Ending a child the polite way: a first signal to its whole tree (SIGTERM for commands; SIGHUP
 * for terminals, as when a terminal window closes, which interactive shells obey and pass on
 * to their jobs), then SIGKILL after a grace period.
 *
 * @module
 */
import type { ChildProcess, ExitStatus, SignalName } from "../../pty/mod.ts";
import { waitFor } from "../events.ts";

/** Stops `child` and its tree; settles with its exit once its output is drained. */
export async function stopProcess(
  child: ChildProcess,
  graceMs: number,
  firstSignal: SignalName = "SIGTERM",
): Promise<ExitStatus> {
  child.kill(firstSignal);
  const status = await waitFor(child.exited, graceMs);
  if (status) return status;
  child.kill("SIGKILL");
  return await child.exited;
}
