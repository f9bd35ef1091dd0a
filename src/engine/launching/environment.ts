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
  base: Record<string, string> = Deno.env.toObject(),
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
