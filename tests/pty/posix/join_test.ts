import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { posix } from "node:path";
import { joinPosix } from "../../../src/pty/posix/join.ts";
import { fc } from "../../helpers/arbitraries.ts";

const PIECES = [
  "",
  "/",
  "//",
  ".",
  "..",
  "a",
  "b",
  "a/",
  "/a",
  "./",
  "../",
  "a/../",
  "state",
  "x.json",
];

Deno.test("joinPosix joins as node:path's posix.join", () => {
  for (const first of PIECES) {
    for (const second of PIECES) assertEquals(joinPosix(first, second), posix.join(first, second));
  }
  const part = fc.oneof(
    fc.constantFrom(...PIECES),
    fc.array(fc.constantFrom("/", ".", "..", "a", "b"), { maxLength: 8 }).map((p) => p.join("")),
  );
  fc.assert(
    fc.property(fc.array(part, { maxLength: 4 }), (parts) => {
      assertEquals(joinPosix(...parts), posix.join(...parts), JSON.stringify(parts));
    }),
    { numRuns: 5000 },
  );
});
