/**
 * Where the sandbox cannot be applied, it is refused with the reason, never skipped: Windows
 * refuses a sandboxed start before looking at anything (src/pty/windows/process.ts), and the
 * platform layer says so for any OS it has no backend for.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import { SpawnError } from "../../../src/pty/types.ts";
import { prepareWindows, WINDOWS_SANDBOX_REFUSAL } from "../../../src/pty/windows/process.ts";

Deno.test("Windows: a sandboxed start is refused, saying what is planned", () => {
  throws(
    () =>
      prepareWindows({
        file: "cmd.exe",
        args: [],
        cwd: "C:\\",
        env: {},
        sandbox: { mode: "read-only", writable: [], hidden: [], network: { kind: "off" } },
      }),
    (error: Error) =>
      error instanceof SpawnError && error.code === "ESANDBOX" &&
      error.message === WINDOWS_SANDBOX_REFUSAL,
  );
  ok(WINDOWS_SANDBOX_REFUSAL.includes("write-restricted token"));
  assertEquals(WINDOWS_SANDBOX_REFUSAL.startsWith("the sandbox cannot be applied"), true);
});
