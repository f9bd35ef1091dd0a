/**
 * Children on Windows: on a pseudoconsole (ConPTY) or with three pipes, always in a job object
 * that ends the whole tree, with every pipe and the job served by the one completion port.
 *
 * - PTY mode: a pseudoconsole on named pipes whose server ends we read and write with
 *   overlapped I/O; STARTUPINFOEXW with STARTF_USESTDHANDLES and NULL handles (our stdout is
 *   the MCP stream: a child must never inherit it) and bInheritHandles = FALSE.
 * - Pipe mode: the child's three pipe ends are the only handles it inherits (the attribute
 *   list's handle list); it gets a console without a window.
 * - Both: CREATE_SUSPENDED, then the job, then ResumeThread, so nothing the child starts can
 *   escape the job. Command lines follow CommandLineToArgvW; `.bat`/`.cmd` go through cmd.exe
 *   (see command_line.ts).
 *
 * @module
 */
import { win32 } from "node:path";
import { checkSpawnOptions, envValue, resolveProgram } from "../resolve.ts";
import { type ChildProcess, SpawnError, type SpawnOptions, type StdioMode } from "../types.ts";
import { WindowsChild, type WindowsChildIo } from "./child.ts";
import { buildCommandLine } from "./command_line.ts";
import { environmentBlock } from "./environment.ts";
import { createJob } from "./job.ts";
import { errnoFor, type Handle, kernel32, LAYOUT, W, wide, Win32Error } from "./kernel32.ts";
import { pipePair } from "./named_pipe.ts";
import { closePseudoConsole, createPseudoConsole, hasPseudoConsole } from "./pseudoconsole.ts";
import { ProcThreadAttributeList } from "./procthreadattr.ts";
import { reactor } from "./reactor.ts";

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
  const { application, commandLine } = buildCommandLine(program, options.args, {
    cmd: envValue(options.env, "ComSpec", "windows") ??
      win32.join(
        envValue(options.env, "SystemRoot", "windows") ?? "C:\\Windows",
        "System32",
        "cmd.exe",
      ),
    verbatim: options.verbatimArguments,
  });
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
    for (const handle of io.ours) k.CloseHandle(handle);
    if (io.console) closePseudoConsole(io.console).catch(() => {});
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

function openConsole(cols: number, rows: number): ChildStreams {
  const k = kernel32();
  const opened: Handle[] = [];
  try {
    const [inputOurs, inputTheirs] = pipePair(false, false);
    opened.push(inputOurs, inputTheirs);
    const [outputOurs, outputTheirs] = pipePair(true, false);
    opened.push(outputOurs, outputTheirs);
    const console = createPseudoConsole(cols, rows, inputTheirs, outputTheirs);
    return { ours: [inputOurs, outputOurs], theirs: [inputTheirs, outputTheirs], console };
  } catch (error) {
    for (const handle of opened) k.CloseHandle(handle);
    throw error;
  }
}

function openPipes(): ChildStreams {
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

/** CreateProcessW, suspended, with the pseudoconsole or exactly the child's pipe ends. */
function createProcess(
  application: string,
  commandLine: string,
  options: SpawnOptions,
  io: ChildStreams,
  mode: StdioMode,
): { process: Handle; thread: Handle; pid: number } {
  const k = kernel32();
  const attributes = new ProcThreadAttributeList();
  try {
    if (io.console) attributes.setPseudoConsole(io.console);
    else attributes.setHandleList(io.theirs);
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
      W.CREATE_SUSPENDED | (mode === "pipe" ? W.CREATE_NO_WINDOW : 0);
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
    attributes.dispose();
  }
}
