import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { cleanTerminalText } from "../../../src/engine/output/clean.ts";
import { TextFollower } from "../../../src/engine/output/follow.ts";
import { jsonSize } from "../../../src/engine/output/shape.ts";
import { cuts, fc, hostileOutput, stringOf } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();

Deno.test("followed in pieces cut anywhere (even inside characters), the text is the cleaned whole", () => {
  fc.assert(
    fc.property(hostileOutput, cuts, cuts, (text, at, takes) => {
      const bytes = encoder.encode(text);
      const follower = new TextFollower({ maxBytes: 1 << 20 });
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

Deno.test("a flood waiting to be taken keeps its newest lines and says how much it skipped", () => {
  // 100 bytes for the text, 64 for the marker.
  const follower = new TextFollower({ maxBytes: 164 });
  follower.push(encoder.encode("x".repeat(99) + "\n" + "y".repeat(49) + "\n"));
  // Whole lines: before the fix the newest 49 x's were handed out as if they were a line.
  assertEquals(follower.take(), "[... 100 characters skipped ...]\n" + "y".repeat(49) + "\n");
  // A line that never ends keeps only its newest part.
  follower.push(encoder.encode("z".repeat(10_000)));
  ok(follower.end().length <= 300);
});

Deno.test("after a skip, streaming goes on at a line start, and the skip counts exactly what is missing", () => {
  // `seq` flooding faster than notifications are sent: before the fix a piece began "7\n876618",
  // the end of line 876617 shown as a line of its own.
  const lines = fc.array(stringOf(["7", "a", " ", "😀", "中"], 30), {
    minLength: 1,
    maxLength: 300,
  });
  fc.assert(
    fc.property(lines, fc.integer({ min: 8, max: 200 }), (lines, room) => {
      const follower = new TextFollower({ maxBytes: 64 + room });
      const whole = lines.map((line) => line + "\n").join("");
      follower.push(encoder.encode(whole));
      const piece = follower.take();
      const marker = piece.match(/^\[\.\.\. (\d+) characters skipped \.\.\.\]\n/);
      const shown = marker ? piece.slice(marker[0].length) : piece;
      const skipped = marker ? Number(marker[1]) : 0;
      assertEquals(whole.slice(skipped), shown);
      ok(
        skipped === 0 || whole[skipped - 1] === "\n",
        `cut inside a line: ${JSON.stringify(piece)}`,
      );
    }),
    { numRuns: 300 },
  );
});

Deno.test("what is taken, marker included, takes at most maxBytes in JSON, whatever the text", () => {
  // Counted in characters before, a notification of 64 Ki characters took 141 KB as UTF-8.
  const lines = fc.array(stringOf(["a", '"', "\\", "é", "日", "😀", "\t", " "], 40), {
    minLength: 1,
    maxLength: 200,
  });
  fc.assert(
    fc.property(lines, fc.integer({ min: 0, max: 400 }), fc.boolean(), (lines, max, ended) => {
      const follower = new TextFollower({ maxBytes: max });
      follower.push(encoder.encode(lines.join("\n") + (ended ? "\n" : "")));
      const piece = ended ? follower.take() : follower.end();
      ok(
        jsonSize(piece) <= Math.max(max, 64),
        `${jsonSize(piece)} bytes: ${JSON.stringify(piece)}`,
      );
    }),
    { numRuns: 500 },
  );
});
