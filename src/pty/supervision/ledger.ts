/**
 * The ledger: a file per running server, `<state dir>/processes/<instance>.json`, naming the
 * server, its boot, and the roots of the trees it started (pid and start time each). The
 * server holds an exclusive lock (`flock`) on its file for as long as it lives; the kernel
 * drops the lock when the process dies, however it dies. So a file that can be locked belongs
 * to a server that is gone, and what that server left running can be found and ended by the
 * next one: its marked processes (../posix/tree.ts), and its roots, if still there, with their sessions
 * and descendants. A file that cannot be locked belongs to a live server and is left alone.
 *
 * The file is written in place (pwrite + ftruncate through the locked descriptor); replacing
 * it by rename would leave the lock on the old file.
 *
 * @example
 * ```ts
 * import { abandonedLedgers, Ledger } from "./ledger.ts";
 * for (const record of abandonedLedgers("/home/me/.local/state/winterm-mcp")) record.discard();
 * const ledger = Ledger.open("/home/me/.local/state/winterm-mcp", {
 *   instance: "a1b2", server: { pid: Deno.pid, start: 12345, boot: "..." }, roots: [],
 * });
 * ledger.write([{ pid: 4242, start: 12400 }]);
 * ledger.close();
 * ```
 * @module
 */
import { log } from "../../log.ts";
import { makePrivateFolder, writePrivateFile } from "../../private_files.ts";
import { joinPosix as join } from "../posix/join.ts";
import { C, cString, errno, errnoName, libc } from "../posix/libc.ts";
import type { ProcessId } from "../posix/tree.ts";

/** What a ledger file holds. */
export interface LedgerRecord {
  /** The server's instance id: its trees' marks begin with it. */
  instance: string;
  /** The server: pid, start time, and the boot it ran in (Linux; start times count from it). */
  server: ProcessId & { boot?: string };
  /** The roots of the trees it started that had not ended. */
  roots: ProcessId[];
}

/** A dead server's record, locked by us until discarded. */
export interface AbandonedLedger {
  /** The record; undefined fields if the file could not be parsed (the instance is its name). */
  record: LedgerRecord;
  /** Deletes the file and lets go of it. */
  discard(): void;
}

const SUFFIX = ".json";
/** A ledger being created: `<ledger>.<pid>.new` (see {@link Ledger.open}). */
const DRAFT = /\.json\.[0-9]+\.new$/;
/**
 * Entries of the folder looked at in one start, at most (each ledger is held open, and locked,
 * until it is dealt with; 100,000 FIFOs took 3 s to clear): more wait for the next start.
 */
const MOST_AT_ONCE = 256;
/**
 * A draft older than this belongs to a server that died while creating its ledger (it exists
 * for the moment between its creation and its rename): it is removed. Younger ones may be a
 * server's that is starting now.
 */
const DRAFT_AGE_MS = 60_000;
/** A ledger is a few roots; a larger file is not one (and must not be read whole). */
const MAX_LEDGER_BYTES = 1 << 20;
const encoder = new TextEncoder();

/** The folder of ledgers under a state directory. */
function folder(stateDir: string): string {
  return join(stateDir, "processes");
}

/**
 * The folder of ledgers, if it is a folder itself: a symbolic link put in its place would have
 * the sweep remove files wherever it points.
 */
function ownFolder(stateDir: string): string | undefined {
  const dir = folder(stateDir);
  try {
    if (Deno.lstatSync(dir).isDirectory) return dir;
    log.warn("the ledger folder is no folder (a link?): it is not used", { path: dir });
  } catch {
    // no folder yet: no server ever ran here
  }
  return undefined;
}

