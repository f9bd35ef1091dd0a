/**
 * Sandboxes as the engine gives them: the operator's setting (`--sandbox`, `WINTERM_SANDBOX*`,
 * the policy file's `sandbox`), which is both the default and the ceiling, and a call's
 * `sandbox: { mode, network, writable }`, which can only tighten it. From them, for each start:
 * the platform's {@link SandboxSpec} (what may be written, what is hidden, the network), the
 * child's own temporary directory, its registration with the network proxy, and what answers
 * and the audit log say about it ({@link SandboxInfo}).
 *
 * Modes, loosest first: `off`, `workspace-write` (writes only under the working directory,
 * the temporary directory given to the command, and `writable` paths), `read-only`. Network,
 * loosest first: `on`, `{ allow: [...] }` (through the proxy, see proxy.ts), `off`. Reading is
 * refused under the hidden paths (`~/.ssh`, `~/.aws`, ... and the audit log) in every mode but
 * `off`. A sandbox that cannot be applied is refused with the reason; it is never skipped.
 *
 * @example
 * ```ts
 * import { Sandboxes, sandboxSettings } from "./sandbox.ts";
 * const sandboxes = new Sandboxes(sandboxSettings({ mode: "workspace-write" }, undefined, {}));
 * sandboxes.resolve({ network: "off" }, "sandbox", "/tmp"); // workspace-write, network off
 * ```
 * @module
 */
import { isAbsolute, join, resolve as resolvePath } from "node:path";
import {
  releaseSandboxes,
  type SandboxBackend,
  type SandboxSpec,
  sandboxSupport,
  SpawnError,
} from "../../pty/mod.ts";
import { EngineError } from "../errors.ts";
import { covers, type HostRule, parseHostRule } from "./hosts.ts";
import type { NetworkProxy } from "./proxy.ts";
import { type Refusal, REFUSALS_KEPT, type SandboxInfo } from "../sandbox_info.ts";
import { SANDBOX_MODES, type SandboxMode } from "../vocabulary.ts";
import type { NetworkSetting, SandboxConfig } from "../../config.ts";
import { makeTemporaryFolder } from "../../private_files.ts";

export { SANDBOX_MODES, type SandboxMode };
export type { NetworkSetting, SandboxConfig, SandboxInfo };

/** What a call asks for. */
export interface SandboxRequest {
  mode?: SandboxMode;
  network?: NetworkSetting;
  writable?: string[];
}

/** The operator's settings, checked: the default and the ceiling of every call. */
export interface SandboxSettings {
  mode: SandboxMode;
  /**
   * The network of a sandboxed call that does not say (`off` unless the operator says), and the
   * loosest it may ask for when the operator sandboxes or sets it.
   */
  network: "off" | "on" | "allow";
  /** Whether `network` bounds calls (the operator sandboxes, or set a network). */
  networkBounds: boolean;
  /** The operator's allowlists (all must allow a connection). */
  lists: HostRule[][];
  /** The allowlists as written, for answers. */
  allowed: string[];
  /** Real paths every sandboxed start may write under (and the most a call may name). */
  writable: string[];
  /** Absolute paths no sandboxed process may read. */
  hidden: string[];
  /** The server user's home (real path): no writable root may hold it. */
  home?: string;
}

/** A call's sandbox, checked against the operator's. */
export interface ResolvedSandbox {
  mode: Exclude<SandboxMode, "off">;
  network: "off" | "on" | "allow";
  lists: HostRule[][];
  allowed: string[];
  writable: string[];
}

/** A sandbox set up for one start: its spec, its child's extra variables, what to release. */
export interface PreparedSandbox {
  spec: SandboxSpec;
  env: Record<string, string>;
  /** Variables the child must not inherit (proxy exceptions). */
  unset: string[];
  info: SandboxInfo;
  /** Once the child has ended: its temporary directory, its proxy registration. */
  release(): void;
}

/** Paths hidden unless the operator gives a list: where credentials live. */
export const DEFAULT_HIDDEN = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.azure",
  "~/.kube",
  "~/.docker",
  "~/.config/gcloud",
  "~/.config/gh",
  "~/.netrc",
  "~/.git-credentials",
  "~/.npmrc",
  "~/.pypirc",
  "~/.password-store",
  "~/.local/share/keyrings",
];

