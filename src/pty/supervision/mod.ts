/**
 * The server's charge of everything it starts (posix.ts), apart from the rest of the
 * platform layer: asked for as soon as the server starts, before the engine loads. The
 * supervisor itself (FFI, the process table, the reactor: ten modules, about half a MiB of an
 * idle server) loads at once only if killed predecessors left ledgers to end; else with the
 * engine, whose first child takes the charge (`takeCharge`).
 *
 * @module
 */
import type { Supervision } from "./posix.ts";
import { hasLedgers } from "./ledger.ts";

export type { Supervision };

const WINDOWS = Deno.build.os === "windows";

/** What {@link superviseChildren} asked for, until the first child takes it. */
let asked: { stateDir: string | undefined } | undefined;
/** How a shutdown ends everything, once a child has started under supervision. */
let endEverything: (() => number) | undefined;

/**
 * Makes the server answer for everything it starts, beyond each child's own tree: on Linux a
 * child subreaper, and under `stateDir` a ledger through which the next server ends what this
 * one left if it is killed (and this one ends what killed predecessors left, at once; the rest
 * comes with the first child). On Windows job objects end every tree when the server dies, so
 * there is nothing to do. Call once, first.
 */
export async function superviseChildren(stateDir: string | undefined): Promise<Supervision> {
  if (WINDOWS) return { recovered: 0 };
  asked = { stateDir };
  if (stateDir === undefined || !hasLedgers(stateDir)) return { recovered: 0 };
  const { endAbandoned } = await import("./posix.ts");
  return { recovered: endAbandoned(stateDir) };
}

/**
 * For the first child (posix.ts): what {@link superviseChildren} asked for, once
 * (undefined if nothing was, as for the platform layer used as a library); `endAll` is how a
 * shutdown ends everything from then on.
 */
export function takeCharge(endAll: () => number): { stateDir: string | undefined } | undefined {
  const taken = asked;
  asked = undefined;
  if (taken) endEverything = endAll;
  return taken;
}

/** The last step of a shutdown: kills whatever this server started that still runs. */
export function endAllChildren(): number {
  return endEverything?.() ?? 0;
}