/** The folder's entries as they are read; none if it went meanwhile. */
function readFolder(dir: string): Iterable<Deno.DirEntry> {
  try {
    return Deno.readDirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Names read from the folder in one start, at most, whatever they are: the sweep's cost is
 * bounded (300,000 files of other names took 4 s a start to be passed over).
 */
const MOST_READ = 4096;

/**
 * Whether there are ledgers under `stateDir` at all (a listing, no lock: the cheap look before
 * {@link abandonedLedgers}, which loads the process table's tools).
 */
export function hasLedgers(stateDir: string): boolean {
  const dir = ownFolder(stateDir);
  if (!dir) return false;
  let read = 0;
  for (const entry of readFolder(dir)) {
    if (++read > MOST_READ) break;
    // Any entry named as a ledger or a draft, even one that is no file: it is cleared away.
    if (entry.name.endsWith(SUFFIX) || DRAFT.test(entry.name)) return true;
  }
  return false;
}

/**
 * Opens `path` read-write (close-on-exec: a child must never hold the lock; non-blocking: a
 * FIFO or device put there must not hold up the server) and try-locks it.
 */
function openLocked(path: string): { fd: number; locked: boolean } | undefined {
  const lib = libc();
  const fd = lib.open(cString(path), C.O_RDWR | C.O_CLOEXEC | C.O_NONBLOCK);
  if (fd < 0) return undefined;
  return { fd, locked: lib.flock(fd, C.LOCK_EX | C.LOCK_NB) === 0 };
}

/** This server's ledger. */
export class Ledger {
  #record: LedgerRecord;

  private constructor(readonly path: string, private readonly fd: number, record: LedgerRecord) {
    this.#record = record;
  }

  /** Creates, locks and writes this server's ledger. Throws if the folder cannot be used. */
  static open(stateDir: string, record: LedgerRecord): Ledger {
    makePrivateFolder(folder(stateDir));
    const dir = ownFolder(stateDir);
    if (!dir) throw new Error(`${folder(stateDir)} is no folder (a link?)`);
    const path = join(dir, record.instance + SUFFIX);
    // Created and locked under another name first, so that no other server can take the new
    // file for a dead one's between its creation and our lock.
    const draft = `${path}.${Deno.pid}.new`;
    writePrivateFile(draft, "");
    const opened = openLocked(draft);
    if (!opened?.locked) {
      if (opened) libc().close(opened.fd);
      Deno.removeSync(draft);
      throw new Error(`cannot lock ${draft}: ${errnoName(errno())}`);
    }
    const ledger = new Ledger(path, opened.fd, record);
    ledger.#flush();
    Deno.renameSync(draft, path);
    return ledger;
  }

  /** Records the roots now running. */
  write(roots: ProcessId[]): void {
    this.#record = { ...this.#record, roots };
    this.#flush();
  }

  /** The server is ending cleanly: the file goes. */
  close(): void {
    try {
      Deno.removeSync(this.path);
    } catch {
      // already gone
    }
    libc().close(this.fd);
  }

  #flush(): void {
    const lib = libc();
    const bytes = encoder.encode(JSON.stringify(this.#record) + "\n");
    const written = Number(lib.pwrite(this.fd, bytes, BigInt(bytes.length), 0n));
    if (written !== bytes.length || lib.ftruncate(this.fd, BigInt(bytes.length)) !== 0) {
      log.warn("cannot update the process ledger", { path: this.path, error: errnoName(errno()) });
    }
  }
}

/**
 * The ledgers of servers that are gone, each locked by us until discarded. Ledgers of live
 * servers (locked by them) are left alone; what is no ledger (links, FIFOs, old drafts) is
 * removed from the folder.
 */
export function abandonedLedgers(stateDir: string): AbandonedLedger[] {
  const dir = ownFolder(stateDir);
  if (!dir) return [];
  const found: AbandonedLedger[] = [];
  let [read, looked] = [0, 0];
  // Read as it goes: the names of a crowded folder are not all held.
  for (const { name, isDirectory } of readFolder(dir)) {
    if (++read > MOST_READ) break;
    const draft = DRAFT.test(name);
    // A folder is left where it is: its contents are someone's.
    if (isDirectory || (!draft && !name.endsWith(SUFFIX))) continue;
    if (++looked > MOST_AT_ONCE) break;
    const path = join(dir, name);
    let entry: Deno.FileInfo;
    try {
      entry = Deno.lstatSync(path);
    } catch {
      continue;
    }
    // Only regular files are ledgers: a symbolic link (to /dev/zero, say), a FIFO or a device
    // would be read without end, or block the server's thread for good. Never read, they go
    // (a link goes, not what it points to), as do the drafts of servers that died making one.
    if (entry.isDirectory) continue;
    if (!entry.isFile || draft) {
      // (A draft from the future is no draft being made now either.)
      const age = Math.abs(Date.now() - (entry.mtime?.getTime() ?? 0));
      if (!entry.isFile || age > DRAFT_AGE_MS) removeEntry(path);
      continue;
    }
    const opened = openLocked(path);
    if (!opened) continue;
    if (!opened.locked) {
      libc().close(opened.fd);
      continue;
    }
    found.push({
      record: parse(name.slice(0, -SUFFIX.length), opened.fd),
      discard() {
        try {
          Deno.removeSync(path);
        } catch {
          // another server discarded it first
        }
        libc().close(opened.fd);
      },
    });
  }
  return found;
}

/** Removes a folder entry that is no ledger (a draft, a link, a FIFO), if it is still there. */
function removeEntry(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      log.warn("cannot remove what is no ledger from the ledger folder", { path, error });
    }
  }
}

/** The file's text, read through the locked descriptor (never reopened by name), bounded. */
function readLocked(fd: number): string {
  const buffer = new Uint8Array(MAX_LEDGER_BYTES + 1);
  let length = 0;
  while (length < buffer.length) {
    const space = buffer.subarray(length);
    const read = Number(libc().pread(fd, space, BigInt(space.length), BigInt(length)));
    if (read < 0) throw new Error(`cannot read: ${errnoName(errno())}`);
    if (read === 0) break;
    length += read;
  }
  if (length > MAX_LEDGER_BYTES) throw new Error("too large for a ledger");
  return new TextDecoder().decode(buffer.subarray(0, length));
}

function parse(instance: string, fd: number): LedgerRecord {
  try {
    const record = JSON.parse(readLocked(fd)) as LedgerRecord;
    if (
      record.instance === instance && Number.isInteger(record.server?.pid) &&
      Number.isFinite(record.server.start) && Array.isArray(record.roots)
    ) {
      const roots = record.roots.filter((root) =>
        Number.isInteger(root?.pid) && root.pid > 1 && Number.isFinite(root.start)
      );
      return { ...record, roots };
    }
  } catch {
    // written only partly when its server died: the name still says whose marks to look for
  }
  return { instance, server: { pid: 0, start: 0 }, roots: [] };
}
