/**
 * What supervision is to the rest of the platform layer and to the engine (see mod.ts): the one
 * interface both platforms implement, and the registry the POSIX spawner records children in.
 *
 * @module
 */
import type { ProcessId } from "../posix/tree.ts";

export type { ProcessId };

/** What the POSIX spawner tells supervision of the children it starts. */
export interface ChildRegistry {
  /** A child, the root of a tree, has started. */
  started(root: ProcessId): void;
  /** A child and its tree have ended. */
  ended(pid: number): void;
}

/** The server's charge of everything it starts (see mod.ts). */
export interface Supervision {
  /** Processes that killed predecessors had left, ended as supervision began. */
  readonly recovered: number;
  /**
   * For the spawner, before each child starts: where to record it. The first call puts the
   * charge in place (the subreaper, this server's ledger), so an idle server holds neither.
   * POSIX only: Windows' children need no record (job objects).
   */
  registry?(): Promise<ChildRegistry>;
  /**
   * The last step of a shutdown: kills (SIGKILL) whatever this server started that still runs,
   * and closes the ledger. Returns how many processes were signalled.
   */
  endAll(): number;
}
