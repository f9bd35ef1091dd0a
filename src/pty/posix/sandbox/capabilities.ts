/**
 * Dropping every capability of the calling thread, for good, before it starts a sandboxed
 * child: a root child that keeps CAP_SYS_ADMIN escapes by remounting, one with CAP_DAC_OVERRIDE
 * or CAP_SYS_PTRACE reads what Landlock would not let it. Securebits are set and locked first
 * (root gains no capability at exec, setuid changes none), then the bounding set is emptied
 * (nothing exec'd can gain one), ambient capabilities cleared, and the thread's own sets set to
 * nothing. Per thread, like everything that confines: the server's other threads keep theirs.
 *
 * @example
 * ```ts
 * import { dropCapabilities } from "./capabilities.ts";
 * const failure = dropCapabilities(); // undefined: this thread holds no capability any more
 * ```
 * @module
 */
import { errnoName } from "../libc.ts";
import { capget, capset, PR, PR_CAP_AMBIENT_CLEAR_ALL, prctl } from "./linux_calls.ts";

/** SECBIT_NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE, each locked; KEEP_CAPS off, locked. */
export const LOCKED_SECUREBITS = 0xef;
const CAP_SETPCAP = 8n;
/** Capabilities are numbered below 64 (the kernel's sets are 64 bits). */
const CAPABILITY_SLOTS = 64;

/** Drops them all; answers why it could not, or undefined once none is left. */
export function dropCapabilities(): string | undefined {
  const before = capget();
  if ("result" in before) return `capget failed (${errnoName(before.errno)})`;
  if (before.effective & (1n << CAP_SETPCAP)) {
    const bits = prctl(PR.SET_SECUREBITS, BigInt(LOCKED_SECUREBITS));
    if (bits.result < 0) return `cannot lock the securebits (${errnoName(bits.errno)})`;
    for (let capability = 0; capability < CAPABILITY_SLOTS; capability++) {
      // Past the last one the kernel knows, reading it fails. Told by the result, not by errno:
      // errno is read by a second call, and the runtime's own calls between the two can change
      // it (a drop past the last one once read ENOENT, not EINVAL, and failed the start).
      if (prctl(PR.CAPBSET_READ, BigInt(capability)).result < 0) break;
      const dropped = prctl(PR.CAPBSET_DROP, BigInt(capability));
      if (dropped.result < 0) {
        return `cannot drop capability ${capability} from the bounding set (${
          errnoName(dropped.errno)
        })`;
      }
    }
  }
  prctl(PR.CAP_AMBIENT, BigInt(PR_CAP_AMBIENT_CLEAR_ALL));
  const cleared = capset({ effective: 0n, permitted: 0n, inheritable: 0n });
  if (cleared.result < 0) return `capset failed (${errnoName(cleared.errno)})`;
  const after = capget();
  if ("result" in after) return `capget failed (${errnoName(after.errno)})`;
  if (after.effective || after.permitted || after.inheritable) {
    return "capabilities are left after dropping them all";
  }
  return undefined;
}
