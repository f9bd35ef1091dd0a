import { deepStrictEqual as assertEquals, match, ok, throws } from "node:assert/strict";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";
import { cleanTerminalText } from "../../../src/engine/output/clean.ts";
import { EngineError } from "../../../src/engine/errors.ts";
import {
  CALL_WORK,
  grep,
  type GrepOptions,
  type GrepRead,
  LINE_BYTES,
  MAX_MATCHES_SHOWN,
  SearchClock,
} from "../../../src/engine/output/grep.ts";
import { compilePattern, loadPatterns } from "../../../src/engine/output/patterns.ts";
import { fc, TEXT_PIECES } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();
await loadPatterns();

function bufferOf(data: string | Uint8Array, maxBytes = 64 << 20): OutputBuffer {
  const buffer = new OutputBuffer({ maxBytes });
  buffer.append(typeof data === "string" ? encoder.encode(data) : data);
  return buffer;
}

function search(
  buffer: OutputBuffer,
  pattern: string,
  options: Partial<GrepOptions> = {},
): GrepRead {
  return grep(buffer, {
    pattern: compilePattern(pattern, "", "grep"),
    contextLines: 0,
    budget: 1 << 20,
    final: true,
    lineBase: 1,
    offsets: true,
    resume: (offset, line) => `search on from ${offset} (line ${line})`,
    ...options,
  });
}

Deno.test("matches with their numbers and offsets, context merged, groups apart", () => {
  const lines = ["a", "b", "c", "d", "e", "f", "g", "h"].join("\n") + "\n";
  const found = search(bufferOf(lines), "[bdh]", { contextLines: 1 });
  assertEquals(
    found.text,
    "1-0-a\n2:2:b\n3-4-c\n4:6:d\n5-8-e\n--\n7-12-g\n8:14:h\n",
  );
  assertEquals([found.matches, found.shown, found.linesShown], [3, 3, 7]);
  assertEquals([found.complete, found.end, found.nextLine], [true, 16, 8]);
  // The first and the last line, without context around them; no newline at the end.
  assertEquals(search(bufferOf("x1\ny\nx2"), "x").text, "1:0:x1\n3:5:x2\n");
  // A terminal's numbering (from 0, as since counts) without offsets.
  assertEquals(
    search(bufferOf("x1\ny\nx2"), "y", { lineBase: 0, offsets: false, contextLines: 5 }).text,
    "0-x1\n1:y\n2-x2\n",
  );
});

Deno.test("lines are matched as they read: cleaned, whole, ^ and $ at their ends", () => {
  const output = "\x1b[31mFAIL\x1b[0m one\r\n50%\r100% done\r\nthe FAIL two\r\n";
  assertEquals(search(bufferOf(output), "^FAIL one$").text, "1:0:FAIL one\n");
  assertEquals(search(bufferOf(output), "^100% done$").text, "2:19:100% done\n");
  assertEquals(search(bufferOf(output), "^50%").matches, 0);
  assertEquals(search(bufferOf(output), "(?i)^the fail").text, "3:34:the FAIL two\n");
  // Raw: escape sequences and carriage returns are what is matched and shown.
  assertEquals(
    search(bufferOf(output), "31mFAIL", { raw: true }).text,
    "1:0:\x1b[31mFAIL\x1b[0m one\r\n",
  );
  // Not a character of the answer splits a character or holds a fragment of a sequence.
  const bad = new Uint8Array([0x66, 0x6f, 0xff, 0x0a, 0xc3, 0x0a, 0xe4, 0xb8, 0x0a, 0x6f, 0x6b]);
  assertEquals(search(bufferOf(bad), "\\x{fffd}").text, "1:0:fo\ufffd\n2:4:\ufffd\n3:6:\ufffd\n");
  assertEquals(search(bufferOf(bad), "^ok$").text, "4:9:ok\n");
});

