/**
 * Every test of the Windows suite has a time limit (it runs under Wine here, natively in CI,
 * where a hang would hold the job): registered through limitedTest or serverTest, never a bare
 * Deno.test. Checked here, on every platform, so that a new test cannot forget it.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fileURLToPath } from "node:url";

Deno.test("every Windows test is registered with a time limit", () => {
  const dir = fileURLToPath(new URL("../windows/", import.meta.url));
  const bare: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.name.endsWith(".ts")) continue;
    const source = Deno.readTextFileSync(dir + entry.name);
    if (/\bDeno\.test\s*\(/.test(source)) bare.push(entry.name);
  }
  assertEquals(bare, []);
});
