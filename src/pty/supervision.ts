/**
 * The server's charge of everything it starts (posix/supervisor.ts), apart from the rest of the
 * platform layer: it is put in place as soon as the server starts, before the engine loads.
 *
 * @module
 */
import { endAll, supervise, type Supervision } from "./posix/supervisor.ts";

export type { Supervision };

const WINDOWS = Deno.build.os === "windows";

/**
 * Makes the server answer for everything it starts, beyond each child's own tree: on Linux a
 * child subreaper, and under `stateDir` a ledger through which the next server ends what this
 * one left if it is killed (and this one ends what killed predecessors left, at once; the rest
 * comes with the first child). On Windows job objects end every tree when the server dies, so
 * there is nothing to do. Call once, first.
 */
export function superviseChildren(stateDir: string | undefined): Supervision {
  if (WINDOWS) return { recovered: 0 };
  return supervise(stateDir);
}

/** The last step of a shutdown: kills whatever this server started that still runs. */
export function endAllChildren(): number {
  return WINDOWS ? 0 : endAll();
}
