/**
 * A child's process tree: everything it started, however it tried to leave. Our children lead
 * their own session and process group, but processes leave both (`setsid`, an interactive
 * shell's job groups) and leave their parent (double forks, `nohup ... &` after the shell
 * exits). So a tree is found three ways, in one look at the process table:
 *
 * - its session (the root's pid is the session id of everything that stayed in it);
 * - its descendants, by parent pid;
 * - its mark: every child starts with `WINTERM_PROCESS_TREE=<instance>.<n>` in its
 *   environment, which everything it starts inherits unless a program clears its environment
 *   (Linux shows a process's starting environment in /proc; macOS does not).
 *
 * Nothing older than the tree's root can belong to it (start times), and the server itself
 * never does. SIGKILL is repeated until a look finds no new member, so a process that forks
 * while its tree is being ended does not leave a survivor. Many trees signalled together (a
 * shutdown with 100 terminals, a burst of commands ending) cost one walk of the table.
 *
 * A tree is the PTY's concern, so it lives here: it ends with its child (child.ts), whether or
 * not the server supervises anything. Supervision (../supervision/posix.ts) ends what a whole
 * server left with the same walk ({@link signalTrees}), and gives the cheap proof that exited
 * children left nothing ({@link proveLeftoversWith}).
 *
 * @module
 */
import { log } from "../../log.ts";
import { libc } from "./libc.ts";
import { type ProcessEntry, processTable, startEnvironment } from "./process_table.ts";
import { signalNumber } from "./signals.ts";

/** The environment variable that marks every process of a tree. */
export const TREE_VARIABLE = "WINTERM_PROCESS_TREE";
/** This process's marks begin with this (random, so no other server's can match). */
export const INSTANCE: string = crypto.randomUUID().replaceAll("-", "");

/** A process: its pid and its start time (as the process table counts it). */
export interface ProcessId {
  pid: number;
  start: number;
}

/** What belongs to a tree, or to a set of trees. */
export interface TreeSelector {
  /** Processes whose mark equals this, or begins with it when it ends with ".". */
  mark: string;
  /** Roots: their descendants belong, and so do the members of their sessions. */
  roots: ProcessId[];
  /** Nothing started before this belongs. */
  since: number;
  /**
   * True when a root that is gone still vouches for its session (right after it was reaped:
   * its pid cannot have been reused while its session has members). Otherwise only a root
   * that is still there, with its start time, does.
   */
  sessionsOfGoneRoots: boolean;
  /** Processes whose parent is this pid belong (the server's adopted orphans, at shutdown). */
  childrenOf?: number;
}

let counter = 0;

/** A new mark for the next child's tree. */
export function newMark(): string {
  return `${INSTANCE}.${++counter}`;
}

/**
 * The processes of `table` that `selector` picks (never `self`, never pid 1, never zombies).
 * `markOf` reads a process's mark.
 */
export function selectTree(
  table: ProcessEntry[],
  selector: TreeSelector,
  markOf: (entry: ProcessEntry) => string | undefined,
  self: number = Deno.pid,
): ProcessEntry[] {
  const byPid = new Map(table.map((entry) => [entry.pid, entry]));
  const present = (root: ProcessId) => byPid.get(root.pid)?.start === root.start;
  const sessions = new Set(
    selector.roots.filter((root) => selector.sessionsOfGoneRoots || present(root)).map((root) =>
      root.pid
    ),
  );
  const parents = new Set(selector.roots.filter(present).map((root) => root.pid));
  if (selector.childrenOf !== undefined) parents.add(selector.childrenOf);
  const prefix = selector.mark.endsWith(".");
  const marked = (entry: ProcessEntry) => {
    const mark = markOf(entry);
    return mark !== undefined &&
      (prefix ? mark.startsWith(selector.mark) : mark === selector.mark);
  };
  const eligible = (entry: ProcessEntry) =>
    !entry.zombie && entry.pid !== self && entry.pid > 1 && entry.start >= selector.since;
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const members = new Map<number, ProcessEntry>();
  const queue: ProcessEntry[] = [];
  const add = (entry: ProcessEntry) => {
    if (members.has(entry.pid) || !eligible(entry)) return;
    members.set(entry.pid, entry);
    queue.push(entry);
  };
  for (const entry of table) {
    if (
      parents.has(entry.ppid) || sessions.has(entry.session) ||
      selector.roots.some((root) => root.pid === entry.pid && root.start === entry.start)
    ) add(entry);
    else if (eligible(entry) && marked(entry)) add(entry);
  }
  // Descendants of members belong too (a setsid'd process whose parent is still alive).
  while (queue.length > 0) {
    const parent = queue.pop()!;
    for (const child of children.get(parent.pid) ?? []) add(child);
  }
  return [...members.values()];
}

