import { deepStrictEqual as assertEquals, match, ok, throws } from "node:assert/strict";
import { cpuTimed, threadCpuMs } from "../../helpers/cpu.ts";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";
import {
  compilePattern,
  loadPatterns,
  MATCH_BACKLOG,
  MATCH_OVERLAP,
  PatternScanner,
} from "../../../src/engine/output/patterns.ts";
import { EngineError } from "../../../src/engine/errors.ts";
import { cleanTerminalText } from "../../../src/engine/output/clean.ts";
import { cuts, fc, pieces, stringOf } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();
await loadPatterns();

Deno.test("what RE2 lacks is refused, naming the construct and the field", () => {
  const cases: [string, RegExp][] = [
    ["(\\w+) \\1", /a backreference \(\\1\) is not supported: patterns use RE2 syntax/],
    ["(?<word>a)\\k<word>", /a named backreference/],
    ["foo(?=bar)", /a lookahead \(\?=\.\.\.\)/],
    ["foo(?!bar)", /a negative lookahead/],
    ["(?<=x)y", /a lookbehind \(\?<=\.\.\.\)/],
    ["(?<!x)y", /a negative lookbehind/],
    ["(?>a+)b", /an atomic group/],
    ["a++", /a possessive quantifier \(\+\+\)/],
    ["(", /not a valid regular expression: missing closing \)/],
    ["a{2,100000}", /not a valid regular expression: invalid repeat count/],
  ];
  for (const [pattern, expected] of cases) {
    try {
      compilePattern(pattern, "", "pattern");
      throw new Error(`${pattern} was accepted`);
    } catch (error) {
      ok(error instanceof EngineError, String(error));
      assertEquals([error.kind, error.field], ["invalid_input", "pattern"]);
      match(error.message, expected);
    }
  }
  // Escaped and bracketed look-alikes are fine.
  // (\p{Greek}+ and \x{41}+ were refused as possessive: their braces are the escape's own.)
  for (const fine of ["\\(?=x", "[(?=]", "\\\\1", "a+b", "x{3}", "\\p{Greek}+", "\\x{41}+"]) {
    compilePattern(fine, "", "pattern");
  }
  throws(() => compilePattern("a", "g", "pattern"), /unknown flag 'g'/);
});

Deno.test("RE2 syntax and the i, m, s flags", () => {
  const find = (pattern: string, flags: string, text: string) =>
    compilePattern(pattern, flags, "pattern").find(text);
  assertEquals(find("listening on (\\S+)", "", "x\nlistening on :80\n"), {
    text: "listening on :80",
    index: 2,
    groups: [":80"],
  });
  assertEquals(find("^B", "", "a\nb")?.text, undefined);
  assertEquals(find("^B", "im", "a\nb")?.text, "b");
  assertEquals(find("a.b", "s", "a\nb")?.text, "a\nb");
  assertEquals(find("(x)?y", "", "y")?.groups, [null]);
  assertEquals(find("(?P<n>\\d+)", "", "n=42")?.groups, ["42"]);
});

Deno.test("catastrophic patterns of backtracking engines match in linear time", () => {
  for (const pattern of ["(a+)+$", "(a|aa)+$", "(a|a)*b", "(\\w+\\s?)*$", "(.*a){20}"]) {
    const compiled = compilePattern(pattern, "", "pattern");
    // A backtracking engine needs longer than the universe's age here; RE2 about a millisecond
    // (of this thread's CPU: the wall clock would measure the machine's load too).
    const elapsed = cpuTimed(() => compiled.find("a".repeat(30_000) + "!")).ms;
    ok(elapsed < 2000, `${pattern}: ${elapsed} ms`);
  }
});

async function scanAll(buffer: OutputBuffer, scanner: PatternScanner, parts: string[]) {
  for (const part of parts) {
    buffer.append(encoder.encode(part));
    const found = await scanner.scan();
    if (found) return found;
  }
  return await scanner.scan(true);
}

Deno.test("a match arriving in pieces is found however the pieces fall", async () => {
  const noise = stringOf(["x", " ", "\n", "\x1b[1m", "\x1b[0m", "中"], 200);
  await fc.assert(
    fc.asyncProperty(noise, cuts, async (before, at) => {
      const text = before + "\x1b[32mready\x1b[0m on port \x1b[1m8080\x1b[0m\n";
      const buffer = new OutputBuffer();
      const scanner = new PatternScanner(
        // Up to the line end: the line as it grows ("...port 80") matches a bare (\\d+) too.
        compilePattern("ready on port (\\d+)\\n", "", "pattern"),
        buffer,
        0,
      );
      const found = await scanAll(buffer, scanner, pieces(text, at));
      assertEquals(found?.groups, ["8080"]);
    }),
    { numRuns: 200 },
  );
});

