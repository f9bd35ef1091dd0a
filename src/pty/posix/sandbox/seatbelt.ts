/**
 * The macOS sandbox: the child runs under `/usr/bin/sandbox-exec` with a Seatbelt profile made
 * here (the mechanism of Codex and Claude Code on macOS). Paths are never written into the
 * profile: they travel as `-D NAME=value` parameters, read by `(param "NAME")`, so no path can
 * change the profile's meaning. Small on purpose, since it can only be run on a Mac (the macOS
 * CI job): every line says why it is there.
 *
 * What it allows: running and forking; signals and process information within the sandbox;
 * reading everywhere but the hidden paths; writing under the writable roots (workspace-write),
 * the terminal and /dev/null; the terminal's ioctls and new pseudo-terminals; the lookups
 * libc needs (users and groups, logging); with the network `on` any network, through the
 * proxy TCP to its loopback port only, `off` nothing but unix sockets. `(deny default)` refuses
 * the rest, notably other processes' task ports (no debugging), launching through launchd
 * services (`open -a`), and writing anywhere else.
 *
 * @example
 * ```ts
 * import { seatbeltCommand } from "./seatbelt.ts";
 * seatbeltCommand(
 *   { mode: "workspace-write", writable: ["/Users/me/work"], hidden: [], network: { kind: "off" } },
 *   "/dev/ttys003",
 * ); // ["/usr/bin/sandbox-exec", "-p", "(version 1)...", "-D", "WRITABLE_0=/Users/me/work", ...]
 * ```
 * @module
 */
import { type SandboxBackend, type SandboxSpec, SpawnError } from "../../types.ts";

/** Where macOS keeps sandbox-exec. */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** The profile's fixed part. */
const BASE = `(version 1)
; Anything not allowed below is refused.
(deny default)
; Programs run and fork; what they start inherits this profile.
(allow process-exec process-fork)
; Signals and process information only within this sandbox.
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; System settings are read by libc and most runtimes.
(allow sysctl-read)
; Users and groups (getpwuid), logging, notifications: what libc and the shells ask for.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.logd"))
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data (ipc-posix-name "apple.shm.notification_center"))
; New pseudo-terminals (script, tmux), as in Codex's profile.
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
; Reading everywhere (the hidden paths are refused at the end: later rules win), but raw disks
; (root could read any file's blocks through them).
(allow file-read*)
(deny file-read* file-write* (regex #"^/dev/r?disk"))
; The usual devices.
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper"))
(allow file-read* file-write* file-ioctl (literal "/dev/tty"))`;

/** A parameter reference. */
const param = (name: string) => `(param "${name}")`;

/** The profile for `spec` and the parameters it reads (see the module documentation). */
export function seatbeltProfile(
  spec: SandboxSpec,
  terminal?: string,
): { profile: string; parameters: Record<string, string> } {
  const parameters: Record<string, string> = {};
  const lines = [BASE];
  if (terminal !== undefined) {
    parameters.TERMINAL = terminal;
    lines.push(
      "; The child's own terminal.",
      `(allow file-read* file-write* file-ioctl (literal ${param("TERMINAL")}))`,
    );
  }
  const writable = spec.mode === "workspace-write"
    ? [...spec.writable, ...(spec.scratch === undefined ? [] : [spec.scratch])]
    : [];
  if (writable.length) {
    writable.forEach((path, index) => parameters[`WRITABLE_${index}`] = path);
    lines.push(
      "; The writable roots: the working directory, its temporary directory, `writable`.",
      `(allow file-write* ${
        writable.map((_, index) => `(subpath ${param(`WRITABLE_${index}`)})`).join(" ")
      })`,
    );
  }
  if (spec.network.kind === "on") {
    lines.push(
      "; The network, and the name service that resolves for it.",
      "(allow network* system-socket)",
      '(allow mach-lookup (global-name "com.apple.dnssd.service") (global-name "com.apple.trustd.agent"))',
    );
  } else {
    lines.push("; Unix sockets only.", "(allow network* (remote unix-socket) (local unix-socket))");
    if (spec.network.kind === "proxy") {
      lines.push(
        "; TCP to the server's proxy on loopback, nowhere else.",
        `(allow network-outbound (remote ip "localhost:${Math.trunc(spec.network.port)}"))`,
        "(allow system-socket)",
      );
    }
  }
  const hidden = [...spec.hidden];
  if (hidden.length) {
    hidden.forEach((path, index) => parameters[`HIDDEN_${index}`] = path);
    lines.push(
      "; The hidden paths: neither read nor written, whatever is allowed above.",
      `(deny file-read* file-write* ${
        hidden.map((_, index) => `(subpath ${param(`HIDDEN_${index}`)})`).join(" ")
      })`,
    );
  }
  if (spec.readable?.length) {
    spec.readable.forEach((path, index) => parameters[`READABLE_${index}`] = path);
    lines.push(
      "; Readable whatever is hidden (the shell integration's files).",
      `(allow file-read* ${
        spec.readable.map((_, index) => `(subpath ${param(`READABLE_${index}`)})`).join(" ")
      })`,
    );
  }
  return { profile: lines.join("\n") + "\n", parameters };
}

/** How `spec` is enforced here; throws {@link SpawnError} (`ESANDBOX`) without sandbox-exec. */
export function seatbeltSupport(_spec: SandboxSpec): SandboxBackend {
  try {
    Deno.statSync(SANDBOX_EXEC);
  } catch {
    throw new SpawnError(
      "ESANDBOX",
      `the sandbox cannot be applied: ${SANDBOX_EXEC} is missing`,
    );
  }
  return { name: "seatbelt", unenforced: [] };
}

/** The words that run a program under `spec`: sandbox-exec, its profile and parameters. */
export function seatbeltCommand(spec: SandboxSpec, terminal?: string): string[] {
  const { profile, parameters } = seatbeltProfile(spec, terminal);
  return [
    SANDBOX_EXEC,
    "-p",
    profile,
    ...Object.entries(parameters).flatMap(([name, value]) => ["-D", `${name}=${value}`]),
    "--",
  ];
}
