/**
 * `deno task bundle-sdk`: writes the generated modules that hold npm libraries the server loads
 * at every start, each the pieces it uses bundled into one minified module:
 * src/generated/mcp_sdk.js (the MCP SDK, from src/mcp/sdk_npm.ts), src/generated/typebox.js
 * (TypeBox's schema builders, from src/typebox_npm.ts) and src/generated/typebox_compiler.js (its
 * compiled checker, from src/typebox_compiler_npm.ts: loaded with the first check).
 *
 * Why: loaded from npm, the SDK is some 250 modules (zod, ajv as CommonJS) and made the server
 * answer `initialize` 50-60 ms later than the same code in one file. The SDK's bundle leaves Ajv
 * out (`AJV_STAND_IN`): its code was half the bundle, about 1 MiB of the idle server's memory and
 * 10-15 ms of every start, for a validator the server never uses. The SDK's types.js builds every
 * zod schema of the protocol at load, 159 of them, about 40 ms of every start here; marked pure
 * (`pureConstants`), the 76 nothing reaches are left out, a quarter of that time. TypeBox is some 200 modules:
 * from npm they held 4-5 MiB more of the idle server's memory than the same code in one file, and
 * an npm package at start-up brings in part of Deno's Node layer. Each bundle is the pinned
 * version's own code (but for modules a bundle replaces or rewrites, each said here and in its
 * `replace`);
 * `tests/scripts/bundle_sdk_test.ts` fails when one no longer matches what this
 * script makes from the pinned version (after an upgrade: run the task and commit).
 *
 *   deno task bundle-sdk           # rewrite the files
 *   deno task bundle-sdk --check   # exit 1 if a file is not what the script makes
 *
 * @module
 */
import { cpSync } from "node:fs";
import { fileURLToPath } from "node:url";
import config from "../deno.json" with { type: "json" };

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** deno.lock's npm packages: each resolved version's key, with the dependencies it resolved. */
function lockedPackages(): Record<string, { dependencies?: string[] }> {
  return JSON.parse(Deno.readTextFileSync(`${ROOT}deno.lock`)).npm;
}

/** A generated module: the pieces of an npm package that `entry` exports, bundled. */
export interface Bundle {
  /** The module that imports the pieces from npm (and gives their types). */
  entry: string;
  /** The generated module, from the repository's root. */
  output: string;
  /** The package's key in deno.json's imports, which pins its version. */
  pinned: keyof typeof config.imports;
  /**
   * Modules of the package bundled in place of its own, by their path in the package: the
   * bundle is then made from a copy of the pinned package with these written over it (a text,
   * or a function of the module's own text).
   */
  replace?: Record<string, string | ((original: string) => string)>;
}

/**
 * Stands in for the SDK's `validation/ajv-provider.js`. The SDK's `Server` validates against a
 * JSON Schema only a client's answer to an elicitation request, which this server never sends;
 * Ajv, with ajv-formats and fast-uri, is CommonJS that a bundle evaluates at load.
 */
export const AJV_STAND_IN =
  `// winterm-mcp's stand-in for the SDK's Ajv validator (scripts/bundle_sdk.ts).
export class AjvJsonSchemaValidator {
  getValidator() {
    throw new Error(
      "JSON Schema validation is not available: winterm-mcp sends no elicitation requests, " +
        "and its bundle of the MCP SDK leaves Ajv out (scripts/bundle_sdk.ts)",
    );
  }
}
`;

/**
 * `text`, a module as tsc writes it, with each top-level `const` (a statement that starts at
 * column 0 and goes on over indented lines and lines that start with a closing bracket) made
 * pure: its initializer is wrapped in an arrow function called at once and marked `@__PURE__`.
 * The value and the order of evaluation stay the same; what changes is that the bundler may
 * leave out a constant nothing uses. Throws if a statement has no end, or if nothing is found
 * (the layout is no longer tsc's).
 *
 * @example
 * ```ts
 * pureConstants("export const A = z.object({\n    a: z.string()\n});\n");
 * // "export const A = /* @__PURE__ *\/ (() => (z.object({\n    a: z.string()\n})))();\n"
 * ```
 */
export function pureConstants(text: string): string {
  const lines = text.split("\n");
  const continues = (line: string | undefined) => line !== undefined && /^[\s)\]}]/.test(line);
  const out: string[] = [];
  let made = 0;
  for (let i = 0; i < lines.length; i++) {
    const start = lines[i].match(/^((?:export )?const [\w$]+ = )(.*)$/);
    if (!start) {
      out.push(lines[i]);
      continue;
    }
    let end = i;
    while (!(lines[end].endsWith(";") && !continues(lines[end + 1]))) {
      if (++end === lines.length) throw new Error(`no end to the statement at line ${i + 1}`);
    }
    const statement = lines.slice(i, end + 1).join("\n");
    const initializer = statement.slice(start[1].length, -1);
    out.push(`${start[1]}/* @__PURE__ */ (() => (${initializer}))();`);
    made++;
    i = end;
  }
  if (made === 0) throw new Error("no top-level const found: the module's layout is not tsc's");
  return out.join("\n");
}

/** Every generated module this script writes. */
export const BUNDLES: Bundle[] = [
  {
    entry: "src/mcp/sdk_npm.ts",
    output: "src/generated/mcp_sdk.js",
    pinned: "@modelcontextprotocol/sdk/",
    replace: {
      "dist/esm/validation/ajv-provider.js": AJV_STAND_IN,
      "dist/esm/types.js": pureConstants,
    },
  },
  { entry: "src/typebox_npm.ts", output: "src/generated/typebox.js", pinned: "@sinclair/typebox" },
  {
    entry: "src/typebox_compiler_npm.ts",
    output: "src/generated/typebox_compiler.js",
    pinned: "@sinclair/typebox",
  },
];

