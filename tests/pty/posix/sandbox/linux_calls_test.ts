/**
 * The Linux calls that confine a thread (src/pty/posix/sandbox/linux_calls.ts), each wrapper
 * on its own: Landlock's three raw system calls (each declared with its exact argument count),
 * no_new_privs, capabilities, seccomp. What confines is done in a Worker (tests/helpers/
 * confine_worker.ts), and the test's own thread is checked to be unaffected afterwards: that is
 * what the sandbox's design rests on.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { C, cString, libc } from "../../../../src/pty/posix/libc.ts";
import {
  capget,
  gettid,
  LANDLOCK_CREATE_RULESET_VERSION,
  LANDLOCK_RULE_PATH_BENEATH,
  landlockAbi,
  landlockAddRule,
  landlockCreateRuleset,
  landlockRestrictSelf,
  PR,
  prctl,
} from "../../../../src/pty/posix/sandbox/linux_calls.ts";
import type { Scenario } from "../../../helpers/confine_worker.ts";

const linux = Deno.build.os === "linux";
const landlock = linux && landlockAbi() > 0;
const EBADF = 9, EINVAL = 22, EPERM = 1;

/** Runs a scenario in a fresh Worker; resolves to what it reports. */
function inWorker<T>(scenario: Scenario): Promise<T & { tid: number }> {
  const worker = new Worker(new URL("../../../helpers/confine_worker.ts", import.meta.url), {
    type: "module",
  });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => {
      resolve(event.data);
      worker.terminate();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(event.message));
      worker.terminate();
    };
    worker.postMessage(scenario);
  });
}

/** A ruleset handling file reads. */
function readRuleset(): number {
  const attr = new Uint8Array(8);
  new DataView(attr.buffer).setBigUint64(0, 1n << 2n, true);
  return landlockCreateRuleset(attr, 8, 0).result;
}

Deno.test({
  name: "landlock_create_ruleset: the ABI version, a ruleset, and its errors",
  ignore: !landlock,
  fn() {
    const version = landlockCreateRuleset(null, 0, LANDLOCK_CREATE_RULESET_VERSION);
    ok(version.result >= 1, JSON.stringify(version));
    assertEquals(landlockAbi(), version.result);
    const fd = readRuleset();
    ok(fd >= 0);
    libc().close(fd);
    assertEquals(landlockCreateRuleset(new Uint8Array(8), 8, 0xff00).errno, EINVAL);
    // Nothing handled at all: an empty ruleset is refused.
    assertEquals(landlockCreateRuleset(new Uint8Array(8), 8, 0).errno, 42 /* ENOMSG */);
  },
});

Deno.test({
  name: "landlock_add_rule: a path rule is added; a bad ruleset or a right not handled is refused",
  ignore: !landlock,
  fn() {
    const ruleset = readRuleset();
    const dir = libc().open(cString("/tmp"), C.O_PATH | C.O_CLOEXEC);
    const rule = new Uint8Array(12);
    const view = new DataView(rule.buffer);
    view.setBigUint64(0, 1n << 2n, true);
    view.setInt32(8, dir, true);
    try {
      assertEquals(landlockAddRule(ruleset, LANDLOCK_RULE_PATH_BENEATH, rule), {
        result: 0,
        errno: 0,
      });
      assertEquals(landlockAddRule(-1, LANDLOCK_RULE_PATH_BENEATH, rule).errno, EBADF);
      view.setBigUint64(0, 1n << 1n, true); // WRITE_FILE: not handled by this ruleset
      assertEquals(landlockAddRule(ruleset, LANDLOCK_RULE_PATH_BENEATH, rule).errno, EINVAL);
    } finally {
      libc().close(dir);
      libc().close(ruleset);
    }
  },
});

Deno.test({
  name: "landlock_restrict_self: confines the calling thread only (a Worker), not the test's",
  ignore: !landlock,
  async fn() {
    const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-confine-" }));
    const inside = join(dir, "inside"), outside = "/etc/hostname";
    Deno.writeTextFileSync(inside, "x");
    try {
      const report = await inWorker<{ added: number; restricted: number; readable: boolean[] }>(
        { kind: "landlock", allowed: dir, files: [inside, outside] },
      );
      ok(report.tid !== gettid(), "the worker has a thread of its own");
      assertEquals([report.added, report.restricted, report.readable], [0, 0, [true, false]]);
      // This thread reads as before.
      const fd = libc().open(cString(outside), 0);
      ok(fd >= 0, "the test's thread was confined too");
      libc().close(fd);
      // A bad ruleset: refused, without effect.
      const failed = landlockRestrictSelf(-1);
      ok(failed.result < 0 && [EBADF, EPERM].includes(failed.errno), JSON.stringify(failed));
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "prctl(PR_SET_NO_NEW_PRIVS): set on the worker's thread only",
  ignore: !linux,
  async fn() {
    const before = prctl(PR.GET_NO_NEW_PRIVS).result;
    const report = await inWorker<{ set: number; get: number }>({ kind: "no_new_privs" });
    assertEquals([report.set, report.get], [0, 1]);
    assertEquals(prctl(PR.GET_NO_NEW_PRIVS).result, before);
  },
});

Deno.test({
  name: "capget/capset and the bounding set: every capability dropped on the worker's thread only",
  ignore: !linux,
  async fn() {
    const before = capget();
    const report = await inWorker<{ failure: string | null; sets: unknown }>({
      kind: "capabilities",
    });
    assertEquals(report, {
      tid: report.tid,
      failure: null,
      sets: { effective: 0n, permitted: 0n, inheritable: 0n },
    });
    assertEquals(capget(), before);
    if (Deno.uid() === 0) {
      ok((before as { effective: bigint }).effective !== 0n);
      assertEquals(prctl(PR.CAPBSET_READ, 21n /* CAP_SYS_ADMIN */).result, 1);
    }
  },
});

Deno.test({
  name: "prctl(PR_SET_SECCOMP): the filter holds on the worker's thread only (AF_INET refused)",
  ignore: !linux,
  async fn() {
    const report = await inWorker<
      { installed: number; mode: number; inet: number; inetErrno: number; unix: boolean }
    >({ kind: "seccomp" });
    assertEquals(
      [report.installed, report.mode, report.inet, report.inetErrno, report.unix],
      [0, 2, -1, EPERM, true],
    );
    assertEquals(prctl(PR.GET_SECCOMP).result, 0);
  },
});
