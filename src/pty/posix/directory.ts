/**
 * Opening a working directory once, so that the directory a child starts in is exactly the
 * one that was looked at: its real path is read from the open descriptor (Linux
 * `/proc/self/fd`, macOS `F_GETPATH`) and the child changes into the descriptor itself
 * (`posix_spawn_file_actions_addfchdir_np`), not into a path whose links could change between
 * the look and the start.
 *
 * @example
 * ```ts
 * import { openDirectory } from "./directory.ts";
 * const work = Deno.makeTempDirSync();
 * Deno.symlinkSync(work, `${work}-link`);
 * const dir = openDirectory(`${work}-link`);
 * dir.path === Deno.realPathSync(work); // true: the real directory, not the link
 * dir.close();
 * ```
 * @module
 */
import { type OpenDirectory, SpawnError } from "../types.ts";
import { C, cString, errno, errnoName, fcntlBuffer, libc } from "./libc.ts";
import { fdPath } from "./procfs.ts";

/** Opens `path` as a directory. Throws {@link SpawnError} naming the cause. */
export function openDirectory(path: string): OpenDirectory {
  const lib = libc();
  // O_PATH (Linux): a directory one may enter but not list can still be opened this way.
  const fd = lib.open(cString(path), C.O_PATH | C.O_DIRECTORY | C.O_CLOEXEC /* | O_RDONLY */);
  if (fd < 0) {
    const code = errnoName(errno());
    throw new SpawnError(code, `the working directory cannot be opened (${code})`, path);
  }
  const real = realPathOf(fd);
  if (!real) {
    lib.close(fd);
    throw new SpawnError("ENOENT", "the working directory has been removed", path);
  }
  let open = true;
  return {
    path: real,
    fd,
    close() {
      if (open) lib.close(fd);
      open = false;
    },
  };
}

function realPathOf(fd: number): string | undefined {
  if (Deno.build.os === "linux") {
    const path = fdPath(fd);
    return path?.startsWith("/") && !path.endsWith(" (deleted)") ? path : undefined;
  }
  const buffer = new Uint8Array(1024 /* MAXPATHLEN */);
  if (fcntlBuffer(fd, C.F_GETPATH, buffer) !== 0) return undefined;
  return new TextDecoder().decode(buffer.subarray(0, buffer.indexOf(0)));
}
