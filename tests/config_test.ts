/**
 * Settings with rules of their own: where the state directory is, how long a write to a program
 * may wait, how long an HTTP answer may make no progress and how much may wait to be sent.
 * Parsing is pure: arguments and environment are passed in.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { ConfigError, parseConfig, USAGE } from "../src/config.ts";

const os = Deno.build.os;

Deno.test("the state directory: flag, variable, XDG, home; none without a home", () => {
  const dir = (args: string[], env: Record<string, string>) =>
    parseConfig(args, env).config.stateDir;
  if (os === "windows") {
    assertEquals(dir([], { HOME: "C:\\Users\\me" }), undefined);
  } else if (os === "darwin") {
    assertEquals(
      dir([], { HOME: "/Users/me" }),
      "/Users/me/Library/Application Support/winterm-mcp",
    );
  } else {
    assertEquals(dir([], { HOME: "/home/me" }), "/home/me/.local/state/winterm-mcp");
    assertEquals(dir([], { HOME: "/home/me", XDG_STATE_HOME: "/xdg" }), "/xdg/winterm-mcp");
    // A relative XDG_STATE_HOME is invalid (XDG Base Directory): ignored.
    assertEquals(
      dir([], { HOME: "/home/me", XDG_STATE_HOME: "x" }),
      "/home/me/.local/state/winterm-mcp",
    );
    assertEquals(dir([], {}), undefined);
  }
  assertEquals(dir([], { HOME: "/home/me", WINTERM_STATE_DIR: "/srv/state" }), "/srv/state");
  assertEquals(dir(["--state-dir", "/flag"], { WINTERM_STATE_DIR: "/srv/state" }), "/flag");
});

Deno.test("WINTERM_WRITE_TIMEOUT_MS: 10 s by default, bounded, named when wrong", () => {
  assertEquals(parseConfig([], {}).config.writeTimeoutMs, 10_000);
  assertEquals(parseConfig([], { WINTERM_WRITE_TIMEOUT_MS: "250" }).config.writeTimeoutMs, 250);
  for (const bad of ["0", "99", "600001", "1.5", "soon"]) {
    throws(
      () => parseConfig([], { WINTERM_WRITE_TIMEOUT_MS: bad }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /WINTERM_WRITE_TIMEOUT_MS must be an integer/.test(error.message),
    );
  }
});

Deno.test("--help names both settings", () => {
  assertEquals(/--state-dir DIR/.test(USAGE) && /WINTERM_WRITE_TIMEOUT_MS/.test(USAGE), true);
});

Deno.test("HTTP sending: write timeout 30 s and 64 MiB queued by default, bounded, in --help", () => {
  const http = (env: Record<string, string>) => parseConfig(["--http"], env).config.http!;
  assertEquals([http({}).writeTimeoutMs, http({}).maxQueuedBytes], [30_000, 64 * 1024 * 1024]);
  assertEquals(http({ WINTERM_HTTP_WRITE_TIMEOUT_MS: "1500" }).writeTimeoutMs, 1500);
  assertEquals(http({ WINTERM_HTTP_MAX_QUEUED_BYTES: "8388608" }).maxQueuedBytes, 8388608);
  for (
    const [name, bad] of [
      ["WINTERM_HTTP_WRITE_TIMEOUT_MS", "99"],
      ["WINTERM_HTTP_WRITE_TIMEOUT_MS", "3600001"],
      ["WINTERM_HTTP_MAX_QUEUED_BYTES", String(8 * 1024 * 1024 - 1)],
      ["WINTERM_HTTP_MAX_QUEUED_BYTES", "lots"],
    ]
  ) {
    throws(
      () => http({ [name]: bad }),
      (error: unknown) => error instanceof ConfigError && error.message.includes(name),
    );
  }
  assertEquals(
    /WINTERM_HTTP_WRITE_TIMEOUT_MS/.test(USAGE) && /WINTERM_HTTP_MAX_QUEUED_BYTES/.test(USAGE),
    true,
  );
});

Deno.test("the sandbox settings: flags before variables, named when wrong", () => {
  const sandbox = (args: string[], env: Record<string, string>) =>
    parseConfig(args, env).config.sandbox;
  assertEquals(sandbox([], {}), {});
  assertEquals(sandbox(["--sandbox", "read-only"], { WINTERM_SANDBOX: "off" }), {
    mode: "read-only",
  });
  const separator = os === "windows" ? ";" : ":";
  assertEquals(
    sandbox([], {
      WINTERM_SANDBOX: "workspace-write",
      WINTERM_SANDBOX_NETWORK: "allow: api.example.com , *.example.org",
      WINTERM_SANDBOX_WRITABLE: `/a${separator}/b`,
      WINTERM_SANDBOX_HIDDEN: "~/.ssh",
    }),
    {
      mode: "workspace-write",
      network: { allow: ["api.example.com", "*.example.org"] },
      writable: ["/a", "/b"],
      hidden: ["~/.ssh"],
    },
  );
  assertEquals(sandbox(["--sandbox-network", "on"], {}), { network: "on" });
  throws(
    () => sandbox(["--sandbox", "strict"], {}),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message === "--sandbox must be one of off, workspace-write, read-only (got 'strict')",
  );
  for (const bad of ["allow:", "maybe", "api.example.com"]) {
    throws(
      () => sandbox([], { WINTERM_SANDBOX_NETWORK: bad }),
      /WINTERM_SANDBOX_NETWORK must be off, on, or allow:/,
    );
  }
  for (const name of ["--sandbox", "--sandbox-network", "WINTERM_SANDBOX_HIDDEN"]) {
    assertEquals(USAGE.includes(name), true, name);
  }
});
