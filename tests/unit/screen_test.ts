import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { OutputBuffer } from "../../src/engine/output/buffer.ts";
import { CATCH_UP, RENDER_BUDGET_MS, Screen } from "../../src/engine/output/screen.ts";
import { MAX_NUMBER, ScreenInput } from "../../src/engine/output/screen_input.ts";
import { cuts, fc, hostileOutput } from "../helpers/arbitraries.ts";

const encoder = new TextEncoder();

/** What the emulator gets for `text` cut (as bytes, anywhere) at the given fractions. */
function filtered(text: string, fractions: number[] = [], size = { cols: 80, rows: 24 }): string {
  const input = new ScreenInput(() => size);
  const bytes = encoder.encode(text);
  const at = fractions.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
  const stream = new TextDecoder();
  let out = "", start = 0;
  for (const cut of [...at, bytes.length]) {
    out += stream.decode(input.filter(bytes.subarray(start, cut)).bytes, { stream: true });
    start = cut;
  }
  return out + stream.decode();
}

Deno.test("the emulator's input: counts clamped to the screen, numbers capped, the rest unchanged", () => {
  assertEquals(filtered("\x1b[2000000000S\x1b[99L\x1b[5M\x1b[T"), "\x1b[24S\x1b[24L\x1b[5M\x1b[T");
  assertEquals(
    filtered("x\x1b[2147483647b\x1b[9999@\x1b[9999P\x1b[9999X\x1b[99I\x1b[99Z"),
    "x\x1b[80b\x1b[80@\x1b[80P\x1b[80X\x1b[80I\x1b[80Z",
  );
  assertEquals(filtered("\x9b9999999999S"), "\x9b24S");
  assertEquals(filtered("\x1b[123456789;123456789H"), `\x1b[${MAX_NUMBER};${MAX_NUMBER}H`);
  // Private modes and colours keep their numbers; only a count is a count.
  assertEquals(
    filtered("\x1b[?1049h\x1b[38;2;255;128;0m\x1b[?2026$p\x1b[5;300S"),
    "\x1b[?1049h\x1b[38;2;255;128;0m\x1b[?2026$p\x1b[5;300S",
  );
  // A sequence too long to be real is dropped; a broken one too; text around it stays.
  assertEquals(filtered("a\x1b[" + "1;".repeat(500) + "mb"), "ab");
  assertEquals(filtered("a\x1b[12\x1b[1mb"), "a\x1b[1mb");
  // A control inside a sequence acts at once: passing it first changes nothing.
  assertEquals(filtered("\x1b[3\r9S"), "\r\x1b[24S");
});

Deno.test("filtering does not depend on how the output was cut", () => {
  fc.assert(
    fc.property(hostileOutput, cuts, (text, at) => {
      assertEquals(filtered(text, at), filtered(text));
    }),
    { numRuns: 500 },
  );
});

Deno.test("output with nothing to clamp passes byte for byte", () => {
  const tame = fc.array(
    fc.constantFrom(
      "ab",
      "中文",
      "\r\n",
      "\x1b[1;31m",
      "\x1b[0m",
      "\x1b[2J",
      "\x1b[H",
      "\x1b[5;10H",
      "\x1b[?25l",
      "\x1b]0;t\x07",
      "\x1b(B",
      "\x1b7",
      "\x1b[3S",
      "\x1b[2L",
      "\x9b1m",
    ),
  ).map((parts) => parts.join(""));
  fc.assert(fc.property(tame, cuts, (text, at) => assertEquals(filtered(text, at), text)), {
    numRuns: 300,
  });
});

Deno.test("the screen shows huge-parameter output, quickly, and floods within its time budget", async () => {
  const buffer = new OutputBuffer({ maxBytes: 64 << 20 });
  const screen = await Screen.create(buffer, 80, 24);
  const hostile = [
    "x\x1b[30000000Gy\r\n",
    "\x1b[200000000G\r\n",
    "ab\x1b[10000000@cd\r\n",
    "\x1b[2147483647S\x1b[2147483647T\x1b[2147483647L\x1b[2147483647M",
    "z\x1b[2147483647b\r\n",
    "\x1b[99999;99999H*\x1b[H",
    "\x1b[2147483647I\x1b[2147483647Z\x1b[2147483647P\x1b[2147483647X",
  ].join("");
  buffer.append(encoder.encode(hostile + "done\r\n"));
  const started = performance.now();
  const view = await screen.render();
  ok(performance.now() - started < 2000, "huge parameters took long");
  ok(view.text.includes("done"), view.text);
  assertEquals(view.unrenderedBytes, 0);
  // A flood far beyond what is caught up: the screen starts again from the newest output.
  const line = "0123456789".repeat(7) + "\r\n";
  for (let i = 0; i < 40; i++) {
    buffer.append(encoder.encode(line.repeat(Math.ceil(CATCH_UP / line.length / 4))));
  }
  buffer.append(encoder.encode("\x1b[2147483647S".repeat(50_000) + "the end\r\n"));
  let longest = 0, last = performance.now();
  const ticker = setInterval(() => {
    longest = Math.max(longest, performance.now() - last);
    last = performance.now();
  }, 5);
  const flooded = await screen.render();
  clearInterval(ticker);
  ok(longest < 200, `the event loop was blocked for ${longest.toFixed(0)} ms`);
  ok(
    flooded.text.includes("the end") || flooded.unrenderedBytes > 0,
    "neither shown nor reported as not yet shown",
  );
  ok(performance.now() - started < 4 * RENDER_BUDGET_MS + 2000);
  screen.dispose();
});
