/**
 * The command policy: which programs may be started, in which directories, and which
 * environment variables a request may not override. Programs are matched on the RESOLVED
 * executable (PATH looked up, `..` and symbolic links resolved, and the file's identity
 * compared), never on the command text, which chaining and aliases bypass. The policy governs
 * what is started directly: a shell it allows can run anything that shell can.
 *
 * The file is JSON:
 *
 * ```json
 * {
 *   "programs": { "allow": ["git", "python3", "/usr/local/bin/node"], "deny": ["sudo"] },
 *   "cwd": { "allow": ["/home/me/projects"] },
 *   "env": { "protect": ["PATH", "LD_PRELOAD", "NODE_OPTIONS"] },
 *   "sandbox": { "mode": "workspace-write", "network": { "allow": ["registry.npmjs.org"] } }
 * }
 * ```
 *
 * The `sandbox` section is the operator's sandbox (see sandbox.ts), combined with `--sandbox`
 * and the WINTERM_SANDBOX* variables: where both say something, the stricter applies.
 *
 * A bare name names every file it denotes: a program of that name wherever it lives, and the
 * file that name finds in each PATH directory (the child's and the server's), however else
 * it is reached: `python3` is also `/usr/bin/python3.11`, `python3.11`, and a link named
 * `snake` to it (links resolved, files matched by identity: device and inode). A path matches
 * that file however it is reached. A copy of a program is another file: only the sandbox
 * confines what a copy does. `deny` wins over `allow`; with an `allow` list, everything else is
 * refused. Every image that runs is judged: the program, and the interpreters that run a
 * script (its `#!` line's, and the program `#!/usr/bin/env NAME` finds).
 *
 * @module
 */
import { basename, resolve, sep } from "node:path";
import { fileIdentity } from "../../pty/resolve.ts";
import { Type } from "../../typebox.ts";
import { TypeCompiler } from "../../typebox_compiler.ts";
import { EngineError } from "../errors.ts";
import { SANDBOX_MODES } from "../vocabulary.ts";
import type { SandboxConfig } from "../../config.ts";

