/**
 * Program lookup against the CHILD's PATH and working directory, not the server's. Both
 * spawners use it, and so does shell discovery.
 *
 * Windows rules (those of Go 1.19+ and Rust after CVE-2024-24576, not CreateProcess's own): a
 * bare name is looked for on PATH only (never in the working directory: `git` in a cloned
 * repository must not run a planted `git.bat`; `.\tool` still works), in absolute PATH
 * entries only, with the extensions of the SERVER's PATHEXT (a request cannot make `.BAT.` an
 * extension); and the name found is the one Windows opens: trailing dots and spaces removed.
 *
 * @example
 * ```ts
 * import { resolveProgram } from "./resolve.ts";
 * resolveProgram("python3", { cwd: "/tmp", env: { PATH: "/usr/bin:/bin" } }); // "/usr/bin/python3"
 * ```
 * @module
 */
import { posix, win32 } from "node:path";
import { cString, libc } from "./posix/libc.ts";
import { SpawnError, type SpawnOptions } from "./types.ts";

/** Which rules to resolve by. */
export type PathFlavor = "posix" | "windows";

/** The flavor of the running OS. */
export const HOST_FLAVOR: PathFlavor = Deno.build.os === "windows" ? "windows" : "posix";

/** Where to look. */
export interface ResolveOptions {
  /** The child's working directory (relative names and PATH entries resolve against it). */
  cwd: string;
  /** The child's environment. */
  env: Record<string, string>;
  /** Rules to use; defaults to the host's. */
  flavor?: PathFlavor;
  /** Windows: the extensions to try (PATHEXT); defaults to the server's own. */
  pathext?: string;
}

const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD";

/** Reads an environment variable, ignoring case on Windows as Windows does. */
export function envValue(
  env: Record<string, string>,
  name: string,
  flavor: PathFlavor = HOST_FLAVOR,
): string | undefined {
  if (flavor === "posix") return env[name];
  const upper = name.toUpperCase();
  for (const [key, value] of Object.entries(env)) {
    if (key.toUpperCase() === upper) return value;
  }
  return undefined;
}

/**
 * Finds the file that would run for `file`, or throws a {@link SpawnError} (`ENOENT`, or
 * `EACCES` for a file that exists but may not be executed) that says where it looked.
 */
export function resolveProgram(file: string, options: ResolveOptions): string {
  const flavor = options.flavor ?? HOST_FLAVOR;
  const path = flavor === "windows" ? win32 : posix;
  const found = flavor === "windows" ? findWindows(file, options) : findPosix(file, options);
  if (found.path) return found.path;
  if (found.notExecutable) {
    throw new SpawnError("EACCES", `program '${file}' is not executable`, found.notExecutable);
  }
  const hasDirectory = flavor === "windows" ? /[\\/]/.test(file) : file.includes("/");
  const local = !hasDirectory && flavor === "windows" &&
    findWindows(`.\\${file}`, options).path;
  const hint = local ? ` (the working directory is not searched: use .\\${file})` : "";
  if (hasDirectory) {
    const resolved = path.resolve(options.cwd, file);
    if (flavor === HOST_FLAVOR && isDirectory(resolved)) {
      throw new SpawnError("EISDIR", `program '${file}' is a directory`, resolved);
    }
    if (flavor === HOST_FLAVOR && exists(resolved)) {
      throw new SpawnError("EACCES", `program '${file}' is not a regular file`, resolved);
    }
    throw new SpawnError("ENOENT", `program '${file}' not found`, resolved);
  }
  const searched = envValue(options.env, "PATH", flavor);
  throw new SpawnError(
    "ENOENT",
    `program '${file}' not found on PATH${hint}`,
    (searched === undefined ? "PATH is not set" : `PATH=${searched}`) +
      (local ? `; ${local} is in the working directory` : ""),
  );
}

interface Found {
  path?: string;
  notExecutable?: string;
}

function findPosix(file: string, { cwd, env }: ResolveOptions): Found {
  if (file.includes("/")) return probePosix(posix.resolve(cwd, file));
  let notExecutable: string | undefined;
  for (const dir of (env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":")) {
    // An empty PATH entry means the working directory, as in every POSIX shell.
    const found = probePosix(posix.resolve(cwd, dir || ".", file));
    if (found.path) return found;
    notExecutable ??= found.notExecutable;
  }
  return { notExecutable };
}

/** access(2)'s mode for "does it exist". */
const F_OK = 0;

function probePosix(candidate: string): Found {
  // Most PATH entries do not hold the name, and a stat that fails throws: the kernel is asked
  // first (eight entries before /usr/bin here cost a command 0.2 ms as thrown errors).
  if (HOST_FLAVOR === "posix" && libc().access(cString(candidate), F_OK) !== 0) return {};
  try {
    const info = Deno.statSync(candidate);
    if (!info.isFile) return {};
    return ((info.mode ?? 0) & 0o111) ? { path: candidate } : { notExecutable: candidate };
  } catch {
    return {};
  }
}

