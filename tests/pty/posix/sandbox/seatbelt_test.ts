/**
 * The macOS sandbox's profile (src/pty/posix/sandbox/seatbelt.ts): its text for each mode and
 * network setting, and that no path ever enters it (paths travel as -D parameters, so a path
 * holding quotes or parentheses cannot change what the profile says).
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { seatbeltCommand, seatbeltProfile } from "../../../../src/pty/posix/sandbox/seatbelt.ts";
import type { SandboxSpec } from "../../../../src/pty/types.ts";

const SPEC: SandboxSpec = {
  mode: "workspace-write",
  writable: ["/Users/me/work"],
  hidden: ["/Users/me/.ssh", "/Users/me/.aws"],
  readable: ["/Users/me/Library/Application Support/winterm-mcp/shell-integration"],
  scratch: "/private/var/folders/xy/T/winterm-sandbox/1",
  network: { kind: "off" },
};

Deno.test("seatbelt: the profile of workspace-write with the network off", () => {
  const { profile, parameters } = seatbeltProfile(SPEC, "/dev/ttys004");
  assertEquals(parameters, {
    TERMINAL: "/dev/ttys004",
    WRITABLE_0: "/Users/me/work",
    WRITABLE_1: "/private/var/folders/xy/T/winterm-sandbox/1",
    HIDDEN_0: "/Users/me/.ssh",
    HIDDEN_1: "/Users/me/.aws",
    READABLE_0: "/Users/me/Library/Application Support/winterm-mcp/shell-integration",
  });
  const lines = profile.split("\n").filter((line) => line && !line.startsWith(";"));
  assertEquals(lines.slice(0, 2), ["(version 1)", "(deny default)"]);
  for (
    const rule of [
      '(allow file-read* file-write* file-ioctl (literal (param "TERMINAL")))',
      '(allow file-write* (subpath (param "WRITABLE_0")) (subpath (param "WRITABLE_1")))',
      "(allow network* (remote unix-socket) (local unix-socket))",
      '(deny file-read* file-write* (subpath (param "HIDDEN_0")) (subpath (param "HIDDEN_1")))',
      '(allow file-read* (subpath (param "READABLE_0")))',
      "(allow signal (target same-sandbox))",
      '(deny file-read* file-write* (regex #"^/dev/r?disk"))',
    ]
  ) ok(lines.includes(rule), rule);
  // The hidden paths come after the reads they carve out of (the later rule wins).
  ok(lines.indexOf("(allow file-read*)") < lines.findIndex((line) => line.includes("HIDDEN_0")));
  ok(!profile.includes("/Users/"), "a path entered the profile");
  ok(!/network-outbound|system-socket/.test(profile), "the network is off");
});

Deno.test("seatbelt: read-only writes nowhere; the proxy is the one TCP destination; on is all", () => {
  const readOnly = seatbeltProfile({ ...SPEC, mode: "read-only" }).profile;
  ok(!readOnly.includes("WRITABLE"));
  ok(!readOnly.includes("TERMINAL"));
  const proxy = seatbeltProfile({ ...SPEC, network: { kind: "proxy", port: 41234 } }).profile;
  ok(proxy.includes('(allow network-outbound (remote ip "localhost:41234"))'));
  const on = seatbeltProfile({ ...SPEC, network: { kind: "on" } }).profile;
  ok(on.includes("(allow network* system-socket)"));
});

Deno.test("seatbelt: the command passes paths as parameters, whatever they hold", () => {
  const odd = '/Users/me/work ") (allow default) ("';
  const command = seatbeltCommand({ ...SPEC, writable: [odd] });
  assertEquals(command.slice(0, 2), ["/usr/bin/sandbox-exec", "-p"]);
  ok(!command[2].includes("allow default"));
  ok(command.includes(`WRITABLE_0=${odd}`));
  assertEquals(command.at(-1), "--");
});