/** A sandbox setting the server cannot start with. */
export class SandboxConfigError extends Error {}

const rank = (mode: SandboxMode) => SANDBOX_MODES.indexOf(mode);
const NETWORK_RANK = { on: 0, allow: 1, off: 2 } as const;
const networkKind = (network: NetworkSetting | "allow") =>
  typeof network === "string" ? network : "allow" as const;

/** True if `path` is `root` or lies beneath it. */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : root + "/");
}

function realPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/** `~` and `~/...` made absolute with `home`; the real path when it exists. */
export function expandPath(path: string, home: string | undefined): string {
  const expanded = path === "~" || path.startsWith("~/")
    ? (home === undefined ? path : join(home, path.slice(1)))
    : path;
  const absolute = resolvePath(expanded);
  return realPath(absolute) ?? absolute;
}

function parseList(entries: string[], where: string): HostRule[] {
  return entries.map((entry, index) => {
    const rule = parseHostRule(entry);
    if (typeof rule === "string") {
      throw new SandboxConfigError(`${where}[${index}] '${entry.slice(0, 200)}': ${rule}`);
    }
    return rule;
  });
}

/**
 * Checks and combines the operator's settings: `fromConfig` (flags and environment) and
 * `fromPolicy` (the policy file's `sandbox`, named `policySource`). Where both set something,
 * the stricter applies: the stricter mode and network, every allowlist, the writable paths
 * both allow, the hidden paths of both. Throws {@link SandboxConfigError}.
 */
export function sandboxSettings(
  fromConfig: SandboxConfig,
  fromPolicy: SandboxConfig | undefined,
  options: {
    home?: string;
    auditPath?: string;
    policySource?: string;
    policyPath?: string;
    stateDir?: string;
  },
): SandboxSettings {
  const sources: [SandboxConfig, string][] = [[fromConfig, "the sandbox settings"]];
  if (fromPolicy) sources.push([fromPolicy, `${options.policySource ?? "policy"}: sandbox`]);
  let mode: SandboxMode = "off";
  let network: SandboxSettings["network"] | undefined;
  const lists: HostRule[][] = [], allowed: string[] = [];
  let writable: string[] | undefined;
  let hidden: string[] | undefined;
  for (const [source, where] of sources) {
    if (source.mode && rank(source.mode) > rank(mode)) mode = source.mode;
    if (source.network !== undefined) {
      const kind = networkKind(source.network);
      if (network === undefined || NETWORK_RANK[kind] > NETWORK_RANK[network]) network = kind;
      if (typeof source.network === "object") {
        lists.push(parseList(source.network.allow, `${where}.network.allow`));
        allowed.push(...source.network.allow);
      }
    }
    if (source.writable) {
      const paths = source.writable.map((path, index) => {
        const real = realPath(expandPath(path, options.home));
        if (!real) {
          throw new SandboxConfigError(`${where}.writable[${index}] '${path}' does not exist`);
        }
        return real;
      });
      writable = writable === undefined
        ? paths
        : paths.filter((path) => writable!.some((root) => within(path, root)));
    }
    if (source.hidden) hidden = [...(hidden ?? []), ...source.hidden];
  }
  // The server's own files are always hidden: the audit log can hold what was typed; the state
  // directory holds the shell integration's scripts, which terminals outside any sandbox run
  // (a sandbox may read those it needs, never change them); the policy.
  const own = [options.auditPath, options.stateDir, options.policyPath].filter((path) =>
    path !== undefined
  ) as string[];
  const hiddenPaths = [...(hidden ?? DEFAULT_HIDDEN), ...own].map((path) =>
    expandPath(path, options.home)
  );
  return {
    mode,
    network: network ?? "off",
    networkBounds: mode !== "off" || network !== undefined,
    lists: network === "allow" ? lists : [],
    allowed: network === "allow" ? allowed : [],
    writable: writable ?? [],
    hidden: [...new Set(hiddenPaths)],
    home: options.home === undefined ? undefined : realPath(options.home),
  };
}

