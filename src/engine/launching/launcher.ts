/**
 * The one way the engine starts a process: the working directory opened, the policy asked,
 * the child spawned, and every start, refusal, input, kill and exit written to the audit log.
 * Commands and terminals both go through it, whichever front end asked.
 *
 * What is judged is what runs: the program's real path (links resolved once) is both judged
 * and started on POSIX (argv[0] keeps the name asked for), and the working directory is
 * opened once, judged by the real path of the open directory, and entered through that
 * descriptor. A link flipped between the judgment and the start changes nothing, and the
 * audit log names the file and the directory that were really used.
 *
 * @module
 */
import { resolve } from "node:path";
import {
  type ChildProcess,
  isDirectory,
  type OpenDirectory,
  openDirectory,
  type PreparedSpawn,
  prepareSpawn,
  realPathOf,
  scriptInterpreters,
  searchPath,
  spawn,
  SpawnError,
  type SpawnOptions,
  type Supervision,
} from "../../pty/mod.ts";
import type { AuditLog, FrontEnd } from "./audit.ts";
import { EngineError, shuttingDown } from "../errors.ts";
import type { Policy } from "./policy.ts";
import { serverEnvironment } from "./environment.ts";
import { type PreparedSandbox, Sandboxes, type SandboxInfo, sandboxSettings } from "./sandbox.ts";
import { Turns } from "../turns.ts";
import { checkAnsiView, launchTexts } from "./ansi_view.ts";
import type { Launch } from "./request.ts";

/** Which process an audit record is about, and who asked. */
export interface LaunchContext {
  via: FrontEnd;
  kind: "command" | "terminal";
  /** The command's token or the terminal's id. */
  id: string;
}

/** Resolves a working directory and checks that it is one. */
export function resolveDirectory(path: string | undefined, field: string): string {
  // Told apart from a directory that is not there, as a NUL anywhere else is.
  if (path?.includes("\0")) {
    throw new EngineError("invalid_input", "may not contain NUL (the OS ends a path there)", field);
  }
  const directory = resolve(Deno.cwd(), path ?? ".");
  if (!isDirectory(directory)) {
    // The message repeats the caller's words; where that led on this machine is local detail.
    throw new EngineError(
      "invalid_input",
      `'${path ?? "."}' does not exist or is not a directory`,
      field,
      directory === path ? undefined : `resolved to ${directory}`,
    );
  }
  return directory;
}

/** Opens the working directory; a failure names `field`. */
function open(cwd: string, field: string): OpenDirectory {
  try {
    return openDirectory(cwd);
  } catch (error) {
    if (!(error instanceof SpawnError)) throw error;
    throw new EngineError("invalid_input", error.message, field, error.detail);
  }
}

/**
 * Turns a failed write into the engine's error: the program is gone, its input is closed, it
 * did not take the input in time, or a terminal in line mode could not hold it. The error
 * names `field`, the request's field that held the input.
 */
export async function inputFailure(write: Promise<void>, field = "input"): Promise<void> {
  try {
    await write;
  } catch (error) {
    throw new EngineError("failed", (error as Error).message, field);
  }
}

const WINDOWS = Deno.build.os === "windows";

/** An image that runs, for the policy to judge. */
interface Image {
  program: string;
  realProgram: string;
  /** What it is to the program asked for, when it is not that program (for the refusal). */
  role?: string;
}

/** A failure to start, as the engine's error naming the program's field. */
function startFailure(error: unknown, launch: Launch): unknown {
  if (!(error instanceof SpawnError)) return error;
  // A command line of 1,000 arguments made a message of 200 KB.
  const { display } = launch.invocation;
  const shown = display.length > DISPLAY_MOST ? `${display.slice(0, DISPLAY_MOST)}…` : display;
  return new EngineError(
    // Out of descriptors: the server's limit, not the request's fault.
    LIMITS_MET.has(error.code) ? "limit" : "invalid_input",
    `cannot start ${shown}: ${error.message}`,
    LIMITS_MET.has(error.code) ? undefined : launch.fields.program,
    error.detail,
  );
}

