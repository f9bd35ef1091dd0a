/**
 * What both services (commands, terminals) do to start a child: a slot in their table (their
 * limit, the starts under way counted against it, none once the engine shuts down), then the
 * child's directory, environment and encodings, its launch, and its codec.
 *
 * @example
 * ```ts
 * import { EngineError } from "./errors.ts";
 * import { SlotTable } from "./start.ts";
 * const open = new Set<string>();
 * const slots = new SlotTable(
 *   2,
 *   () => open.size,
 *   (count) => new EngineError("limit", `${count} open, the most allowed`),
 *   () => {},
 * );
 * await slots.take(async () => open.add("a"));
 * ```
 * @module
 */
import { childCodePage, type ChildProcess, type StdioMode } from "../pty/mod.ts";
import type { FrontEnd } from "./launching/audit.ts";
import { EngineError } from "./errors.ts";
import { malformedText } from "./output/code_pages.ts";
import {
  type LaunchContext,
  type Launcher,
  type LaunchFields,
  resolveDirectory,
} from "./launching/launcher.ts";
import { childEnvironment } from "./launching/environment.ts";
import type { SandboxRequest } from "./launching/sandbox.ts";
import type { Invocation } from "./launching/shells.ts";
import {
  checkTerminalEncoding,
  ChildCodec,
  type RequestedEncoding,
  requestedEncoding,
} from "./encoding.ts";

/** A service's slots: how many may be open at once, and the starts under way (they count). */
export class SlotTable {
  #starting = 0;

  constructor(
    readonly limit: number,
    /** How many are open now (the starts under way aside). */
    private readonly open: () => number,
    /** The refusal at the limit, given how many are open with those starting. */
    private readonly full: (open: number) => EngineError,
    /** Throws once the engine shuts down (see Launcher.checkOpen): that refusal comes first. */
    private readonly checkOpen: () => void,
  ) {}

  /**
   * Runs `start` in a slot: refused once the engine shuts down, or at the limit; the slot
   * counts until `start` settles (then what it started is open, or nothing is). Nothing waits
   * between the check and the count, so no other start can come between them.
   */
  async take<T>(start: () => Promise<T>): Promise<T> {
    this.checkOpen();
    const open = this.open() + this.#starting;
    if (open >= this.limit) throw this.full(open);
    this.#starting++;
    try {
      return await start();
    } finally {
      this.#starting--;
    }
  }
}

/** What a start request holds that both services read the same way. */
export interface ChildRequest {
  /** Working directory; relative paths resolve against the server's. */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * How the program's bytes are read and its input written (`utf-8`, `oem`, `ansi`, a code
   * page or a label); default: followed (see encoding.ts). On Windows, where conhost always
   * speaks UTF-8, a cmd or PowerShell shell's console is switched to it.
   */
  encoding?: string;
  /**
   * Windows: start even though the ANSI view of the program, its arguments, the command or
   * the working directory differs from them (see launching/ansi_view.ts).
   */
  allowAnsiMismatch?: boolean;
  /** The front end that asked (for the audit log). */
  via?: FrontEnd;
  /** Aborted when the caller gives up: a start still waiting for its turn is not made. */
  signal?: AbortSignal;
  /** Its sandbox (it can only tighten the server's, which applies without one). */
  sandbox?: SandboxRequest;
}

/** Where and how a child starts, besides its request. */
export interface ChildPlan {
  mode: StdioMode;
  cols: number;
  rows: number;
  /** Variables the child gets unless the request sets them. */
  envDefaults: Record<string, string>;
  /** The request fields errors name. */
  fields: LaunchFields;
  context: LaunchContext;
  /**
   * What runs, in the resolved directory and environment (which it may add to), for the code
   * page asked for.
   */
  invocation(place: { cwd: string; env: Record<string, string>; codePage?: number }): Invocation;
  /** Directories a sandboxed child must be able to read (see LaunchOptions.readable). */
  readable?(invocation: Invocation): string[] | undefined;
  /**
   * What must hold before anything starts, given how the child's input is encoded: a refusal
   * it throws starts nothing.
   */
  beforeLaunch?(codec: ChildCodec): void;
}

/** A child started, and what it was started from. */
export interface StartedChild {
  child: ChildProcess;
  codec: ChildCodec;
  invocation: Invocation;
  cwd: string;
  encoding: RequestedEncoding | undefined;
}

/**
 * Refuses text that is no text (a lone surrogate: see malformedText), naming its field: a
 * program, an argument, a directory or a variable made of it would get U+FFFD in its place.
 */
function refuseMalformed(texts: readonly (readonly [string | undefined, string])[]): void {
  for (const [text, field] of texts) {
    const malformed = text === undefined ? undefined : malformedText(text);
    if (malformed !== undefined) {
      throw new EngineError(
        "invalid_input",
        malformed.replace("nothing was sent", "nothing was started"),
        field,
      );
    }
  }
}

/**
 * Starts a child as `plan` says: its directory resolved, its environment made, the encoding
 * asked for checked against what runs, launched (policy, audit, sandbox), with its codec.
 * The encodings must have been prepared (see prepareEncodings). Throws {@link EngineError}
 * naming the field at fault.
 */
export async function startChild(
  launcher: Launcher,
  request: ChildRequest,
  plan: ChildPlan,
): Promise<StartedChild> {
  refuseMalformed([
    [request.cwd, plan.fields.cwd],
    ...Object.entries(request.env ?? {}).flat().map((text) => [text, plan.fields.env] as const),
  ]);
  const cwd = resolveDirectory(request.cwd, plan.fields.cwd);
  const env = childEnvironment(request.env, plan.envDefaults);
  const encoding = requestedEncoding(request.encoding);
  const invocation = plan.invocation({ cwd, env, codePage: encoding?.codePage });
  const argsField = invocation.shell === "executable"
    ? plan.fields.args ?? "args"
    : plan.fields.program;
  refuseMalformed([
    [invocation.file, plan.fields.program],
    ...invocation.args.map((arg) => [arg, argsField] as const),
  ]);
  checkTerminalEncoding(encoding, plan.mode === "pty", invocation.codePage);
  const codec = new ChildCodec(
    { codePage: childCodePage(plan.mode) },
    encoding,
    invocation.codePage,
  );
  plan.beforeLaunch?.(codec);
  const child = await launcher.launch(
    invocation,
    {
      cwd,
      env,
      envOverrides: request.env ?? {},
      mode: plan.mode,
      cols: plan.cols,
      rows: plan.rows,
      signal: request.signal,
      sandbox: request.sandbox,
      readable: plan.readable?.(invocation),
      allowAnsiMismatch: request.allowAnsiMismatch,
    },
    plan.fields,
    plan.context,
  );
  return {
    child,
    codec,
    invocation,
    cwd,
    encoding,
  };
}
