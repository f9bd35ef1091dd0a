/**
 * A Worker (its own OS thread) that confines itself as asked and reports what it can still do,
 * for tests of the Linux calls that confine a thread (src/pty/posix/sandbox/linux_calls.ts):
 * whatever happens here, the test's own thread must stay as it was.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { C, cString, errno, libc } from "../../src/pty/posix/libc.ts";
import { dropCapabilities } from "../../src/pty/posix/sandbox/capabilities.ts";
import {
  capget,
  gettid,
  installSeccompFilter,
  LANDLOCK_RULE_PATH_BENEATH,
  landlockAddRule,
  landlockCreateRuleset,
  landlockRestrictSelf,
  PR,
  prctl,
} from "../../src/pty/posix/sandbox/linux_calls.ts";
import { hostArch, seccompFilter } from "../../src/pty/posix/sandbox/seccomp.ts";

/** What to do. */
export type Scenario =
  | { kind: "landlock"; allowed: string; files: string[] }
  | { kind: "no_new_privs" }
  | { kind: "capabilities" }
  | { kind: "seccomp" };

const READ_FILE = 1 << 2;

/** Whether `path` can be opened for reading, through libc (as a child would). */
function readable(path: string): boolean {
  const fd = libc().open(cString(path), 0 /* O_RDONLY */);
  if (fd >= 0) libc().close(fd);
  return fd >= 0;
}

function run(scenario: Scenario): unknown {
  const tid = gettid();
  switch (scenario.kind) {
    case "landlock": {
      const attr = new Uint8Array(8);
      new DataView(attr.buffer).setBigUint64(0, BigInt(READ_FILE), true);
      const ruleset = landlockCreateRuleset(attr, 8, 0).result;
      const dir = libc().open(cString(scenario.allowed), C.O_PATH | C.O_CLOEXEC);
      const rule = new Uint8Array(12);
      new DataView(rule.buffer).setBigUint64(0, BigInt(READ_FILE), true);
      new DataView(rule.buffer).setInt32(8, dir, true);
      const added = landlockAddRule(ruleset, LANDLOCK_RULE_PATH_BENEATH, rule);
      prctl(PR.SET_NO_NEW_PRIVS, 1n);
      const restricted = landlockRestrictSelf(ruleset);
      libc().close(dir);
      libc().close(ruleset);
      return {
        tid,
        added: added.result,
        restricted: restricted.result,
        readable: scenario.files.map(readable),
        errno: errno(),
      };
    }
    case "no_new_privs":
      return {
        tid,
        set: prctl(PR.SET_NO_NEW_PRIVS, 1n).result,
        get: prctl(PR.GET_NO_NEW_PRIVS).result,
      };
    case "capabilities":
      return { tid, failure: dropCapabilities() ?? null, sets: capget() };
    case "seccomp": {
      prctl(PR.SET_NO_NEW_PRIVS, 1n);
      const installed = installSeccompFilter(seccompFilter({ arch: hostArch()!, network: "off" }));
      const socket = Deno.dlopen("libc.so.6", {
        socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
      }).symbols.socket;
      const inet = socket(2, /* AF_INET */ 1, 0);
      const inetErrno = errno();
      const unix = socket(1, /* AF_UNIX */ 1, 0);
      if (unix >= 0) libc().close(unix);
      return {
        tid,
        installed: installed.result,
        mode: prctl(PR.GET_SECCOMP).result,
        inet,
        inetErrno,
        unix: unix >= 0,
      };
    }
  }
}

self.onmessage = (event: MessageEvent<Scenario>) => {
  self.postMessage(run(event.data));
  self.close();
};