/** Runs the Deno that runs this script; returns its stdout. */
async function deno(args: string[], cwd = ROOT): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  if (code !== 0) throw new Error(`deno ${args[0]} failed: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout);
}

/** The name and version that an npm specifier of deno.json pins. */
function pinnedPackage(pinned: Bundle["pinned"]): { name: string; version: string } {
  const [, name, version] = config.imports[pinned].match(/^npm:\/?(@?[^@]+)@([^/]+)\/?$/)!;
  return { name, version };
}

/** The version deno.lock resolved for `name`, given as a lock entry names its dependencies. */
function lockedVersion(dependency: string): { name: string; version: string } {
  const [, name, version] = dependency.match(/^(@?[^@]+)(?:@([^_]+))?/)!;
  if (version) return { name, version };
  const entries = Object.keys(lockedPackages()).filter((key) => key.startsWith(`${name}@`));
  if (entries.length !== 1) {
    throw new Error(`deno.lock holds ${entries.length} versions of ${name}`);
  }
  return lockedVersion(entries[0]);
}

/**
 * Where Deno's npm cache holds `name@version`: a folder per registry (registry.npmjs.org, or a
 * mirror's host), each with `<name>/<version>`.
 */
async function cachedPackage(name: string, version: string): Promise<string> {
  const { npmCache } = JSON.parse(await deno(["info", "--json"]));
  const found = [...Deno.readDirSync(npmCache)]
    .map((registry) => `${npmCache}/${registry.name}/${name}/${version}`)
    .filter((path) => {
      try {
        return Deno.statSync(`${path}/package.json`).isFile;
      } catch {
        return false;
      }
    });
  if (found.length === 0) {
    throw new Error(`${name}@${version} is not in Deno's npm cache (${npmCache}) after deno cache`);
  }
  return found[0];
}

/**
 * Writes into `dir` a copy of the bundle's pinned package with `bundle.replace` written over it,
 * the bundle's entry, and a deno.json whose imports send the package's name to the copy and
 * each of its dependencies to the version deno.lock pinned for it. Returns the entry's name.
 */
async function patchedPackage(bundle: Bundle, dir: string): Promise<string> {
  const { name, version } = pinnedPackage(bundle.pinned);
  await deno(["cache", bundle.entry]);
  cpSync(await cachedPackage(name, version), `${dir}/package`, { recursive: true });
  for (const [path, replacement] of Object.entries(bundle.replace ?? {})) {
    const file = `${dir}/package/${path}`;
    Deno.writeTextFileSync(
      file,
      typeof replacement === "string" ? replacement : replacement(Deno.readTextFileSync(file)),
    );
  }
  // The package's subpaths, as its exports map them ("./*": "./dist/esm/*").
  const { exports } = JSON.parse(Deno.readTextFileSync(`${dir}/package/package.json`));
  const subpaths: string = exports["./*"].import;
  const imports: Record<string, string> = {
    [`${name}/`]: `./package/${subpaths.replace(/^\.\//, "").replace(/\*$/, "")}`,
  };
  const entry = Object.entries(lockedPackages()).find(([key]) =>
    key === `${name}@${version}` || key.startsWith(`${name}@${version}_`)
  );
  for (const dependency of entry?.[1].dependencies ?? []) {
    const locked = lockedVersion(dependency);
    imports[locked.name] = `npm:${locked.name}@${locked.version}`;
    imports[`${locked.name}/`] = `npm:/${locked.name}@${locked.version}/`;
  }
  Deno.writeTextFileSync(`${dir}/deno.json`, JSON.stringify({ imports, nodeModulesDir: "none" }));
  Deno.copyFileSync(`${ROOT}${bundle.entry}`, `${dir}/entry.ts`);
  return "entry.ts";
}

/** What a generated module must hold: its header, then the bundle. */
export async function makeBundle(bundle: Bundle): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "winterm-bundle-" });
  try {
    const out = `${dir}/bundle.js`;
    const args = ["bundle", "--quiet", "--platform", "deno", "--minify", "--output", out];
    if (bundle.replace) {
      const entry = await patchedPackage(bundle, dir);
      await deno([...args, "--config", `${dir}/deno.json`, entry], dir);
    } else {
      await deno([...args, bundle.entry]);
    }
    const pinned = config.imports[bundle.pinned].replace(/^npm:\/?/, "").replace(/\/$/, "");
    const replaced = bundle.replace
      ? `, ${
        Object.entries(bundle.replace).map(([path, by]) =>
          `${path} ${typeof by === "string" ? "replaced" : `rewritten by ${by.name}`}`
        ).join(", ")
      }`
      : "";
    return `// Generated by scripts/bundle_sdk.ts from ${bundle.entry} (npm:${pinned}${replaced}): do not edit.\n` +
      Deno.readTextFileSync(out);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) {
  let stale = false;
  for (const bundle of BUNDLES) {
    const made = await makeBundle(bundle);
    const path = `${ROOT}${bundle.output}`;
    if (Deno.args.includes("--check")) {
      const current = await Deno.readTextFile(path).catch(() => "");
      if (current !== made) {
        console.error(`${path} is out of date: run deno task bundle-sdk`);
        stale = true;
      }
    } else {
      Deno.writeTextFileSync(path, made);
      console.log(path);
    }
  }
  if (stale) Deno.exit(1);
}
