/**
 * The web view's built files are what their sources give: a change to the page or to a bundled
 * package's version without `deno task build:web` fails here.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fileURLToPath } from "node:url";

Deno.test("the generated web assets are up to date with their sources", async () => {
  const script = fileURLToPath(new URL("../../scripts/build_web.ts", import.meta.url));
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", script, "--check"],
    stdout: "null",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
});
