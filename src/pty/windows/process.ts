/**
 * Children on Windows: on a pseudoconsole (ConPTY) or with three pipes, always in a job object
 * that ends the whole tree, with every pipe and the job served by the one completion port.
 *
 * - PTY mode: a pseudoconsole on named pipes whose server ends we read and write with
 *   overlapped I/O; STARTUPINFOEXW with STARTF_USESTDHANDLES and NULL handles (our stdout is
 *   the MCP stream: a child must never inherit it) and bInheritHandles = FALSE.
 * - Pipe mode: the child's three pipe ends are its standard handles and the only handles it
 *   inherits (the attribute list's handle list). Its console is a pseudoconsole too, one that
 *   nobody sees: the tree shares it, so Ctrl+C typed into it reaches every program in the tree
 *   (CTRL_C_EVENT), and closing it is CTRL_CLOSE_EVENT, which is how a stop is made graceful.
 *   (GenerateConsoleCtrlEvent would need the server to share the child's console.) Without
 *   ConPTY (before Windows 10 1809) the child gets a console without a window instead.
 * - Both: CREATE_SUSPENDED, then the job, then ResumeThread, so nothing the child starts can
 *   escape the job. Command lines follow CommandLineToArgvW; a batch file runs through the
 *   system's own cmd.exe (see command_line.ts), which {@link prepareWindows} reports so that
 *   the caller can judge it before anything runs.
 *
 * @module
 */
import { win32 } from "node:path";
import { checkSpawnOptions, realPathOf, resolveProgram, windowsOpenedPath } from "../resolve.ts";
import {
  type ChildProcess,
  type PreparedSpawn,
  SpawnError,
  type SpawnOptions,
  type StdioMode,
} from "../types.ts";
import { WindowsChild, type WindowsChildIo } from "./child.ts";
import { buildCommandLine } from "./command_line.ts";
import { environmentBlock } from "./environment.ts";
import { createJob } from "./job.ts";
import {
  errnoFor,
  type Handle,
  kernel32,
  LAYOUT,
  systemDirectory,
  W,
  wide,
  Win32Error,
} from "./kernel32.ts";
import { pipePair } from "./named_pipe.ts";
import { closePseudoConsole, createPseudoConsole, hasPseudoConsole } from "./pseudoconsole.ts";
import { ProcThreadAttributeList } from "./procthreadattr.ts";
import { reactor } from "./reactor.ts";

let ctrlHandlerReset = false;

/**
 * Why a sandbox cannot be applied on Windows yet: a write-restricted token started through
 * CreateProcessAsUserW with the pseudoconsole attribute is planned, once a CI runner proves it.
 */
export const WINDOWS_SANDBOX_REFUSAL = "the sandbox cannot be applied: it is not supported on " +
  "Windows yet (planned: a write-restricted token with access granted on the writable roots, " +
  "started inside the job object); use sandbox mode 'off', or Linux or macOS";

/**
 * Resolves the program (PATH only, the server's PATHEXT, the name Windows opens) and builds
 * the command line; a batch file's interpreter is the system's own cmd.exe, never the child's
 * ComSpec. Throws {@link SpawnError}.
 */
export function prepareWindows(options: SpawnOptions): PreparedSpawn {
  if (options.sandbox) throw new SpawnError("ESANDBOX", WINDOWS_SANDBOX_REFUSAL);
  checkSpawnOptions(options, "windows");
  const program = windowsOpenedPath(resolveProgram(options.file, {
    cwd: options.cwd,
    env: options.env,
    flavor: "windows",
  }));
  const { application, commandLine, interpreter } = buildCommandLine(program, options.args, {
    cmd: win32.join(systemDirectory(), "cmd.exe"),
    verbatim: options.verbatimArguments,
  });
  return {
    options,
    program,
    realProgram: realPathOf(program),
    interpreter,
    windows: { application, commandLine },
  };
}

/** Starts a prepared child. Throws {@link SpawnError} when it cannot start. */
export function spawnWindows(prepared: PreparedSpawn): ChildProcess {
  const options = prepared.options;
  const mode = options.mode ?? "pty";
  const { application, commandLine } = prepared.windows ?? prepareWindows(options).windows!;
  const k = kernel32();
  if (mode === "pty" && !hasPseudoConsole()) {
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
    for (const handle of [...io.streams, ...(io.console?.pipes ?? [])]) k.CloseHandle(handle);
    if (io.console) closePseudoConsole(io.console.handle).catch(() => {});
    throw error;
  } finally {
    // The child (or conhost) has its own copies now, or never will: ours close exactly once.
    for (const handle of io.theirs) k.CloseHandle(handle);
  }
  const job = createJob(started.process);
  k.ResumeThread(started.thread);
  k.CloseHandle(started.thread);
  return new WindowsChild(started.pid, mode, loop, started.process, job, io);
}

