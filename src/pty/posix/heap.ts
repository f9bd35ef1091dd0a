/**
 * The C heap's free memory, handed back to the OS (glibc).
 *
 * The runtime allocates the bytes of every ArrayBuffer with malloc, so a server's output
 * buffers live in the C heap. glibc keeps what they free for later allocations, and gives pages
 * back only from the top of an arena or, for a chunk of its own mapping, at once; after the
 * first such chunk is freed it serves even large chunks from arenas. Scattered among the
 * buffers that stay, freed ones kept 85 MiB of a server's memory after 1,000 commands of 1 MB
 * under a 256 MiB budget: `malloc_trim` gave it back in 8 ms.
 *
 * @example
 * ```ts ignore
 * await trimHeap(); // true where glibc could be asked
 * ```
 * @module
 */
import { libc } from "./libc.ts";

/**
 * Asks the C library to give the heap's free pages back to the OS (on the blocking pool: it
 * walks every arena). Resolves false where there is no such call (macOS).
 */
export async function trimHeap(): Promise<boolean> {
  const trim = libc().malloc_trim;
  if (!trim) return false;
  await trim(0n);
  return true;
}
