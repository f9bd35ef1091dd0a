import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { environmentBlock, windowsEnvironment } from "../../src/pty/windows/environment.ts";
import { forAll } from "../helpers/random.ts";

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
  forAll(300, (random) => {
    const env: Record<string, string> = {};
    for (let i = 0; i < random.int(0, 12); i++) {
      // Names hold no "=", except a leading one (the per-drive directories, "=C:").
      const name = (random.chance(0.1) ? "=" : "") +
        random.string(["a", "A", "b", "B", "_", "1", "ü", "Ü", "中", ":"], random.int(1, 4));
      const value = random.string(["x", " ", "=", "中", "😀", ""], random.int(0, 5));
      env[name] = value;
    }
    const entries = parseBlock(environmentBlock(env));
    assertEquals(entries, windowsEnvironment(env));
    const uppers = entries.map(([name]) => name.toUpperCase());
    assertEquals(new Set(uppers).size, uppers.length);
    assertEquals(uppers, [...uppers].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const [name, value] of entries) {
      // Each kept entry is the last of the object's entries with that name, ignoring case.
      assertEquals(Object.entries(env).findLast(([n]) => n.toUpperCase() === name.toUpperCase()), [
        name,
        value,
      ]);
    }
  });
  assertEquals(parseBlock(environmentBlock({})), []);
});