Deno.test("a prompt with no newline yet is matched, and so is a match spanning the overlap", async () => {
  const buffer = new OutputBuffer();
  const prompt = new PatternScanner(compilePattern(">>> $", "", "pattern"), buffer, 0);
  assertEquals(await scanAll(buffer, prompt, ["Python 3\n", ">>", "> "]), {
    text: ">>> ",
    index: 9,
    groups: [],
  });
  // Within the overlap: the start came in an earlier piece than the end.
  const near = new OutputBuffer();
  const spanning = new PatternScanner(compilePattern("BEGIN[\\s\\S]*END", "", "p"), near, 0);
  const filler = "y".repeat(MATCH_OVERLAP / 2) + "\n";
  assertEquals((await scanAll(near, spanning, ["BEGIN\n", filler, "END\n"]))?.index, 0);
  // Beyond it (documented): a match longer than the overlap, spread over checks, is missed.
  const far = new OutputBuffer();
  const missed = new PatternScanner(compilePattern("BEGIN[\\s\\S]*END", "", "p"), far, 0);
  const long = "y".repeat(MATCH_OVERLAP * 2) + "\n";
  assertEquals(await scanAll(far, missed, ["BEGIN\n", long, "END\n"]), undefined);
});

Deno.test("a slow pattern is matched in slices: the event loop stays free", async () => {
  // About 100 µs a character in re2js: one scan of a mebibyte would block for minutes.
  const slow = compilePattern("(?:[ab]*[ba]*c?){500}[xyz]", "", "pattern");
  const buffer = new OutputBuffer();
  buffer.append(encoder.encode("ab".repeat(4096) + "\n"));
  const scanner = new PatternScanner(slow, buffer, 0);
  // The timer runs only when the scan yields: counted, not timed (a busy machine stretches
  // every slice, and a 200 ms bound on the longest failed under a parallel test run).
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  const found = await scanner.scan(true);
  clearInterval(ticker);
  assertEquals(found, undefined);
  ok(ticks >= 10, `the event loop ran ${ticks} times during the scan`);
});

Deno.test("a slow pattern is known slow from the start; a cancelled scan stops at its next slice", async () => {
  const slow = compilePattern("(?:[ab]*[ba]*c?){500}[xyz]", "", "pattern");
  const quick = compilePattern("ready", "", "pattern");
  ok(slow.cost > 50 * quick.cost, `${slow.cost} vs ${quick.cost} ms a character`);
  const buffer = new OutputBuffer();
  buffer.append(encoder.encode("ab".repeat(50_000) + "\n"));
  const scanner = new PatternScanner(slow, buffer, 0);
  const scanning = scanner.scan(true);
  setTimeout(() => scanner.cancel(), 50);
  // This thread's CPU: the scan's work, not how long a loaded machine took to run it.
  const started = threadCpuMs();
  assertEquals(await scanning, undefined);
  ok(threadCpuMs() - started < 1000, "the scan went on after it was cancelled");
});

Deno.test("output beyond the backlog is skipped to its newest mebibyte, even inside a long line", async () => {
  // The skip went on from the next line start: the rest of a line longer than the backlog,
  // newer output than the mebibyte promised, was passed over (MARK1 was missed).
  const buffer = new OutputBuffer();
  const scanner = new PatternScanner(compilePattern("MARK1\\b", "", "p"), buffer, 0);
  buffer.append(encoder.encode("y".repeat(2_000_000) + "MARK1\n" + "y".repeat(500_000) + "\n"));
  assertEquals((await scanner.scan())?.text, "MARK1");
  assertEquals(scanner.skipped, buffer.end - MATCH_BACKLOG);
});

Deno.test("a cut inside a line is not taken for a line start nor for a word's start", async () => {
  const scan = async (text: string, pattern: string, flags = "") => {
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(compilePattern(pattern, flags, "p"), buffer, 0);
    buffer.append(encoder.encode(text));
    return (await scanner.scan(true))?.text;
  };
  // A skip: the newest mebibyte starts at the first z, inside the line.
  const inside = "y".repeat(1000) + "z".repeat(MATCH_BACKLOG);
  assertEquals(await scan(inside, "^z"), undefined);
  assertEquals(await scan(inside, "^z", "m"), undefined);
  assertEquals(await scan(inside, "\\bz"), undefined);
  assertEquals(await scan(inside, "z{3}"), "zzz");
  // The same skip at a line start: a line start, but not where the output began.
  const after = "y".repeat(999) + "\n" + "z".repeat(MATCH_BACKLOG);
  assertEquals(await scan(after, "^z", "m"), "z");
  assertEquals(await scan(after, "^z"), undefined);
  assertEquals(await scan(after, "\\bz"), "z");
  // The unfinished line's newest part, matched on its own once the line is long.
  const buffer = new OutputBuffer();
  const scanner = new PatternScanner(compilePattern("^y", "m", "p"), buffer, 0);
  const long = ["x", ...Array.from({ length: 40 }, () => "y".repeat(1000))];
  assertEquals(await scanAll(buffer, scanner, long), undefined);
});

