import { deepStrictEqual as assertEquals, rejects } from "node:assert/strict";
import { EngineError } from "../../src/engine/errors.ts";
import { SlotTable } from "../../src/engine/start.ts";
import { fc } from "../helpers/arbitraries.ts";

/** A table over a set of open things, refused as `limit` (or as shut down once `closed`). */
function table(limit: number) {
  const open = new Set<number>();
  const state = { closed: false };
  const slots = new SlotTable(
    limit,
    () => open.size,
    (count) => new EngineError("limit", `${count} open`),
    () => {
      if (state.closed) throw new EngineError("failed", "shutting down");
    },
  );
  return { open, state, slots };
}

Deno.test("slots: starts under way count, so racing starts never pass the limit", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 5 }),
      fc.array(fc.boolean(), { maxLength: 20 }),
      async (limit, fails) => {
        const { open, slots } = table(limit);
        let most = 0;
        const results = await Promise.allSettled(fails.map((fail, id) =>
          slots.take(async () => {
            await Promise.resolve();
            if (fail) throw new Error("the start failed");
            open.add(id);
            most = Math.max(most, open.size);
          })
        ));
        // The first `limit` starts had slots; a failed start held one until it failed.
        const refused =
          results.filter((result) =>
            result.status === "rejected" && result.reason instanceof EngineError
          ).length;
        assertEquals(refused, Math.max(0, fails.length - limit));
        assertEquals(most <= limit, true);
        // A slot a failed start held is free again.
        open.clear();
        if (limit > 0) await slots.take(() => Promise.resolve(open.add(-1)));
      },
    ),
  );
});

Deno.test("slots: once shut down, a start is refused for that, not for the limit", async () => {
  const { open, state, slots } = table(1);
  await slots.take(() => Promise.resolve(open.add(1)));
  await rejects(slots.take(() => Promise.resolve()), /1 open/);
  state.closed = true;
  await rejects(slots.take(() => Promise.resolve()), /shutting down/);
});