/** Reads marks through the OS, once per process per look. */
function markReader(): (entry: ProcessEntry) => string | undefined {
  const cache = new Map<number, string | undefined>();
  return (entry) => {
    if (!cache.has(entry.pid)) cache.set(entry.pid, startEnvironment(entry.pid, TREE_VARIABLE));
    return cache.get(entry.pid);
  };
}

/** At most this many looks while ending trees (a fork bomb that outruns SIGKILL is logged). */
const MAX_ROUNDS = 50;
const SIGKILL = signalNumber("SIGKILL");

/**
 * Sends `signo` to every process `selectors` pick, now. With SIGKILL, looks again until no
 * new member turns up. Returns how many processes were signalled.
 */
export function signalTrees(selectors: Map<TreeSelector, Set<number>>): number {
  const lib = libc();
  const signalled = new Set<string>();
  let wanted = selectors;
  for (let round = 0; round < MAX_ROUNDS && wanted.size > 0; round++) {
    const table = processTable();
    const markOf = markReader();
    let fresh = 0;
    for (const [selector, signals] of wanted) {
      for (const member of selectTree(table, selector, markOf)) {
        for (const signo of signals) {
          const key = `${member.pid}:${member.start}:${signo}`;
          if (signalled.has(key)) continue;
          signalled.add(key);
          lib.kill(member.pid, signo);
          fresh++;
        }
      }
    }
    if (fresh === 0) break;
    // Only SIGKILL is worth repeating: it is what stops a tree from growing.
    wanted = new Map(
      [...wanted].filter(([, signals]) => signals.has(SIGKILL)).map((
        [selector],
      ) => [selector, new Set([SIGKILL])]),
    );
    if (round === MAX_ROUNDS - 1) log.warn("processes kept appearing while a tree was ended");
  }
  return signalled.size;
}

const pending = new Map<TreeSelector, Set<number>>();
let flushQueued = false;
let flushTimer: ReturnType<typeof setTimeout> | undefined;
/** Signals asked for explicitly wait in `pending` (not only leftovers of exited children). */
let explicitPending = false;
/** How soon what a child left behind is looked for after it exits. */
const LEFTOVER_DELAY_MS = 50;
let nothingLeftBehind: ((selectors: TreeSelector[]) => boolean) | undefined;

/**
 * Installs a cheap proof that exited children left nothing behind, checked before a look at
 * the whole process table for their leftovers (see ../supervision/posix.ts: with a child subreaper,
 * anything a tree leaves becomes the server's own child).
 */
export function proveLeftoversWith(proof: (selectors: TreeSelector[]) => boolean): void {
  nothingLeftBehind = proof;
}

/**
 * Signals a tree: its process group at once (one call), then everything else that belongs to
 * it in one look at the process table shared by every tree signalled meanwhile: at the end of
 * this tick, or, with `soon`, within {@link LEFTOVER_DELAY_MS} (what a child that exited left
 * behind: a burst of exits then costs one look, and none delays the answer about the exit).
 */
export function signalTree(selector: TreeSelector, signo: number, soon = false): void {
  for (const root of selector.roots) libc().kill(-root.pid, signo);
  const signals = pending.get(selector) ?? new Set();
  signals.add(signo);
  pending.set(selector, signals);
  if (!soon) explicitPending = true;
  if (!soon && !flushQueued) {
    flushQueued = true;
    queueMicrotask(flush);
  } else if (soon) {
    flushTimer ??= setTimeout(flush, LEFTOVER_DELAY_MS);
  }
}

function flush(): void {
  flushQueued = false;
  clearTimeout(flushTimer);
  flushTimer = undefined;
  if (pending.size === 0) return;
  const wanted = new Map(pending);
  pending.clear();
  const leftoversOnly = !explicitPending;
  explicitPending = false;
  // A walk of the table costs 2 ms with 80 processes, and grows with the machine's processes:
  // after every exit, on the event loop, it delayed whatever answer was being worked on.
  if (leftoversOnly && nothingLeftBehind?.([...wanted.keys()])) return;
  signalTrees(wanted);
}
