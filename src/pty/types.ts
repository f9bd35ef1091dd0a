/**
 * The platform layer's one interface: a child process whose standard streams are either a
 * pseudo-terminal or three pipes. Implemented by `posix/` (libc) and `windows/` (kernel32
 * ConPTY). Nothing here knows about MCP, commands or buffers.
 *
 * @module
 */

/** How the child's standard streams are connected. */
export type StdioMode = "pty" | "pipe";

/** The name of an output stream. In PTY mode everything arrives as `stdout`. */
export type StreamName = "stdout" | "stderr";

/** What to start. */
export interface SpawnOptions {
  /** The program: a path, or a name looked up on `env.PATH` (and PATHEXT on Windows). */
  file: string;
  /** Arguments, not including the program itself. */
  args: string[];
  /** Working directory of the child; must exist. */
  cwd: string;
  /** The child's complete environment (nothing is inherited implicitly). */
  env: Record<string, string>;
  /** `pty` (default) or `pipe`. */
  mode?: StdioMode;
  /** Terminal width in cells (PTY mode). Default 80. */
  cols?: number;
  /** Terminal height in cells (PTY mode). Default 24. */
  rows?: number;
  /**
   * Windows: join `args` with spaces as they are, without CommandLineToArgvW quoting (for
   * cmd.exe, whose `/s /c "..."` takes the rest of the line verbatim). Ignored elsewhere.
   */
  verbatimArguments?: boolean;
}

/**
 * What will run for some {@link SpawnOptions}, decided before anything starts (by
 * `prepareSpawn`), so that a caller can judge every image that runs and then start exactly
 * this (`spawn`), without the file being looked up again.
 */
export interface PreparedSpawn {
  readonly options: SpawnOptions;
  /** The program, resolved: an absolute path. */
  readonly program: string;
  /**
   * The image that really runs the program when it is not the program itself: on Windows the
   * system's own cmd.exe for a batch file (`.bat`, `.cmd`).
   */
  readonly interpreter?: string;
  /** Windows: what CreateProcessW gets. */
  readonly windows?: { application: string; commandLine: string };
}

/** How a child ended. Exactly one of the two is set, except on Windows kills (both may be). */
export interface ExitStatus {
  /** The exit code, or null when a signal ended the process. */
  exitCode: number | null;
  /** The POSIX name of the signal that ended the process (`SIGTERM`), or null. */
  signal: string | null;
}

/** A signal name accepted by {@link ChildProcess.kill}. */
export type SignalName =
  | "SIGHUP"
  | "SIGINT"
  | "SIGQUIT"
  | "SIGKILL"
  | "SIGTERM"
  | "SIGUSR1"
  | "SIGUSR2"
  | "SIGCONT"
  | "SIGSTOP"
  | "SIGTSTP"
  | "SIGWINCH";

/** The signal names accepted by {@link ChildProcess.kill}, for validation. */
export const SIGNAL_NAMES: readonly SignalName[] = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGKILL",
  "SIGTERM",
  "SIGUSR1",
  "SIGUSR2",
  "SIGCONT",
  "SIGSTOP",
  "SIGTSTP",
  "SIGWINCH",
];

/** Called with each chunk of output. The chunk is the listener's to keep. */
export type DataListener = (data: Uint8Array, stream: StreamName) => void;

/**
 * A running child. Output arrives through {@link onData} listeners, never before the
 * function that spawned the child has returned, so listeners added right away see every byte.
 * {@link exited} settles only after all output has been delivered.
 */
export interface ChildProcess {
  /** The operating system's process id. */
  readonly pid: number;
  /** How the standard streams are connected. */
  readonly mode: StdioMode;
  /**
   * What the child's bytes are. `"utf-8"`: a console translates them (a Windows pseudoconsole
   * always speaks UTF-8 to us, whatever the program's code page). Otherwise they are the
   * program's own bytes, and this is the code page of the console the program runs on (Windows
   * pipes: what a console program writes and reads unless it chooses otherwise), or null where
   * there is none (POSIX, where UTF-8 is the convention).
   */
  readonly codePage: "utf-8" | number | null;
  /** Settles once the child has exited, been reaped, and its output is drained. */
  readonly exited: Promise<ExitStatus>;
  /** Adds an output listener. */
  onData(listener: DataListener): void;
  /**
   * Queues bytes for the child's input. Settles when the OS has taken them all; rejects if the
   * input is closed or the child is gone.
   */
  write(data: Uint8Array): Promise<void>;
  /** Signals end of input: closes the stdin pipe, or sends the terminal's EOF character. */
  closeInput(): Promise<void>;
  /** Changes the terminal size (PTY mode). Throws with the reason when the OS refuses. */
  resize(cols: number, rows: number): void;
  /**
   * Sends a signal to the child's whole process tree (its session on POSIX). On Windows, where
   * the tree shares the child's console: SIGINT, SIGTERM and SIGQUIT are Ctrl+C typed into it
   * (CTRL_C_EVENT, which programs may handle), SIGHUP closes it (CTRL_CLOSE_EVENT, as when a
   * console window closes), SIGWINCH and SIGCONT do nothing, and the rest end the job object's
   * whole tree at once. No effect once the child has exited.
   */
  kill(signal?: SignalName): void;
}

/** A failure to start a child, with the OS error name (`ENOENT`, `EACCES`, ...). */
export class SpawnError extends Error {
  /** The OS error name, e.g. `ENOENT`. */
  readonly code: string;
  /** Where it looked (paths, PATH): for the server's own user, not for remote callers. */
  readonly detail?: string;
  constructor(code: string, message: string, detail?: string) {
    super(message);
    this.name = "SpawnError";
    this.code = code;
    this.detail = detail;
  }
}
