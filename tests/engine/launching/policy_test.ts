import { throws } from "node:assert/strict";
import { Policy, PolicyError } from "../../../src/engine/launching/policy.ts";

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

Deno.test("an env.protect entry holding '=' is refused: no variable's name can, so it would never match", () => {
  throws(
    () => new Policy("policy.json", { env: { protect: ["PATH=/usr/bin"] } }),
    (error: Error) =>
      error instanceof PolicyError &&
      error.message === `policy.json: 'env.protect' entry "PATH=/usr/bin" holds '=', ` +
          "which no variable's name can: it would never match",
  );
});
