import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { cutHead, cutTail, jsonSize } from "../../../src/engine/output/shape.ts";
import { fc, stringOf, TEXT_PIECES } from "../../helpers/arbitraries.ts";

const encoder = new TextEncoder();
/** Anything a string can hold: text, controls, quotes, backslashes, lone surrogates. */
const awkward = stringOf(
  [...TEXT_PIECES, "\x00", "\x1b", "\x7f", "\x9b", '"', "\\", "\n", "\r", "\ud800", "\udfff", "/"],
  60,
);

Deno.test("jsonSize is the size JSON.stringify writes (without the quotes)", () => {
  fc.assert(
    fc.property(awkward, (text) => {
      assertEquals(jsonSize(text), encoder.encode(JSON.stringify(text)).length - 2);
    }),
    { numRuns: 1000 },
  );
});

Deno.test("cutHead and cutTail take the most that fits and never split a pair", () => {
  fc.assert(
    fc.property(awkward, fc.nat(200), (text, budget) => {
      const head = cutHead(text, budget), tail = cutTail(text, budget);
      ok(jsonSize(text.slice(0, head)) <= budget && jsonSize(text.slice(tail)) <= budget);
      // One more code point would not fit (or there is none).
      const nextHead = head + (text.codePointAt(head)! > 0xffff ? 2 : 1);
      ok(head === text.length || jsonSize(text.slice(0, nextHead)) > budget);
      const prevTail = tail - (tail >= 2 && text.codePointAt(tail - 2)! > 0xffff ? 2 : 1);
      ok(tail === 0 || jsonSize(text.slice(prevTail)) > budget);
      // A cut never falls between the halves of a surrogate pair.
      for (const cut of [head, tail]) {
        const high = text.charCodeAt(cut - 1), low = text.charCodeAt(cut);
        ok(!(high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff), "split a pair");
      }
    }),
    { numRuns: 1000 },
  );
});