/** The request's field names in errors. */
function field(base: string, ...path: (string | number)[]): string {
  return [base, ...path].map((part) => typeof part === "number" ? `[${part}]` : part)
    .join(".").replaceAll(".[", "[");
}

/** The sandboxes of one server (see the module documentation). */
export class Sandboxes {
  #proxy: Promise<NetworkProxy> | undefined;
  #scratchRoot: string | undefined;

  constructor(readonly settings: SandboxSettings) {}

  /**
   * A call's sandbox, or undefined for none. Throws {@link EngineError} naming the field
   * (`sandbox.mode`, `sandbox.network.allow[2]`, ...) when the request would loosen the
   * operator's setting or names something that is not there.
   */
  resolve(
    request: SandboxRequest | undefined,
    base: string,
    cwd: string,
  ): ResolvedSandbox | undefined {
    const operator = this.settings;
    const mode = request?.mode ??
      (request !== undefined && operator.mode === "off" ? "workspace-write" : operator.mode);
    if (rank(mode) < rank(operator.mode)) {
      throw new EngineError(
        "forbidden",
        `sandbox mode '${mode}' is looser than the server's '${operator.mode}' ` +
          "(a call can only tighten the sandbox)",
        field(base, "mode"),
      );
    }
    if (mode === "off") return undefined;
    const network = this.#network(request?.network, base);
    if (mode === "read-only" && request?.writable?.length) {
      throw new EngineError(
        "invalid_input",
        "writable paths need mode 'workspace-write' (read-only writes nowhere)",
        field(base, "writable"),
      );
    }
    const writable = request?.writable === undefined
      ? operator.writable
      : request.writable.map((path, index) =>
        this.#writable(path, field(base, "writable", index), cwd)
      );
    return { mode, ...network, writable };
  }

