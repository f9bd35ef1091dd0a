import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { cleanTerminalText } from "../../src/engine/output/clean.ts";
import { forAll, type Random, TEXT_PIECES } from "../helpers/random.ts";

/** Sequences that change colours, titles, modes or charsets but never the text. */
const INVISIBLE = [
  "\x1b[0m",
  "\x1b[1;31m",
  "\x1b[38;5;208m",
  "\x1b[38;2;10;20;30m",
  "\x1b[?25l",
  "\x1b[?2004h",
  "\x1b[>4;1m",
  "\x1b]0;a title\x07",
  "\x1b]8;;https://example.com\x1b\\",
  "\x1b]133;A\x1b\\",
  "\x1bP+q544e\x1b\\",
  "\x1b_app\x1b\\",
  "\x1b^privacy\x1b\\",
  "\x1b(B",
  "\x1b)0",
  "\x1b#8",
  "\x1b=",
  "\x1b>",
  "\x1b7",
  "\x1b8",
  "\x07",
  "\x00",
  "\x0e",
  "\x0f",
  "\u009b32m",
  "\u009d2;t\u009c",
  "\x1b[2J",
  "\x1b[H",
  "\x1b[12;40H",
];

function plainText(random: Random): string {
  return random.string([...TEXT_PIECES, "\n"], random.int(0, 40));
}

function isClean(text: string): boolean {
  // deno-lint-ignore no-control-regex
  return !/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text);
}

Deno.test("plain text passes through unchanged", () => {
  forAll(300, (random) => {
    const text = plainText(random);
    assertEquals(cleanTerminalText(text), text);
  });
});

Deno.test("invisible sequences anywhere between characters leave the text unchanged", () => {
  forAll(300, (random) => {
    const text = plainText(random);
    let noisy = "";
    for (const char of text) {
      while (random.chance(0.3)) noisy += random.pick(INVISIBLE);
      noisy += char === "\n" && random.chance(0.5) ? "\r\n" : char;
    }
    noisy += random.chance(0.5) ? random.pick(INVISIBLE) : "";
    assertEquals(cleanTerminalText(noisy), text);
  });
});

Deno.test("the result of random terminal noise is clean and cleaning is idempotent", () => {
  const alphabet = [
    ...TEXT_PIECES,
    ...INVISIBLE,
    "\r",
    "\n",
    "\b",
    "\x1b",
    "\x1b[",
    "\x1b]",
    "\x1b[K",
    "\x1b[2K",
    "\x1b[3C",
    "\x1b[2D",
    "\x1b[5G",
    "\x1b[2X",
    "\x1b[P",
    "\x1b[2@",
    "\x9b",
    "\x7f",
    "\x1b[1;2",
    "\u009c",
  ];
  forAll(500, (random) => {
    const noisy = random.string(alphabet, random.int(0, 60));
    const clean = cleanTerminalText(noisy);
    assertEquals(isClean(clean), true, JSON.stringify({ noisy, clean }));
    assertEquals(cleanTerminalText(clean), clean);
  });
});

Deno.test("carriage-return overwrites collapse to the final text", () => {
  forAll(200, (random) => {
    const steps = Array.from({ length: random.int(1, 6) }, () => `${random.int(0, 100)}%`);
    const last = steps[steps.length - 1];
    // Each redraw erases the line first, as progress bars do.
    assertEquals(cleanTerminalText(steps.map((s) => `\r\x1b[K${s}`).join("") + "\n"), last + "\n");
  });
  assertEquals(cleanTerminalText("abc\rX"), "Xbc");
  assertEquals(cleanTerminalText("abc\b\bZ"), "aZc");
  assertEquals(cleanTerminalText("ab\x1b[3Cc"), "ab   c");
  assertEquals(cleanTerminalText("abcdef\x1b[3D\x1b[K!"), "abc!");
  assertEquals(cleanTerminalText("abcdef\x1b[3G\x1b[2X"), "ab  ef");
  assertEquals(cleanTerminalText("abcdef\r\x1b[2P"), "cdef");
  assertEquals(cleanTerminalText("abc\r\x1b[2@X"), "X abc");
  assertEquals(cleanTerminalText("进度 10%\r进度 100%\r\n完成"), "进度 100%\n完成");
  assertEquals(cleanTerminalText("a\r\n\r\nb"), "a\n\nb");
});

Deno.test("unterminated sequences at the end are dropped, not shown", () => {
  assertEquals(cleanTerminalText("ok\x1b]0;half a title"), "ok");
  assertEquals(cleanTerminalText("ok\x1b[1;3"), "ok");
  assertEquals(cleanTerminalText("ok\x1b"), "ok");
  assertEquals(cleanTerminalText("ok\x1bP1$r"), "ok");
});
