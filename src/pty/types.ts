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

/**
 * A directory opened for a child to start in (`openDirectory`): the child starts in exactly
 * this directory, whatever happens to the names on its path in the meantime.
 */
export interface OpenDirectory {
  /** Its real path (no links, no `..`), as the OS reports it for the open directory. */
  readonly path: string;
  /** POSIX: the open descriptor. */
  readonly fd?: number;
  /** Lets go of it (once the child has started). */
  close(): void;
}

/** What to start. */
export interface SpawnOptions {
  /** The program: a path, or a name looked up on `env.PATH` (and PATHEXT on Windows). */
  file: string;
  /** Arguments, not including the program itself. */
  args: string[];
  /** Working directory of the child; must exist. */
  cwd: string;
  /** The working directory, opened: when given, the child starts in it (`cwd` is its path). */
  directory?: OpenDirectory;
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
  /** Confine the child and everything it starts (see {@link SandboxSpec}). */
  sandbox?: SandboxSpec;
}

/**
 * How a sandboxed child is confined. Reading is allowed everywhere but `hidden`; writing only
 * where `mode` says; the network as `network` says. Everything it starts is confined the same
 * way, for good.
 */
export interface SandboxSpec {
  /** `read-only`: no writes but to its terminal and /dev/null; `workspace-write`: also `writable`. */
  mode: "read-only" | "workspace-write";
  /** Directories the child may write under (workspace-write): absolute real paths. */
  writable: string[];
  /** Paths whose contents the child may not read, nor create or change (absolute). */
  hidden: string[];
  /** Directories it may read whatever is hidden (the shell integration's files). */
  readable?: string[];
  /**
   * Its own temporary directory (workspace-write), writable though its parent is hidden (which
   * keeps other sandboxes' out of reach).
   */
  scratch?: string;
  /** `off`: no socket but AF_UNIX; `proxy`: TCP to this loopback port only; `on`: anything. */
  network: { kind: "off" } | { kind: "on" } | { kind: "proxy"; port: number };
}

/** How a sandbox is enforced here (see `sandboxSupport`). */
export interface SandboxBackend {
  /** `landlock+seccomp` (Linux), `seatbelt` (macOS). */
  name: string;
  /** What this kernel cannot enforce of what the sandbox promises elsewhere. */
  unenforced: string[];
}

/**
/**
 * What will run for some {@link SpawnOptions}, decided before anything starts (by
 * `prepareSpawn`), so that a caller can judge every image that runs and then start exactly
 * this (`spawn`), without the file being looked up again.
 */
export interface PreparedSpawn {
  readonly options: SpawnOptions;
  /** The program, resolved: an absolute path (the name found; it may be a link). */
  readonly program: string;
  /**
   * The program's real path, links resolved once: the file to judge. POSIX starts exactly
   * this file (argv[0] keeps the name asked for, for multi-call programs), so a link changed
   * after the judgment changes nothing; Windows gives CreateProcessW `program`.
   */
  readonly realProgram: string;
  /**
   * The image that really runs the program when it is not the program itself: on Windows the
   * system's own cmd.exe for a batch file (`.bat`, `.cmd`).
   */
  readonly interpreter?: string;
  /** Windows: what CreateProcessW gets. */
  readonly windows?: { application: string; commandLine: string };
  /** How the sandbox asked for is enforced. */
  readonly sandbox?: SandboxBackend;
}

/**
 * How a child ended. Usually exactly one of the two is set; on Windows kills both may be.
 * Both null means the child ended but how is unknown: its status was taken by someone else
 * (POSIX `waitpid` answered ECHILD). Never read that as success; see {@link UNKNOWN_EXIT}.
 */
export interface ExitStatus {
  /** The exit code, or null when a signal ended the process (or the status is unknown). */
  exitCode: number | null;
  /** The POSIX name of the signal that ended the process (`SIGTERM`), or null. */
  signal: string | null;
}

/** The status of a child that ended in a way nobody can tell any more. */
export const UNKNOWN_EXIT: Readonly<ExitStatus> = Object.freeze({ exitCode: null, signal: null });

