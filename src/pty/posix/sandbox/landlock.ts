/**
 * A Landlock ruleset made from a plan (landlock_plan.ts): created and filled on the calling
 * thread, which it does not restrict; the thread that later calls `landlock_restrict_self`
 * with it is confined by it (fds are the process's, so the ruleset can be handed to another
 * thread by its number).
 *
 * @example
 * ```ts
 * import { createRuleset, directoryView } from "./landlock.ts";
 * import { landlockPlan } from "./landlock_plan.ts";
 * const plan = landlockPlan(
 *   { abi: 7, mode: "read-only", writable: [], hidden: [], network: { kind: "off" } },
 *   directoryView,
 * );
 * const fd = createRuleset(plan, 7);
 * ```
 * @module
 */
import { C, cString, errno, errnoName, libc } from "../libc.ts";
import {
  LANDLOCK_RULE_NET_PORT,
  LANDLOCK_RULE_PATH_BENEATH,
  landlockAddRule,
  landlockCreateRuleset,
} from "./linux_calls.ts";
import { type Entry, type FsView, type LandlockPlan, PlanError } from "./landlock_plan.ts";

/** The file system as the server sees it (links left out: their targets have their own rules). */
export const directoryView: FsView = {
  entries(directory: string): Entry[] | undefined {
    try {
      const entries: Entry[] = [];
      for (const entry of Deno.readDirSync(directory)) {
        if (entry.isSymlink) continue;
        entries.push({
          name: entry.name,
          kind: entry.isDirectory ? "directory" : entry.isFile ? "file" : "other",
        });
      }
      return entries;
    } catch {
      return undefined;
    }
  },
};

/** `struct landlock_ruleset_attr`'s size by ABI: fs only (1-3), + net (4-5), + scoped (6-). */
function attrSize(abi: number): number {
  return abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
}

/**
 * Creates the ruleset of `plan` for a kernel of `abi`; returns its fd (close-on-exec; the
 * caller closes it once the confined thread has used it). A path that is gone is left out; any
 * other failure throws {@link PlanError} naming it.
 */
export function createRuleset(plan: LandlockPlan, abi: number): number {
  const attr = new Uint8Array(24);
  const view = new DataView(attr.buffer);
  view.setBigUint64(0, BigInt(plan.handledFs), true);
  view.setBigUint64(8, BigInt(plan.handledNet), true);
  view.setBigUint64(16, BigInt(plan.scoped), true);
  const created = landlockCreateRuleset(attr, attrSize(abi), 0);
  if (created.result < 0) {
    throw new PlanError(`landlock_create_ruleset failed (${errnoName(created.errno)})`);
  }
  const ruleset = created.result;
  const lib = libc();
  try {
    // struct landlock_path_beneath_attr { __u64 allowed_access; __s32 parent_fd; } (packed)
    const beneath = new Uint8Array(12);
    const beneathView = new DataView(beneath.buffer);
    for (const rule of plan.rules) {
      const fd = lib.open(cString(rule.path), C.O_PATH | C.O_CLOEXEC);
      if (fd < 0) {
        const code = errno();
        // Checked again by the file system where errno does not say so: errno comes from a
        // second call, which the runtime's own calls may precede (see capabilities.ts).
        if (code === 2 /* ENOENT */ || code === 20 /* ENOTDIR */ || !reachable(rule.path)) continue;
        throw new PlanError(`cannot open ${rule.path} for a Landlock rule (${errnoName(code)})`);
      }
      try {
        beneathView.setBigUint64(0, BigInt(rule.access), true);
        beneathView.setInt32(8, fd, true);
        const added = landlockAddRule(ruleset, LANDLOCK_RULE_PATH_BENEATH, beneath);
        if (added.result < 0) {
          throw new PlanError(
            `landlock_add_rule for ${rule.path} failed (${errnoName(added.errno)})`,
          );
        }
      } finally {
        lib.close(fd);
      }
    }
    // struct landlock_net_port_attr { __u64 allowed_access; __u64 port; }
    const port = new Uint8Array(16);
    const portView = new DataView(port.buffer);
    for (const number of plan.connectPorts) {
      portView.setBigUint64(0, 2n, /* CONNECT_TCP */ true);
      portView.setBigUint64(8, BigInt(number), true);
      const added = landlockAddRule(ruleset, LANDLOCK_RULE_NET_PORT, port);
      if (added.result < 0) {
        throw new PlanError(
          `landlock_add_rule for port ${number} failed (${errnoName(added.errno)})`,
        );
      }
    }
    return ruleset;
  } catch (error) {
    lib.close(ruleset);
    throw error;
  }
}

/** Whether `path` names something (what open(O_PATH) would find). */
function reachable(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory);
  }
}
