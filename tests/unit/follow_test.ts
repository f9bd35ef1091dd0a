import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";
import { TextFollower } from "../../src/engine/output/follow.ts";
import { cuts, fc, hostileOutput } from "../helpers/arbitraries.ts";

const encoder = new TextEncoder();

Deno.test("followed in pieces cut anywhere (even inside characters), the text is the cleaned whole", () => {
  fc.assert(
    fc.property(hostileOutput, cuts, cuts, (text, at, takes) => {
      const bytes = encoder.encode(text);
      const follower = new TextFollower({ maxChars: 1 << 20 });
      const cutsAt = at.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
      let start = 0, streamed = "";
      for (const [i, cut] of [...cutsAt, bytes.length].entries()) {
        follower.push(bytes.subarray(start, cut));
        start = cut;
        if (takes[i] !== undefined && takes[i] < 0.5) {
          const piece = follower.take();
          // Only whole lines are handed out before the end.
          ok(piece === "" || piece.endsWith("\n"), JSON.stringify(piece));
          streamed += piece;
        }
      }
      assertEquals(streamed + follower.end(), cleanTerminalText(text));
    }),
    { numRuns: 500 },
  );
});

Deno.test("a flood waiting to be taken keeps its newest text and says how much it skipped", () => {
  const follower = new TextFollower({ maxChars: 100 });
  follower.push(encoder.encode("x".repeat(99) + "\n" + "y".repeat(49) + "\n"));
  assertEquals(
    follower.take(),
    "[... 50 characters skipped ...]\n" + "x".repeat(49) + "\n" +
      "y".repeat(49) + "\n",
  );
  // A line that never ends keeps only its newest part.
  follower.push(encoder.encode("z".repeat(10_000)));
  ok(follower.end().length <= 300);
});