/**
 * The platform layer's options for `launch`, in the directory opened for it: the one place a
 * start leaves the engine's words for src/pty's, which knows nothing of commands.
 */
function spawnOptions(launch: Launch, directory: OpenDirectory): SpawnOptions {
  const { invocation } = launch;
  return {
    file: invocation.file,
    args: invocation.args,
    verbatimArguments: invocation.verbatimArguments,
    cwd: directory.path,
    directory,
    env: launch.env,
    mode: launch.mode,
    cols: launch.cols,
    rows: launch.rows,
  };
}

/** `prepared`, to start confined by `sandbox` (with its variables). */
function sandboxed(prepared: PreparedSpawn, sandbox: PreparedSandbox): PreparedSpawn {
  const env = { ...prepared.options.env, ...sandbox.env };
  for (const name of sandbox.unset) delete env[name];
  return { ...prepared, options: { ...prepared.options, env, sandbox: sandbox.spec } };
}

/**
 * The directories a bare name of the policy finds programs in: the child's PATH, then the
 * server's (each once).
 */
function policySearchPath(env: Record<string, string>, cwd: string): string[] {
  return [...new Set([...searchPath(env, cwd), ...searchPath(serverEnvironment(), cwd)])];
}

const encoder = new TextEncoder();
/** Characters of a command line shown in a message about it. */
const DISPLAY_MOST = 200;
/** Errors of a start that say a limit of the server or the system was met. */
const LIMITS_MET = new Set(["EMFILE", "ENFILE"]);
/** Starts under way at once: one a core (at least two) waiting on the blocking pool. */
const START_WIDTH = Math.max(2, navigator.hardwareConcurrency ?? 2);

/** See the module documentation. */
/** What really runs, and where, as the audit records it. */
interface RanProgram {
  program: string;
  requested?: string;
  interpreter?: string | string[];
  cwd: string;
}

export class Launcher {
  /** Aborted by {@link close}: starts waiting in line leave it, refused. */
  #closing = new AbortController();
  /**
   * Starts take turns, {@link START_WIDTH} at a time: each works on the event loop from the
   * directory's opening to the spawn (the PTY, lookups, `posix_spawn` handed to the blocking
   * pool). 250 at once held every other request for 1.5 s, the pool growing a thread for each.
   */
  #starts = new Turns(START_WIDTH);

  /** The sandbox each started child was given. */
  #sandboxOf = new WeakMap<ChildProcess, SandboxInfo>();
  #sandboxes: Sandboxes | undefined;

  /**
   * `sandboxes`: the server's (default: none configured, `off` unless a call asks).
   * `supervision`: the server's charge of what it starts (groundwork.ts), given to every spawn.
   */
  constructor(
    readonly policy?: Policy,
    readonly audit?: AuditLog,
    sandboxes?: Sandboxes,
    private readonly supervision?: Supervision,
  ) {
    this.#sandboxes = sandboxes;
  }

