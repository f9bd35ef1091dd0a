/**
 * Runs the Windows suite (tests/windows/): natively on Windows; elsewhere under Wine through
 * the test bed at ../shared/wine-testbed/run when it is present. Extra arguments go to
 * `deno test` (e.g. --junit-path=.ci/reports/windows.xml, relative to the project).
 *
 * @module
 */
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const testArgs = ["test", "--allow-all", ...Deno.args, "tests/windows/"];

async function run(command: string, args: string[]): Promise<number> {
  const child = new Deno.Command(command, { args, cwd: root, stdin: "null" }).spawn();
  return (await child.status).code;
}

if (Deno.build.os === "windows") {
  Deno.exit(await run(Deno.execPath(), testArgs));
}
const testbed = fileURLToPath(new URL("../../shared/wine-testbed/run", import.meta.url));
try {
  Deno.statSync(testbed);
} catch {
  console.error(
    `No Windows here and no test bed at ${testbed}: the Windows suite cannot run on this machine.`,
  );
  Deno.exit(1);
}
// Under Wine, npm packages resolve from deno.exe's global cache (a node_modules folder on the
// mounted Linux directory does not work there).
Deno.exit(await run(testbed, [testArgs[0], "--node-modules-dir=none", ...testArgs.slice(1)]));
