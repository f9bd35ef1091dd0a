/**
 * Files and folders only the server's user may read: the audit log (which can hold what was
 * typed), the process ledger, the shell-integration scripts. Created 0600 and 0700 exactly,
 * whatever the umask: a mode given at creation is narrowed by the umask (0277 made the ledger
 * 0400, which the server then could not open to write), so it is set again once created.
 * Windows has no such modes (its files inherit their folder's ACL): nothing is changed there.
 *
 * @example
 * ```ts
 * import { makePrivateFolder, openPrivateAppend } from "./private_files.ts";
 * const dir = Deno.makeTempDirSync();
 * makePrivateFolder(`${dir}/state`);
 * const file = openPrivateAppend(`${dir}/state/audit.jsonl`);
 * file.close();
 * ```
 * @module
 */

const WINDOWS = Deno.build.os === "windows";
/** A private file's mode. */
export const PRIVATE_FILE = 0o600;
/** A private folder's mode. */
export const PRIVATE_FOLDER = 0o700;

/** Sets `mode` on what was just created at `path` (not on Windows). */
function exactly(path: string, mode: number): void {
  if (!WINDOWS) naming(path, () => Deno.chmodSync(path, mode));
}

/**
 * Runs `op` on `path`; an error it throws names the path (Deno's do not always: a refused
 * `createNew` open said only "Permission denied (os error 13)", and a server that would not
 * start said no more). The error keeps its class.
 */
function naming<T>(path: string, op: () => T): T {
  try {
    return op();
  } catch (error) {
    if (error instanceof Error && !error.message.includes(path)) {
      error.message = `${error.message}: '${path}'`;
    }
    throw error;
  }
}

/**
 * Opens `path` to append, creating it 0600 if it is missing. An existing file keeps the mode
 * its owner gave it; returns whether others may read it, for the caller to warn about.
 */
export function openPrivateAppend(path: string): Deno.FsFile & { readableByOthers?: boolean } {
  try {
    const file = naming(
      path,
      () => Deno.openSync(path, { append: true, createNew: true, mode: PRIVATE_FILE }),
    );
    exactly(path, PRIVATE_FILE);
    return file;
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  const file: Deno.FsFile & { readableByOthers?: boolean } = naming(
    path,
    () => Deno.openSync(path, { append: true }),
  );
  const mode = file.statSync().mode;
  file.readableByOthers = !WINDOWS && mode !== null && (mode & 0o077) !== 0;
  return file;
}

/** Creates `path` 0600 with `content`; it must not exist yet. */
export function writePrivateFile(path: string, content: string): void {
  naming(
    path,
    () => Deno.writeTextFileSync(path, content, { mode: PRIVATE_FILE, createNew: true }),
  );
  exactly(path, PRIVATE_FILE);
}

/**
 * Creates the folder `path` (and missing parents) 0700. Folders that were there already keep
 * their modes: they may be shared ones, such as ~/.local/state.
 */
export function makePrivateFolder(path: string): void {
  const missing: string[] = [];
  for (let at = path; !exists(at); at = parentOf(at)) {
    missing.unshift(at);
    if (parentOf(at) === at) break;
  }
  naming(path, () => Deno.mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER }));
  for (const folder of missing) exactly(folder, PRIVATE_FOLDER);
}

/**
 * Makes a fresh folder (0700, Deno's) in `dir`, or in the system's temporary folder (TMPDIR);
 * a failure names where (Deno's says only "Permission denied (os error 13): tmpdir").
 */
export function makeTemporaryFolder(options: { prefix?: string; dir?: string } = {}): string {
  try {
    return Deno.makeTempDirSync(options);
  } catch (error) {
    const where = options.dir ??
      `the temporary folder (TMPDIR: ${Deno.env.get("TMPDIR") ?? "unset"})`;
    if (error instanceof Error) {
      error.message = `cannot make a folder in ${where}: ${error.message}`;
    }
    throw error;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The folder `path` is in (itself for a root). */
function parentOf(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (cut < 0) return ".";
  if (cut === 0) return "/";
  return trimmed.slice(0, cut);
}
