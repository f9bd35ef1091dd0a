/**
 * Take-over rules, against a model under random sequences of takes, hand-backs, resizes by the
 * holder, by others and by the agent: one holder at a time; only it resizes; its size lasts
 * only while it holds, unless the agent resized meanwhile; every take-over and hand-back is
 * audited once.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { Takeover } from "../../../src/engine/terminal/takeover.ts";

type Op =
  | { op: "take" | "release" | "resize"; who: number; cols: number; rows: number }
  | { op: "agent"; cols: number; rows: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constantFrom("take" as const, "release" as const, "resize" as const),
    who: fc.integer({ min: 0, max: 2 }),
    cols: fc.integer({ min: 1, max: 4 }),
    rows: fc.integer({ min: 1, max: 4 }),
  }),
  fc.record({
    op: fc.constant("agent" as const),
    cols: fc.integer({ min: 1, max: 4 }),
    rows: fc.integer({ min: 1, max: 4 }),
  }),
);

Deno.test("take-over: one holder, its size only while it holds, audited", () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const size = {
        cols: 80,
        rows: 24,
        resize(cols: number, rows: number) {
          size.cols = cols;
          size.rows = rows;
        },
      };
      const audit: string[] = [];
      const takeover = new Takeover(size, (event) => audit.push(event));
      const viewers = [{}, {}, {}];
      // The model.
      let holder: number | undefined;
      let before: [number, number] | undefined;
      let set: [number, number] | undefined;
      let expectedAudit = 0;
      for (const step of ops) {
        if (step.op === "agent") {
          size.resize(step.cols, step.rows);
          continue;
        }
        const key = viewers[step.who];
        if (step.op === "take") {
          if (holder !== step.who) {
            expectedAudit += holder === undefined ? 1 : 2;
            if (holder === undefined) before = [size.cols, size.rows];
            holder = step.who;
          }
          takeover.take(key, "web");
        } else if (step.op === "release") {
          const was = [size.cols, size.rows];
          takeover.release(key);
          if (holder === step.who) {
            expectedAudit++;
            const untouched = set && set[0] === was[0] && set[1] === was[1];
            const expected = untouched ? before! : was;
            assertEquals([size.cols, size.rows], expected);
            holder = before = set = undefined;
          } else assertEquals([size.cols, size.rows], was, "a non-holder changes nothing");
        } else {
          const was = [size.cols, size.rows];
          const done = takeover.resize(key, step.cols, step.rows);
          assertEquals(done, holder === step.who);
          if (done) {
            if (step.cols !== was[0] || step.rows !== was[1]) set = [step.cols, step.rows];
            assertEquals([size.cols, size.rows], [step.cols, step.rows]);
          } else assertEquals([size.cols, size.rows], was);
        }
        assertEquals(takeover.holder?.key, holder === undefined ? undefined : viewers[holder]);
        ok(viewers.filter((viewer) => takeover.holds(viewer)).length <= 1);
      }
      assertEquals(audit.length, expectedAudit);
    }),
    { numRuns: 500 },
  );
});