Deno.test("a marker in the newest mebibyte is found however long the lines before it", async () => {
  const line = fc.oneof(
    fc.integer({ min: 0, max: 64 }),
    fc.integer({ min: MATCH_BACKLOG - 64, max: MATCH_BACKLOG + 64 }),
    fc.integer({ min: 0, max: 2 * MATCH_BACKLOG }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(line, { maxLength: 4 }),
      line,
      fc.integer({ min: 0, max: MATCH_BACKLOG - 64 }),
      fc.boolean(),
      async (before, lead, after, newline) => {
        const buffer = new OutputBuffer();
        const scanner = new PatternScanner(compilePattern("\\bMARK\\b", "", "p"), buffer, 0);
        // The marker's line starts with `lead` characters: it may start long before the cut.
        const text = before.map((length) => "y".repeat(length) + "\n").join("") +
          "w".repeat(lead) + " MARK" + (newline ? "\n" : " ") + "x".repeat(after);
        buffer.append(encoder.encode(text));
        assertEquals((await scanner.scan(true))?.text, "MARK");
      },
    ),
    { numRuns: 25 },
  );
});

/**
 * Output whose skip cut (its newest {@link MATCH_BACKLOG} bytes) lands `cut` bytes into `text`,
 * followed by lines of filler that no pattern here matches.
 */
function cutInto(text: Uint8Array, cut: number): Uint8Array {
  const filler = encoder.encode(("-".repeat(99) + "\n").repeat(MATCH_BACKLOG / 100 + 1));
  const rest = MATCH_BACKLOG - (text.length - cut);
  const output = new Uint8Array(text.length + rest);
  output.set(text);
  output.set(filler.subarray(filler.length - rest), text.length);
  return output;
}

Deno.test("a skip's cut follows what the output shows before it, not its raw bytes", async () => {
  const cases: [string, string, number, string, string, string | undefined][] = [
    // [what, text, cut (bytes into it), pattern, flags, expected match]
    ["a colour at a line's start", "y\n\x1b[32mPASS", 7, "^PASS", "m", "PASS"],
    ["a colour before a word", "  \x1b[01;34msrc ", 10, "\\bsrc\\b", "", "src"],
    ["a colour after a letter", "a\x1b[31mX", 6, "\\BX", "", "X"],
    ["a NUL, shown as nothing", "aa\x00X", 3, "\\bX", "", undefined],
    ["a bell, shown as nothing", "aa\x07X", 3, "\\bX", "", undefined],
    ["a character the cut splits", "y\n中X", 3, "^X", "m", undefined],
    ["an emoji the cut splits", "a😀X", 3, "\\BX", "", undefined],
    ["a carriage return", "y\nabc\rX", 6, "^X", "m", "X"],
    ["a backspace", "y\nb\bX", 4, "^X", "m", "X"],
    ["inside a colour", "y\n\x1b[31mX", 4, "^X", "m", "X"],
    // More than a kibibyte that shows nothing, or a wide line's rows, before the cut.
    ["a long title at a line's start", `y\n\x1b]0;${"t".repeat(2000)}\x07X`, 2007, "^X", "m", "X"],
    ["a long title after a letter", `ya\x1b]0;${"t".repeat(2000)}\x07X`, 2007, "\\BX", "", "X"],
    ["colour resets after a letter", `ya${"\x1b[0m".repeat(300)}X`, 1202, "\\bX", "", undefined],
    [
      "a carriage return on a wide row",
      `y\n${"p".repeat(999)} ${"q".repeat(500)}\rX`,
      1503,
      "\\bX",
      "",
      "X",
    ],
  ];
  for (const [what, text, cut, pattern, flags, expected] of cases) {
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(compilePattern(pattern, flags, "p"), buffer, 0);
    buffer.append(cutInto(encoder.encode("-\n".repeat(1000) + text), 2000 + cut));
    assertEquals((await scanner.scan(true))?.text, expected, what);
    ok(scanner.skipped > 0, what);
  }
});