Deno.test("a chunk's end inside a character or a sequence changes nothing", () => {
  for (const before of [21_845, 21_844]) {
    // 65,535 bytes, or 65,532: the chunk ends inside the sequence, or inside the character.
    const output = "中".repeat(before) + "\x1b[31mFAIL\x1b[0m 中\nok\n";
    assertEquals(search(bufferOf(output), "^中*FAIL 中$").matches, 1);
    const found = search(bufferOf(output), "FAIL 中$", { contextLines: 1 });
    ok(found.text.endsWith(`FAIL 中\n2-${encoder.encode(output).length - 3}-ok\n`));
  }
});

Deno.test("a line that never ends costs the same each piece, raw or cleaned", () => {
  const line = "abc ".repeat(1 << 20) + "END";
  for (const raw of [false, true]) {
    const found = search(bufferOf(line), "END$", { raw });
    assertEquals([found.matches, found.complete, found.end], [1, true, line.length]);
  }
});

Deno.test("a line still growing is searched, and searched again next time", () => {
  const buffer = bufferOf("done 1\nbuilding 2");
  const found = search(buffer, "\\d", { final: false });
  assertEquals(found.text, "1:0:done 1\n2:7:building 2\n");
  assertEquals([found.end, found.nextLine, found.complete], [7, 1, true]);
  buffer.append(encoder.encode("0\n"));
  assertEquals(search(buffer, "\\d", { from: { offset: found.end } }).text, "2:7:building 20\n");
});

Deno.test("more matches than fit: counted, a marker, and where to search on", () => {
  const text = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  const buffer = bufferOf(text);
  const capped = search(buffer, "line");
  assertEquals([capped.matches, capped.shown, capped.complete], [300, MAX_MATCHES_SHOWN, false]);
  const first = buffer.lineStart(MAX_MATCHES_SHOWN);
  ok(capped.text.endsWith(
    `... [200 more matching lines not shown; search on from ${first} (line 100)] ...\n`,
  ));
  assertEquals([capped.end, capped.nextLine], [first, 100]);
  // The budget holds the lines, their context and the marker.
  const small = search(buffer, "line [0-9]*5$", { budget: 400, contextLines: 1 });
  ok(small.text.length <= 400, small.text);
  ok(small.shown < small.matches && !small.complete);
  match(small.text, /more matching lines not shown; search on from \d+/);
});

Deno.test("output no longer kept is said so; lines keep their numbers", () => {
  const text = Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
  const buffer = bufferOf(text, 100);
  const found = search(buffer, "^row (1|99|100)$");
  match(found.text, /^\.\.\. \[\d+ lines, \d+ bytes no longer kept: not searched\] \.\.\.\n/);
  ok(
    found.text.endsWith(`99:${buffer.lineStart(98)}:row 99\n100:${buffer.lineStart(99)}:row 100\n`),
  );
  assertEquals([found.dropped, found.droppedLines], [buffer.start, buffer.firstLine]);
  // The oldest line kept lost its start: it is no line's start for ^, and says nothing false.
  const cut = bufferOf("xxxxxxxxxxyes-a\nyes-b\n", 12);
  assertEquals(search(cut, "^yes").text.split("\n").slice(1), ["2:16:yes-b", ""]);
  assertEquals(search(cut, "yes-a").matches, 1);
  // A search from a line no longer kept (a terminal's since) counts the lines.
  const fromLine = search(buffer, "^row 100$", { from: { line: 2 } });
  assertEquals(fromLine.droppedLines, buffer.firstLine - 2);
});

Deno.test("a long line is shown around its match, saying what was left out", () => {
  const line = "x".repeat(5000) + "FAIL here" + "y".repeat(5000);
  const found = search(bufferOf(line + "\nshort\n"), "FAIL", { contextLines: 1 });
  const [shown, context] = found.text.split("\n");
  match(
    shown,
    /^1:0:\[\.\.\. \d+ characters \.\.\.\]x+FAIL herey+\[\.\.\. \d+ characters \.\.\.\]$/,
  );
  ok(shown.length < LINE_BYTES + 100, `${shown.length}`);
  assertEquals(context, `2-${line.length + 1}-short`);
});

