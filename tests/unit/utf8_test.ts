import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  boundaryAtOrAfter,
  completePrefixLength,
  isContinuation,
  utf8Length,
} from "../../src/engine/output/utf8.ts";
import { forAll, TEXT_PIECES } from "../helpers/random.ts";

const encoder = new TextEncoder();

Deno.test("utf8Length agrees with TextEncoder for random text", () => {
  forAll(300, (random) => {
    const text = random.string([...TEXT_PIECES, "\ud800", "\udfff"], random.int(0, 40));
    assertEquals(utf8Length(text), encoder.encode(text).length);
  });
});

Deno.test("boundaryAtOrAfter lands on a character start at or after the index", () => {
  forAll(300, (random) => {
    const bytes = encoder.encode(random.string(TEXT_PIECES, random.int(1, 30)));
    const index = random.int(0, bytes.length);
    const boundary = boundaryAtOrAfter(bytes, index);
    assertEquals(boundary >= index && boundary - index <= 3, true);
    assertEquals(boundary === bytes.length || !isContinuation(bytes[boundary]), true);
    for (let i = index; i < boundary; i++) assertEquals(isContinuation(bytes[i]), true);
  });
});

Deno.test("completePrefixLength cuts exactly an incomplete last character", () => {
  forAll(300, (random) => {
    const text = random.string(TEXT_PIECES, random.int(0, 30));
    const bytes = encoder.encode(text);
    const cut = random.int(0, bytes.length);
    const prefix = bytes.subarray(0, cut);
    const length = completePrefixLength(prefix);
    // The kept part decodes without replacement characters and is a prefix of the text.
    const decoded = new TextDecoder("utf-8", { fatal: true }).decode(prefix.subarray(0, length));
    assertEquals(text.startsWith(decoded), true);
    // Only a partial character is dropped: at most 3 bytes, and it is the start of one.
    assertEquals(cut - length <= 3, true);
    if (length < cut) assertEquals(isContinuation(prefix[length]), false);
  });
});
