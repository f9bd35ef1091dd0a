/**
 * The engine's side of the sandbox: allowlist entries (src/engine/launching/hosts.ts), the
 * operator's settings combined strictest-first, and a call's sandbox, which can only tighten
 * them (src/engine/launching/sandbox.ts): each refusal names the field and the rule.
 */
import { deepStrictEqual as assertEquals, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  allows,
  covers,
  type HostRule,
  ipv6Words,
  isForbiddenAddress,
  parseHostRule,
} from "../../../src/engine/launching/hosts.ts";
import {
  DEFAULT_HIDDEN,
  SandboxConfigError,
  Sandboxes,
  sandboxSettings,
} from "../../../src/engine/launching/sandbox.ts";
import { EngineError } from "../../../src/engine/errors.ts";
import { sandboxHint } from "../../../src/engine/sandbox_info.ts";

const rule = (text: string) => parseHostRule(text) as HostRule;

Deno.test("hosts: entries parse, or say what is wrong", () => {
  assertEquals(rule("API.Example.com."), {
    text: "API.Example.com.",
    host: "api.example.com",
    wildcard: false,
  });
  assertEquals(rule("*.example.org:443"), {
    text: "*.example.org:443",
    host: "example.org",
    wildcard: true,
    port: 443,
  });
  assertEquals(rule("127.0.0.1:8080").literal, "ipv4");
  assertEquals(rule("[::1]:8080").port, 8080);
  assertEquals(rule("::1").literal, "ipv6");
  for (
    const bad of ["*", "*.com", "exa mple.com", "a..b", "-a.com", "a.com:0", "a.com:70000", "[zz]"]
  ) {
    ok(typeof parseHostRule(bad) === "string", bad);
  }
});

