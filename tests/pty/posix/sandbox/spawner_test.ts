/**
 * Sandboxed children at the platform layer (Linux: src/pty/posix/sandbox/): a PTY stays a PTY
 * (its controlling terminal, job control, resize, its tree killed), pipes work, writes land only
 * in the workspace, each child is a sandbox of its own (one cannot signal another), a sandbox
 * that cannot be made is refused with no process started, and the test's own process (standing
 * for the server) is never confined.
 */
import { deepStrictEqual as assertEquals, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { type SandboxSpec, spawn, SpawnError } from "../../../../src/pty/mod.ts";
import { getpgrp, landlockAbi, PR, prctl } from "../../../../src/pty/posix/sandbox/linux_calls.ts";
import { createRuleset, directoryView } from "../../../../src/pty/posix/sandbox/landlock.ts";
import { landlockPlan } from "../../../../src/pty/posix/sandbox/landlock_plan.ts";
import { hostArch, seccompFilter } from "../../../../src/pty/posix/sandbox/seccomp.ts";
import { spawnConfined } from "../../../../src/pty/posix/sandbox/spawner.ts";
import { libc } from "../../../../src/pty/posix/libc.ts";
import { eventually, processesWith, start, uniqueMarker } from "../../../helpers/process.ts";

const usable = Deno.build.os === "linux" && landlockAbi() >= 3;
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", TERM: "xterm", HOME: "/nonexistent" };

function workspace(): { work: string; spec: SandboxSpec; done: () => void } {
  const work = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-sbx-" }));
  return {
    work,
    spec: { mode: "workspace-write", writable: [work], hidden: [], network: { kind: "off" } },
    done: () => Deno.removeSync(work, { recursive: true }),
  };
}

Deno.test({
  name: "sandbox: a terminal keeps its controlling tty, job control, resize; its tree dies with it",
  ignore: !usable,
  async fn() {
    const { work, spec, done } = workspace();
    const marker = uniqueMarker();
    try {
      const shell = await start("/bin/bash", ["--norc", "--noprofile", "-i"], {
        cwd: work,
        env: { ...ENV, PS1: "$ " },
        sandbox: spec,
      });
      const type = (line: string) => shell.child.write(new TextEncoder().encode(line + "\r"));
      await type("tty; echo made > inside; echo bad > /etc/winterm-sbx 2>/dev/null; echo rc=$?");
      await shell.waitFor(/\/dev\/pts\/\d+\r?\n/);
      await shell.waitFor("rc=1");
      assertEquals(Deno.readTextFileSync(join(work, "inside")), "made\n");
      await type(`sleep ${marker}1 & jobs; echo jobs-listed`);
      await shell.waitFor(/\[1\]\+\s+Running\s+sleep/);
      shell.child.resize(123, 45);
      await type("stty size");
      await shell.waitFor("45 123");
      ok(await eventually(() => processesWith(`sleep ${marker}1`).length === 1));
      shell.child.kill("SIGKILL");
      await shell.exited;
      ok(await eventually(() => processesWith(`sleep ${marker}1`).length === 0));
      // The server is as it was.
      assertEquals(prctl(PR.GET_SECCOMP).result, 0);
      assertEquals(prctl(PR.GET_NO_NEW_PRIVS).result, 0);
    } finally {
      done();
    }
  },
});

Deno.test({
  name: "sandbox: pipes work (/dev/stderr too); each child is its own sandbox",
  ignore: !usable,
  async fn() {
    const { work, spec, done } = workspace();
    try {
      const sleeper = await start("/bin/sleep", ["30"], {
        cwd: work,
        env: ENV,
        mode: "pipe",
        sandbox: spec,
      });
      const other = await start("/bin/sh", [
        "-c",
        `echo out; echo err > /dev/stderr; kill -0 ${sleeper.child.pid} && echo reached || echo refused`,
      ], { cwd: work, env: ENV, mode: "pipe", sandbox: spec });
      assertEquals(await other.exited, { exitCode: 0, signal: null });
      assertEquals(other.stdout(), "out\nrefused\n");
      match(other.stderr(), /^err\n.*Operation not permitted/s);
      sleeper.child.kill("SIGKILL");
      await sleeper.exited;
    } finally {
      done();
    }
  },
});

Deno.test({
  name: "sandbox: one that cannot be made is refused, and nothing starts",
  ignore: !usable,
  async fn() {
    const { work, done } = workspace();
    const marker = uniqueMarker();
    try {
      await rejects(
        spawn({
          file: "/bin/sleep",
          args: [`${marker}2`],
          cwd: work,
          env: ENV,
          sandbox: {
            mode: "workspace-write",
            writable: [join(work, "secret", "inner")],
            hidden: [join(work, "secret")],
            network: { kind: "off" },
          },
        }),
        (error: Error) =>
          error instanceof SpawnError && error.code === "ESANDBOX" &&
          /cannot be applied: the writable path .* lies in the hidden path/.test(error.message),
      );
      assertEquals(processesWith(`sleep ${marker}2`), []);
    } finally {
      done();
    }
  },
});

Deno.test({
  name:
    "sandbox: on a kernel without Landlock's signal scoping (ABI < 6) the filter keeps signals off the server",
  ignore: !usable,
  async fn() {
    const { work, done } = workspace();
    try {
      // The ruleset of an ABI 5 kernel (no scoping), and the filter that stands in for it.
      const plan = landlockPlan({
        abi: 5,
        mode: "workspace-write",
        writable: [work],
        hidden: [],
        network: { kind: "off" },
      }, directoryView);
      const ruleset = createRuleset(plan, 5);
      const out = join(work, "out");
      const other = await start("/bin/sleep", ["30"], { cwd: work, env: ENV, mode: "pipe" });
      try {
        const script = `exec > ${out} 2>&1; kill -STOP ${Deno.pid} || echo server-refused; ` +
          `kill -0 -${getpgrp()} || echo group-refused; kill -0 -1 || echo all-refused; ` +
          `kill -0 ${other.child.pid} && echo other-reached`;
        const pid = await spawnConfined({
          ruleset,
          filter: seccompFilter({
            arch: hostArch()!,
            network: "off",
            protect: { pid: Deno.pid, pgid: getpgrp() },
          }),
          spawn: {
            path: "/bin/sh",
            argv: ["sh", "-c", script],
            env: ["PATH=/usr/bin:/bin"],
            stdio: { parentFds: [], childFds: [] },
            cwd: work,
          },
        });
        // The file is made by the confined shell: not there yet is no failure.
        const written = () => {
          try {
            return Deno.readTextFileSync(out);
          } catch {
            return "";
          }
        };
        ok(await eventually(() => written().includes("other-reached")), written());
        assertEquals(
          Deno.readTextFileSync(out).split("\n").filter((line) => /-(refused|reached)$/.test(line)),
          ["server-refused", "group-refused", "all-refused", "other-reached"],
        );
        ok(pid > 0);
      } finally {
        libc().close(ruleset);
        other.child.kill("SIGKILL");
        await other.exited;
      }
    } finally {
      done();
    }
  },
});