Deno.test("a long line's kept part is not where it starts, nor next to the line before", async () => {
  // The scanner keeps about 8 K characters of a line: a long line comes back as its newest part.
  for (let length = 16_500; length < 40_000; length += 1_234) {
    const text = "first a\ny" + "X".repeat(length) + "\n";
    for (const [pattern, flags] of [["^X", "m"], ["\\bX", ""], ["a\\nX", ""]]) {
      const buffer = new OutputBuffer();
      const scanner = new PatternScanner(compilePattern(pattern, flags, "p"), buffer, 0);
      const pieces = text.match(/[^]{1,3000}/g)!;
      assertEquals(await scanAll(buffer, scanner, pieces), undefined, `${pattern} at ${length}`);
    }
    // And where a match is, its index counts the characters the scanner let go of.
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(compilePattern("Xz", "", "p"), buffer, 0);
    const found = await scanAll(buffer, scanner, [text.replace("X\n", "z\n")]);
    assertEquals(found?.index, text.length - 3);
  }
});

Deno.test("^ without the m flag matches where the output began, and nowhere else", async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `X ${i}\n`).join("");
  for (const [flags, expected] of [["", 0], ["m", 0]] as const) {
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(compilePattern("^X 0", flags, "p"), buffer, 0);
    assertEquals((await scanAll(buffer, scanner, [lines]))?.index, expected);
  }
  // Later lines start lines, not the output: with pieces of every size, never a match.
  for (const size of [1, 7, 100, 4096, 5000]) {
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(compilePattern("^X [1-9]", "", "p"), buffer, 0);
    const pieces = lines.match(new RegExp(`[^]{1,${size}}`, "g"))!;
    assertEquals(await scanAll(buffer, scanner, pieces), undefined, `pieces of ${size}`);
  }
});

Deno.test("streamed in any pieces, a pattern matches where the whole cleaned output does", async () => {
  // Runs long enough that the scanner keeps only a line's newest part, among the characters
  // anchors look at (no cursor moves: then what a check saw stays what the whole shows).
  const run = fc.tuple(fc.constantFrom("y", "X", "a"), fc.integer({ min: 1, max: 40_000 }))
    .map(([char, length]) => char.repeat(length));
  const atom = fc.constantFrom(
    "a",
    "y",
    " ",
    "\n",
    "中",
    "😀",
    "\x1b[1m",
    "\x1b[0m",
    "\t",
    "X",
    "\x07",
  );
  const output = fc.array(fc.oneof({ arbitrary: run, weight: 1 }, { arbitrary: atom, weight: 4 }), {
    maxLength: 40,
  }).map((parts) => parts.join(""));
  const pattern = fc.constantFrom(
    ["^X", ""],
    ["^X", "m"],
    ["\\bX", ""],
    ["\\BX", ""],
    ["a\\nX", ""],
    ["😀X", ""],
  ); // Not `$`: it matches at the end of each check's output, as a prompt is waited for.
  await fc.assert(
    fc.asyncProperty(output, pattern, cuts, async (text, [source, flags], at) => {
      const compiled = compilePattern(source, flags, "p");
      const expected = compiled.find(cleanTerminalText(text))?.text;
      const buffer = new OutputBuffer();
      const scanner = new PatternScanner(compiled, buffer, 0);
      assertEquals((await scanAll(buffer, scanner, pieces(text, at)))?.text, expected);
    }),
    { numRuns: 400 },
  );
});

Deno.test("bytes that decode to U+FFFD are counted as the bytes they are, at any read's start", async () => {
  const bytes = (...parts: (string | number[])[]) =>
    parts.map((part) => typeof part === "string" ? [...encoder.encode(part)] : part).flat();
  const cases: [string, number[], string, string | undefined][] = [
    // [what, output, pattern, expected]. A line cut short by a repeat (REP makes a slice's worth
    // of text from 8 bytes) after invalid bytes: each was counted as 3, and the scan jumped on
    // past bytes it never cleaned (here an escape sequence's ESC, which then showed as text).
    [
      "an escape sequence jumped over",
      bytes("l\n", Array(8).fill(0xff), "y\x1b[999b", "abcdefghijklmno\x1b[31mZ\n"),
      "\\[31mZ",
      undefined,
    ],
    [
      "a marker jumped over",
      bytes("l\n", Array(8).fill(0xff), "y\x1b[999b", "abcdefghijklmno MARK\n"),
      "MARK",
      "MARK",
    ],
    // A stray continuation byte where a read starts: not the rest of a character cut there.
    ["a stray byte", bytes("a", [0x9b], "X\n"), "\\x{FFFD}X", "\ufffdX"],
  ];
  for (const [what, output, pattern, expected] of cases) {
    for (const size of [1, 2, 5, output.length]) {
      const buffer = new OutputBuffer();
      const scanner = new PatternScanner(compilePattern(pattern, "", "p"), buffer, 0);
      let found;
      for (let at = 0; at < output.length && !found; at += size) {
        buffer.append(new Uint8Array(output.slice(at, at + size)));
        found = await scanner.scan();
      }
      found ??= await scanner.scan(true);
      assertEquals(found?.text, expected, `${what}, pieces of ${size}`);
    }
  }
});