Deno.test("a line too long to match at once is matched in pieces: nothing false at a cut", () => {
  // Over a mebibyte: matched in pieces, each seen with the character before it.
  const long = "ab".repeat(600_000);
  const buffer = bufferOf(long + "\n" + long + "NEEDLE\n");
  assertEquals(search(buffer, "a$").matches, 0);
  assertEquals(search(buffer, "^b").matches, 0);
  assertEquals(search(buffer, "\\bb").matches, 0);
  assertEquals(search(buffer, "b$").matches, 1);
  assertEquals(search(buffer, "NEEDLE$").text.split(":").slice(0, 2), ["2", `${long.length + 1}`]);
  // A match across a piece's cut is found whole by the next piece, which overlaps it.
  const needle = "CROSS-THE-CUT";
  const piece = Math.max(1024, CALL_WORK / 16 / compilePattern(needle, "", "grep").size);
  const overlap = Math.min(4096, Math.floor(piece / 2));
  for (const cut of [Math.round(piece), Math.round(2 * piece - overlap)]) {
    for (const at of [cut - needle.length, cut - 5, cut]) {
      const crossing = "a".repeat(at) + needle + "a".repeat(1_100_000);
      assertEquals(search(bufferOf(crossing), needle).matches, 1, `at ${at}`);
    }
  }
});

Deno.test("patterns catastrophic for backtracking engines search in linear time", () => {
  const lines = Array.from({ length: 50 }, () => "a".repeat(2000) + "!").join("\n");
  for (const pattern of ["(a+)+$", "(a|aa)+b", "(a*)*b", "(?:a?){30}a{30}"]) {
    const found = search(bufferOf(lines), pattern);
    assertEquals(found.complete, true, pattern);
  }
  assertEquals(search(bufferOf(lines), "(a+)+!$").matches, 50);
});

Deno.test("the work has a bound: a search stopped says where, and goes on from there", () => {
  const text = Array.from({ length: 5000 }, (_, i) => `n${i}${i % 7 === 0 ? " hit" : ""}`)
    .join("\n") + "\n";
  const buffer = bufferOf(text);
  const expected = search(buffer, "hit").matches;
  let seen = 0, from = 0, calls = 0;
  for (;;) {
    const found = search(buffer, "hit", { from: { offset: from }, clock: new SearchClock(0) });
    calls++;
    seen += found.matches;
    if (found.complete) break;
    match(found.text, /search stopped after line \d+: it had worked 2 s; search on from \d+/);
    ok(found.end > from, "no progress");
    from = found.end;
  }
  assertEquals(seen, expected);
  ok(calls > 10, `${calls} calls`);
  // Inside a line longer than a piece, time running out stops the search past that line.
  const long = bufferOf("ab".repeat(600_000) + "\nlast hit\n");
  const stopped = search(long, "hit", { clock: new SearchClock(0) });
  match(
    stopped.text,
    /search stopped inside line 1 \(its rest was not searched, and a search that goes on starts after it: a line this long is not searched whole\)/,
  );
  assertEquals([stopped.end, stopped.nextLine], [1_200_001, 1]);
});

Deno.test("context lines: 0 to 20, else refused naming the field", () => {
  for (const contextLines of [-1, 21, 1.5]) {
    throws(() => search(bufferOf("a\n"), "a", { contextLines }), (error) => {
      ok(error instanceof EngineError);
      assertEquals([error.kind, error.field], ["invalid_input", "contextLines"]);
      match(error.message, /must be an integer from 0 to 20/);
      return true;
    });
  }
});

/** Pieces of a line: text, controls, sequences, and bytes that are not UTF-8. */
const linePiece: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TEXT_PIECES, "FAIL", "ok", "x", "y") },
  {
    weight: 2,
    arbitrary: fc.constantFrom("\r", "\x1b[31m", "\x1b[0m", "\x1b]0;t\x07", "\x1b[2K", "\b"),
  },
  { weight: 1, arbitrary: fc.constantFrom("中".repeat(4000), "é".repeat(9000)) },
).map((text) => encoder.encode(text)).chain((bytes) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.constant(bytes) },
    {
      weight: 1,
      arbitrary: fc.constantFrom([0xff], [0xc3], [0xe4, 0xb8]).map((b) => new Uint8Array(b)),
    },
  )
);

