/**
 * The web view's feed (src/http/web/client/feed.ts) against what it promises, under every
 * interleaving of output, resizes, fresh starts and parses a generator finds, with a sink that
 * parses at once and one that parses later: never two chunks in the sink; everything in the
 * order given; nothing given before a fresh start drawn after it; never more waiting than the
 * bound, and every byte dropped for it reported; everything else drawn in the end.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { Feed } from "../../../../src/http/web/client/feed.ts";

type Op =
  | { kind: "data"; length: number }
  | { kind: "then" }
  | { kind: "afresh" }
  | { kind: "parse" };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("data" as const), length: fc.nat(300) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "then" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "afresh" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "parse" as const }) },
);

/** What was given to the feed, by its index. */
interface Given {
  kind: "data" | "then" | "afresh";
  bytes: number;
  /** Seen by the sink (data) or taken (a step). */
  seen: boolean;
  /** Dropped: by a fresh start after it, or reported as output the feed could not hold. */
  lost: boolean;
}

function run(ops: Op[], bound: number, parseAtOnce: boolean): void {
  const given: Given[] = [];
  const order: number[] = [];
  let inSink: { index: number; parsed: () => void } | undefined;
  /** The newest fresh start taken: nothing given before it may be seen after it. */
  let afreshTaken = -1;
  const see = (index: number) => {
    ok(index > afreshTaken, `item ${index} seen after the fresh start ${afreshTaken}`);
    ok(!given[index].seen && !given[index].lost, `item ${index} seen twice, or after its loss`);
    ok(order.length === 0 || order.at(-1)! < index, `item ${index} out of order`);
    given[index].seen = true;
    order.push(index);
  };
  /** Items given, not seen, not lost, not in the sink: what the feed holds now. */
  const waiting = () =>
    given.map((item, index) => ({ item, index })).filter(({ item, index }) =>
      !item.seen && !item.lost && index !== inSink?.index
    );
  const indexOf = new Map<Uint8Array, number>();
  /** The chunk being given now, and whether the feed reported it dropped. */
  let incoming = { index: -1, bytes: 0, dropped: false };
  const feed = new Feed(
    {
      write(data, parsed) {
        ok(inSink === undefined, "a chunk handed to the sink before the last was parsed");
        const index = indexOf.get(data)!;
        see(index);
        if (parseAtOnce) parsed();
        else inSink = { index, parsed };
      },
    },
    bound,
    (dropped) => {
      const held = waiting().filter(({ index }) => index !== incoming.index);
      const heldBytes = held.reduce((sum, { item }) => sum + item.bytes, 0);
      assertEquals(dropped, heldBytes + incoming.bytes, "the bytes reported as dropped");
      for (const { item } of held) item.lost = true;
      incoming.dropped = true;
    },
  );
  const step = (index: number) => () => {
    see(index);
    if (given[index].kind === "afresh") afreshTaken = index;
  };
  for (const next of ops) {
    if (next.kind === "parse") {
      const done = inSink;
      inSink = undefined;
      done?.parsed();
    } else if (next.kind === "data") {
      const data = new Uint8Array(next.length);
      const index = given.push({ kind: "data", bytes: next.length, seen: false, lost: false }) - 1;
      indexOf.set(data, index);
      incoming = { index, bytes: next.length, dropped: false };
      feed.data(data);
      // Empty output is nothing to draw; output the feed cannot hold is lost with what waits.
      if (next.length === 0 || incoming.dropped) given[index].lost = true;
      ok(!incoming.dropped || given[index].bytes > 0, "an empty chunk reported as dropped");
    } else {
      const index = given.push({ kind: next.kind, bytes: 0, seen: false, lost: false }) - 1;
      if (next.kind === "afresh") {
        for (const { item } of waiting()) item.lost = true;
        given[index].lost = false;
        feed.afresh(step(index));
      } else feed.then(step(index));
    }
    ok(feed.waitingBytes <= bound, `${feed.waitingBytes} bytes waiting, over ${bound}`);
    assertEquals(
      feed.waitingBytes,
      waiting().reduce((sum, { item }) => sum + item.bytes, 0),
      "the bytes the feed says wait",
    );
  }
  // Parsed to the end: everything not lost has been seen.
  while (inSink) {
    const done = inSink;
    inSink = undefined;
    done.parsed();
  }
  assertEquals(waiting().map(({ index }) => index), [], "given, never lost, never seen");
  assertEquals(feed.waitingBytes, 0);
}

Deno.test("feed: order, fresh starts, one chunk in the sink, the bound", () => {
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 200 }),
      fc.oneof(fc.constant(0), fc.nat(100), fc.nat(5000)),
      fc.boolean(),
      (ops, bound, parseAtOnce) => run(ops, bound, parseAtOnce),
    ),
    { numRuns: 500 },
  );
});

Deno.test("feed: a flood that never lets it empty leaves nothing behind", () => {
  // Every chunk arrives while the one before is still being parsed.
  const parsed: (() => void)[] = [];
  let drawn = 0;
  const feed = new Feed(
    {
      write(data, done) {
        drawn += data.length;
        parsed.push(done);
      },
    },
    1 << 20,
    () => ok(false, "nothing is dropped under the bound"),
  );
  feed.data(new Uint8Array(100));
  for (let i = 0; i < 200_000; i++) {
    feed.data(new Uint8Array(100));
    assertEquals(feed.waitingBytes, 100);
    parsed.shift()!();
  }
  while (parsed.length) parsed.shift()!();
  assertEquals(drawn, 200_001 * 100);
});
