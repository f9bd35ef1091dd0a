/**
 * The memory output buffers copy their bytes into: slabs, the first of a buffer small, each
 * next twice the last, up to {@link SLAB_MAX}; full-size slabs a buffer has dropped wait here
 * (a few, for every buffer) for the next buffer that needs one.
 *
 * Why recycle: a flood of 40 MB through a buffer that keeps 10 MiB allocated 40 MB of fresh
 * memory, which the runtime frees only in full collections (it is held past the young
 * generation), each fresh page faulted in. With the PTY's blocks read into again and the slabs
 * used over again, `run_command` of 40 MB took 60-110 ms less of the server's user CPU (see
 * FdReader in src/pty/posix/streams.ts). A command's first slabs, until it has filled its
 * limit, are still fresh: only a few spares are kept, so that memory comes back after a flood.
 *
 * A slab given back must be referenced by nothing else: the buffer lends its slabs to no one
 * (its reads copy).
 *
 * @example
 * ```ts
 * import { giveBack, nextSlab } from "./slabs.ts";
 * const first = nextSlab(undefined); // 1 KiB
 * const second = nextSlab(first); // 2 KiB
 * giveBack(second); // too small to keep: left to the collector
 * ```
 * @module
 */

/** The size of a buffer's first slab, and of its largest. */
export const SLAB_MIN = 1024, SLAB_MAX = 256 * 1024;
/** Full-size slabs kept for reuse, for all buffers together: 1 MiB. */
const SPARES_MAX = 4;

const spares: Uint8Array<ArrayBuffer>[] = [];

/** The slab to follow `previous` (a buffer's newest slab; none for its first). */
export function nextSlab(previous: Uint8Array | undefined): Uint8Array<ArrayBuffer> {
  const size = Math.min(SLAB_MAX, Math.max(SLAB_MIN, (previous?.length ?? 0) * 2));
  return (size === SLAB_MAX && spares.pop()) || new Uint8Array(size);
}

/** A slab its buffer has dropped and nothing references: kept for reuse if full-size and room. */
export function giveBack(slab: Uint8Array<ArrayBuffer>): void {
  if (slab.length === SLAB_MAX && spares.length < SPARES_MAX) spares.push(slab);
}
