/**
 * Which processes belong to a tree (src/pty/posix/tree.ts `selectTree`), on generated process
 * tables, hostile ones included (parent cycles, pids reused with other start times, zombies,
 * the server itself carrying a mark): the result is what the rules say, computed another way.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import type { ProcessEntry } from "../../../src/pty/posix/process_table.ts";
import { selectTree, type TreeSelector } from "../../../src/pty/posix/tree.ts";

const SELF = 7;

/** The rules, as a fixpoint: keep adding what belongs until nothing changes. */
function reference(
  table: ProcessEntry[],
  selector: TreeSelector,
  marks: Map<number, string>,
): number[] {
  const present = (root: { pid: number; start: number }) =>
    table.some((entry) => entry.pid === root.pid && entry.start === root.start);
  const eligible = (entry: ProcessEntry) =>
    !entry.zombie && entry.pid !== SELF && entry.pid > 1 && entry.start >= selector.since;
  const marked = (entry: ProcessEntry) => {
    const mark = marks.get(entry.pid);
    if (mark === undefined) return false;
    return selector.mark.endsWith(".") ? mark.startsWith(selector.mark) : mark === selector.mark;
  };
  const seed = (entry: ProcessEntry) =>
    selector.roots.some((root) =>
      (root.pid === entry.pid && root.start === entry.start) ||
      (entry.ppid === root.pid && present(root)) ||
      (entry.session === root.pid && (selector.sessionsOfGoneRoots || present(root)))
    ) || entry.ppid === selector.childrenOf || marked(entry);
  const members = new Set<number>();
  for (let changed = true; changed;) {
    changed = false;
    for (const entry of table) {
      if (members.has(entry.pid) || !eligible(entry)) continue;
      if (seed(entry) || members.has(entry.ppid)) {
        members.add(entry.pid);
        changed = true;
      }
    }
  }
  return [...members].sort((a, b) => a - b);
}

const pid = fc.integer({ min: 0, max: 40 });
const table = fc.uniqueArray(
  fc.record({
    pid,
    ppid: pid,
    pgrp: pid,
    session: pid,
    start: fc.integer({ min: 0, max: 50 }),
    zombie: fc.boolean(),
  }),
  { selector: (entry) => entry.pid, maxLength: 40 },
);
const mark = fc.option(fc.constantFrom("A.1", "A.2", "B.1", "A", "A.10"), { nil: undefined });

Deno.test("selectTree picks exactly what the rules say, on any process table", () => {
  fc.assert(
    fc.property(
      table,
      fc.array(mark, { minLength: 41, maxLength: 41 }),
      fc.record({
        mark: fc.constantFrom("A.1", "A.", "B.1"),
        roots: fc.array(fc.record({ pid, start: fc.integer({ min: 0, max: 50 }) }), {
          maxLength: 3,
        }),
        since: fc.integer({ min: 0, max: 50 }),
        sessionsOfGoneRoots: fc.boolean(),
        childrenOf: fc.option(fc.constant(SELF), { nil: undefined }),
      }),
      (entries, markList, selector) => {
        const marks = new Map<number, string>();
        markList.forEach((value, i) => value !== undefined && marks.set(i, value));
        const picked = selectTree(entries, selector, (entry) => marks.get(entry.pid), SELF)
          .map((entry) => entry.pid).sort((a, b) => a - b);
        assertEquals(picked, reference(entries, selector, marks));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("a tree: its session, its descendants, its marked escapees; not older processes", () => {
  const entry = (pid: number, ppid: number, session: number, start: number, zombie = false) => ({
    pid,
    ppid,
    pgrp: pid,
    session,
    start,
    zombie,
  });
  const entries: ProcessEntry[] = [
    entry(100, SELF, 100, 10), // the root
    entry(101, 100, 100, 11), // a job
    entry(102, 100, 102, 12), // setsid, parent alive
    entry(103, 102, 103, 13), // its child in yet another session
    entry(104, SELF, 104, 14), // setsid and double fork: adopted by the server, marked
    entry(105, 1, 105, 15), // the same, gone to init, marked
    entry(106, 1, 106, 16), // someone else's, not marked
    entry(107, 1, 100, 5), // in "session 100" but older than the root: a reused session id
    entry(108, 100, 100, 17, true), // a zombie
    entry(SELF, 1, 3, 1), // the server: marked by its own parent's server, never picked
  ];
  const marks = new Map([[104, "A.1"], [105, "A.1"], [106, "A.2"], [SELF, "A.1"]]);
  const picked = selectTree(
    entries,
    {
      mark: "A.1",
      roots: [{ pid: 100, start: 10 }],
      since: 10,
      sessionsOfGoneRoots: true,
    },
    (e) => marks.get(e.pid),
    SELF,
  ).map((e) => e.pid).sort();
  assertEquals(picked, [100, 101, 102, 103, 104, 105]);
});