/** The child's streams: ours, and theirs (closed once the child has started). */
interface ChildStreams extends WindowsChildIo {
  /** The child's (or conhost's) ends. */
  theirs: Handle[];
}

/** A pseudoconsole and our ends of its pipes. */
function openConsole(cols: number, rows: number): ChildStreams {
  const k = kernel32();
  const opened: Handle[] = [];
  try {
    const [inputOurs, inputTheirs] = pipePair(false, false);
    opened.push(inputOurs, inputTheirs);
    const [outputOurs, outputTheirs] = pipePair(true, false);
    opened.push(outputOurs, outputTheirs);
    const handle = createPseudoConsole(cols, rows, inputTheirs, outputTheirs);
    return {
      streams: [inputOurs, outputOurs],
      theirs: [inputTheirs, outputTheirs],
      console: { handle },
    };
  } catch (error) {
    for (const handle of opened) k.CloseHandle(handle);
    throw error;
  }
}

/** Three pipes, and (with ConPTY) a console nobody sees, for control events. */
function openPipes(): ChildStreams {
  const k = kernel32();
  const pairs: [Handle, Handle][] = [];
  try {
    pairs.push(pipePair(false, true), pipePair(true, true), pipePair(true, true));
  } catch (error) {
    for (const pair of pairs) pair.forEach((handle) => k.CloseHandle(handle));
    throw error;
  }
  const io: ChildStreams = {
    streams: pairs.map(([ours]) => ours),
    theirs: pairs.map(([, theirs]) => theirs),
  };
  if (!hasPseudoConsole()) return io;
  try {
    const console = openConsole(80, 25);
    io.theirs.push(...console.theirs);
    io.console = { handle: console.console!.handle, pipes: console.streams };
  } catch (error) {
    for (const handle of [...io.streams, ...io.theirs]) k.CloseHandle(handle);
    throw error;
  }
  return io;
}

function handleValue(handle: Handle): bigint {
  return BigInt(Deno.UnsafePointer.value(handle));
}

/** CreateProcessW, suspended, with the pseudoconsole or exactly the child's pipe ends. */
function createProcess(
  application: string,
  commandLine: string,
  options: SpawnOptions,
  io: ChildStreams,
  mode: StdioMode,
): { process: Handle; thread: Handle; pid: number } {
  const k = kernel32();
  const attributes = new ProcThreadAttributeList(mode === "pipe" && io.console ? 2 : 1);
  try {
    if (io.console) attributes.setPseudoConsole(io.console.handle);
    if (mode === "pipe") attributes.setHandleList(io.theirs.slice(0, 3));
    const startup = new Uint8Array(LAYOUT.STARTUPINFOEXW);
    const view = new DataView(startup.buffer);
    view.setUint32(0, LAYOUT.STARTUPINFOEXW, true);
    view.setUint32(LAYOUT.SI_FLAGS, W.STARTF_USESTDHANDLES, true);
    if (mode === "pipe") {
      view.setBigUint64(LAYOUT.SI_STDIN, handleValue(io.theirs[0]), true);
      view.setBigUint64(LAYOUT.SI_STDOUT, handleValue(io.theirs[1]), true);
      view.setBigUint64(LAYOUT.SI_STDERR, handleValue(io.theirs[2]), true);
    }
    view.setBigUint64(LAYOUT.SI_ATTRIBUTE_LIST, attributes.address, true);
    const info = new Uint8Array(LAYOUT.PROCESS_INFORMATION);
    const flags = W.EXTENDED_STARTUPINFO_PRESENT | W.CREATE_UNICODE_ENVIRONMENT |
      W.CREATE_SUSPENDED | (io.console ? 0 : W.CREATE_NO_WINDOW);
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
      // The caller says "cannot start X: " before the message; the file is its detail.
      throw new SpawnError(
        errnoFor(code),
        new Win32Error("CreateProcessW", code).message,
        options.file,
      );
    }
    const result = new DataView(info.buffer);
    return {
      process: Deno.UnsafePointer.create(result.getBigUint64(0, true)),
      thread: Deno.UnsafePointer.create(result.getBigUint64(8, true)),
      pid: result.getUint32(16, true),
    };
  } finally {
    attributes.dispose();
  }
}
