/**
 * What must be in place before the server serves, apart from the engine that uses it: the
 * command policy and the audit log, if configured (a server that cannot use them must not
 * start), and the supervision of the processes it will start, which first ends what killed
 * predecessors left (see `superviseChildren`). Over stdio the server lays this at once and
 * loads the engine itself (services, output pipeline, launching) with the first tool call.
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config.ts";
 * import { layGroundwork } from "./groundwork.ts";
 * import { Engine } from "./engine.ts";
 * const { config } = parseConfig([], {});
 * const engine = new Engine(config, await layGroundwork(config));
 * ```
 * @module
 */
import type { Config } from "../config.ts";
import { superviseChildren, type Supervision } from "../pty/supervision/mod.ts";
import { AuditLog } from "./launching/audit.ts";
import type { Policy } from "./launching/policy.ts";
import type { SandboxSettings } from "./launching/sandbox.ts";
import type { SandboxSpec } from "../pty/types.ts";

/** The settings the groundwork reads. */
export type GroundworkOptions = Pick<
  Config,
  "policyPath" | "auditPath" | "auditInputContent" | "stateDir" | "sandbox"
>;

/** See the module documentation. */
export interface Groundwork {
  policy?: Policy;
  audit?: AuditLog;
  /** The operator's sandbox, when one was configured (flags, environment, policy file). */
  sandbox?: SandboxSettings;
  /** What answers for the processes the engine starts beyond their own trees. */
  supervision: Supervision;
  /** Kills at once whatever this server started that still runs (the end of any shutdown). */
  endEverything(): void;
}

/**
 * Loads the policy and opens the audit log, if configured. Throws (PolicyError, or the file
 * error) when either cannot be used: better not to start than to start unguarded. Then takes
 * charge of the processes the engine will start. Call once.
 */
export async function layGroundwork(options: GroundworkOptions): Promise<Groundwork> {
  // The policy's checker (TypeBox's compiler, node:path) loads only for a server that has one.
  const policy = options.policyPath
    ? (await import("./launching/policy.ts")).Policy.load(options.policyPath)
    : undefined;
  const audit = options.auditPath
    ? new AuditLog(options.auditPath, { inputContent: options.auditInputContent })
    : undefined;
  const sandbox = await sandboxGroundwork(options, policy);
  const supervision = await superviseChildren(options.stateDir);
  return { policy, audit, sandbox, supervision, endEverything: () => void supervision.endAll() };
}

/**
 * The operator's sandbox, checked, when one is configured; a sandbox this machine cannot apply
 * stops the server (every command would be refused). The sandbox's code loads only then.
 */
async function sandboxGroundwork(
  options: GroundworkOptions,
  policy: Policy | undefined,
): Promise<SandboxSettings | undefined> {
  if (Object.keys(options.sandbox).length === 0 && !policy?.sandbox) return undefined;
  const { SandboxConfigError, sandboxSettings } = await import("./launching/sandbox.ts");
  const { sandboxSupport, SpawnError } = await import("../pty/mod.ts");
  let settings: SandboxSettings;
  try {
    settings = sandboxSettings(options.sandbox, policy?.sandbox, {
      home: Deno.env.get("HOME"),
      auditPath: options.auditPath,
      policySource: policy?.source,
      policyPath: options.policyPath,
      stateDir: options.stateDir,
    });
  } catch (error) {
    if (error instanceof SandboxConfigError) throw new Error(`sandbox: ${error.message}`);
    throw error;
  }
  if (settings.mode !== "off") {
    try {
      const spec: SandboxSpec = {
        mode: settings.mode,
        writable: [],
        hidden: [],
        network: settings.network === "allow"
          ? { kind: "proxy", port: 1 }
          : { kind: settings.network },
      };
      await sandboxSupport(spec);
    } catch (error) {
      if (error instanceof SpawnError) {
        throw new Error(`sandbox mode ${settings.mode}: ${error.message}`);
      }
      throw error;
    }
  }
  return settings;
}
