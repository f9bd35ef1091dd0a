/**
 * Which Landlock rules confine a sandboxed child: a pure function of the sandbox's settings,
 * the kernel's ABI and a view of the file system, so that it can be tested without a kernel.
 *
 * Landlock only grants. Reading is granted on `/`, and writing (workspace-write) on the
 * writable roots; a hidden path (`~/.ssh`) is carved out of a grant that covers it by granting
 * its siblings instead, on every level from the grant down to it ("split"). A split directory
 * keeps only the right to list it: its own entries' names stay visible, their contents do not,
 * and nothing can be created or removed directly in it. `/dev` is always split: only the
 * terminal, `/dev/null` and a few harmless devices are granted (a root child could otherwise read
 * a disk's raw blocks).
 *
 * @example
 * ```ts
 * import { FS, landlockPlan } from "./landlock_plan.ts";
 * // A file system of /usr, /work and /root (holding .ssh and .bashrc), as a stand-in view.
 * const tree: Record<string, string[]> = {
 *   "/": ["usr", "work", "root"],
 *   "/root": [".ssh", ".bashrc"],
 * };
 * const plan = landlockPlan({
 *   abi: 7,
 *   mode: "workspace-write",
 *   writable: ["/work"],
 *   hidden: ["/root/.ssh"],
 *   network: { kind: "off" },
 * }, {
 *   entries: (directory) =>
 *     tree[directory]?.map((name) => ({ name, kind: name === ".bashrc" ? "file" : "directory" })),
 * });
 * plan.rules.map((rule) => rule.path);
 * // ["/", "/usr", "/work", "/root", "/root/.bashrc", "/work", "/dev", "/dev/null", ...]:
 * // "/" and "/root" are split (listed only) down to .ssh, which is granted nothing
 * plan.rules.some((rule) => rule.path === "/work" && (rule.access & FS.WRITE_FILE) !== 0); // true
 * ```
 * @module
 */
import { posix } from "node:path";

/** Filesystem access rights (`LANDLOCK_ACCESS_FS_*`). */
export const FS = {
  EXECUTE: 1 << 0,
  WRITE_FILE: 1 << 1,
  READ_FILE: 1 << 2,
  READ_DIR: 1 << 3,
  REMOVE_DIR: 1 << 4,
  REMOVE_FILE: 1 << 5,
  MAKE_CHAR: 1 << 6,
  MAKE_DIR: 1 << 7,
  MAKE_REG: 1 << 8,
  MAKE_SOCK: 1 << 9,
  MAKE_FIFO: 1 << 10,
  MAKE_BLOCK: 1 << 11,
  MAKE_SYM: 1 << 12,
  REFER: 1 << 13,
  TRUNCATE: 1 << 14,
  IOCTL_DEV: 1 << 15,
} as const;
/** Network rights (`LANDLOCK_ACCESS_NET_*`). */
export const NET = { BIND_TCP: 1 << 0, CONNECT_TCP: 1 << 1 } as const;
/** Scopes (`LANDLOCK_SCOPE_*`). */
export const SCOPE = { ABSTRACT_UNIX_SOCKET: 1 << 0, SIGNAL: 1 << 1 } as const;

/** The rights that apply to a file that is not a directory. */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

/** The oldest ABI the sandbox runs on: 3, for truncation (Linux 6.2). */
export const MINIMUM_ABI = 3;
/** TCP rules (Linux 6.7). */
export const NET_ABI = 4;
/** Signal and abstract-socket scoping (Linux 6.12). */
export const SCOPE_ABI = 6;

/** The filesystem rights an ABI knows (all of them are handled: what is not granted is denied). */
export function handledFs(abi: number): number {
  let rights = (1 << 13) - 1; // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2) rights |= FS.REFER;
  if (abi >= 3) rights |= FS.TRUNCATE;
  if (abi >= 5) rights |= FS.IOCTL_DEV;
  return rights;
}

const READ = FS.READ_FILE | FS.READ_DIR | FS.EXECUTE;
const WRITE = READ | FS.WRITE_FILE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_DIR | FS.MAKE_REG |
  FS.MAKE_SOCK | FS.MAKE_FIFO | FS.MAKE_SYM | FS.REFER | FS.TRUNCATE;
const READ_WRITE_FILE = FS.READ_FILE | FS.WRITE_FILE;
const TERMINAL = READ_WRITE_FILE | FS.IOCTL_DEV;

/** Devices every sandboxed child may use, and how. */
const DEVICES: [string, number][] = [
  ["/dev/null", READ_WRITE_FILE],
  ["/dev/zero", READ_WRITE_FILE],
  ["/dev/full", READ_WRITE_FILE],
  ["/dev/random", FS.READ_FILE],
  ["/dev/urandom", FS.READ_FILE],
  ["/dev/tty", TERMINAL],
  ["/dev/ptmx", TERMINAL],
];

