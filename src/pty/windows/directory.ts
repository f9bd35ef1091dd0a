/**
 * The working directory of a Windows child: CreateProcessW takes a path, so the directory is
 * named by its real path (links and `..` resolved once, here), which is what a policy judges.
 *
 * @module
 */
import { type OpenDirectory, SpawnError } from "../types.ts";

/** Resolves `path` to the real directory. Throws {@link SpawnError} naming the cause. */
export function openDirectory(path: string): OpenDirectory {
  let real: string;
  try {
    real = Deno.realPathSync(path);
  } catch (error) {
    throw new SpawnError(
      "ENOENT",
      "the working directory cannot be opened",
      `${path}: ${(error as Error).message}`,
    );
  }
  return { path: real, close() {} };
}