  /** The sandboxes, made with the default settings if none were given. */
  get sandboxes(): Sandboxes {
    return this.#sandboxes ??= new Sandboxes(
      sandboxSettings({}, undefined, {
        home: serverEnvironment().HOME,
        auditPath: this.audit?.path,
      }),
    );
  }

  /** The sandbox `child` runs in, if any (for answers). */
  sandboxOf(child: ChildProcess): SandboxInfo | undefined {
    return this.#sandboxOf.get(child);
  }

  /** Once nothing runs: stops the sandboxes' proxy, removes their temporary directories. */
  async closeSandboxes(): Promise<void> {
    await this.#sandboxes?.close();
  }

  /**
   * Nothing starts from now on: the server is shutting down, and a process started after its
   * shutdown looked at what runs would be ended only by the last sweep, its request unanswered.
   */
  close(): void {
    this.#closing.abort(shuttingDown());
  }

  /** Throws the shutdown's refusal once {@link close} was called: it comes before any limit's. */
  checkOpen(): void {
    this.#closing.signal.throwIfAborted();
  }

  /**
   * Decides what will run, checks every image that runs against the policy (the program, and
   * the interpreter that runs it: cmd.exe for a batch file) and the real working directory,
   * and starts exactly that. `signal`: the caller gave up (its request was cancelled), and a
   * start still waiting for its turn leaves. Throws {@link EngineError}.
   */
  async launch(
    launch: Launch,
    context: LaunchContext,
    signal?: AbortSignal,
  ): Promise<ChildProcess> {
    this.checkOpen();
    const done = await this.#starts.take(
      signal ? AbortSignal.any([this.#closing.signal, signal]) : this.#closing.signal,
    );
    try {
      this.checkOpen();
      const directory = open(launch.cwd, "cwd");
      try {
        return await this.#launch(launch, context, directory);
      } finally {
        directory.close();
      }
    } finally {
      done();
    }
  }

  async #launch(
    launch: Launch,
    context: LaunchContext,
    directory: OpenDirectory,
  ): Promise<ChildProcess> {
    let prepared: PreparedSpawn;
    try {
      prepared = prepareSpawn(spawnOptions(launch, directory));
    } catch (error) {
      throw startFailure(error, launch);
    }
    const { images, unclear } = this.#images(prepared, directory.path, launch.env);
    // What really runs, and where: the audit says so.
    const runners = images.slice(1).map((image) => image.realProgram);
    const ran: RanProgram = {
      program: prepared.realProgram,
      ...(prepared.realProgram === prepared.program ? {} : { requested: prepared.program }),
      ...(runners.length ? { interpreter: runners.length === 1 ? runners[0] : runners } : {}),
      cwd: directory.path,
    };
    let sandbox: PreparedSandbox | undefined;
    try {
      if (!launch.request.allowAnsiMismatch) {
        const texts = launchTexts({
          program: prepared.program,
          args: launch.invocation.shell === "executable" ? launch.invocation.args : [],
          cwd: directory.path,
        }, { program: launch.fields.program, cwd: "cwd", args: launch.fields.args });
        checkAnsiView(texts, "allowAnsiMismatch");
      }
      this.#judge(images, unclear, prepared.program, directory.path, launch);
      sandbox = await this.#confine(launch, directory.path, context);
    } catch (error) {
      this.audit?.record({
        event: "refused",
        ...context,
        ...ran,
        reason: (error as Error).message,
      });
      throw error;
    }
    let child: ChildProcess;
    try {
      child = await spawn(sandbox ? sandboxed(prepared, sandbox) : prepared, this.supervision);
    } catch (error) {
      sandbox?.release();
      if (error instanceof SpawnError && error.code === "ESANDBOX") {
        throw new EngineError("failed", error.message, "sandbox");
      }
      throw startFailure(error, launch);
    }
    this.#started(child, launch, context, ran, sandbox);
    if (this.#closing.signal.aborted) {
      // The shutdown began while it started, and looked for what runs before it was there.
      child.kill("SIGKILL");
      throw shuttingDown();
    }
    return child;
  }

  /** A child has started: its sandbox is kept until it exits, and the audit has its start and exit. */
  #started(
    child: ChildProcess,
    { invocation }: Launch,
    context: LaunchContext,
    ran: RanProgram,
    sandbox: PreparedSandbox | undefined,
  ): void {
    if (sandbox) {
      this.#sandboxOf.set(child, sandbox.info);
      child.exited.finally(sandbox.release);
    }
    const confined = sandbox && {
      sandbox: {
        mode: sandbox.info.mode,
        network: sandbox.info.network,
        backend: sandbox.info.backend,
      },
    };
    this.audit?.record({
      event: "start",
      ...context,
      pid: child.pid,
      ...ran,
      args: invocation.args,
      command: invocation.display,
      ...confined,
    });
    child.exited.then((status) =>
      this.audit?.record({ event: "exit", kind: context.kind, id: context.id, ...status })
    );
  }

  /**
   * Every image that runs, to judge: the program, and whatever runs it (cmd.exe for a batch
   * file; a script's #! interpreters, read only for a policy that names programs), and what of
   * that chain cannot be told.
   */
  #images(
    prepared: PreparedSpawn,
    cwd: string,
    env: Record<string, string>,
  ): { images: Image[]; unclear?: string } {
    const images: Image[] = [{ program: prepared.program, realProgram: prepared.realProgram }];
    if (prepared.interpreter) {
      images.push({
        program: prepared.interpreter,
        realProgram: realPathOf(prepared.interpreter),
        role: `it is what runs the batch file ${prepared.program}`,
      });
      return { images };
    }
    if (WINDOWS || !this.policy?.judgesPrograms) return { images };
    const interpreters = scriptInterpreters(prepared.realProgram, { cwd, env });
    for (const interpreter of interpreters.chain) {
      images.push({
        program: interpreter.viaEnv ? interpreter.name : resolve(cwd, interpreter.name),
        realProgram: interpreter.realPath,
        role: interpreter.viaEnv
          ? `found on PATH by the #!/usr/bin/env line of ${interpreter.script}`
          : `it is the interpreter of ${interpreter.script}'s #! line`,
      });
    }
    return { images, unclear: interpreters.unclear };
  }

  /** Throws the policy's refusal of any of `images` (each named by its role). */
  #judge(
    images: Image[],
    unclear: string | undefined,
    program: string,
    cwd: string,
    launch: Launch,
  ): void {
    if (!this.policy) return;
    const fields = { program: launch.fields.program, cwd: "cwd", env: "env" };
    if (unclear !== undefined) {
      throw new EngineError(
        "forbidden",
        `refused by policy: cannot tell what runs ${program}: ${unclear}`,
        fields.program,
      );
    }
    const searchPath = policySearchPath(launch.env, cwd);
    for (const image of images) {
      try {
        this.policy.check({
          program: image.program,
          realProgram: image.realProgram,
          cwd,
          envOverrides: launch.request.env ?? {},
          searchPath,
        }, fields);
      } catch (error) {
        if (!(error instanceof EngineError) || image.role === undefined) throw error;
        throw error.restated({ more: ` (${image.role})` });
      }
    }
  }

  /** The sandbox of this start, set up (or none); throws naming `sandbox` when it cannot be. */
  async #confine(
    launch: Launch,
    cwd: string,
    context: LaunchContext,
  ): Promise<PreparedSandbox | undefined> {
    const resolved = this.sandboxes.resolve(launch.request.sandbox, "sandbox", cwd);
    if (!resolved) return undefined;
    return await this.sandboxes.prepare(resolved, {
      cwd,
      readable: launch.readable,
      base: "sandbox",
      refused: (refusal) =>
        this.audit?.record({
          event: "network-refused",
          kind: context.kind,
          id: context.id,
          ...refusal,
        }),
    });
  }

  /** Records input written to a process. */
  input(context: LaunchContext, text: string): void {
    if (!this.audit) return;
    const bytes = encoder.encode(text).length;
    this.audit.record({
      event: "input",
      ...context,
      bytes,
      ...(this.audit.inputContent ? { content: text } : {}),
    });
  }

  /** Records a kill or signal. */
  kill(context: LaunchContext, signal: string): void {
    this.audit?.record({ event: "kill", ...context, signal });
  }

  /** Records a viewer taking control of a terminal, or handing it back. */
  control(context: LaunchContext, event: "takeover" | "handback"): void {
    this.audit?.record({ event, ...context });
  }
}
