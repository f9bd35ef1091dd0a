/**
 * Which program runs a command: the shells (found per platform, with the user's overrides
 * first) and the argument lists that make each run a command non-interactively, in UTF-8.
 *
 * @example
 * ```ts
 * import { buildInvocation } from "./shells.ts";
 * const run = buildInvocation(
 *   { command: "echo hi | tr a-z A-Z", shellType: "sh" },
 *   { cwd: "/tmp", env: { PATH: "/usr/bin:/bin" } },
 * );
 * // run.file "/bin/sh" (or wherever sh is), run.args ["-c", "echo hi | tr a-z A-Z"]
 * ```
 * @module
 */
import { win32 } from "node:path";
import { envValue, HOST_FLAVOR, type PathFlavor, resolveProgram } from "../pty/resolve.ts";
import { runningUnderWine, SpawnError } from "../pty/mod.ts";
import {
  CommandLineError,
  quoteWindowsCommandLine,
  splitWindows,
} from "../pty/windows/command_line.ts";
import { quotePosix, splitPosix } from "./argv.ts";
import { EngineError } from "./errors.ts";

/** The ways a command can be run. `default` is PowerShell on Windows, $SHELL or sh elsewhere. */
export const SHELL_TYPES = ["default", "powershell", "cmd", "bash", "sh", "executable"] as const;
/** One of {@link SHELL_TYPES}. */
export type ShellType = typeof SHELL_TYPES[number];

/** A program and arguments ready to spawn. */
export interface Invocation {
  /** Absolute path of the program. */
  file: string;
  args: string[];
  /** Pass `args` to Windows unquoted (cmd.exe's own quoting is in them already). */
  verbatimArguments?: boolean;
  /** The shell was told to write UTF-8 (cmd's chcp 65001, PowerShell's output encodings). */
  utf8Output?: boolean;
  /** What actually runs it, `default` resolved. */
  shell: Exclude<ShellType, "default">;
  /** The command as a person would type it. */
  display: string;
}

/** What to run. */
export interface InvocationRequest {
  command: string;
  shellType: ShellType;
  /** The program (with `executable`), or the path of the shell to use (with a shell type). */
  executable?: string;
  /** Arguments (with `executable` only). */
  args?: string[];
}

/** Where it runs: the child's directory and environment, and the OS rules. */
export interface ShellContext {
  cwd: string;
  env: Record<string, string>;
  flavor?: PathFlavor;
}

/** A shell looked for and where. */
export interface ShellSearch {
  path?: string;
  searched: string[];
}

const POWERSHELL_FLAGS = ["-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass"];
/** PowerShell 5.1 writes through the console code page unless both encodings are set. */
const POWERSHELL_UTF8 =
  "[Console]::OutputEncoding=[Text.Encoding]::UTF8;$OutputEncoding=[Text.Encoding]::UTF8;";

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Tries candidates in order: explicit paths must exist, bare names are looked up on PATH. */
function firstFound(candidates: string[], ctx: ShellContext): ShellSearch {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  const searched: string[] = [];
  for (const candidate of candidates) {
    const isPath = flavor === "windows" ? /[\\/]/.test(candidate) : candidate.includes("/");
    searched.push(isPath ? candidate : `${candidate} on PATH`);
    if (isPath) {
      if (exists(candidate)) return { path: candidate, searched };
      continue;
    }
    try {
      return { path: resolveProgram(candidate, { ...ctx, flavor }), searched };
    } catch {
      // not on PATH: try the next one
    }
  }
  return { searched };
}

/**
 * PowerShell: WINTERM_POWERSHELL_PATH, then pwsh (PATH and its standard install folder), then
 * Windows PowerShell in System32, then powershell on PATH.
 */
export function findPowerShell(ctx: ShellContext): ShellSearch {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  const override = envValue(ctx.env, "WINTERM_POWERSHELL_PATH", flavor);
  if (flavor !== "windows") return firstFound([...(override ? [override] : []), "pwsh"], ctx);
  const programFiles = envValue(ctx.env, "ProgramFiles", flavor) ?? "C:\\Program Files";
  const windowsPowerShell = win32.join(
    systemRoot(ctx),
    "System32",
    "WindowsPowerShell",
    "v1.0",
    "powershell.exe",
  );
  const found = firstFound([
    ...(override ? [override] : []),
    "pwsh.exe",
    win32.join(programFiles, "PowerShell", "7", "pwsh.exe"),
    windowsPowerShell,
    "powershell.exe",
  ], ctx);
  // Wine ships a powershell.exe that runs nothing and exits 0: not a PowerShell at all.
  if (
    found.path && runningUnderWine() && found.path.toLowerCase() === windowsPowerShell.toLowerCase()
  ) {
    return { searched: [...found.searched, `${found.path} (Wine's stub, not a PowerShell)`] };
  }
  return found;
}

/** cmd.exe: WINTERM_CMD_PATH, %ComSpec%, System32\cmd.exe, then PATH. Windows only. */
export function findCmd(ctx: ShellContext): ShellSearch {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  if (flavor !== "windows") return { searched: ["cmd.exe exists only on Windows"] };
  const override = envValue(ctx.env, "WINTERM_CMD_PATH", flavor);
  const comspec = envValue(ctx.env, "ComSpec", flavor);
  return firstFound([
    ...(override ? [override] : []),
    ...(comspec ? [comspec] : []),
    win32.join(systemRoot(ctx), "System32", "cmd.exe"),
    "cmd.exe",
  ], ctx);
}

