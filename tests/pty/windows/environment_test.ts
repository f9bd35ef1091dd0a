import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { environmentBlock, windowsEnvironment } from "../../../src/pty/windows/environment.ts";
import { fc, stringOf } from "../../helpers/arbitraries.ts";

/** Reads a UTF-16 block back into entries. */
function parseBlock(block: Uint8Array): [string, string][] {
  const text = String.fromCharCode(
    ...new Uint16Array(block.buffer, block.byteOffset, block.byteLength >> 1),
  );
  if (!text.endsWith("\0\0")) throw new Error("block does not end with two NULs");
  return text.slice(0, -2).split("\0").filter(Boolean).map((entry) => {
    const equals = entry.indexOf("=", 1);
    return [entry.slice(0, equals), entry.slice(equals + 1)];
  });
}

Deno.test("environment blocks: unique ignoring case, last one wins, sorted by upper-cased name", () => {
  // Names hold no "=", except a leading one (the per-drive directories, "=C:").
  const name = fc.tuple(
    fc.constantFrom("", "", "", "", "", "", "", "", "", "="),
    stringOf(["a", "A", "b", "B", "_", "1", "ü", "Ü", "中", ":"], 4, 1),
  ).map(([prefix, rest]) => prefix + rest);
  const value = stringOf(["x", " ", "=", "中", "😀", ""], 5);
  const entriesOf = fc.array(fc.tuple(name, value), { maxLength: 12 });
  fc.assert(
    fc.property(entriesOf, (pairs) => {
      const env: Record<string, string> = {};
      for (const [name, value] of pairs) env[name] = value;
      const entries = parseBlock(environmentBlock(env));
      assertEquals(entries, windowsEnvironment(env));
      const uppers = entries.map(([name]) => name.toUpperCase());
      assertEquals(new Set(uppers).size, uppers.length);
      assertEquals(uppers, [...uppers].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      for (const [name, value] of entries) {
        // Each kept entry is the last of the object's entries with that name, ignoring case.
        assertEquals(
          Object.entries(env).findLast(([n]) => n.toUpperCase() === name.toUpperCase()),
          [
            name,
            value,
          ],
        );
      }
    }),
    { numRuns: 300 },
  );
  assertEquals(parseBlock(environmentBlock({})), []);
});