  /** A call's network within the operator's: its kind and every allowlist in force. */
  #network(
    asked: NetworkSetting | undefined,
    base: string,
  ): Pick<ResolvedSandbox, "network" | "lists" | "allowed"> {
    const operator = this.settings;
    const kind = networkKind(asked ?? operator.network);
    if (operator.networkBounds && NETWORK_RANK[kind] < NETWORK_RANK[operator.network]) {
      throw new EngineError(
        "forbidden",
        `sandbox network '${kind}' is looser than the server's '${operator.network}' ` +
          "(a call can only tighten the sandbox)",
        field(base, "network"),
      );
    }
    const lists = kind === "allow" ? [...operator.lists] : [];
    const allowed = kind === "allow" ? [...operator.allowed] : [];
    if (typeof asked === "object") {
      lists.push(asked.allow.map((entry, index) => {
        const rule = parseHostRule(entry);
        const at = field(base, "network", "allow", index);
        if (typeof rule === "string") {
          throw new EngineError(
            "invalid_input",
            `'${entry.slice(0, 200)}' is not a host: ${rule}`,
            at,
          );
        }
        const outside = operator.lists.find((list) => !list.some((outer) => covers(outer, rule)));
        if (outside) {
          throw new EngineError(
            "forbidden",
            `'${entry.slice(0, 200)}' is not within the server's network allowlist ` +
              `(${outside.map((rule) => rule.text).join(", ")})`,
            at,
          );
        }
        return rule;
      }));
      allowed.push(...asked.allow.filter((entry) => !allowed.includes(entry)));
    }
    return { network: kind, lists, allowed };
  }

  /** A call's writable path: real, and within the operator's writable paths or `cwd`. */
  #writable(path: string, at: string, cwd: string): string {
    const operator = this.settings;
    const real = realPath(isAbsolute(path) ? path : resolvePath(cwd, path));
    if (!real) throw new EngineError("invalid_input", `'${path.slice(0, 200)}' does not exist`, at);
    if (
      operator.mode !== "off" &&
      !within(real, cwd) && !operator.writable.some((root) => within(real, root))
    ) {
      throw new EngineError(
        "forbidden",
        `'${path.slice(0, 200)}' is outside the working directory and the server's ` +
          "writable paths (a call can only tighten the sandbox)",
        at,
      );
    }
    return real;
  }

  /**
   * Sets a resolved sandbox up for one start in `cwd`: its temporary directory, its proxy
   * registration, and how the platform enforces it. `refused` hears of each connection the
   * proxy refuses. Throws {@link EngineError} naming `base` when it cannot be applied here.
   */
  async prepare(
    sandbox: ResolvedSandbox,
    context: {
      cwd: string;
      readable?: string[];
      base: string;
      refused: (refusal: Refusal) => void;
    },
  ): Promise<PreparedSandbox> {
    const writable = [...new Set([context.cwd, ...sandbox.writable])];
    const home = this.settings.home;
    const holdsHome = sandbox.mode === "workspace-write" && home !== undefined &&
      writable.find((root) => within(home, root));
    if (holdsHome) {
      throw new EngineError(
        "forbidden",
        `the sandbox would make ${holdsHome} writable, which holds the home directory ` +
          `${home}: what runs outside the sandbox reads from there (shell start-up files, ` +
          "git and editor settings). Work in a project directory, or use mode 'read-only'",
        context.base,
      );
    }
    const info: SandboxInfo = {
      mode: sandbox.mode,
      network: sandbox.network === "allow" ? { allow: sandbox.allowed } : sandbox.network,
      backend: "",
    };
    const releases: (() => void)[] = [];
    const release = () => releases.splice(0).forEach((step) => step());
    try {
      const env: Record<string, string> = {};
      let scratch: string | undefined;
      if (sandbox.mode === "workspace-write") {
        scratch = makeTemporaryFolder({ dir: this.#scratchDirectory() });
        releases.push(() => removeQuietly(scratch!));
        env.TMPDIR = env.TMP = env.TEMP = scratch;
        info.writable = writable;
      }
      let network: SandboxSpec["network"] = { kind: sandbox.network === "on" ? "on" : "off" };
      if (sandbox.network === "allow") {
        const client = await this.#proxyClient(sandbox.lists, info, context.refused);
        releases.push(client.release);
        network = { kind: "proxy", port: client.port };
        for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]) {
          env[name] = env[name.toLowerCase()] = client.url;
        }
        // Node 24 and later take the proxy from the environment only when told to.
        env.NODE_USE_ENV_PROXY = "1";
      }
      const spec: SandboxSpec = {
        mode: sandbox.mode,
        writable,
        hidden: [...this.settings.hidden, ...(this.#scratchRoot ? [this.#scratchRoot] : [])],
        readable: context.readable,
        scratch,
        network,
      };
      let backend: SandboxBackend;
      try {
        backend = await sandboxSupport(spec);
      } catch (error) {
        if (!(error instanceof SpawnError)) throw error;
        throw new EngineError("failed", error.message, context.base);
      }
      info.backend = backend.name;
      if (backend.unenforced.length) info.unenforced = backend.unenforced;
      const unset = network.kind === "proxy" ? ["NO_PROXY", "no_proxy"] : [];
      return { spec, env, unset, info, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** A registration with the proxy (started with the first allowlist): its refusals go to `info`. */
  async #proxyClient(
    lists: HostRule[][],
    info: SandboxInfo,
    refused: (refusal: Refusal) => void,
  ): Promise<{ url: string; port: number; release: () => void }> {
    const proxy =
      await (this.#proxy ??= import("./proxy.ts").then(({ NetworkProxy }) => NetworkProxy.start()));
    let count = 0;
    const client = proxy.register(lists, (refusal) => {
      info.refused = [...(info.refused ?? []), refusal].slice(-REFUSALS_KEPT);
      info.refusedCount = ++count;
      refused(refusal);
    });
    return { ...client, port: proxy.port };
  }

  /** Stops the proxy, removes the temporary directories, lets go of what starts keep ready. */
  async close(): Promise<void> {
    const proxy = this.#proxy;
    this.#proxy = undefined;
    if (proxy) (await proxy.catch(() => undefined))?.close();
    if (this.#scratchRoot) removeQuietly(this.#scratchRoot);
    this.#scratchRoot = undefined;
    await releaseSandboxes();
  }

  /** The folder of every sandbox's temporary directory: hidden from all, each granted its own. */
  #scratchDirectory(): string {
    return this.#scratchRoot ??= Deno.realPathSync(
      makeTemporaryFolder({ prefix: "winterm-sandbox-" }),
    );
  }
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // already gone
  }
}
