/**
 * fast-check generators shared by the property tests: text of awkward pieces, and hostile
 * terminal output (huge and malformed parameters, random C0 and C1 controls, unterminated
 * strings, long runs). A failing property prints its seed and the shrunk counterexample;
 * replay with `fc.assert(..., { seed, path })`.
 *
 * @module
 */
import fc from "fast-check";

export { fc };

/** Text pieces covering ASCII, CJK, emoji (surrogate pairs) and combining marks. */
export const TEXT_PIECES = [
  "a",
  "b",
  "z",
  " ",
  "0",
  "~",
  "é",
  "中",
  "文",
  "😀",
  "🎉",
  "ñ",
  "e\u0301",
  "\t",
] as const;

/** A string of `minPieces` to `maxPieces` pieces drawn from `pieces`. */
export function stringOf(
  pieces: readonly string[],
  maxPieces: number,
  minPieces = 0,
): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...pieces), { minLength: minPieces, maxLength: maxPieces })
    .map((chosen) => chosen.join(""));
}

/** Plain text with newlines. */
export const plainText: fc.Arbitrary<string> = stringOf([...TEXT_PIECES, "\n"], 40);

/** A numeric parameter: small, at a boundary, huge, or a digit string longer than any number. */
const parameter = fc.oneof(
  fc.nat(12).map(String),
  fc.constantFrom("", "0", "1000", "65535", "2147483647", "4294967296", "99999999999999999999"),
  fc.integer({ min: 11, max: 300 }).map((n) => "9".repeat(n)),
  fc.integer({ min: 1, max: 2_000_000_000 }).map(String),
);

/** CSI finals worth aiming at (cursor, edit, scroll, repeat), and any final at all. */
const csiFinal = fc.oneof(
  fc.constantFrom(..."@ABCDEFGHIJKLMPSTXZ`abdefhlmnrstu"),
  fc.integer({ min: 0x40, max: 0x7e }).map((code) => String.fromCharCode(code)),
);

/** A CSI sequence, well-formed or not, with 7-bit or 8-bit introducer and any parameters. */
export const csiSequence: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("\x1b[", "\x9b"),
  fc.constantFrom("", "", "?", ">", "<", "="),
  fc.array(parameter, { maxLength: 20 }).map((params) => params.join(";")),
  fc.constantFrom("", "", " ", "$", "!", "'"),
  fc.oneof(csiFinal, csiFinal, fc.constantFrom("", "\n", "\x1b", "中")),
).map((parts) => parts.join(""));

/** A control string (OSC, DCS, SOS, PM, APC), terminated in any of the ways, or not at all. */
export const controlString: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_", "\x9d", "\x90", "\x9f"),
  stringOf([...TEXT_PIECES, ";", "0", "8", "\r"], 30),
  fc.constantFrom("\x07", "\x1b\\", "\x9c", "", "\x18", "\n"),
).map((parts) => parts.join(""));

/** Anything at all a program might print, weighted towards what breaks parsers. */
export const hostileOutput: fc.Arbitrary<string> = fc.array(
  fc.oneof(
    { arbitrary: stringOf(TEXT_PIECES, 6, 1), weight: 4 },
    { arbitrary: csiSequence, weight: 4 },
    { arbitrary: controlString, weight: 2 },
    { arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), weight: 2 },
    {
      arbitrary: fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
      weight: 1,
    },
    { arbitrary: fc.constantFrom("\r", "\n", "\r\n", "\b", "\x1b", "\x1b(B", "\x1b7"), weight: 3 },
  ),
  { maxLength: 40 },
).map((pieces) => pieces.join(""));

/** Where to cut a text, as fractions of its length (see {@link pieces}). */
export const cuts: fc.Arbitrary<number[]> = fc.array(
  fc.double({ min: 0, max: 1, noNaN: true }),
  { maxLength: 8 },
);

/** `text` cut at the given fractions of its length (pieces may be empty). */
export function pieces(text: string, fractions: number[]): string[] {
  const at = fractions.map((f) => Math.floor(f * text.length)).sort((a, b) => a - b);
  const result: string[] = [];
  let start = 0;
  for (const cut of at) {
    result.push(text.slice(start, cut));
    start = cut;
  }
  result.push(text.slice(start));
  return result;
}
