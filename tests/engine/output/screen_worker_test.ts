/**
 * The screen emulators, fed in their own thread (screen_worker.ts) in pieces, the screens
 * taking turns: however the pieces and turns fall, and whatever other screens are caught up
 * meanwhile, a screen shows what it shows fed a piece at a time; and the event loop that sent
 * them runs on meanwhile.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";
import { Screen, type ScreenView } from "../../../src/engine/output/screen.ts";
import { cuts, fc, hostileOutput } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();

/** What a screen shows, but how much was left for later. */
function shown({ unrenderedBytes: _, ...view }: ScreenView) {
  return view;
}

/**
 * The screen once all its output is rendered: a render ends at its time budget, which a busy
 * machine reaches first (110,061 bytes were left at a load of 25); each one goes on from there.
 */
async function caughtUp(screen: Screen): Promise<ScreenView> {
  for (;;) {
    const view = await screen.render();
    if (view.unrenderedBytes === 0) return view;
  }
}

/** Output a full-screen program writes: moves, colours, edits, scrolls, in a block repeated. */
const redraws = fc.tuple(
  fc.array(
    fc.oneof(
      hostileOutput,
      fc.tuple(fc.nat(30), fc.nat(90), fc.nat(99_999)).map(([row, column, n]) =>
        `\x1b[${row};${column}H\x1b[3${n % 8}mcell ${n}\x1b[0m\x1b[K\x1b[${n % 5}P\x1b[${n % 4}@`
      ),
      fc.constantFrom(
        "\x1b[5;1H\x1b[2L\x1b[M",
        "\r\n",
        "中文😀",
        "\x1b[2J",
        "\x1b[?1049h",
        "\x1b[?1049l",
      ),
    ),
    { minLength: 1, maxLength: 30 },
  ).map((parts) => parts.join("")),
  fc.integer({ min: 1, max: 400 }),
).map(([block, times]) => block.repeat(times).slice(0, 400_000));

Deno.test("a screen fed in turns with another shows what it shows fed a piece at a time", async () => {
  await fc.assert(
    fc.asyncProperty(
      redraws,
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 1, max: 60 }),
      cuts,
      async (output, cols, rows, fractions) => {
        const bytes = encoder.encode(output);
        // All at once: one render, in many pieces and turns, another screen caught up meanwhile.
        const whole = new OutputBuffer({ maxBytes: 1 << 20 });
        const other = new OutputBuffer({ maxBytes: 1 << 20 });
        const [screen, otherScreen] = [new Screen(whole, cols, rows), new Screen(other, 80, 24)];
        whole.append(bytes);
        other.append(bytes);
        const [view] = await Promise.all([caughtUp(screen), caughtUp(otherScreen)]);
        // A piece at a time, rendered after each.
        const pieces = new OutputBuffer({ maxBytes: 1 << 20 });
        const reference = new Screen(pieces, cols, rows);
        const at = fractions.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
        let start = 0, last: ScreenView | undefined;
        for (const cut of [...at, bytes.length]) {
          pieces.append(bytes.subarray(start, cut));
          start = cut;
          last = await caughtUp(reference);
        }
        assertEquals(shown(view), shown(last!));
        for (const each of [screen, otherScreen, reference]) each.dispose();
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("a screen caught up in its thread lets a timer set meanwhile run before it is done", async () => {
  const buffer = new OutputBuffer({ maxBytes: 1 << 20 });
  const screen = new Screen(buffer, 80, 24);
  buffer.append(encoder.encode("\x1b[5;9H\x1b[31mx\x1b[0m\x1b[K\x1b[2P\x1b[3@".repeat(20_000)));
  let rendered = false;
  const render = screen.render().then((view) => {
    rendered = true;
    return view;
  });
  const renderedWhenTimerRan = await new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(rendered), 0)
  );
  ok(!renderedWhenTimerRan, "the timer waited for the whole screen");
  await render;
  screen.dispose();
});
