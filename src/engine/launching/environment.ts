/**
 * The environment a child gets: the server's own, minus the server's secrets, plus what the
 * caller asked for. On Windows names are case-insensitive, so an override replaces a variable
 * whatever its case.
 *
 * @module
 */
import { HOST_FLAVOR, type PathFlavor } from "../../pty/mod.ts";

/** Variables of the server that children never see. */
const SECRETS = ["WINTERM_TOKEN"];

let server: Readonly<Record<string, string>> | undefined;

/**
 * The server's own environment, read once: nothing in the server changes it, and reading it
 * cost every command 0.15 ms (all variables copied out of the runtime, for each look).
 */
export function serverEnvironment(): Readonly<Record<string, string>> {
  return server ??= Object.freeze(Deno.env.toObject());
}

/**
 * Pagers off: a pager waits for a key no one presses (`git log` in `less`). Every command and
 * terminal gets these unless the request sets them (the server's own values are overridden).
 * `cat` is what git, gh, glab and systemd themselves take for "no pager" (they then run none);
 * elsewhere it copies its input through. AWS CLI v2 turns its pager off with an empty value.
 * On Windows only the variables whose tools treat the value as "no pager" are set: there is
 * no `cat` to run for the others (PowerShell's `help` function pages with more.com unless
 * PAGER names a command; Get-Help never pages).
 */
export function pagerEnvironment(flavor: PathFlavor = HOST_FLAVOR): Record<string, string> {
  const none = { GIT_PAGER: "cat", GH_PAGER: "cat", GLAB_PAGER: "cat", AWS_PAGER: "" };
  if (flavor === "windows") return none;
  return {
    ...none,
    PAGER: "cat",
    MANPAGER: "cat",
    SYSTEMD_PAGER: "cat",
    PSQL_PAGER: "cat",
    BAT_PAGER: "cat",
    DELTA_PAGER: "cat",
    PERLDOC_PAGER: "cat",
    RI_PAGER: "cat",
  };
}

/** Sets `name` in `env`, removing differently-cased twins on Windows. */
export function setVariable(
  env: Record<string, string>,
  name: string,
  value: string,
  flavor: PathFlavor = HOST_FLAVOR,
): void {
  if (flavor === "windows") {
    const upper = name.toUpperCase();
    for (const key of Object.keys(env)) {
      if (key !== name && key.toUpperCase() === upper) delete env[key];
    }
  }
  env[name] = value;
}

/**
 * The child's environment: the server's, then `defaults` (values the server chooses for its
 * children), then `overrides` (the caller's, which win).
 */
export function childEnvironment(
  overrides: Record<string, string> = {},
  defaults: Record<string, string> = {},
  base: Readonly<Record<string, string>> = serverEnvironment(),
  flavor: PathFlavor = HOST_FLAVOR,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (!SECRETS.includes(name.toUpperCase())) env[name] = value;
  }
  for (const [name, value] of [...Object.entries(defaults), ...Object.entries(overrides)]) {
    setVariable(env, name, value, flavor);
  }
  return env;
}