/** Output of lines, with or without a newline at the end. */
const output = fc.tuple(
  fc.array(fc.array(linePiece, { maxLength: 12 }), { maxLength: 40 }),
  fc.boolean(),
).map(([lines, newlineAtEnd]) => {
  const parts: number[] = [];
  lines.forEach((pieces, i) => {
    for (const piece of pieces) parts.push(...piece);
    if (i < lines.length - 1 || newlineAtEnd) parts.push(0x0a);
  });
  return new Uint8Array(parts);
});

/** What grep shows, worked out the plain way: the whole output cleaned, then line by line. */
function expected(bytes: Uint8Array, pattern: string, context: number, raw = false) {
  const compiled = compilePattern(pattern, "", "grep");
  const decoded = new TextDecoder().decode(bytes);
  const lines = (raw ? decoded : cleanTerminalText(decoded)).split("\n");
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) lines.pop();
  const starts = [0];
  bytes.forEach((byte, i) => byte === 0x0a && i + 1 < bytes.length && starts.push(i + 1));
  const hits = lines.map((line) => compiled.test(line));
  let text = "", last = -1, longest = 0;
  for (let i = 0; i < lines.length; i++) {
    const near = hits.slice(Math.max(0, i - context), i + context + 1).some(Boolean);
    if (!near) continue;
    if (context > 0 && last >= 0 && i > last + 1) text += "--\n";
    const separator = hits[i] ? ":" : "-";
    text += `${i + 1}${separator}${starts[i]}${separator}${lines[i]}\n`;
    [last, longest] = [i, Math.max(longest, lines[i].length)];
  }
  return { text, matches: hits.filter(Boolean).length, longest };
}

Deno.test("property: grep shows what matching each cleaned line alone shows", () => {
  const patterns = [
    "FAIL",
    "^x",
    "y$",
    "\\bok\\b",
    "\\Ax",
    "x\\z",
    "(?-m)^y",
    "[^x]{3}",
    "中",
    "^$",
  ];
  fc.assert(
    fc.property(output, fc.constantFrom(...patterns), fc.nat(3), fc.boolean(), (
      bytes,
      pattern,
      context,
      raw,
    ) => {
      const want = expected(bytes, pattern, context, raw);
      // Lines shown are short enough to be shown whole (see the long line's test).
      fc.pre(want.matches <= MAX_MATCHES_SHOWN && want.longest < LINE_BYTES / 8);
      const found = search(bufferOf(bytes), pattern, { contextLines: context, raw });
      assertEquals(found.text, want.text);
      assertEquals([found.matches, found.complete, found.end], [want.matches, true, bytes.length]);
    }),
    { numRuns: 300 },
  );
});

Deno.test("property: paging by where each answer says to go on shows every match once", () => {
  fc.assert(
    fc.property(output, fc.integer({ min: 60, max: 600 }), (bytes, budget) => {
      const buffer = bufferOf(bytes);
      const want = expected(bytes, "FAIL|x", 0);
      const shown: string[] = [];
      let from = 0;
      for (let calls = 0;; calls++) {
        ok(calls <= want.matches + 1, "no progress");
        const found = search(buffer, "FAIL|x", { from: { offset: from }, budget });
        shown.push(...found.text.split("\n").filter((line) => /^\d+:/.test(line)));
        if (found.complete) break;
        ok(found.end > from || found.shown > 0, "a page moved nowhere");
        from = found.end;
      }
      const numbers = (lines: string[]) => lines.map((line) => Number(line.split(":")[0]));
      const wanted = want.text.split("\n").filter((line) => /^\d+:/.test(line));
      assertEquals(numbers(shown), numbers(wanted));
    }),
    { numRuns: 200 },
  );
});
