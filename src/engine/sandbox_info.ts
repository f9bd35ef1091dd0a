/**
 * What answers say about a sandboxed process (a light module: the tools' schemas and answers
 * use it without loading the engine): the sandbox it runs in, the connections its proxy
 * refused, and the hint an answer gives when a failure looks like the sandbox's refusal.
 *
 * @example
 * ```ts
 * import { sandboxHint } from "./sandbox_info.ts";
 * sandboxHint(
 *   { mode: "workspace-write", network: "off", backend: "landlock+seccomp", writable: ["/w"] },
 *   ["touch: cannot touch '/etc/x': Permission denied"],
 * ); // "it ran in a sandbox (workspace-write, network off): ..."
 * ```
 * @module
 */

/** A connection the sandbox's proxy refused. */
export interface Refusal {
  host: string;
  port: number;
  reason: string;
}

/** What a sandboxed start gets; answers and the audit log say it. */
export interface SandboxInfo {
  mode: "read-only" | "workspace-write";
  network: "off" | "on" | { allow: string[] };
  backend: string;
  /** The roots it may write under (workspace-write). */
  writable?: string[];
  /** What this kernel cannot enforce. */
  unenforced?: string[];
  /** Connections the proxy refused (the last {@link REFUSALS_KEPT}), and how many in all. */
  refused?: Refusal[];
  refusedCount?: number;
}

/** Refusals kept per sandbox for its answers. */
export const REFUSALS_KEPT = 20;

/** What in a failed sandboxed command's output suggests the sandbox refused it. */
const REFUSED_OUTPUT =
  /permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b|\bEROFS\b|refused by the sandbox/i;

/**
 * A hint for an answer about a sandboxed process whose output (`texts`) suggests the sandbox
 * refused something, or that the proxy refused connections; undefined otherwise.
 */
export function sandboxHint(info: SandboxInfo | undefined, texts: string[]): string | undefined {
  if (!info) return undefined;
  const refusals = info.refusedCount
    ? `; its network proxy refused ${info.refusedCount} connection${
      info.refusedCount === 1 ? "" : "s"
    } (${info.refused!.map((refusal) => refusal.reason).slice(-3).join("; ")})`
    : "";
  if (!refusals && !texts.some((text) => REFUSED_OUTPUT.test(text))) return undefined;
  const network = typeof info.network === "string"
    ? `network ${info.network}`
    : `network only to ${info.network.allow.join(", ")} through its proxy`;
  const writes = info.mode === "read-only"
    ? "it may write nowhere"
    : `it may write only under ${info.writable?.join(", ")} and its TMPDIR`;
  return `it ran in a sandbox (${info.mode}, ${network}): ${writes}, and hidden paths ` +
    `cannot be read${refusals}. A "permission denied" here may be the sandbox's refusal`;
}
