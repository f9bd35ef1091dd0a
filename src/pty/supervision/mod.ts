/**
 * Supervision: the server's charge of everything it starts, beyond each child's own tree and
 * across restarts. A part of the platform layer (it is made of the OS's tools: a child
 * subreaper, locked files, the process table, job objects), in a room of its own because its
 * concern is the server's life, not one child's: the PTY (`../posix`, `../windows`) starts
 * children and ends each one's tree (`../posix/tree.ts`, `../windows/job.ts`); supervision
 * answers for whatever a tree or a killed predecessor left.
 *
 * One interface, {@link Supervision} (types.ts), made once by {@link superviseChildren} and
 * handed down as an object: the engine's groundwork makes it, the launcher passes it to every
 * `spawn`, and the POSIX spawner records each child in its {@link ChildRegistry}. Nothing passes
 * between them through module state, and the imports go one way: supervision uses the PTY's
 * tools (the process table, trees, the reactor), never the spawner, which knows supervision only
 * by the types it is handed.
 *
 * - POSIX (posix.ts, ledger.ts): a child subreaper (Linux), a ledger under the state directory
 *   through which the next server ends what this one left if it is killed, and a last sweep at
 *   shutdown.
 * - Windows (windows.ts): nothing to do; job objects end every tree when the server dies.
 *
 * This face is light on purpose: the groundwork loads it as the server starts, before the
 * engine. The supervisor itself (FFI, the process table, the reactor: about half a MiB of an
 * idle server) loads at once only if killed predecessors left ledgers to end; else with the
 * first child, which asks for the {@link Supervision.registry}.
 *
 * @example
 * ```ts
 * import { superviseChildren } from "./mod.ts";
 * const supervision = await superviseChildren("/home/me/.local/state/winterm-mcp");
 * console.error(`ended ${supervision.recovered} processes killed servers had left`);
 * // ... spawn(options, supervision) for every child, then at the end of a shutdown:
 * supervision.endAll();
 * ```
 * @module
 */
import { hasLedgers } from "./ledger.ts";
import type { PosixSupervisor } from "./posix.ts";
import type { ChildRegistry, Supervision } from "./types.ts";
import { WINDOWS_SUPERVISION } from "./windows.ts";

export type { ChildRegistry, ProcessId, Supervision } from "./types.ts";

/**
 * Makes the server answer for everything it starts, beyond each child's own tree, and ends at
 * once what killed predecessors left under `stateDir` (POSIX; without a `stateDir` nothing is
 * recorded across restarts). Call once, before the first child starts.
 */
export async function superviseChildren(stateDir: string | undefined): Promise<Supervision> {
  if (Deno.build.os === "windows") return WINDOWS_SUPERVISION;
  if (stateDir === undefined || !hasLedgers(stateDir)) return new PosixSupervision(0, stateDir);
  const { endAbandoned } = await import("./posix.ts");
  return new PosixSupervision(endAbandoned(stateDir), stateDir);
}

/** POSIX supervision: the supervisor (posix.ts) is loaded and put in place with the first child. */
class PosixSupervision implements Supervision {
  #supervisor: PosixSupervisor | undefined;
  #taking: Promise<PosixSupervisor> | undefined;

  constructor(readonly recovered: number, private readonly stateDir: string | undefined) {}

  registry(): Promise<ChildRegistry> {
    return this.#taking ??= import("./posix.ts").then(({ PosixSupervisor }) =>
      this.#supervisor = new PosixSupervisor(this.stateDir)
    );
  }

  endAll(): number {
    return this.#supervisor?.endAll() ?? 0;
  }
}
