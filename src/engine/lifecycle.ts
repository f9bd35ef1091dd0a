/**
 * Ending a child the polite way: SIGTERM to its whole tree, SIGKILL after a grace period.
 *
 * @module
 */
import type { ChildProcess, ExitStatus } from "../pty/mod.ts";
import { waitFor } from "./events.ts";

/** Stops `child` and its tree; settles with its exit once its output is drained. */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<ExitStatus> {
  child.kill("SIGTERM");
  const status = await waitFor(child.exited, graceMs);
  if (status) return status;
  child.kill("SIGKILL");
  return await child.exited;
}