function systemRoot(ctx: ShellContext): string {
  return envValue(ctx.env, "SystemRoot", "windows") ?? "C:\\Windows";
}

/** The platform's shell for `default`: PowerShell (else cmd) on Windows, $SHELL or sh elsewhere. */
function defaultShell(ctx: ShellContext): { type: "powershell" | "cmd" | "sh"; path: string } {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  if (flavor === "windows") {
    const powershell = findPowerShell(ctx);
    if (powershell.path) return { type: "powershell", path: powershell.path };
    const cmd = findCmd(ctx);
    if (cmd.path) return { type: "cmd", path: cmd.path };
    throw notFound("default", [...powershell.searched, ...cmd.searched]);
  }
  const shell = firstFound([...(ctx.env.SHELL ? [ctx.env.SHELL] : []), "/bin/sh", "sh"], ctx);
  if (!shell.path) throw notFound("default", shell.searched);
  return { type: "sh", path: shell.path };
}

function notFound(shell: string, searched: string[]): EngineError {
  return new EngineError(
    "invalid_input",
    `no ${shell} shell found (searched: ${searched.join("; ")})`,
    "shell_type",
  );
}

/** Encodes a script for PowerShell's -EncodedCommand (base64 of UTF-16LE). */
export function encodePowerShell(script: string): string {
  const units = new Uint16Array(script.length);
  for (let i = 0; i < script.length; i++) units[i] = script.charCodeAt(i);
  const bytes = new Uint8Array(units.buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** The arguments that make each shell run `command` once and exit. */
function shellArgs(
  type: "powershell" | "cmd" | "bash" | "sh",
  command: string,
): { args: string[]; verbatimArguments?: boolean; utf8Output?: boolean } {
  switch (type) {
    case "powershell":
      return {
        args: [...POWERSHELL_FLAGS, "-EncodedCommand", encodePowerShell(POWERSHELL_UTF8 + command)],
        utf8Output: true,
      };
    case "cmd":
      // /s: cmd strips the outer quotes and runs the rest verbatim, so the user's own quoting
      // reaches cmd untouched; chcp 65001 makes cmd's output UTF-8.
      return {
        args: ["/d", "/s", "/c", `"chcp 65001>nul & ${command}"`],
        verbatimArguments: true,
        utf8Output: true,
      };
    default:
      return { args: ["-c", command] };
  }
}

function resolveShellPath(
  type: "powershell" | "cmd" | "bash" | "sh",
  executable: string | undefined,
  ctx: ShellContext,
): string {
  if (executable) return resolveField(executable, "executable", ctx);
  const search = type === "powershell"
    ? findPowerShell(ctx)
    : type === "cmd"
    ? findCmd(ctx)
    : firstFound(
      type === "sh" && (ctx.flavor ?? HOST_FLAVOR) === "posix" ? ["/bin/sh", "sh"] : [type],
      ctx,
    );
  if (!search.path) throw notFound(type, search.searched);
  return search.path;
}

function resolveField(file: string, field: string, ctx: ShellContext): string {
  try {
    return resolveProgram(file, { ...ctx, flavor: ctx.flavor ?? HOST_FLAVOR });
  } catch (error) {
    if (error instanceof SpawnError) throw new EngineError("invalid_input", error.message, field);
    throw error;
  }
}

/** Decides what to spawn for a request. Throws {@link EngineError} naming the field at fault. */
export function buildInvocation(request: InvocationRequest, ctx: ShellContext): Invocation {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  if (request.shellType !== "executable") {
    if (request.args?.length) {
      throw new EngineError(
        "invalid_input",
        "args can only be used with shell_type 'executable'; put them in the command",
        "args",
      );
    }
    const chosen = request.shellType === "default" && !request.executable
      ? defaultShell(ctx)
      : undefined;
    const type = chosen?.type ??
      (request.shellType === "default"
        ? (flavor === "windows" ? "powershell" : "sh")
        : request.shellType);
    const file = chosen?.path ?? resolveShellPath(type, request.executable, ctx);
    return { file, ...shellArgs(type, request.command), shell: type, display: request.command };
  }
  let argv: string[];
  if (request.executable) {
    argv = [request.executable, ...(request.args ?? [])];
  } else {
    try {
      argv = [
        ...(flavor === "windows" ? splitWindows : splitPosix)(request.command),
        ...(request.args ?? []),
      ];
    } catch (error) {
      if (error instanceof CommandLineError) {
        throw new EngineError("invalid_input", error.message, "command");
      }
      throw error;
    }
    if (argv.length === 0) {
      throw new EngineError("invalid_input", "the command is blank", "command");
    }
  }
  const field = request.executable ? "executable" : "command";
  const file = resolveField(argv[0], field, ctx);
  const display = flavor === "windows" ? safeWindowsDisplay(argv) : argv.map(quotePosix).join(" ");
  if (flavor === "windows" && file.toLowerCase().endsWith(".ps1")) {
    // Scripts run through PowerShell, as they would when typed at a PowerShell prompt.
    const shell = resolveShellPath("powershell", undefined, ctx);
    return {
      file: shell,
      args: [...POWERSHELL_FLAGS, "-File", file, ...argv.slice(1)],
      shell: "executable",
      display,
    };
  }
  return { file, args: argv.slice(1), shell: "executable", display };
}

function safeWindowsDisplay(argv: string[]): string {
  try {
    return quoteWindowsCommandLine(argv);
  } catch {
    return argv.join(" ");
  }
}