/** What the plan is made from. */
export interface PlanInput {
  abi: number;
  mode: "read-only" | "workspace-write";
  /** Directories writable in workspace-write (real paths): the working directory, its temp... */
  writable: readonly string[];
  /** Paths no sandboxed process may read (absolute). */
  hidden: readonly string[];
  /** Paths readable whatever is hidden (the shell integration's files). */
  readable?: readonly string[];
  /**
   * The child's own temporary directory: writable (workspace-write) whatever is hidden, as it
   * lies in a folder hidden from every other sandbox.
   */
  scratch?: string;
  /** The terminal's device (PTY mode). */
  terminal?: string;
  network: { kind: "off" } | { kind: "on" } | { kind: "proxy"; port: number };
}

/** A directory entry, as the plan needs it. */
export interface Entry {
  name: string;
  kind: "directory" | "file" | "other";
}

/** How the plan looks at the file system. */
export interface FsView {
  /** A directory's entries (symbolic links left out), or undefined if it cannot be listed. */
  entries(directory: string): Entry[] | undefined;
}

/** One path rule: the rights granted on `path` and beneath it. */
export interface PathRule {
  path: string;
  access: number;
  /** False for a file (its rights are limited to {@link FILE_RIGHTS}). */
  directory: boolean;
}

/** The ruleset. */
export interface LandlockPlan {
  handledFs: number;
  handledNet: number;
  scoped: number;
  rules: PathRule[];
  /** TCP ports a connect is allowed to. */
  connectPorts: number[];
}

/** A sandbox the kernel cannot give: the reason. */
export class PlanError extends Error {}

/** Most rules one sandbox gets: a hidden path beside thousands of entries costs one each. */
export const MAX_RULES = 4096;

/** True if `path` is `root` or lies beneath it. */
export function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root === "/" ? "/" : root + "/");
}

/** See the module documentation. Throws {@link PlanError}. */
export function landlockPlan(input: PlanInput, fs: FsView): LandlockPlan {
  if (input.abi < MINIMUM_ABI) {
    throw new PlanError(
      `the kernel's Landlock ABI is ${input.abi || "absent (Landlock off)"}; the sandbox needs ` +
        `${MINIMUM_ABI} (Linux 6.2) or later`,
    );
  }
  if (input.network.kind === "proxy" && input.abi < NET_ABI) {
    throw new PlanError(
      `the kernel's Landlock ABI ${input.abi} has no TCP rules, which a network allowlist needs ` +
        `(ABI ${NET_ABI}, Linux 6.7)`,
    );
  }
  const handled = handledFs(input.abi);
  const hidden = [...new Set([...input.hidden, "/dev"].map((path) => posix.resolve(path)))];
  const rules: PathRule[] = [];
  const add = (path: string, access: number, directory: boolean) => {
    const granted = (directory ? access : access & FILE_RIGHTS) & handled;
    if (granted === 0) return;
    if (rules.length >= MAX_RULES) {
      throw new PlanError(
        `more than ${MAX_RULES} Landlock rules would be needed to hide ${hidden.join(", ")} ` +
          `(their directories hold too many entries)`,
      );
    }
    rules.push({ path, access: granted, directory });
  };
  /** Grants `access` on `path` and beneath, but for what is hidden beneath it. */
  const grant = (path: string, access: number) => {
    const inside = hidden.filter((secret) => within(secret, path));
    if (inside.some((secret) => secret === path)) return;
    if (inside.length === 0) return add(path, access, true);
    // Split: the directory can be listed; each entry is granted (or split) on its own.
    add(path, access & FS.READ_DIR, true);
    for (const entry of fs.entries(path) ?? []) {
      const child = posix.join(path, entry.name);
      if (entry.kind === "directory") grant(child, access);
      else if (entry.kind === "file" && !hidden.includes(child)) add(child, access, false);
    }
  };
  for (const writable of input.writable) {
    const secret = input.hidden.find((path) => within(writable, path));
    if (secret !== undefined) {
      throw new PlanError(`the writable path ${writable} lies in the hidden path ${secret}`);
    }
  }
  grant("/", READ);
  if (input.mode === "workspace-write") {
    for (const writable of input.writable) grant(writable, WRITE);
  }
  for (const readable of input.readable ?? []) add(readable, READ, true);
  if (input.scratch !== undefined && input.mode === "workspace-write") {
    add(input.scratch, WRITE, true);
  }
  add("/dev", FS.READ_DIR, true);
  for (const [device, access] of DEVICES) add(device, access, false);
  if (input.terminal) add(input.terminal, TERMINAL, false);
  const plan: LandlockPlan = {
    handledFs: handled,
    handledNet: 0,
    scoped: 0,
    rules,
    connectPorts: [],
  };
  if (input.network.kind !== "on" && input.abi >= NET_ABI) {
    plan.handledNet = NET.BIND_TCP | NET.CONNECT_TCP;
    if (input.network.kind === "proxy") plan.connectPorts.push(input.network.port);
  }
  if (input.abi >= SCOPE_ABI) plan.scoped = SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL;
  return plan;
}
