/**
 * Children on Windows: on a pseudoconsole (ConPTY) or with three pipes, always in a job object
 * that ends the whole tree, with every pipe and the job served by the one completion port.
 *
 * - PTY mode: CreatePseudoConsole on named pipes whose server ends we read and write with
 *   overlapped I/O; STARTUPINFOEXW with STARTF_USESTDHANDLES and NULL handles (our stdout is
 *   the MCP stream: a child must never inherit it) and bInheritHandles = FALSE.
 * - Pipe mode: the child's three pipe ends are the only handles it inherits
 *   (PROC_THREAD_ATTRIBUTE_HANDLE_LIST); it gets a console without a window.
 * - Both: CREATE_SUSPENDED, then the job (KILL_ON_JOB_CLOSE, exits reported to the port), then
 *   ResumeThread. Command lines follow CommandLineToArgvW; `.bat`/`.cmd` go through cmd.exe
 *   with arguments quoted for cmd, or are refused when they cannot be made safe.
 * - End of output: after the exit, the output is drained until it goes quiet, then the
 *   pseudoconsole is closed off the reading path (ClosePseudoConsole may block until conhost
 *   has flushed) and reading goes on until the pipe breaks.
 *
 * @module
 */
import { win32 } from "node:path";
import { log } from "../../log.ts";
import { checkSpawnOptions, envValue, resolveProgram } from "../resolve.ts";
import {
  type ChildProcess,
  type DataListener,
  type ExitStatus,
  type SignalName,
  SpawnError,
  type SpawnOptions,
  type StdioMode,
  type StreamName,
} from "../types.ts";
import { CommandLineError, quoteWindowsArg, quoteWindowsCommandLine } from "./command_line.ts";
import { environmentBlock } from "./environment.ts";
import {
  codePageLabel,
  coord,
  errnoFor,
  type Handle,
  isInvalid,
  kernel32,
  LAYOUT,
  W,
  wide,
  Win32Error,
} from "./kernel32.ts";
import { reactor, type WindowsReactor } from "./reactor.ts";
import { OverlappedReader, OverlappedWriter } from "./streams.ts";

/** Output must be quiet this long after the exit before the pseudoconsole is closed. */
const QUIET_MS = 100;
/** Longest wait for quiet output, and for the pipes to break once conhost is told to go. */
const DRAIN_LIMIT_MS = 2000;
const PIPE_BUFFER = 64 * 1024;
/** The exit code a killed tree reports. */
const KILLED_EXIT_CODE = 1;
let pipeCounter = 0;
let ctrlHandlerReset = false;

/** Starts a child per `options`. Throws {@link SpawnError} when it cannot start. */
export function spawnWindows(options: SpawnOptions): ChildProcess {
  const mode = options.mode ?? "pty";
  checkSpawnOptions(options, "windows");
  const program = resolveProgram(options.file, {
    cwd: options.cwd,
    env: options.env,
    flavor: "windows",
  });
  const { application, commandLine } = buildCommandLine(program, options);
  const k = kernel32();
  if (mode === "pty" && !k.CreatePseudoConsole) {
    throw new SpawnError(
      "ENOSYS",
      "terminals (ConPTY) need Windows 10 1809 or later; use pipe mode (use_pty: false)",
    );
  }
  if (!ctrlHandlerReset) {
    // Children inherit "ignore Ctrl+C" from us unless normal handling is restored.
    k.SetConsoleCtrlHandler(null, 0);
    ctrlHandlerReset = true;
  }
  const loop = reactor();
  const io = mode === "pty" ? openConsole(options.cols ?? 80, options.rows ?? 24) : openPipes();
  let started: { process: Handle; thread: Handle; pid: number };
  try {
    started = createProcess(application, commandLine, options, io, mode);
  } catch (error) {
    for (const handle of [...io.ours, ...io.theirs]) k.CloseHandle(handle);
    if (io.console) k.ClosePseudoConsole!(io.console).catch(() => {});
    throw error;
  } finally {
    for (const handle of io.theirs) k.CloseHandle(handle);
  }
  const job = createJob(started.process);
  k.ResumeThread(started.thread);
  k.CloseHandle(started.thread);
  return new WindowsChild(started.pid, mode, loop, started.process, job, io);
}