const Names = Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 10_000 });
const PolicySchema = Type.Object({
  programs: Type.Optional(Type.Object({ allow: Type.Optional(Names), deny: Type.Optional(Names) }, {
    additionalProperties: false,
  })),
  cwd: Type.Optional(Type.Object({ allow: Type.Optional(Names) }, { additionalProperties: false })),
  env: Type.Optional(
    Type.Object({ protect: Type.Optional(Names) }, { additionalProperties: false }),
  ),
  sandbox: Type.Optional(Type.Object({
    mode: Type.Optional(Type.Union(SANDBOX_MODES.map((mode) => Type.Literal(mode)))),
    network: Type.Optional(Type.Union([
      Type.Literal("off"),
      Type.Literal("on"),
      Type.Object({ allow: Names }, { additionalProperties: false }),
    ])),
    writable: Type.Optional(Names),
    hidden: Type.Optional(Names),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

/** A policy file that cannot be used. */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyError";
  }
}

const WINDOWS = Deno.build.os === "windows";
/**
 * Variables a request may never set under a policy on Windows: cmd.exe runs %ComSpec% for
 * every pipe and nested shell, and finds programs by %PATHEXT%.
 */
const ALWAYS_PROTECTED_ON_WINDOWS = ["ComSpec", "PATHEXT"];

/** Case-folded (Windows) form of a name or path. */
function fold(text: string): string {
  return WINDOWS ? text.toLowerCase() : text;
}

/** A program name without `.exe`/`.com`/... on Windows. */
function programName(path: string): string {
  const name = fold(basename(path));
  return WINDOWS ? name.replace(/\.(exe|com|bat|cmd|ps1)$/, "") : name;
}

function realPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/** The file's identity (device and inode), where the OS reports one. */
const identity = fileIdentity;

/** One program rule, ready to match. */
interface ProgramRule {
  /** As written in the file. */
  text: string;
  /** For a bare name: the name to match. */
  name?: string;
  /** For a path: its real path and identity. */
  path?: string;
  identity?: string;
}

function programRule(text: string): ProgramRule {
  if (!/[\\/]/.test(text)) return { text, name: programName(text) };
  const absolute = resolve(text);
  const real = realPath(absolute) ?? absolute;
  return { text, path: fold(real), identity: identity(real) };
}

/**
 * What is about to be started, for the policy to judge: exactly what the launcher will start,
 * looked up once (the policy does not look at the file system again for the program or the
 * directory, so nothing can change between the judgment and the start).
 */
export interface JudgedStart {
  /** The program as found (absolute; may be a link). */
  program: string;
  /** Its real path: the file that will run. */
  realProgram: string;
  /** The real working directory the child will start in. */
  cwd: string;
  /** The variables the request sets. */
  envOverrides: Record<string, string>;
  /**
   * The directories a bare name finds programs in: the child's PATH and the server's. A bare
   * name's rule names the file it finds in each.
   */
  searchPath: readonly string[];
}

/** See the module documentation. */
export class Policy {
  #allow: ProgramRule[] | undefined;
  #deny: ProgramRule[];
  #roots: string[] | undefined;
  #protected: Map<string, string>;
  /** The file's `sandbox` section (checked and combined with the flags by the groundwork). */
  readonly sandbox?: SandboxConfig;

  constructor(readonly source: string, file: unknown) {
    const checker = TypeCompiler.Compile(PolicySchema);
    const problem = [...checker.Errors(file)][0];
    if (problem) {
      throw new PolicyError(
        `${source}: '${problem.path.slice(1).replaceAll("/", ".") || "(top)"}': ${problem.message}`,
      );
    }
    const valid = file as typeof PolicySchema.static;
    // No program name, path or variable holds a NUL: such an entry would never match, and a
    // deny or protect entry that never matches is a rule silently not kept.
    for (
      const [list, entries] of [
        ["programs.allow", valid.programs?.allow],
        ["programs.deny", valid.programs?.deny],
        ["cwd.allow", valid.cwd?.allow],
        ["env.protect", valid.env?.protect],
      ] as const
    ) {
      const bad = entries?.find((entry) => entry.includes("\0"));
      if (bad !== undefined) {
        throw new PolicyError(
          `${source}: '${list}' entry ${JSON.stringify(bad.slice(0, 200))} holds a NUL byte, ` +
            "which no name, path or variable can: it would never match",
        );
      }
    }
    // (Windows' own "=C:" variables, cmd's directory per drive, begin with one.)
    const named = valid.env?.protect?.find((name) => name.indexOf("=", WINDOWS ? 1 : 0) >= 0);
    if (named !== undefined) {
      throw new PolicyError(
        `${source}: 'env.protect' entry ${JSON.stringify(named.slice(0, 200))} holds '=', ` +
          "which no variable's name can: it would never match",
      );
    }
    this.sandbox = valid.sandbox;
    this.#allow = valid.programs?.allow?.map(programRule);
    this.#deny = (valid.programs?.deny ?? []).map(programRule);
    this.#roots = valid.cwd?.allow?.map((root) => {
      const real = realPath(resolve(root));
      if (!real) throw new PolicyError(`${source}: cwd.allow entry '${root}' does not exist`);
      return fold(real);
    });
    this.#protected = new Map([
      ...(WINDOWS ? ALWAYS_PROTECTED_ON_WINDOWS : []).map((
        name,
      ) => [
        fold(name),
        `always protected on Windows under a policy: it chooses what cmd.exe runs`,
      ]),
      ...(valid.env?.protect ?? []).map((name) => [fold(name), `env.protect entry '${name}'`]),
    ] as [string, string][]);
  }

  /** Reads and checks a policy file. Throws {@link PolicyError} with the reason. */
  static load(path: string): Policy {
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      throw new PolicyError(`cannot read policy file ${path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new PolicyError(`policy file ${path} is not JSON: ${(error as Error).message}`);
    }
    return new Policy(path, parsed);
  }

  /** Throws an EngineError ("forbidden") naming the rule that refuses the launch, if any. */
  check(request: JudgedStart, fields: { program: string; cwd: string; env: string }): void {
    for (const name of Object.keys(request.envOverrides)) {
      const rule = this.#protected.get(fold(name));
      if (rule !== undefined) {
        throw refused(`environment variable ${name} may not be set (${rule})`, fields.env);
      }
    }
    if (this.#roots) {
      const real = fold(request.cwd);
      if (
        !this.#roots.some((root) =>
          real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)
        )
      ) {
        throw refused(
          "the working directory is outside the allowed roots (cwd.allow)",
          fields.cwd,
          real,
        );
      }
    }
    const real = request.realProgram;
    const candidate = {
      names: new Set([programName(request.program), programName(real)]),
      path: fold(real),
      identity: identity(real),
    };
    const denoted = new Map<string, Set<string>>();
    /** The identities of the files `name` finds in the search path. */
    const filesNamed = (name: string) => {
      let found = denoted.get(name);
      if (!found) {
        found = new Set();
        for (const dir of request.searchPath) {
          const file = identity(resolve(dir, name));
          if (file !== undefined) found.add(file);
        }
        denoted.set(name, found);
      }
      return found;
    };
    const matches = (rule: ProgramRule) => {
      if (rule.name === undefined) {
        return rule.path === candidate.path ||
          (rule.identity !== undefined && rule.identity === candidate.identity);
      }
      return candidate.names.has(rule.name) ||
        (!WINDOWS && candidate.identity !== undefined &&
          filesNamed(rule.name).has(candidate.identity));
    };
    const what = real === request.program ? real : `${request.program} (really ${real})`;
    const denied = this.#deny.find(matches);
    if (denied) {
      throw refused(`${what} matches programs.deny entry '${denied.text}'`, fields.program);
    }
    if (this.#allow && !this.#allow.some(matches)) {
      throw refused(`${what} is not in programs.allow`, fields.program);
    }
  }

  /** True when the policy names programs (and so must see every image that runs). */
  get judgesPrograms(): boolean {
    return this.#allow !== undefined || this.#deny.length > 0;
  }
}

function refused(reason: string, field: string, detail?: string): EngineError {
  return new EngineError("forbidden", `refused by policy: ${reason}`, field, detail);
}
