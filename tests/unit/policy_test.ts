import { throws } from "node:assert/strict";
import { Policy, PolicyError } from "../../src/engine/launching/policy.ts";

Deno.test("a policy entry holding a NUL byte is refused, naming the list: it could never match", () => {
  for (
    const [file, list] of [
      [{ programs: { deny: ["sudo\0"] } }, "programs.deny"],
      [{ programs: { allow: ["git", "\0"] } }, "programs.allow"],
      [{ cwd: { allow: ["/tmp\0/x"] } }, "cwd.allow"],
      [{ env: { protect: ["\0PATH"] } }, "env.protect"],
    ] as const
  ) {
    throws(
      () => new Policy("policy.json", file),
      (error: Error) =>
        error instanceof PolicyError &&
        error.message.startsWith(`policy.json: '${list}' entry `) &&
        error.message.includes("holds a NUL byte"),
    );
  }
});
