/**
 * Turns (src/engine/turns.ts), under any interleaving of callers that take a turn, end it (once
 * or twice), or leave the line (before asking, or while waiting): never more than the width at
 * once, served in the order they asked, and the line always moves on.
 */
import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import fc from "fast-check";
import { Turns } from "../../src/engine/turns.ts";

/** What a caller does: asks, then (unless it left) holds its turn for a number of tasks. */
interface Caller {
  /** Leaves the line: before asking (0), after this many tasks of waiting, or never. */
  leaveAfter: number | null;
  /** Tasks it holds its turn for. */
  holdFor: number;
  /** Ends its turn twice (a second call must change nothing). */
  endTwice: boolean;
  /** Asks this many tasks after the caller before it. */
  askAfter: number;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const ticks = async (count: number) => {
  for (let i = 0; i < count; i++) await tick();
};

Deno.test("turns: at most the width at once, in the order asked, and the line moves on", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(
        fc.record({
          leaveAfter: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
          holdFor: fc.integer({ min: 0, max: 3 }),
          endTwice: fc.boolean(),
          askAfter: fc.integer({ min: 0, max: 2 }),
        }),
        { maxLength: 12 },
      ),
      async (width, callers: Caller[]) => {
        const turns = new Turns(width);
        let inside = 0, most = 0;
        const served: number[] = [];
        const runs: Promise<void>[] = [];
        for (const [index, caller] of callers.entries()) {
          await ticks(caller.askAfter);
          const controller = new AbortController();
          if (caller.leaveAfter === 0) controller.abort(new Error("left"));
          else if (caller.leaveAfter !== null) {
            ticks(caller.leaveAfter).then(() => controller.abort(new Error("left")));
          }
          runs.push(
            turns.take(controller.signal).then(async (end) => {
              served.push(index);
              most = Math.max(most, ++inside);
              await ticks(caller.holdFor);
              inside--;
              end();
              if (caller.endTwice) end();
            }, (error) => {
              ok(controller.signal.aborted, `rejected without leaving: ${error}`);
            }),
          );
        }
        await Promise.all(runs);
        ok(most <= width, `${most} at once, width ${width}`);
        assertEquals(served, [...served].sort((a, b) => a - b), "served out of order");
        // Everyone who stayed was served.
        for (const [index, caller] of callers.entries()) {
          if (caller.leaveAfter === null) {
            ok(served.includes(index), `caller ${index} never served`);
          }
        }
        // Nothing is left taken (a turn handed on is so until the next task): a full width of
        // newcomers is served at once.
        await tick();
        assertEquals(turns.running, 0);
        const ends = await Promise.all(Array.from({ length: width }, () => turns.take()));
        assertEquals(turns.running, width);
        for (const end of ends) end();
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("turns: a caller that left before asking never waits, and takes no turn", async () => {
  const turns = new Turns(1);
  const gone = new AbortController();
  gone.abort(new Error("gone"));
  await rejects(turns.take(gone.signal), /gone/);
  assertEquals(turns.running, 0);
});

Deno.test("turns: the next turn begins in a task of its own, not in the one that ended it", async () => {
  const turns = new Turns(1);
  const endFirst = await turns.take();
  let began = false;
  const second = turns.take().then((end) => {
    began = true;
    return end;
  });
  endFirst();
  for (let i = 0; i < 20; i++) await Promise.resolve();
  ok(!began, "the next turn began in the task that ended the one before");
  (await second)();
  ok(began);
});