Deno.test("hosts: matching, covering, and addresses that names may not resolve to", () => {
  const list = [
    rule("api.example.com"),
    rule("*.example.org"),
    rule("10.0.0.5:8080"),
    rule("[::1]"),
  ];
  ok(allows(list, "api.example.com", 443));
  ok(!allows(list, "example.com", 443));
  ok(allows(list, "a.b.example.org", 80));
  ok(!allows(list, "example.org", 80)); // the wildcard is for names below it
  ok(!allows(list, "evilexample.org", 80));
  ok(allows(list, "10.0.0.5", 8080) && !allows(list, "10.0.0.5", 8081));
  ok(allows(list, "0:0:0:0:0:0:0:1", 1));
  ok(covers(rule("*.example.org"), rule("*.a.example.org")));
  ok(covers(rule("*.example.org"), rule("api.example.org:443")));
  ok(!covers(rule("api.example.org"), rule("*.example.org")));
  ok(!covers(rule("api.example.org:443"), rule("api.example.org")));
  assertEquals(ipv6Words("::ffff:127.0.0.1"), [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
  for (
    const address of [
      "127.0.0.1",
      "127.8.9.10",
      "0.0.0.0",
      "169.254.169.254",
      "100.100.100.200",
      "::1",
      "::",
      "fe80::1",
      "::ffff:127.0.0.1",
      "fd00:ec2::254",
    ]
  ) ok(isForbiddenAddress(address), address);
  for (const address of ["93.184.216.34", "10.0.0.5", "2606:4700::1111", "::ffff:8.8.8.8"]) {
    ok(!isForbiddenAddress(address), address);
  }
});

Deno.test("settings: the stricter of the flags and the policy file applies; bad entries stop the start", () => {
  const home = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    Deno.mkdirSync(join(home, "cache"));
    const settings = sandboxSettings(
      { mode: "workspace-write", network: { allow: ["*.example.org"] }, writable: ["~/cache"] },
      { mode: "read-only", network: "on", hidden: ["~/secret"] },
      { home, auditPath: "/var/log/winterm.jsonl" },
    );
    assertEquals(settings.mode, "read-only");
    assertEquals(settings.network, "allow");
    assertEquals(settings.allowed, ["*.example.org"]);
    assertEquals(settings.writable, [join(home, "cache")]);
    assertEquals(settings.hidden, [join(home, "secret"), "/var/log/winterm.jsonl"]);
    // The server's own files are hidden whatever the list says.
    const own = sandboxSettings({ hidden: [] }, undefined, {
      home,
      stateDir: join(home, "state"),
      policyPath: join(home, "policy.json"),
    });
    assertEquals(own.hidden, [join(home, "state"), join(home, "policy.json")]);
    const defaults = sandboxSettings({}, undefined, { home });
    assertEquals([defaults.mode, defaults.network], ["off", "off"]);
    assertEquals(defaults.hidden.length, DEFAULT_HIDDEN.length);
    throws(
      () => sandboxSettings({ network: { allow: ["bad host"] } }, undefined, { home }),
      (error: Error) =>
        error instanceof SandboxConfigError && /network\.allow\[0\] 'bad host'/.test(error.message),
    );
    throws(
      () => sandboxSettings({}, { writable: ["/no/such/dir"] }, { home, policySource: "p.json" }),
      /p\.json: sandbox\.writable\[0\] '\/no\/such\/dir' does not exist/,
    );
  } finally {
    Deno.removeSync(home, { recursive: true });
  }
});

Deno.test("a call can only tighten the server's sandbox; each refusal names its field", () => {
  const cwd = Deno.realPathSync(Deno.makeTempDirSync());
  const cache = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    const sandboxes = new Sandboxes(sandboxSettings(
      {
        mode: "workspace-write",
        network: { allow: ["*.example.org", "10.0.0.5"] },
        writable: [cache],
      },
      undefined,
      {},
    ));
    const refused = (request: object, field: string, message: RegExp) =>
      throws(
        () => sandboxes.resolve(request, "sandbox", cwd),
        (error: Error) =>
          error instanceof EngineError && error.field === field && message.test(error.message),
        JSON.stringify(request),
      );
    refused({ mode: "off" }, "sandbox.mode", /'off' is looser than the server's 'workspace-write'/);
    refused({ network: "on" }, "sandbox.network", /'on' is looser than the server's 'allow'/);
    refused(
      { network: { allow: ["a.example.org", "evil.com"] } },
      "sandbox.network.allow[1]",
      /'evil\.com' is not within the server's network allowlist/,
    );
    refused({ network: { allow: ["no good"] } }, "sandbox.network.allow[0]", /is not a host/);
    refused({ writable: ["/etc"] }, "sandbox.writable[0]", /outside the working directory/);
    refused({ writable: ["missing"] }, "sandbox.writable[0]", /does not exist/);
    refused(
      { mode: "read-only", writable: [cache] },
      "sandbox.writable",
      /need mode 'workspace-write'/,
    );
    // Tighter is fine, and the server's own is the default.
    assertEquals(sandboxes.resolve(undefined, "sandbox", cwd)?.mode, "workspace-write");
    const narrowed = sandboxes.resolve(
      { network: { allow: ["api.example.org"] }, writable: [cwd] },
      "sandbox",
      cwd,
    )!;
    assertEquals(narrowed.lists.length, 2); // the server's list and the call's: both must allow
    assertEquals(narrowed.writable, [cwd]);
    assertEquals(
      sandboxes.resolve({ mode: "read-only", network: "off" }, "s", cwd)?.network,
      "off",
    );
    // No server sandbox: none unless asked; asked with no mode, workspace-write.
    const open = new Sandboxes(sandboxSettings({}, undefined, {}));
    assertEquals(open.resolve(undefined, "sandbox", cwd), undefined);
    assertEquals(open.resolve({}, "sandbox", cwd)?.mode, "workspace-write");
    assertEquals(open.resolve({ mode: "off" }, "sandbox", cwd), undefined);
    assertEquals(open.resolve({ network: { allow: ["a.org"] } }, "sandbox", cwd)?.network, "allow");
    assertEquals(open.resolve({ network: "on" }, "sandbox", cwd)?.network, "on");
    assertEquals(open.resolve({ writable: ["/tmp"] }, "sandbox", cwd)?.writable, [
      Deno.realPathSync("/tmp"),
    ]);
  } finally {
    Deno.removeSync(cwd, { recursive: true });
    Deno.removeSync(cache, { recursive: true });
  }
});

Deno.test("the hint: only for output that looks refused, or connections the proxy refused", () => {
  const info = {
    mode: "workspace-write" as const,
    network: "off" as const,
    backend: "landlock+seccomp",
    writable: ["/w"],
  };
  assertEquals(sandboxHint(info, ["all fine"]), undefined);
  assertEquals(sandboxHint(undefined, ["Permission denied"]), undefined);
  ok(sandboxHint(info, ["touch: cannot touch '/etc/x': Permission denied"])?.includes("/w"));
  ok(sandboxHint(info, ["mkdir: Read-only file system"]));
  const refused = sandboxHint({
    ...info,
    network: { allow: ["a.org"] },
    refused: [{
      host: "b.org",
      port: 443,
      reason: "b.org:443 is not in the sandbox's network allowlist",
    }],
    refusedCount: 1,
  }, ["curl: (56) CONNECT tunnel failed, response 403"]);
  ok(refused?.includes("refused 1 connection (b.org:443 is not in"), String(refused));
});

Deno.test("a workspace that holds the home directory is refused: what runs outside reads from there", async () => {
  const home = Deno.realPathSync(Deno.makeTempDirSync());
  const project = join(home, "project");
  Deno.mkdirSync(project);
  try {
    const sandboxes = new Sandboxes(sandboxSettings({}, undefined, { home }));
    for (const cwd of [home, join(home, "..")]) {
      const resolved = sandboxes.resolve({}, "sandbox", cwd)!;
      await rejects(
        sandboxes.prepare(resolved, { cwd, base: "sandbox", refused: () => {} }),
        (error: Error) =>
          error instanceof EngineError && error.field === "sandbox" &&
          /holds the home directory/.test(error.message),
      );
    }
    // A project in it, or read-only anywhere, is fine.
    const inProject = await sandboxes.prepare(sandboxes.resolve({}, "sandbox", project)!, {
      cwd: project,
      base: "sandbox",
      refused: () => {},
    });
    inProject.release();
    const readOnly = await sandboxes.prepare(
      sandboxes.resolve({ mode: "read-only" }, "sandbox", home)!,
      { cwd: home, base: "sandbox", refused: () => {} },
    );
    readOnly.release();
    await sandboxes.close();
  } finally {
    Deno.removeSync(home, { recursive: true });
  }
});
