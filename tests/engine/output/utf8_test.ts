import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  boundaryAtOrAfter,
  completePrefixLength,
  isContinuation,
  utf8Length,
} from "../../../src/engine/output/utf8.ts";
import { fc, stringOf, TEXT_PIECES } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();

Deno.test("utf8Length agrees with TextEncoder for random text", () => {
  fc.assert(
    fc.property(stringOf([...TEXT_PIECES, "\ud800", "\udfff"], 40), (text) => {
      assertEquals(utf8Length(text), encoder.encode(text).length);
    }),
    { numRuns: 300 },
  );
});

Deno.test("boundaryAtOrAfter lands on a character start at or after the index", () => {
  const input = stringOf(TEXT_PIECES, 30, 1).chain((text) =>
    fc.tuple(fc.constant(encoder.encode(text)), fc.nat(encoder.encode(text).length))
  );
  fc.assert(
    fc.property(input, ([bytes, index]) => {
      const boundary = boundaryAtOrAfter(bytes, index);
      assertEquals(boundary >= index && boundary - index <= 3, true);
      assertEquals(boundary === bytes.length || !isContinuation(bytes[boundary]), true);
      for (let i = index; i < boundary; i++) assertEquals(isContinuation(bytes[i]), true);
    }),
    { numRuns: 300 },
  );
});

Deno.test("completePrefixLength cuts exactly an incomplete last character", () => {
  const input = stringOf(TEXT_PIECES, 30).chain((text) =>
    fc.tuple(fc.constant(text), fc.nat(encoder.encode(text).length))
  );
  fc.assert(
    fc.property(input, ([text, cut]) => {
      const bytes = encoder.encode(text);
      const prefix = bytes.subarray(0, cut);
      const length = completePrefixLength(prefix);
      // The kept part decodes without replacement characters and is a prefix of the text.
      const decoded = new TextDecoder("utf-8", { fatal: true }).decode(prefix.subarray(0, length));
      assertEquals(text.startsWith(decoded), true);
      // Only a partial character is dropped: at most 3 bytes, and it is the start of one.
      assertEquals(cut - length <= 3, true);
      if (length < cut) assertEquals(isContinuation(prefix[length]), false);
    }),
    { numRuns: 300 },
  );
});