/** The extensions tried on Windows: PATHEXT (the server's by default), then `.PS1`. */
export function windowsExtensions(pathext: string | undefined = serverPathext()): string[] {
  const list = (pathext ?? DEFAULT_PATHEXT)
    .split(";")
    .map((ext) => ext.trim().toUpperCase())
    .filter((ext) => /^\.[^. ]/.test(ext) && !/[. ]$/.test(ext));
  if (!list.includes(".PS1")) list.push(".PS1");
  return list;
}

function serverPathext(): string | undefined {
  return Deno.build.os === "windows" ? Deno.env.get("PATHEXT") : undefined;
}

/**
 * The path Windows opens for `path`: trailing dots and spaces of the last component removed
 * (`x.bat.` and `x.bat ` open `x.bat`, and run as a batch file).
 */
export function windowsOpenedPath(path: string): string {
  const slash = Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/"));
  const name = path.slice(slash + 1).replace(/[. ]+$/, "");
  // "." and ".." (names of dots only) are directories, not file names: left as they are.
  return name === "" ? path : path.slice(0, slash + 1) + name;
}

function findWindows(file: string, { cwd, env, pathext }: ResolveOptions): Found {
  const extensions = windowsExtensions(pathext);
  const name = windowsOpenedPath(file);
  const hasExtension = extensions.includes(win32.extname(name).toUpperCase());
  const candidates = (base: string) =>
    hasExtension ? [base] : extensions.map((ext) => base + ext.toLowerCase());
  if (/[\\/:]/.test(file)) return firstFile(candidates(win32.resolve(cwd, name)));
  // PATH only, absolute entries only: the working directory is never searched implicitly.
  const dirs = (envValue(env, "PATH", "windows") ?? "").split(";").filter((dir) =>
    win32.isAbsolute(dir)
  );
  for (const dir of dirs) {
    const found = firstFile(candidates(win32.join(dir, name)));
    if (found.path) return found;
  }
  return {};
}

function firstFile(candidates: string[]): Found {
  for (const candidate of candidates) {
    try {
      if (Deno.statSync(candidate).isFile) return { path: candidate };
    } catch {
      // not there: try the next one
    }
  }
  return {};
}

/** The real path of a file (links and `..` resolved); the path itself if it cannot be had. */
export function realPathOf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path; // starting it will say why it cannot run
  }
}

/**
 * The identity of the file at `path` (a link is followed): its device and inode, or undefined
 * when nothing is there or the OS reports none. Asks the kernel first, so that a miss costs no
 * thrown error (a policy looks a name up in every PATH directory).
 */
export function fileIdentity(path: string): string | undefined {
  if (HOST_FLAVOR === "posix" && libc().access(cString(path), F_OK) !== 0) return undefined;
  try {
    const info = Deno.statSync(path);
    return info.ino !== null && info.dev !== null ? `${info.dev}:${info.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The directories a bare program name is looked for in, with `env`'s PATH, as absolute paths
 * (an empty entry is the working directory, as in every POSIX shell).
 */
export function searchPath(
  env: Record<string, string>,
  cwd: string,
  flavor: PathFlavor = HOST_FLAVOR,
): string[] {
  const path = envValue(env, "PATH", flavor);
  if (flavor === "windows") {
    return (path ?? "").split(";").filter((dir) => win32.isAbsolute(dir));
  }
  return (path ?? "/usr/local/bin:/usr/bin:/bin").split(":").map((dir) =>
    posix.resolve(cwd, dir || ".")
  );
}

/** Whether something is at `path` (a link is followed). */
function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `path` is a directory (a link is followed). */
export function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Checks what both spawners need before they start anything: no NUL anywhere (C strings end
 * there), environment names that are not empty and hold no `=` (Windows allows a leading one,
 * as in `=C:`), and a working directory that exists. Throws {@link SpawnError}.
 */
export function checkSpawnOptions(options: SpawnOptions, flavor: PathFlavor = HOST_FLAVOR): void {
  const all = [options.file, options.cwd, ...options.args, ...Object.entries(options.env).flat()];
  if (all.some((text) => text.includes("\0"))) {
    throw new SpawnError("EINVAL", "program, arguments, cwd and environment may not contain NUL");
  }
  const firstEquals = flavor === "windows" ? 1 : 0;
  if (Object.keys(options.env).some((name) => name === "" || name.indexOf("=", firstEquals) >= 0)) {
    throw new SpawnError("EINVAL", "environment variable names may not be empty or contain '='");
  }
  if (!isDirectory(options.cwd)) {
    throw new SpawnError(
      "ENOENT",
      `working directory '${options.cwd}' does not exist or is not a directory`,
    );
  }
}
