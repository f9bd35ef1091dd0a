/**
 * The one way the engine starts a process: the working directory checked, the policy asked,
 * the child spawned, and every start, refusal, input, kill and exit written to the audit log.
 * Commands and terminals both go through it, whichever front end asked.
 *
 * @module
 */
import { resolve } from "node:path";
import {
  type ChildProcess,
  isDirectory,
  type PreparedSpawn,
  prepareSpawn,
  spawn,
  SpawnError,
  type StdioMode,
} from "../../pty/mod.ts";
import type { AuditLog, FrontEnd } from "./audit.ts";
import { EngineError } from "../errors.ts";
import type { Policy } from "./policy.ts";
import type { Invocation } from "./shells.ts";

/** Which process an audit record is about, and who asked. */
export interface LaunchContext {
  via: FrontEnd;
  kind: "command" | "terminal";
  /** The command's token or the terminal's id. */
  id: string;
}

/** How to start it. */
export interface LaunchOptions {
  cwd: string;
  /** The child's whole environment. */
  env: Record<string, string>;
  /** The variables the request itself set (what the policy judges). */
  envOverrides: Record<string, string>;
  mode: StdioMode;
  cols: number;
  rows: number;
}

/** The names of the request fields that errors should point at. */
export interface LaunchFields {
  program: string;
  cwd: string;
  env: string;
}

/** Resolves a working directory and checks that it is one. */
export function resolveDirectory(path: string | undefined, field: string): string {
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

const encoder = new TextEncoder();

/** See the module documentation. */
export class Launcher {
  constructor(readonly policy?: Policy, readonly audit?: AuditLog) {}

  /**
   * Decides what will run, checks every image that runs against the policy (the program, and
   * the interpreter that runs it: cmd.exe for a batch file), and starts exactly that. Throws
   * {@link EngineError}.
   */
  launch(
    invocation: Invocation,
    options: LaunchOptions,
    fields: LaunchFields,
    context: LaunchContext,
  ): ChildProcess {
    const failed = (error: unknown) =>
      error instanceof SpawnError
        ? new EngineError(
          "invalid_input",
          `cannot start ${invocation.display}: ${error.message}`,
          fields.program,
          error.detail,
        )
        : error;
    let prepared: PreparedSpawn;
    try {
      prepared = prepareSpawn({
        file: invocation.file,
        args: invocation.args,
        verbatimArguments: invocation.verbatimArguments,
        cwd: options.cwd,
        env: options.env,
        mode: options.mode,
        cols: options.cols,
        rows: options.rows,
      });
    } catch (error) {
      throw failed(error);
    }
    const ran = {
      program: prepared.program,
      ...(prepared.interpreter ? { interpreter: prepared.interpreter } : {}),
    };
    try {
      for (const image of [prepared.program, prepared.interpreter]) {
        if (image === undefined) continue;
        try {
          this.policy?.check({
            program: image,
            cwd: options.cwd,
            envOverrides: options.envOverrides,
          }, fields);
        } catch (error) {
          if (!(error instanceof EngineError) || image === prepared.program) throw error;
          throw new EngineError(
            error.kind,
            `${error.message} (it is what runs the batch file ${prepared.program})`,
            error.field,
          );
        }
      }
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
      child = spawn(prepared);
    } catch (error) {
      throw failed(error);
    }
    this.audit?.record({
      event: "start",
      ...context,
      pid: child.pid,
      ...ran,
      args: invocation.args,
      cwd: options.cwd,
      command: invocation.display,
    });
    child.exited.then((status) =>
      this.audit?.record({ event: "exit", kind: context.kind, id: context.id, ...status })
    );
    return child;
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