/** "exit code 0", "signal SIGTERM", or "exit status unknown". */
export function describeExit(status: ExitStatus): string {
  if (status.signal) return `signal ${status.signal}`;
  return status.exitCode === null ? "exit status unknown" : `exit code ${status.exitCode}`;
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

/** How long a write may wait for the child to take its input, by default. */
export const WRITE_TIMEOUT_MS = 10_000;

/** A thread of a terminal's foreground program, blocked reading the terminal. */
export interface TerminalReader {
  pid: number;
  tid: number;
  /** The thread's context switches so far: a change means it has run in between. */
  switches: number;
}

/**
 * Called with each chunk of output. The chunk is lent: its memory is read into again once the
 * listener returns, so a listener that keeps bytes copies them (`data.slice()`).
 */
export type DataListener = (data: Uint8Array, stream: StreamName) => void;

/**
 * A running child. Output arrives through {@link onData} listeners, never before the
 * function that spawned the child has returned, so listeners added right away see every byte.
 * {@link exited} settles only after all output has been delivered.
 */
/** How a terminal takes what is typed (its line discipline's modes, POSIX termios). */
export interface InputModes {
  /** It collects a line until Enter, editable with Backspace (ICANON); else bytes pass as typed. */
  lineMode: boolean;
  /** It shows what is typed (ECHO). In raw mode a line editor may show it instead. */
  echo: boolean;
}

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
  /**
   * Windows, pipe mode: the code page the child's console has now (a `chcp` in the command
   * changes it; see windows/console_code_page.ts); undefined where it cannot be known.
   */
  consoleCodePage?(): Promise<number | undefined>;
  /** Settles once the child has exited, been reaped, and its output is drained. */
  readonly exited: Promise<ExitStatus>;
  /** Adds an output listener. The first one added also gets what was read before it came. */
  onData(listener: DataListener): void;
  /**
   * Queues bytes for the child's input. Settles when the OS has taken them all; rejects if the
   * input is closed, the child is gone, a terminal in line mode would drop part of them (a line
   * longer than it holds), or the child has not taken them all within `timeoutMs` (default
   * {@link WRITE_TIMEOUT_MS}): the error then says how many it took; the rest is not sent.
   */
  write(data: Uint8Array, timeoutMs?: number): Promise<void>;
  /**
   * Why {@link write} would refuse `data` whole now (a terminal in line mode would drop part of
   * it), or undefined if it would not: so that a caller can refuse before it acts on the input.
   */
  refusal(data: Uint8Array): string | undefined;
  /** Signals end of input: closes the stdin pipe, or sends the terminal's EOF character. */
  closeInput(): Promise<void>;
  /**
   * Writes `data` as the rest of the program's input, then ends it: on pipes the bytes as they
   * are, then the pipe closed; on a terminal, typed, then end of input as the terminal reads it
   * (see the platforms' {@link ChildBase} subclasses). Nothing is refused: in line mode a line
   * longer than the terminal keeps is handed over in parts (each ended by the EOF character,
   * which hands the program what is typed so far), so that every byte arrives however large
   * `data` is. Settles once the OS has taken it all; rejects as {@link write} does (the input
   * closed, the child gone, or not all taken within `timeoutMs`).
   */
  writeLast(data: Uint8Array, timeoutMs?: number): Promise<void>;
  /**
   * The thread of the terminal's foreground program that is blocked reading the terminal (PTY
   * mode), or null if none is (it computes, sleeps, waits for something else). Undefined where
   * the platform cannot tell: pipe mode, after the exit, macOS and Windows (see
   * posix/terminal_reader.ts for what counts as reading).
   */
  terminalReader(): TerminalReader | null | undefined;
  /**
   * Whether everything the program has written to the terminal so far has reached the
   * {@link onData} listeners (PTY mode): false while some of it waits to be read, or is being
   * read. Asked after {@link terminalReader} found a reader, true says that what the reader
   * printed before it began to wait (its prompt) has arrived. Undefined where the platform
   * cannot tell (pipe mode, Windows).
   */
  outputDelivered(): boolean | undefined;
  /**
   * The terminal's input modes now (PTY mode), undefined where the platform cannot tell: pipe
   * mode, after the exit, Windows (a pseudoconsole's modes are its programs' console modes).
   */
  inputModes(): InputModes | undefined;
  /**
   * Whether the program the child runs now was started with `text` among its arguments or in
   * its environment: false once the child has replaced itself (exec) with a program started
   * without it. Undefined where the platform cannot tell: after the exit, macOS and Windows
   * (Linux reads /proc/<pid>/cmdline and environ, which exec replaces).
   */
  startedWith(text: string): boolean | undefined;
  /** Changes the terminal size (PTY mode). Throws with the reason when the OS refuses. */
  resize(cols: number, rows: number): void;
  /**
   * Sends a signal to the child's whole process tree (posix/tree.ts). On Windows, where
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
