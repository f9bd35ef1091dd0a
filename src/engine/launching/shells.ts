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
import {
  envValue,
  HOST_FLAVOR,
  type PathFlavor,
  quoteWindowsCommandLine,
  resolveProgram,
  runningUnderWine,
  SpawnError,
} from "../../pty/mod.ts";
import { CommandLineError, quotePosix, splitPosix, splitWindows } from "./argv.ts";
import { EngineError } from "../errors.ts";

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

const POWERSHELL_FLAGS = ["-NoLogo", "-NoProfile", "-ExecutionPolicy", "Bypass"];
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
function defaultShell(ctx: ShellContext, field: string): ChosenShell {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  if (flavor === "windows") {
    const powershell = findPowerShell(ctx);
    if (powershell.path) return { type: "powershell", path: powershell.path };
    const cmd = findCmd(ctx);
    if (cmd.path) return { type: "cmd", path: cmd.path };
    throw notFound("default", [...powershell.searched, ...cmd.searched], field);
  }
  const shell = firstFound([...(ctx.env.SHELL ? [ctx.env.SHELL] : []), "/bin/sh", "sh"], ctx);
  if (!shell.path) throw notFound("default", shell.searched, field);
  return { type: "sh", path: shell.path };
}

function notFound(shell: string, searched: string[], field: string): EngineError {
  return new EngineError(
    "invalid_input",
    `no ${shell} shell found`,
    field,
    `searched: ${searched.join("; ")}`,
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

/** The shells a command can be given to. */
type ShellKind = "powershell" | "cmd" | "bash" | "sh";

/** A shell found: what kind it is and where. */
interface ChosenShell {
  type: ShellKind;
  path: string;
}

/** What a shell needs to run: its arguments, and how they are passed and answered. */
interface ShellArguments {
  args: string[];
  verbatimArguments?: boolean;
  utf8Output?: boolean;
}

/** PowerShell running `script` after setting UTF-8 output, with `extra` flags. */
function powershellArgs(script: string, extra: string[]): ShellArguments {
  return {
    args: [
      ...POWERSHELL_FLAGS,
      ...extra,
      "-EncodedCommand",
      encodePowerShell(POWERSHELL_UTF8 + script),
    ],
    utf8Output: true,
  };
}

/**
 * The arguments that make a shell run `command` and exit. One-shot commands also get
 * PowerShell's -NonInteractive (a prompt fails instead of hanging); terminals do not.
 */
function shellArgs(type: ShellKind, command: string, oneShot: boolean): ShellArguments {
  switch (type) {
    case "powershell":
      return powershellArgs(command, oneShot ? ["-NonInteractive"] : []);
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

/** The arguments that start a shell for a person (or agent) to type into, in UTF-8. */
function interactiveArgs(type: ShellKind): ShellArguments {
  switch (type) {
    case "powershell":
      return powershellArgs("", ["-NoExit"]);
    case "cmd":
      return { args: ["/d", "/k", "chcp 65001>nul"], verbatimArguments: true, utf8Output: true };
    default:
      return { args: [] }; // on a terminal, every POSIX shell is interactive by itself
  }
}

/** What kind of shell a program is, from its name. */
function kindOf(path: string): ShellKind {
  const name = path.split(/[\\/]/).pop()!.toLowerCase().replace(/\.exe$/, "");
  if (name === "pwsh" || name === "powershell") return "powershell";
  if (name === "cmd") return "cmd";
  return name === "bash" ? "bash" : "sh";
}

/**
 * Finds the shell to use: `kind` looked up the usual way, or the program at `path` (then the
 * kind is `kind`, or guessed from its name). Errors name `fields.path` for a path that is not
 * there and `fields.kind` for a shell that is nowhere to be found.
 */
function chooseShell(
  kind: ShellKind | "default",
  path: string | undefined,
  fields: { path: string; kind: string },
  ctx: ShellContext,
): ChosenShell {
  if (path) {
    const resolved = resolveField(path, fields.path, ctx);
    return { type: kind === "default" ? kindOf(resolved) : kind, path: resolved };
  }
  if (kind === "default") return defaultShell(ctx, fields.kind);
  const search = kind === "powershell"
    ? findPowerShell(ctx)
    : kind === "cmd"
    ? findCmd(ctx)
    : firstFound(
      kind === "sh" && (ctx.flavor ?? HOST_FLAVOR) === "posix" ? ["/bin/sh", "sh"] : [kind],
      ctx,
    );
  if (!search.path) throw notFound(kind, search.searched, fields.kind);
  return { type: kind, path: search.path };
}

function resolveField(file: string, field: string, ctx: ShellContext): string {
  try {
    return resolveProgram(file, { ...ctx, flavor: ctx.flavor ?? HOST_FLAVOR });
  } catch (error) {
    if (error instanceof SpawnError) {
      throw new EngineError("invalid_input", error.message, field, error.detail);
    }
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
    const shell = chooseShell(request.shellType, request.executable, {
      path: "executable",
      kind: "shell_type",
    }, ctx);
    return {
      file: shell.path,
      ...shellArgs(shell.type, request.command, true),
      shell: shell.type,
      display: request.command,
    };
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
    const shell = chooseShell("powershell", undefined, { path: "command", kind: "command" }, ctx);
    return {
      file: shell.path,
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

/** What a terminal runs. */
export interface TerminalInvocationRequest {
  /** A program (with `args`), or a command line for the shell (without). None: a shell. */
  command?: string;
  args?: string[];
  /** `default`, `powershell`, `cmd`, `bash`, `sh`, or the path of a shell. */
  shell?: string;
}

const SHELL_NAMES: readonly string[] = ["default", "powershell", "cmd", "bash", "sh"];

/**
 * Decides what a terminal runs: with `command` and `args`, that program (no shell, as ACP's
 * terminal/create); with `command` alone, that command line in the shell; with neither, the
 * shell itself, interactive.
 */
export function buildTerminalInvocation(
  request: TerminalInvocationRequest,
  ctx: ShellContext,
): Invocation {
  if (request.command !== undefined && request.args !== undefined) {
    try {
      return buildInvocation({
        command: request.command,
        executable: request.command,
        args: request.args,
        shellType: "executable",
      }, ctx);
    } catch (error) {
      // The program is this request's `command`, whatever the one-shot path calls it.
      if (error instanceof EngineError && error.field === "executable") {
        throw new EngineError(error.kind, error.message, "command", error.detail);
      }
      throw error;
    }
  }
  const named = request.shell === undefined || SHELL_NAMES.includes(request.shell);
  const fields = { path: "shell", kind: "shell" };
  const shell = named
    ? chooseShell((request.shell ?? "default") as ShellKind | "default", undefined, fields, ctx)
    : chooseShell("default", request.shell, fields, ctx);
  if (request.command === undefined) {
    return {
      file: shell.path,
      ...interactiveArgs(shell.type),
      shell: shell.type,
      display: shell.path,
    };
  }
  return {
    file: shell.path,
    ...shellArgs(shell.type, request.command, false),
    shell: shell.type,
    display: request.command,
  };
}
