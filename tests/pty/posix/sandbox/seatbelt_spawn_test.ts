/**
 * The macOS sandbox for real (sandbox-exec with the generated profile; runs in the macOS CI
 * job): writes land only in the workspace, a hidden file cannot be read, the network is off,
 * and a terminal is still a terminal.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { SandboxSpec } from "../../../../src/pty/mod.ts";
import { exists, start } from "../../../helpers/process.ts";

const darwin = Deno.build.os === "darwin";
const ENV = { PATH: "/usr/bin:/bin", TERM: "xterm" };

Deno.test({
  name: "seatbelt: workspace writes only, hidden paths unread, no network, a real terminal",
  ignore: !darwin,
  async fn() {
    const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-seatbelt-" }));
    const work = join(base, "work"), outside = join(base, "outside"), secret = join(base, "secret");
    for (const dir of [work, outside, secret]) Deno.mkdirSync(dir);
    Deno.writeTextFileSync(join(secret, "key"), "SECRET");
    const spec: SandboxSpec = {
      mode: "workspace-write",
      writable: [work],
      hidden: [secret],
      network: { kind: "off" },
    };
    try {
      const piped = await start("/bin/sh", [
        "-c",
        `echo made > inside; echo bad > ${outside}/x; cat ${secret}/key; ` +
        "/usr/bin/nc -z -w 2 1.1.1.1 443 && echo connected; echo done",
      ], { cwd: work, env: ENV, mode: "pipe", sandbox: spec });
      await piped.exited;
      assertEquals(Deno.readTextFileSync(join(work, "inside")), "made\n");
      ok(!exists(join(outside, "x")), "wrote outside the workspace");
      ok(!piped.stdout().includes("SECRET") && !piped.stdout().includes("connected"));
      match(piped.stdout(), /done/);
      const terminal = await start("/bin/sh", ["-c", "tty; echo tty-done"], {
        cwd: work,
        env: ENV,
        sandbox: spec,
      });
      await terminal.waitFor("tty-done");
      match(terminal.stdout(), /\/dev\/ttys\d+/);
      await terminal.exited;
    } finally {
      Deno.removeSync(base, { recursive: true });
    }
  },
});
