/**
 * The settings this project's process supervision adds: where the state directory is, and how
 * long a write may wait. Parsing is pure: arguments and environment are passed in.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { ConfigError, parseConfig, USAGE } from "../../src/config.ts";

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
