/**
 * The server as the guardian of everything it starts, beyond one child at a time:
 *
 * - Linux: the server becomes a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`): an orphan of
 *   one of our trees (a double fork, `setsid cmd &` once the shell is gone) is reparented to
 *   the server instead of init, and the reactor reaps it when it ends.
 * - A ledger under the user's state directory (ledger.ts) names the roots of the trees that
 *   are running, and, when the server starts, what killed predecessors left is ended.
 * - At shutdown, a last sweep ends every marked process, every root and every adopted orphan.
 *
 * Children spawned without a supervision (the platform layer used as a library, as in tests)
 * have none of this; their own trees are still ended with them (../posix/tree.ts).
 *
 * @module
 */
import { log } from "../../log.ts";
import { abandonedLedgers, Ledger } from "./ledger.ts";
import type { ChildRegistry } from "./types.ts";
import { libc } from "../posix/libc.ts";
import { bootId, ownChildren } from "../posix/procfs.ts";
import { processEntry } from "../posix/process_table.ts";
import { reactor } from "../posix/reactor.ts";
import { signalNumber } from "../posix/signals.ts";
import {
  INSTANCE,
  type ProcessId,
  proveLeftoversWith,
  signalTrees,
  type TreeSelector,
} from "../posix/tree.ts";

/** prctl option: become a child subreaper. */
const PR_SET_CHILD_SUBREAPER = 36;
const IS_LINUX = Deno.build.os === "linux";

/**
 * The supervisor of one server, made with its first child (mod.ts): the children it started
 * are recorded here (the roots of their trees), and in its ledger when it keeps one.
 */
export class PosixSupervisor implements ChildRegistry {
  readonly #roots = new Map<number, ProcessId>();
  #ledger: Ledger | undefined;

  /**
   * Takes charge, before the first child starts: the subreaper (Linux), and this server's
   * ledger under `stateDir`, when given. An idle server holds neither, and loads no FFI.
   */
  constructor(stateDir: string | undefined) {
    let subreaper = false;
    if (IS_LINUX) {
      subreaper = libc().prctl?.(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) === 0;
      if (subreaper) {
        reactor().adoptOrphans();
        proveLeftoversWith(leftNothing);
      } else log.warn("cannot become a child subreaper: orphans of commands go to init");
    }
    if (stateDir) {
      try {
        this.#ledger = Ledger.open(stateDir, {
          instance: INSTANCE,
          server: { ...self(), boot: IS_LINUX ? bootId() : undefined },
          roots: [],
        });
      } catch (error) {
        log.warn("cannot keep a process ledger: what runs now cannot be recovered after a crash", {
          stateDir,
          error,
        });
      }
    }
    log.info("answering for the processes it starts", { subreaper, ledger: this.#ledger?.path });
  }

  /** Notes a new child (the root of a tree) in the ledger. */
  started(root: ProcessId): void {
    this.#roots.set(root.pid, root);
    this.#ledger?.write([...this.#roots.values()]);
  }

  /** A child and its tree have ended. */
  ended(pid: number): void {
    if (this.#roots.delete(pid)) this.#ledger?.write([...this.#roots.values()]);
  }

  /**
   * Ends everything this server started that is still running (SIGKILL): every root, every
   * marked process, every orphan it adopted. For the last moment of a shutdown, after the
   * polite signals; the ledger is closed. Returns how many processes were signalled.
   */
  endAll(): number {
    const everything: TreeSelector = {
      mark: `${INSTANCE}.`,
      roots: [...this.#roots.values()],
      since: self().start,
      sessionsOfGoneRoots: false,
      childrenOf: Deno.pid,
    };
    const count = signalTrees(new Map([[everything, new Set([signalNumber("SIGKILL")])]]));
    reactor().reap();
    this.#ledger?.close();
    this.#ledger = undefined;
    return count;
  }
}

/** This process's pid and start time. */
function self(): ProcessId {
  return { pid: Deno.pid, start: processEntry(Deno.pid)?.start ?? 0 };
}

/**
 * True when the trees of these exited children certainly left nothing running: their process
 * groups are empty, and every child of the server is one it started and still waits for. As a
 * subreaper the server becomes the parent of whatever a tree leaves behind once its parent is
 * gone (a double fork, `setsid cmd &`, a job of an exited shell), so the top of anything left
 * is a child of ours we did not start. Anything unsure (an unreadable list) says false, and the
 * table is searched as before.
 */
function leftNothing(selectors: TreeSelector[]): boolean {
  const lib = libc();
  for (const selector of selectors) {
    for (const root of selector.roots) if (lib.kill(-root.pid, 0) === 0) return false;
  }
  const children = ownChildren();
  return children !== undefined && children.every((pid) => reactor().watches(pid));
}

/**
 * Ends what servers that are gone left running (their ledgers under `stateDir`); returns how
 * many processes. Only what a ledger vouches for: processes with the dead server's marks, and
 * its roots that are still there with the start times it recorded, with their sessions and
 * descendants. A pid now used by someone else has another start time and is left alone.
 */
export function endAbandoned(stateDir: string): number {
  const ledgers = abandonedLedgers(stateDir);
  if (ledgers.length === 0) return 0;
  const boot = IS_LINUX ? bootId() : undefined;
  const kill = new Set([signalNumber("SIGKILL")]);
  const selectors = new Map<TreeSelector, Set<number>>();
  for (const { record } of ledgers) {
    // After a reboot nothing of theirs runs, and their start times mean nothing. (A record
    // without a boot was cut short as its server died: its marks are still worth a look.)
    if (record.server.boot !== undefined && record.server.boot !== boot) continue;
    selectors.set({
      mark: `${record.instance}.`,
      roots: record.roots,
      since: record.server.start,
      sessionsOfGoneRoots: false,
    }, kill);
  }
  // One look at the process table for them all: a look costs milliseconds, and a folder of
  // 2,000 files named as ledgers held a starting server for 6 s when each had its own.
  const ended = selectors.size > 0 ? signalTrees(selectors) : 0;
  if (ended > 0) {
    log.info("ended processes killed servers had left", {
      servers: selectors.size,
      processes: ended,
    });
  }
  for (const abandoned of ledgers) abandoned.discard();
  return ended;
}