/** Characters cmd.exe would expand or split on even inside quotes: refused in batch arguments. */
const BATCH_UNSAFE = /["%\r\n]/;
/** Characters that make cmd.exe need quotes around an argument. */
const BATCH_SPECIAL = /[\s&|<>^(),;=!@]/;

function buildCommandLine(
  program: string,
  options: SpawnOptions,
): { application: string; commandLine: string } {
  const extension = win32.extname(program).toLowerCase();
  try {
    if (extension === ".bat" || extension === ".cmd") {
      // CreateProcess would run a batch file through cmd.exe anyway, with cmd's own parsing
      // applied to the arguments; doing it explicitly lets us quote them for cmd, or refuse.
      const cmd = envValue(options.env, "ComSpec", "windows") ??
        win32.join(
          envValue(options.env, "SystemRoot", "windows") ?? "C:\\Windows",
          "System32",
          "cmd.exe",
        );
      for (const text of [program, ...options.args]) {
        if (BATCH_UNSAFE.test(text)) {
          throw new SpawnError(
            "EINVAL",
            `cannot pass ${
              JSON.stringify(text)
            } to a batch file safely (cmd.exe would expand or split on ", % or line breaks)`,
          );
        }
      }
      const args = options.args.map((arg) =>
        arg === "" || BATCH_SPECIAL.test(arg) ? `"${arg}"` : arg
      );
      return {
        application: cmd,
        commandLine: `"${cmd}" /d /e:ON /v:OFF /s /c ""${program}"${
          args.map((a) => " " + a).join("")
        }"`,
      };
    }
    if (options.verbatimArguments) {
      return {
        application: program,
        commandLine: [quoteWindowsArg(program), ...options.args].join(" "),
      };
    }
    return {
      application: program,
      commandLine: quoteWindowsCommandLine([program, ...options.args]),
    };
  } catch (error) {
    if (error instanceof CommandLineError) throw new SpawnError("EINVAL", error.message);
    throw error;
  }
}

interface ChildIo {
  /** Our ends: [input, output] in PTY mode; [stdin, stdout, stderr] in pipe mode. */
  ours: Handle[];
  /** The child's (or conhost's) ends, closed once the child has started. */
  theirs: Handle[];
  /** The pseudoconsole (PTY mode). */
  console?: Handle;
}

/**
 * A named pipe pair: our end (overlapped) and theirs (synchronous). `inbound`: data flows to
 * us. `inheritable`: their end may be inherited (pipe mode, through the handle list only).
 */
function pipePair(inbound: boolean, inheritable: boolean): [Handle, Handle] {
  const k = kernel32();
  const name = wide(`\\\\.\\pipe\\winterm-${Deno.pid}-${++pipeCounter}-${crypto.randomUUID()}`);
  const ours = k.CreateNamedPipeW(
    name,
    (inbound ? W.PIPE_ACCESS_INBOUND : W.PIPE_ACCESS_OUTBOUND) | W.FILE_FLAG_OVERLAPPED |
      W.FILE_FLAG_FIRST_PIPE_INSTANCE,
    W.PIPE_REJECT_REMOTE_CLIENTS,
    1,
    PIPE_BUFFER,
    PIPE_BUFFER,
    0,
    null,
  );
  if (isInvalid(ours)) throw new Win32Error("CreateNamedPipeW", k.GetLastError());
  const theirs = k.CreateFileW(
    name,
    inbound ? W.GENERIC_WRITE : W.GENERIC_READ,
    0,
    null,
    W.OPEN_EXISTING,
    0,
    null,
  );
  if (isInvalid(theirs)) {
    const code = k.GetLastError();
    k.CloseHandle(ours);
    throw new Win32Error("CreateFileW(pipe)", code);
  }
  if (inheritable) k.SetHandleInformation(theirs, W.HANDLE_FLAG_INHERIT, W.HANDLE_FLAG_INHERIT);
  return [ours, theirs];
}

function openConsole(cols: number, rows: number): ChildIo {
  const k = kernel32();
  const [inputOurs, inputTheirs] = pipePair(false, false);
  let outputPair: [Handle, Handle];
  try {
    outputPair = pipePair(true, false);
  } catch (error) {
    k.CloseHandle(inputOurs);
    k.CloseHandle(inputTheirs);
    throw error;
  }
  const [outputOurs, outputTheirs] = outputPair;
  const console = new BigUint64Array(1);
  const hr = k.CreatePseudoConsole!(
    coord(cols, rows),
    inputTheirs,
    outputTheirs,
    0,
    new Uint8Array(console.buffer),
  );
  if (hr !== 0) {
    for (const handle of [inputOurs, inputTheirs, outputOurs, outputTheirs]) k.CloseHandle(handle);
    throw new SpawnError(
      "ENOSYS",
      `CreatePseudoConsole failed: HRESULT 0x${(hr >>> 0).toString(16)}`,
    );
  }
  // conhost holds its own copies of its ends; ours are closed after the child starts.
  return {
    ours: [inputOurs, outputOurs],
    theirs: [inputTheirs, outputTheirs],
    console: Deno.UnsafePointer.create(console[0]),
  };
}

function openPipes(): ChildIo {
  const k = kernel32();
  const pairs: [Handle, Handle][] = [];
  try {
    pairs.push(pipePair(false, true), pipePair(true, true), pipePair(true, true));
  } catch (error) {
    for (const pair of pairs) pair.forEach((handle) => k.CloseHandle(handle));
    throw error;
  }
  return { ours: pairs.map(([ours]) => ours), theirs: pairs.map(([, theirs]) => theirs) };
}

function handleValue(handle: Handle): bigint {
  return BigInt(Deno.UnsafePointer.value(handle));
}

function createProcess(
  application: string,
  commandLine: string,
  options: SpawnOptions,
  io: ChildIo,
  mode: StdioMode,
): { process: Handle; thread: Handle; pid: number } {
  const k = kernel32();
  // The attribute list: the pseudoconsole, or the exact handles the child may inherit.
  const size = new BigUint64Array(1);
  k.InitializeProcThreadAttributeList(null, 1, 0, new Uint8Array(size.buffer));
  const attributes = new Uint8Array(Number(size[0]));
  if (
    !k.InitializeProcThreadAttributeList(
      Deno.UnsafePointer.of(attributes),
      1,
      0,
      new Uint8Array(size.buffer),
    )
  ) {
    throw new Win32Error("InitializeProcThreadAttributeList", k.GetLastError());
  }
  const handleList = new BigUint64Array(io.theirs.map(handleValue));
  try {
    const [attribute, value, valueSize] = io.console
      ? [W.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, io.console, 8]
      : [
        W.PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
        Deno.UnsafePointer.of(handleList),
        handleList.byteLength,
      ];
    if (
      !k.UpdateProcThreadAttribute(attributes, 0, attribute, value, BigInt(valueSize), null, null)
    ) {
      throw new Win32Error("UpdateProcThreadAttribute", k.GetLastError());
    }
    const startup = new Uint8Array(LAYOUT.STARTUPINFOEXW);
    const view = new DataView(startup.buffer);
    view.setUint32(0, LAYOUT.STARTUPINFOEXW, true);
    view.setUint32(LAYOUT.SI_FLAGS, W.STARTF_USESTDHANDLES, true);
    if (mode === "pipe") {
      view.setBigUint64(LAYOUT.SI_STDIN, handleValue(io.theirs[0]), true);
      view.setBigUint64(LAYOUT.SI_STDOUT, handleValue(io.theirs[1]), true);
      view.setBigUint64(LAYOUT.SI_STDERR, handleValue(io.theirs[2]), true);
    }
    view.setBigUint64(
      LAYOUT.SI_ATTRIBUTE_LIST,
      handleValue(Deno.UnsafePointer.of(attributes)),
      true,
    );
    const info = new Uint8Array(LAYOUT.PROCESS_INFORMATION);
    const flags = W.EXTENDED_STARTUPINFO_PRESENT | W.CREATE_UNICODE_ENVIRONMENT |
      W.CREATE_SUSPENDED |
      (mode === "pipe" ? W.CREATE_NO_WINDOW : 0);
    const ok = k.CreateProcessW(
      wide(application),
      wide(commandLine), // CreateProcessW may write to it: a fresh buffer
      null,
      null,
      mode === "pipe" ? 1 : 0,
      flags,
      environmentBlock(options.env),
      wide(options.cwd),
      startup,
      info,
    );
    if (!ok) {
      const code = k.GetLastError();
      throw new SpawnError(
        errnoFor(code),
        `cannot start '${options.file}': ${new Win32Error("CreateProcessW", code).message}`,
      );
    }
    const result = new DataView(info.buffer);
    return {
      process: Deno.UnsafePointer.create(result.getBigUint64(0, true)),
      thread: Deno.UnsafePointer.create(result.getBigUint64(8, true)),
      pid: result.getUint32(16, true),
    };
  } finally {
    k.DeleteProcThreadAttributeList(attributes);
  }
}

/** A job that ends the whole tree when closed; null if the process cannot be put in one. */
function createJob(process: Handle): Handle {
  const k = kernel32();
  const job = k.CreateJobObjectW(null, null);
  if (job === null) {
    log.warn("CreateJobObjectW failed: kill will reach the child only", {
      error: k.GetLastError(),
    });
    return null;
  }
  const limits = new Uint8Array(LAYOUT.JOB_EXTENDED_LIMIT);
  new DataView(limits.buffer).setUint32(
    LAYOUT.JOB_LIMIT_FLAGS,
    W.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    true,
  );
  const ok =
    k.SetInformationJobObject(job, W.JobObjectExtendedLimitInformation, limits, limits.length) &&
    k.AssignProcessToJobObject(job, process);
  if (!ok) {
    log.warn("cannot put the child in a job object: kill will reach the child only", {
      error: k.GetLastError(),
    });
    k.CloseHandle(job);
    return null;
  }
  return job;
}

/** A running child and its pipes. */
class WindowsChild implements ChildProcess {
  readonly exited: Promise<ExitStatus>;
  /** The encoding of output bytes: UTF-8 on a terminal, the OEM code page through pipes. */
  readonly outputEncoding: string;
  #resolveExited!: (status: ExitStatus) => void;
  #listeners: DataListener[] = [];
  #readers: OverlappedReader[];
  #writer: OverlappedWriter;
  #jobKey: bigint | undefined;
  #status: ExitStatus | undefined;
  #killedBy: SignalName | undefined;
  #finished = false;
  #exitPoll: ReturnType<typeof setInterval> | undefined;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly pid: number,
    readonly mode: StdioMode,
    private readonly loop: WindowsReactor,
    private readonly process: Handle,
    private readonly job: Handle,
    private readonly io: ChildIo,
  ) {
    this.exited = new Promise((resolve) => this.#resolveExited = resolve);
    this.outputEncoding = mode === "pty" ? "utf-8" : codePageLabel(kernel32().GetOEMCP());
    const emit = (stream: StreamName) => (data: Uint8Array) => {
      for (const listener of this.#listeners) listener(data, stream);
    };
    const onEnd = () => this.#onReaderEnd();
    this.#writer = new OverlappedWriter(loop, io.ours[0]);
    this.#readers = mode === "pty"
      ? [new OverlappedReader(loop, io.ours[1], emit("stdout"), onEnd)]
      : [
        new OverlappedReader(loop, io.ours[1], emit("stdout"), onEnd),
        new OverlappedReader(loop, io.ours[2], emit("stderr"), onEnd),
      ];
    if (job !== null) {
      try {
        this.#jobKey = loop.addJob(job, {
          completed: (pid, message) => {
            const exit = message === W.JOB_OBJECT_MSG_EXIT_PROCESS ||
              message === W.JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS;
            if (
              (exit && Number(pid) === this.pid) || message === W.JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO
            ) this.#checkExit();
          },
        });
      } catch (error) {
        log.warn("job notifications unavailable: exits are polled", { error });
      }
    }
    // Without job notifications exits are polled; with them, a slow poll covers an exit that
    // happened before the job was wired to the port.
    this.#exitPoll = setInterval(() => this.#checkExit(), this.#jobKey === undefined ? 250 : 1000);
    this.#checkExit();
  }

  onData(listener: DataListener): void {
    this.#listeners.push(listener);
  }

  write(data: Uint8Array): Promise<void> {
    if (this.#finished || this.#status) return Promise.reject(new Error("the program has exited"));
    return this.#writer.write(data);
  }

  closeInput(): Promise<void> {
    if (this.#finished || this.#status) return Promise.reject(new Error("the program has exited"));
    // A console reads Ctrl+Z then Enter as end of input.
    return this.mode === "pty"
      ? this.#writer.write(new Uint8Array([0x1a, 0x0d]))
      : this.#writer.closeWhenDrained();
  }

  resize(cols: number, rows: number): void {
    if (!this.io.console) throw new Error("resize needs a terminal (PTY mode)");
    if (this.#finished) throw new Error("the program has exited");
    const hr = kernel32().ResizePseudoConsole!(this.io.console, coord(cols, rows));
    if (hr !== 0) {
      throw new Error(
        `resize failed: ResizePseudoConsole returned HRESULT 0x${(hr >>> 0).toString(16)}`,
      );
    }
  }

  kill(signal: SignalName = "SIGTERM"): void {
    if (this.#finished || this.#status) return;
    if (signal === "SIGINT" && this.mode === "pty") {
      // Ctrl+C typed into the console: conhost delivers CTRL_C_EVENT to its processes.
      this.#writer.write(new Uint8Array([0x03])).catch(() => {});
      return;
    }
    this.#killedBy ??= signal;
    const k = kernel32();
    if (this.job !== null) k.TerminateJobObject(this.job, KILLED_EXIT_CODE);
    else k.TerminateProcess(this.process, KILLED_EXIT_CODE);
  }

  #checkExit(): void {
    if (this.#status) return;
    const code = new Uint32Array(1);
    if (!kernel32().GetExitCodeProcess(this.process, new Uint8Array(code.buffer))) return;
    if (code[0] === W.STILL_ACTIVE) return;
    this.#onExit({ exitCode: code[0] | 0, signal: this.#killedBy ?? null });
  }

  #onExit(status: ExitStatus): void {
    this.#status = status;
    clearInterval(this.#exitPoll);
    // Whatever the child left running goes with it, as on POSIX.
    if (this.job !== null) kernel32().TerminateJobObject(this.job, KILLED_EXIT_CODE);
    this.#writer.close();
    if (this.mode === "pty") this.#closeConsoleWhenQuiet(performance.now());
    this.#drainTimer = setTimeout(
      () => this.#readers.forEach((reader) => reader.stop()),
      DRAIN_LIMIT_MS * 2,
    );
    if (this.#readers.every((reader) => reader.ended)) this.#finish();
  }

  /** conhost keeps the output pipe open after the child exits: close it once output is quiet. */
  #closeConsoleWhenQuiet(exitedAt: number): void {
    const reader = this.#readers[0];
    const now = performance.now();
    if (!reader.ended && now - reader.lastDataAt < QUIET_MS && now - exitedAt < DRAIN_LIMIT_MS) {
      setTimeout(() => this.#closeConsoleWhenQuiet(exitedAt), QUIET_MS);
      return;
    }
    kernel32().ClosePseudoConsole!(this.io.console!).catch((error) =>
      log.error("ClosePseudoConsole failed", { error })
    );
  }

  #onReaderEnd(): void {
    if (this.#status && this.#readers.every((reader) => reader.ended)) this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    const k = kernel32();
    if (this.#jobKey !== undefined) this.loop.remove(this.#jobKey);
    if (this.job !== null) k.CloseHandle(this.job);
    k.CloseHandle(this.process);
    this.#resolveExited(this.#status!);
  }
}
