/**
 * The test command's set-up (scripts/test.ts): what it does about missing programs, as root,
 * with passwordless sudo, without either, and without apt-get. (That it installs them for real
 * was proven by removing zsh, vim and chromium from a machine and running `deno task test`.)
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { onPath, plan } from "../../scripts/test.ts";

Deno.test("test set-up: installs as root, through sudo, or stops naming what to install", () => {
  const debian = { root: false, sudo: false, apt: true };
  assertEquals(plan([], debian), { kind: "ready" });
  assertEquals(plan(["zsh", "chromium"], { ...debian, root: true }), {
    kind: "install",
    prefix: [],
  });
  assertEquals(plan(["zsh"], { ...debian, sudo: true }), {
    kind: "install",
    prefix: ["sudo", "-n"],
  });
  const stop = plan(["zsh", "vim", "chromium"], debian);
  ok(stop.kind === "stop");
  match(stop.message, /sudo apt-get install zsh vim chromium/);
  const elsewhere = plan(["vim"], { root: true, sudo: false, apt: false });
  ok(elsewhere.kind === "stop");
  match(elsewhere.message, /need vim/);
});

Deno.test({
  name: "test set-up: programs are looked for on PATH",
  ignore: Deno.build.os === "windows",
  fn() {
    ok(onPath("sh"));
    ok(!onPath("no-such-program-winterm"));
  },
});
