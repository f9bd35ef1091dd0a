/**
 * Slices of work (src/engine/slices.ts): steps run in slices give what they give at once, the
 * event loop goes round between slices (a timer set meanwhile runs before the work is done),
 * works take turns, a work cancelled while it waits ends (its `finally` runs), and one
 * overtaken is done again at once. Nothing here is judged by how long anything took.
 */
import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import fc from "fast-check";
import {
  atOnce,
  inSlices,
  nextSlice,
  Overtaken,
  SLICE_MS,
  type Steps,
} from "../../src/engine/slices.ts";

/** Busy for about `ms` (a step of work that holds the event loop). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* working */ }
}

/** A work of `count` steps of about `ms` each, logging each step under `name`. */
function* steps(name: string, count: number, ms: number, log: string[]): Steps<number> {
  for (let i = 0; i < count; i++) {
    busy(ms);
    log.push(name);
    yield;
  }
  return count;
}

Deno.test("steps run in slices give what they give at once, wherever they yield", async () => {
  /** A fold over `values` that yields where `pauses` says, hostile to any state kept across. */
  function* fold(values: number[], pauses: boolean[]): Steps<number[]> {
    const seen: number[] = [];
    let hash = 7;
    for (const [i, value] of values.entries()) {
      hash = (hash * 31 + value) | 0;
      seen.push(hash);
      if (pauses[i % pauses.length]) yield;
    }
    return seen;
  }
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer(), { maxLength: 200 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
      async (values, pauses) => {
        assertEquals(await inSlices(() => fold(values, pauses)), atOnce(fold(values, pauses)));
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("the event loop goes round between slices: a timer set meanwhile runs before the work ends", async () => {
  const log: string[] = [];
  // Work for some 60 slices: fifteen times as much as one slice.
  const work = inSlices(() => steps("work", 60 * SLICE_MS, 1, log));
  const stepsWhenTimerRan = await new Promise<number>((resolve) =>
    setTimeout(() => resolve(log.length), 0)
  );
  assertEquals(await work, 60 * SLICE_MS);
  ok(stepsWhenTimerRan < log.length, "the timer waited for the whole work");
});

Deno.test("works take turns: each goes on before the other is done", async () => {
  const log: string[] = [];
  const [a, b] = [
    inSlices(() => steps("a", 20 * SLICE_MS, 1, log)),
    inSlices(() => steps("b", 20 * SLICE_MS, 1, log)),
  ];
  await Promise.all([a, b]);
  // b began before a ended, and they went back and forth (a, b, a, b at least).
  ok(log.indexOf("b") < log.lastIndexOf("a"), "b waited for all of a");
  const switches = log.filter((name, i) => i > 0 && name !== log[i - 1]).length;
  ok(switches >= 3, `${switches} switches between the two works`);
});

Deno.test("a work cancelled while it waits for a slice ends: its finally runs, it rejects with the reason", async () => {
  const controller = new AbortController();
  let finished = false;
  function* work(): Steps<void> {
    try {
      for (;;) {
        busy(1);
        yield;
      }
    } finally {
      finished = true;
    }
  }
  const running = inSlices(work, controller.signal);
  await new Promise((resolve) => setTimeout(resolve, 0));
  controller.abort(new Error("cancelled by its caller"));
  await rejects(running, /cancelled by its caller/);
  ok(finished, "its finally did not run");
  // A wait for a slice that is cancelled leaves the line: the next work is served.
  const waiting = nextSlice(AbortSignal.abort(new Error("gone")));
  await rejects(waiting, /gone/);
  assertEquals(await inSlices(() => steps("next", 3, 0, [])), 3);
});

Deno.test("a work overtaken between two slices is done again, at once", async () => {
  let runs = 0;
  let pausedInFirst = false, pausedInSecond = false;
  function* work(): Steps<number> {
    const run = ++runs;
    if (run === 1) setTimeout(() => pausedInFirst = true, 0);
    else setTimeout(() => pausedInSecond = true, 0);
    for (let i = 0; i < 10 * SLICE_MS; i++) {
      busy(1);
      yield;
    }
    if (run === 1) throw new Overtaken("its data changed");
    return run;
  }
  assertEquals(await inSlices(work), 2);
  // The first run paused (a timer ran during it); the second went through at once.
  ok(pausedInFirst, "the first run never paused");
  ok(!pausedInSecond, "the run done again paused");
  await new Promise((resolve) => setTimeout(resolve, 0)); // its timer, now due
});
