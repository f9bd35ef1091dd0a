import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import {
  MarkFilter,
  MAX_MARK_BYTES,
  newNonce,
  parseMark,
  type PlacedMark,
} from "../../../src/engine/output/marks.ts";
import { cuts, fc, hostileOutput, stringOf, TEXT_PIECES } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NONCE = "0123456789abcdef0123456789abcdef";

/** A mark body this engine knows, or a near miss. */
const body = fc.oneof(
  fc.constantFrom(
    "A",
    "A;k=s",
    "A;k=",
    "A;k=ss",
    "B",
    "C",
    "D",
    "D;0",
    "D;1",
    "D;130",
    "D;-1",
    "D;x",
    "Z",
    "",
  ),
  stringOf([...TEXT_PIECES, "/", ";", "\n", "\r"], 12).map((path) => `P;/${path}`),
  stringOf([...TEXT_PIECES, ";", "'", '"'], 12).map((command) => `E;${command}`),
);

/** Marks with this terminal's nonce, with another one, cut short, or broken. */
const markLike = fc.tuple(
  body,
  fc.constantFrom(NONCE, NONCE, NONCE, "f".repeat(32), NONCE.slice(1), "", NONCE + "0"),
  fc.constantFrom("\x07", "\x1b\\", "\x07", "", "\x18", "\x1bx", "\x9c"),
).map(([text, nonce, end]) => `\x1b]133;${text};${nonce}${end}`);

/** Output with marks in it, as a program and the shell's hooks print it together. */
const stream = fc.array(fc.oneof(hostileOutput, markLike, markLike), { maxLength: 12 })
  .map((pieces) => pieces.join(""));

/** What filtering the whole stream at once must give: the grammar, by a regular expression. */
function reference(bytes: Uint8Array): { data: Uint8Array; marks: PlacedMark[] } {
  // Latin-1 keeps one character per byte, so indexes are byte offsets.
  const text = [...bytes].map((byte) => String.fromCharCode(byte)).join("");
  // deno-lint-ignore no-control-regex -- the grammar is made of control characters
  const mark = /\x1b\]133;([^\x07\x1b\n]*)(\x07|\x1b\\)/g;
  const kept: number[] = [];
  const marks: PlacedMark[] = [];
  let copied = 0;
  for (const found of text.matchAll(mark)) {
    const raw = Uint8Array.from([...found[1]].map((c) => c.charCodeAt(0)));
    const inner = decoder.decode(raw);
    const last = inner.lastIndexOf(";");
    const terminator = found.index! + found[0].length - found[2].length;
    if (terminator - found.index! >= MAX_MARK_BYTES) continue;
    if (last < 0 || inner.slice(last + 1) !== NONCE) continue;
    for (let i = copied; i < found.index!; i++) kept.push(bytes[i]);
    const parsed = parseMark(inner.slice(0, last));
    if (parsed) marks.push({ at: kept.length, mark: parsed });
    copied = found.index! + found[0].length;
  }
  for (let i = copied; i < bytes.length; i++) kept.push(bytes[i]);
  return { data: Uint8Array.from(kept), marks };
}

function filterInPieces(bytes: Uint8Array, fractions: number[]) {
  const filter = new MarkFilter(NONCE);
  const at = fractions.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
  const out: number[] = [];
  const marks: PlacedMark[] = [];
  let start = 0;
  for (const cut of [...at, bytes.length]) {
    const result = filter.push(bytes.slice(start, cut));
    for (const placed of result.marks) {
      marks.push({ at: out.length + placed.at, mark: placed.mark });
    }
    out.push(...result.data);
    start = cut;
  }
  out.push(...filter.end());
  return { data: Uint8Array.from(out), marks };
}

