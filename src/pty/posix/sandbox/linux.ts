/**
 * The Linux sandbox: Landlock for files (and TCP, and signal and abstract-socket scoping where
 * the kernel has them), seccomp for what Landlock does not cover, no_new_privs, and no
 * capability at all, applied to a Worker's thread that then starts the child (worker.ts). No
 * helper program is shipped or run.
 *
 * @example
 * ```ts
 * import { linuxSandboxSupport } from "./linux.ts";
 * linuxSandboxSupport({ mode: "read-only", writable: [], hidden: [], network: { kind: "off" } });
 * // { name: "landlock+seccomp", unenforced: [] } on Linux 6.12 and later
 * ```
 * @module
 */
import { type SandboxBackend, type SandboxSpec, SpawnError } from "../../types.ts";
import { libc } from "../libc.ts";
import type { SpawnRequest } from "../spawn.ts";
import { createRuleset, directoryView } from "./landlock.ts";
import { landlockPlan, MINIMUM_ABI, NET_ABI, PlanError, SCOPE_ABI } from "./landlock_plan.ts";
import { getpgrp, landlockAbi, PR, prctl } from "./linux_calls.ts";
import { type FilterOptions, hostArch, seccompFilter } from "./seccomp.ts";
import { spawnConfined } from "./spawner.ts";

let abi: number | undefined;
/** The filters made so far, by their options (a filter is a pure function of them). */
const filters = new Map<string, Uint8Array<ArrayBuffer>>();

function filterFor(options: FilterOptions): Uint8Array<ArrayBuffer> {
  const key = JSON.stringify(options);
  let filter = filters.get(key);
  if (!filter) filters.set(key, filter = seccompFilter(options));
  return filter;
}

/** The kernel's Landlock ABI, asked once. */
function kernelAbi(): number {
  return abi ??= landlockAbi();
}

function refusal(reason: string): SpawnError {
  return new SpawnError("ESANDBOX", `the sandbox cannot be applied: ${reason}`);
}

/** How `spec` is enforced on this kernel; throws {@link SpawnError} (`ESANDBOX`) if it cannot be. */
export function linuxSandboxSupport(spec: SandboxSpec): SandboxBackend {
  const arch = hostArch();
  if (!arch) throw refusal(`its seccomp filter does not know ${Deno.build.arch}`);
  const version = kernelAbi();
  if (version < MINIMUM_ABI) {
    throw refusal(
      version === 0
        ? "Landlock is not enabled in this kernel (it needs Linux 6.2 or later with lsm=landlock)"
        : `the kernel's Landlock ABI is ${version}; the sandbox needs ${MINIMUM_ABI} (Linux 6.2) or later`,
    );
  }
  if (spec.network.kind === "proxy" && version < NET_ABI) {
    throw refusal(
      `the kernel's Landlock ABI ${version} has no TCP rules, which a network allowlist needs ` +
        `(ABI ${NET_ABI}, Linux 6.7)`,
    );
  }
  if (prctl(PR.GET_SECCOMP).result < 0) throw refusal("seccomp is not enabled in this kernel");
  const unenforced: string[] = [];
  if (version < SCOPE_ABI) {
    unenforced.push(
      "signals to processes outside the sandbox other than the server, and abstract unix " +
        `sockets, need Landlock ABI ${SCOPE_ABI} (Linux 6.12)`,
    );
  }
  if (version < 5) unenforced.push("device ioctls need Landlock ABI 5 (Linux 6.10)");
  return { name: "landlock+seccomp", unenforced };
}

/**
 * Starts `request` confined by `spec` (with `terminal`, the child's PTY device, the one terminal
 * it may open). Resolves to the pid; rejects with {@link SpawnError}.
 */
export async function spawnSandboxed(
  request: SpawnRequest,
  spec: SandboxSpec,
  terminal: string | undefined,
): Promise<number> {
  linuxSandboxSupport(spec);
  const version = kernelAbi();
  let ruleset: number;
  try {
    ruleset = createRuleset(
      landlockPlan({ ...spec, abi: version, terminal }, directoryView),
      version,
    );
  } catch (error) {
    if (error instanceof PlanError) throw refusal(error.message);
    throw error;
  }
  try {
    const filter = filterFor({
      arch: hostArch()!,
      network: spec.network.kind,
      // Without Landlock's signal scoping, the filter keeps signals off the server.
      protect: version < SCOPE_ABI ? { pid: Deno.pid, pgid: getpgrp() } : undefined,
    });
    return await spawnConfined({ ruleset, filter, spawn: request });
  } finally {
    libc().close(ruleset);
  }
}