Deno.test("what a check changed in the line being written is matched, however it changed it", async () => {
  // A repeat (REP) makes up to a row of text from 8 bytes; cursor-forward moves (CUF) leave blanks.
  for (const unit of ["y\x1b[999b", "y\x1b[999C"]) {
    for (const at of [1, 6, 20]) {
      const units = Array.from({ length: 40 }, (_, i) => (i === at ? " MARK " : "") + unit);
      const text = "start\n" + units.join("") + "\n";
      const expected = compilePattern("MARK", "", "p").find(cleanTerminalText(text))!.index;
      for (const size of [64, text.length]) {
        const buffer = new OutputBuffer();
        const scanner = new PatternScanner(compilePattern("MARK", "", "p"), buffer, 0);
        const pieces = text.match(new RegExp(`[^]{1,${size}}`, "g"))!;
        assertEquals((await scanAll(buffer, scanner, pieces))?.index, expected, `${unit} ${at}`);
      }
    }
  }
  // A carriage return rewrites a wide row's start, no line feed after it (a status line), seen by
  // a slow pattern (whose overlap shrinks to a few hundred characters).
  const slow = compilePattern("X1 |(?:[ab]*[ba]*c?){300}[xyz]", "", "p");
  for (const row of [299, 999]) {
    const buffer = new OutputBuffer();
    const scanner = new PatternScanner(slow, buffer, 0, 1000);
    const parts = ["ab".repeat(2000) + "\n", "ab".repeat(2000) + "\n", "p".repeat(row), "\rX1 "];
    assertEquals((await scanAll(buffer, scanner, parts))?.index, 8002, `a row of ${row}`);
  }
});

Deno.test("many scans at once share one budget between the event loop's turns", async () => {
  // Counted, not timed: a scan's slices take the event loop's turns (a chain of timers), and
  // sixteen scans at once take about sixteen times the turns of one, instead of all running their
  // slices in the same turns (where 32 waits held a server for half a second).
  const slow = compilePattern("(?:[ab]*[ba]*c?){500}[xyz]", "", "pattern");
  const turnsFor = async (scans: number) => {
    const scanners = Array.from({ length: scans }, () => {
      const buffer = new OutputBuffer();
      buffer.append(encoder.encode("ab".repeat(768) + "\n"));
      return new PatternScanner(slow, buffer, 0);
    });
    let turns = 0, done = false;
    const turn = () => setTimeout(() => !done && (turns++, turn()), 0);
    turn();
    await Promise.all(scanners.map((scanner) => scanner.scan(true)));
    done = true;
    return turns;
  };
  const alone = await turnsFor(1), together = await turnsFor(16);
  ok(together >= 4 * alone, `${together} turns for 16 scans, ${alone} for one`);
});

Deno.test("a scan cancelled while it waits for its turn passes the turn on", async () => {
  // Two slow scans take the turns by turns; a third waits behind them; both are cancelled.
  const slow = compilePattern("(?:[ab]*[ba]*c?){500}[xyz]", "", "pattern");
  const busy = [0, 1].map(() => {
    const buffer = new OutputBuffer();
    buffer.append(encoder.encode("ab".repeat(50_000) + "\n"));
    return new PatternScanner(slow, buffer, 0);
  });
  const busyScans = busy.map((scanner) => scanner.scan());
  await new Promise((resolve) => setTimeout(resolve, 50));
  const small = new OutputBuffer();
  small.append(encoder.encode("hello DONE\n"));
  const waiting = new PatternScanner(compilePattern("DONE", "", "p"), small, 0).scan();
  for (const scanner of busy) scanner.cancel();
  // It hung: nothing woke the scans queued after a cancelled one.
  assertEquals((await waiting)?.text, "DONE");
  assertEquals(await Promise.all(busyScans), [undefined, undefined]);
});