Deno.test("marks are taken out wherever the stream is cut; everything else stays, byte for byte", () => {
  fc.assert(
    fc.property(stream, cuts, (text, fractions) => {
      const bytes = encoder.encode(text);
      assertEquals(filterInPieces(bytes, fractions), reference(bytes));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("a mark split at every possible place, even byte by byte, is still recognised", () => {
  const text = "out\n\x1b]133;D;7;" + NONCE + "\x1b\\\x1b]133;P;/tmp/中 x;" + NONCE + "\x07$ ";
  const bytes = encoder.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const result = filterInPieces(bytes, [cut / bytes.length]);
    assertEquals(decoder.decode(result.data), "out\n$ ");
    assertEquals(result.marks, [
      { at: 4, mark: { kind: "command-end", exitCode: 7 } },
      { at: 4, mark: { kind: "cwd", path: "/tmp/中 x" } },
    ]);
  }
  const filter = new MarkFilter(NONCE);
  const seen: PlacedMark[] = [];
  let data = "";
  for (const byte of bytes) {
    const result = filter.push(Uint8Array.of(byte));
    seen.push(...result.marks);
    data += decoder.decode(result.data, { stream: true });
  }
  assertEquals(data + decoder.decode(filter.end()), "out\n$ ");
  assertEquals(seen.length, 2);
});

Deno.test("forged marks (another nonce, none, a prefix of it) are output, not marks", () => {
  const filter = new MarkFilter(NONCE);
  for (
    const forged of [
      "\x1b]133;D;0\x07",
      "\x1b]133;D;0;" + NONCE.slice(0, 31) + "\x07",
      "\x1b]133;D;0;" + newNonce() + "\x07",
      "\x1b]133;A;" + NONCE + "x\x07",
      "\x1b]7;file://host/tmp;" + NONCE + "\x07",
    ]
  ) {
    const result = filter.push(encoder.encode(forged));
    assertEquals([decoder.decode(result.data), result.marks], [forged, []]);
  }
});

Deno.test("an unfinished sequence is held at most MAX_MARK_BYTES, then passed on", () => {
  const filter = new MarkFilter(NONCE);
  const start = filter.push(encoder.encode("a\x1b]133;E;"));
  assertEquals(decoder.decode(start.data), "a");
  const long = filter.push(encoder.encode("x".repeat(MAX_MARK_BYTES + 1000)));
  ok(long.data.length > MAX_MARK_BYTES + 1000, "the held start comes out with the rest");
  assertEquals(filter.end().length, 0);
  // A line feed decides at once: no mark holds one.
  filter.push(encoder.encode("\x1b]133;A;"));
  assertEquals(
    decoder.decode(filter.push(encoder.encode("half\nnext")).data),
    "\x1b]133;A;half\nnext",
  );
  // Plain output (no ESC) passes through untouched, without a copy.
  const plain = encoder.encode("plain text\n");
  ok(filter.push(plain).data === plain);
});

Deno.test("mark bodies: exit codes, working directories, command lines", () => {
  assertEquals(parseMark("D;0"), { kind: "command-end", exitCode: 0 });
  assertEquals(parseMark("D;-1073741510"), { kind: "command-end", exitCode: -1073741510 });
  assertEquals(parseMark("D;$?"), { kind: "command-end", exitCode: null });
  assertEquals(parseMark("D"), { kind: "command-end", exitCode: null });
  assertEquals(parseMark("P;C:\\Users\\me"), { kind: "cwd", path: "C:\\Users\\me" });
  assertEquals(parseMark("P;$PWD"), undefined);
  assertEquals(parseMark("P;/a;b"), { kind: "cwd", path: "/a;b" });
  // Encoded (every shell but cmd): any byte, %XX as the UTF-8 bytes it stands for.
  assertEquals(parseMark("P;enc:/a%07b%1Bc%0Ad%2541;e %E4%B8%AD"), {
    kind: "cwd",
    path: "/a\x07b\x1bc\nd%41;e 中",
  });
  assertEquals(parseMark("P;enc:C:\\100%25"), { kind: "cwd", path: "C:\\100%" });
  assertEquals(parseMark("P;enc:%ZZ/x"), undefined);
  // cmd's path is as it is: a % in it stays.
  assertEquals(parseMark("P;C:\\a%41"), { kind: "cwd", path: "C:\\a%41" });
  assertEquals(parseMark("E;ls -l; echo"), { kind: "command", text: "ls -l; echo" });
  assertEquals(parseMark("Q"), undefined);
  assertEquals(newNonce().length, 32);
});

Deno.test("a continuation prompt's mark (A;k=s) is its own kind; other prompt options start a prompt", () => {
  assertEquals(parseMark("A;k=s"), { kind: "continuation" });
  assertEquals(parseMark("A"), { kind: "prompt-start" });
  for (const near of ["A;k=", "A;k=ss", "A;K=s", "A;k=s ", "A;k=p", "A;aid=1"]) {
    assertEquals([near, parseMark(near)], [near, { kind: "prompt-start" }]);
  }
  assertEquals(parseMark("Ak=s"), undefined);
  // As a shell sends it (PS2 holds the nonce), split anywhere, and only with this nonce.
  const text = `echo "a\r\n\x1b]133;A;k=s;${NONCE}\x07> `;
  const bytes = encoder.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const result = filterInPieces(bytes, [cut / bytes.length]);
    assertEquals(decoder.decode(result.data), 'echo "a\r\n> ');
    assertEquals(result.marks, [{ at: 9, mark: { kind: "continuation" } }]);
  }
  const forged = `\x1b]133;A;k=s;${newNonce()}\x07`;
  const other = new MarkFilter(NONCE).push(encoder.encode(forged));
  assertEquals([decoder.decode(other.data), other.marks], [forged, []]);
});
