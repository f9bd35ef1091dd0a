/**
 * The server-wide bound on bytes waiting to be sent: which connections are closed when it is
 * reached (those that never carried the token first, then the stalest), under hostile mixes of
 * connections, and that what is left waiting is back under the bound whenever closing can get it
 * there.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { fc } from "../helpers/arbitraries.ts";
import {
  chooseShed,
  SendBudget,
  type Sender,
  type ShedCandidate,
} from "../../src/http/send_budget.ts";

const candidate = fc.record({
  queued: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 << 20 })),
  lastProgress: fc.integer({ min: 0, max: 100_000 }),
  trusted: fc.boolean(),
});

Deno.test("chooseShed: untrusted before trusted, stalest first, no more than needed", () => {
  fc.assert(
    fc.property(
      fc.array(candidate, { maxLength: 60 }),
      fc.integer({ min: 1, max: 64 << 20 }),
      (candidates: ShedCandidate[], excess) => {
        const chosen = chooseShed(candidates, excess);
        ok(new Set(chosen).size === chosen.length, "chosen twice");
        const picked = chosen.map((index) => candidates[index]);
        ok(picked.every((c) => c.queued > 0), "closing one with nothing waiting frees nothing");
        // In order: untrusted first, each kind stalest first.
        for (let i = 1; i < picked.length; i++) {
          const [a, b] = [picked[i - 1], picked[i]];
          ok(
            Number(a.trusted) < Number(b.trusted) ||
              (a.trusted === b.trusted && a.lastProgress <= b.lastProgress),
          );
        }
        const freed = picked.reduce((sum, c) => sum + c.queued, 0);
        const available = candidates.reduce((sum, c) => sum + c.queued, 0);
        // Enough when enough can be freed; and not one more than needed.
        ok(freed >= Math.min(excess, available));
        if (picked.length > 0) ok(freed - picked[picked.length - 1].queued < excess);
        // Nothing left unchosen that ranks before the last chosen.
        if (picked.length > 0) {
          const last = picked[picked.length - 1];
          for (const [index, c] of candidates.entries()) {
            if (chosen.includes(index) || c.queued === 0) continue;
            ok(
              Number(c.trusted) > Number(last.trusted) ||
                (c.trusted === last.trusted && c.lastProgress >= last.lastProgress),
            );
          }
        }
      },
    ),
    { numRuns: 2000 },
  );
});

/** A sender that gives back what it had waiting when closed, as a socket's close does. */
class FakeSender implements Sender {
  closed = false;
  waiting = 0;
  budget?: SendBudget;
  constructor(public lastProgress: number, readonly trusted: boolean) {}
  destroy(): void {
    this.closed = true;
    this.budget?.discharge(this, this.waiting);
    this.waiting = 0;
  }
}

/** A budget of `limit` over `senders`, which it is told whether they carried the token. */
function budgetFor(limit: number, senders: FakeSender[]): SendBudget {
  const budget = new SendBudget(limit, (sender) => (sender as FakeSender).trusted);
  for (const sender of senders) sender.budget = budget;
  return budget;
}

Deno.test("SendBudget: past the limit, the stalest untrusted go; the total comes back under it", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          sender: fc.nat({ max: 19 }),
          bytes: fc.integer({ min: 1, max: 4 << 20 }),
          sent: fc.nat({ max: 4 << 20 }),
        }),
        { maxLength: 200 },
      ),
      fc.array(fc.record({ progress: fc.nat({ max: 1000 }), trusted: fc.boolean() }), {
        minLength: 20,
        maxLength: 20,
      }),
      (steps, kinds) => {
        const limit = 8 << 20;
        const senders = kinds.map(({ progress, trusted }) => new FakeSender(progress, trusted));
        const budget = budgetFor(limit, senders);
        for (const { sender: at, bytes, sent } of steps) {
          const sender = senders[at];
          if (sender.closed) continue;
          sender.waiting += bytes;
          budget.charge(sender, bytes);
          // Every charge leaves the total within the limit (no single charge here exceeds it).
          ok(budget.queued <= limit, `${budget.queued} waiting`);
          const taken = Math.min(sent, sender.waiting);
          sender.waiting -= taken;
          budget.discharge(sender, taken);
          assertEquals(
            budget.queued,
            senders.reduce((sum, s) => sum + s.waiting, 0),
            "the budget's total is what the senders have waiting",
          );
        }
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("SendBudget: a flood without the token is closed, the token-bearer's answer is kept", () => {
  const reader = new FakeSender(5000, true);
  const flood = Array.from({ length: 30 }, (_, i) => new FakeSender(i, false));
  const budget = budgetFor(8 << 20, [reader, ...flood]);
  reader.waiting = 2 << 20;
  budget.charge(reader, 2 << 20);
  for (const sender of flood) {
    sender.waiting = 614_032;
    budget.charge(sender, 614_032);
  }
  ok(!reader.closed);
  ok(flood.some((sender) => sender.closed));
  // The oldest (stalest) of the flood went first.
  const closed = flood.filter((sender) => sender.closed).map((sender) => sender.lastProgress);
  assertEquals(closed, closed.slice().sort((a, b) => a - b));
  assertEquals(closed[0], 0);
  ok(budget.queued <= 8 << 20);
});
