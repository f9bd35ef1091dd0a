/**
 * Tests follow the house (docs/architecture.md, "Where tests go"): a test of a module of
 * src/<folder> sits in tests/<folder>, so every folder of module tests mirrors a folder of src/.
 * The folders that test no one module (e2e journeys, the Windows suite, the house's rules,
 * scripts, helpers, conformance) are the only others, and nothing sits in tests/unit again.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
/** Folders of tests/ that mirror no folder of src/, and why they may not. */
const OWN_FOLDERS = ["e2e", "windows", "house", "scripts", "helpers", "conformance"];

/** Every folder under `dir` (relative to it) that holds a `*_test.ts`. */
function testFolders(dir: URL, prefix = ""): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.isDirectory) {
      found.push(...testFolders(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    } else if (entry.name.endsWith("_test.ts") && !found.includes(prefix)) found.push(prefix);
  }
  return found;
}

Deno.test("every folder of module tests mirrors a folder of src/", () => {
  const astray = testFolders(new URL("tests/", ROOT)).filter((folder) => {
    if (OWN_FOLDERS.includes(folder.split("/")[0])) return false;
    try {
      return !Deno.statSync(new URL(`src/${folder}`, ROOT)).isDirectory;
    } catch {
      return true;
    }
  });
  assertEquals(astray, [], "test folders with no src/ folder of that name");
});
