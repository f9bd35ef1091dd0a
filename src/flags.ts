/**
 * Command-line flags, read as `node:util`'s `parseArgs` reads them with `strict: true` and no
 * positional arguments (same values, same errors, same messages; tests/flags_test.ts
 * compares the two). Its own module because `node:util` brings in a good part of Deno's Node
 * layer, about 3 MiB of an idle server's memory, for a dozen flags.
 *
 * @example
 * ```ts
 * import { parseFlags } from "./flags.ts";
 * parseFlags(["--port", "8080", "-h"], { port: { type: "string" }, help: { type: "boolean", short: "h" } });
 * // { port: "8080", help: true }
 * ```
 * @module
 */

/** One flag: a switch, or one that takes a value; `short` is its one-letter form. */
export interface FlagSpec {
  type: "boolean" | "string";
  short?: string;
}

/** The flags given, by name. */
export type FlagValues<T extends Record<string, FlagSpec>> = {
  [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string;
};

/** A command line the flags do not allow. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FlagError";
  }
}

/** Reads `args` against `options`. Throws {@link FlagError}. */
export function parseFlags<T extends Record<string, FlagSpec>>(
  args: readonly string[],
  options: T,
): FlagValues<T> {
  const values: Record<string, string | boolean> = Object.create(null);
  const spec = (name: string): FlagSpec | undefined =>
    Object.hasOwn(options, name) ? options[name] : undefined;
  const longFor = (short: string) =>
    Object.keys(options).find((name) => options[name].short === short) ?? short;
  const take = (name: string, rawName: string, value: string | undefined, inline: boolean) => {
    const option = spec(name);
    if (!option) throw new FlagError(`Unknown option '${rawName}'`);
    const shortAndLong = `${option.short ? `-${option.short}, ` : ""}--${name}`;
    if (option.type === "string" && value === undefined) {
      throw new FlagError(`Option '${shortAndLong} <value>' argument missing`);
    }
    if (option.type === "boolean" && value !== undefined) {
      throw new FlagError(`Option '${shortAndLong}' does not take an argument`);
    }
    if (!inline && value !== undefined && value.length > 1 && value[0] === "-") {
      const example = rawName.startsWith("--")
        ? `'${rawName}=-XYZ'`
        : `'--${name}=-XYZ' or '${rawName}-XYZ'`;
      throw new FlagError(
        `Option '${rawName}' argument is ambiguous.\n` +
          `Did you forget to specify the option argument for '${rawName}'?\n` +
          `To specify an option argument starting with a dash use ${example}.`,
      );
    }
    if (name !== "__proto__") values[name] = value ?? true;
  };
  const positional = (arg: string) =>
    new FlagError(`Unexpected argument '${arg}'. This command does not take positional arguments`);
  const remaining = [...args];
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    if (arg === "--") {
      // Everything after it is a positional argument.
      if (remaining.length > 0) throw positional(remaining[0]);
      break;
    }
    if (arg.length === 2 && arg[0] === "-" && arg[1] !== "-") {
      // -f, and its value if it takes one
      const name = longFor(arg[1]);
      const value = spec(name)?.type === "string" ? remaining.shift() : undefined;
      take(name, arg, value, false);
    } else if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
      if (spec(longFor(arg[1]))?.type !== "string") {
        // -abc is -a -b -c, up to a flag that takes a value: -abfFILE is -a -b -fFILE
        const expanded = [];
        for (let i = 1; i < arg.length; i++) {
          if (spec(longFor(arg[i]))?.type !== "string" || i === arg.length - 1) {
            expanded.push(`-${arg[i]}`);
          } else {
            expanded.push(`-${arg.slice(i)}`);
            break;
          }
        }
        remaining.unshift(...expanded);
      } else {
        // -fFILE
        take(longFor(arg[1]), `-${arg[1]}`, arg.slice(2), true);
      }
    } else if (arg.length > 2 && arg.startsWith("--") && !arg.includes("=", 3)) {
      // --flag, and its value if it takes one
      const name = arg.slice(2);
      const value = spec(name)?.type === "string" ? remaining.shift() : undefined;
      take(name, arg, value, false);
    } else if (arg.length > 2 && arg.startsWith("--")) {
      // --flag=value
      const equals = arg.indexOf("=");
      const name = arg.slice(2, equals);
      take(name, `--${name}`, arg.slice(equals + 1), true);
    } else {
      throw positional(arg);
    }
  }
  return values as FlagValues<T>;
}
