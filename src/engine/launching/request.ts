/**
 * The one shape of a start on its way down, after portable-pty's `CommandBuilder`: a front end
 * translates its arguments into a request in the engine's words ({@link RunRequest} for a
 * command, {@link CreateTerminalRequest} for a terminal, both a {@link StartRequest}); the
 * service, the shell resolution and the launcher read that same value; the engine's own
 * additions (the program found, the directory and environment resolved) join it in a
 * {@link Launch}, which holds the request rather than copying it; and the launcher makes the
 * platform layer's `SpawnOptions` from that at the one door into src/pty. Who asked and when
 * to give up ({@link Caller}) travel beside it: they are not the request.
 *
 * @example
 * ```ts
 * import type { Caller, RunRequest } from "./request.ts";
 * const request: RunRequest = { command: "echo hi", shellType: "sh", cwd: "/tmp" };
 * const caller: Caller = { via: "rest" };
 * ```
 * @module
 */
import type { StdioMode } from "../../pty/mod.ts";
import type { RequestedEncoding } from "../encoding.ts";
import type { ShellType } from "../vocabulary.ts";
import type { FrontEnd } from "./audit.ts";
import type { SandboxRequest } from "./sandbox.ts";
import type { Invocation } from "./shells.ts";

/** What every start asks, whichever service starts it. */
export interface StartRequest {
  /** Working directory; relative paths resolve against the server's. */
  cwd?: string;
  /** Extra environment variables (also what a policy judges). */
  env?: Record<string, string>;
  /**
   * How the program's bytes are read and its input written (`utf-8`, `oem`, `ansi`, a code
   * page or a label); default: followed (see encoding.ts). On Windows, where conhost always
   * speaks UTF-8, a cmd or PowerShell shell's console is switched to it.
   */
  encoding?: string;
  /**
   * Windows: start even though the ANSI view of the program, its arguments, the command or
   * the working directory differs from them (see ansi_view.ts).
   */
  allowAnsiMismatch?: boolean;
  /** Its sandbox (it can only tighten the server's, which applies without one). */
  sandbox?: SandboxRequest;
}

/** A command to run (CommandService.run). */
export interface RunRequest extends StartRequest {
  command: string;
  shellType: ShellType;
  /** The program (with `executable`), or the path of the shell to use (with a shell type). */
  executable?: string;
  /** Arguments (with `executable` only). */
  args?: string[];
  /** PTY (default) or pipes (stdout and stderr kept apart; PowerShell silences progress). */
  usePty?: boolean;
  /** Seconds before the command is stopped. Default 30. */
  timeoutSeconds?: number;
  /** Bytes kept per stream; at most the service's `maxBufferSize` (also the default). */
  maxBufferSize?: number;
  /**
   * Text the program reads as its standard input, then end of input (see command/stdin.ts):
   * on pipes as it is, then the pipe closed; on a terminal typed, then EOF as the terminal
   * reads it. At most STDIN_MAX_BYTES (1 MiB) once encoded.
   */
  stdin?: string;
}

/** A terminal to open (TerminalService.create). */
export interface CreateTerminalRequest extends StartRequest {
  /** A program (with `args`), or a command line for the shell (without, or `[]`). None: a shell. */
  command?: string;
  args?: string[];
  /** `default`, `powershell`, `cmd`, `bash`, `sh`, `zsh`, `fish`, or the path of a shell. */
  shell?: string;
  /**
   * Start a shell (no `command`) with shell integration (see integration/), so that its
   * prompt, commands, exit codes and cwd are known. Default true.
   */
  shellIntegration?: boolean;
  cols?: number;
  rows?: number;
  /** ACP: `terminal_output` returns at most this many of the newest bytes (at most `maxBytes`). */
  outputByteLimit?: number;
}

/** Who asked for a start, and when they give up: beside the request, never in it. */
export interface Caller {
  /** The front end that asked (for the audit log). Default `internal`. */
  via?: FrontEnd;
  /** Aborted when the caller gives up: a start still waiting for its turn is not made. */
  signal?: AbortSignal;
}

/**
 * A start as the launcher takes it: the request, and what the engine added to it (the
 * CommandBuilder's argv, cwd and env, resolved). Built once by the service, read down to the
 * spawn.
 */
export interface Launch {
  readonly request: StartRequest;
  /** What runs: the program and its arguments, as the shell resolution decided (shells.ts). */
  readonly invocation: Invocation;
  /** The working directory, resolved and checked. */
  readonly cwd: string;
  /** The child's whole environment: the server's, the defaults, the request's, the shell's. */
  readonly env: Record<string, string>;
  /** The encoding asked for, resolved (undefined: followed). */
  readonly encoding: RequestedEncoding | undefined;
  readonly mode: StdioMode;
  readonly cols: number;
  readonly rows: number;
  /**
   * The engine's keys of the fields that hold the program and its arguments, for errors: they
   * differ by service and by what the request gave (`executable`, `command`, `shell`, `args`).
   */
  readonly fields: { program: string; args: string };
  /** Directories a sandboxed child must be able to read whatever is hidden (shell integration). */
  readonly readable?: string[];
}
