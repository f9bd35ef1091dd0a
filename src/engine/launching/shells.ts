/**
 * Which program runs a command: the shells (found per platform, with the operator's overrides
 * first) and the argument lists that make each run a command.
 *
 * Code pages on Windows: cmd is never forced to `chcp 65001`. On a pseudoconsole, conhost
 * translates whatever a program writes in the console's code page into UTF-8 for us, so legacy
 * programs, `type` of a GBK file and GBK batch files come out right as they are (65001 would
 * garble them); through pipes, the engine decodes each stream itself (UTF-8 or the code page,
 * see output/decode.ts), and input is encoded in the code page cmd reads. An `encoding`
 * argument switches cmd to that code page (`chcp N`), so that cmd, its batch files and its
 * programs read and write in it. PowerShell writes UTF-8 without a BOM (or the code page
 * asked for), and in pipe mode reads it too, with progress records silenced.
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
import { serverEnvironment } from "./environment.ts";
import { EngineError } from "../errors.ts";
import type { ShellIntegration } from "./integration/mod.ts";
import type { ShellType } from "../vocabulary.ts";
import type { CreateTerminalRequest, RunRequest } from "./request.ts";

export { SHELL_TYPES, type ShellType } from "../vocabulary.ts";

/** A program and arguments ready to spawn. */
export interface Invocation {
  /** Absolute path of the program. */
  file: string;
  args: string[];
  /** Pass `args` to Windows unquoted (cmd.exe's own quoting is in them already). */
  verbatimArguments?: boolean;
  /** The code page the shell was told to write and read in (PowerShell: 65001 by default). */
  codePage?: number;
  /** What actually runs it, `default` resolved. */
  shell: Exclude<ShellType, "default"> | "zsh" | "fish";
  /** The command as a person would type it. */
  display: string;
  /** Variables the shell needs besides the environment asked for (shell integration). */
  env?: Record<string, string>;
  /** The shell was started with its integration (see integration/mod.ts). */
  integration?: ShellIntegration;
}

/** Where it runs: the child's directory and environment, and the OS rules. */
export interface ShellContext {
  cwd: string;
  /** The child's environment (PATH lookups). */
  env: Record<string, string>;
  flavor?: PathFlavor;
  /**
   * The server's own environment, where the operator's settings live (WINTERM_CMD_PATH,
   * WINTERM_POWERSHELL_PATH, SystemRoot, ProgramFiles): a request cannot change which shell runs.
   * Default: the server's.
   */
  server?: Record<string, string>;
}

/** A shell looked for and where. */
export interface ShellSearch {
  path?: string;
  searched: string[];
}

const POWERSHELL_FLAGS = ["-NoLogo", "-NoProfile", "-ExecutionPolicy", "Bypass"];

/**
 * The PowerShell lines that set its encodings: what it writes ([Console]::OutputEncoding, also
 * how it decodes native programs' output), what it sends to native programs ($OutputEncoding),
 * and in pipe mode what it reads. UTF-8 without a BOM (`[Text.Encoding]::UTF8` would write
 * one into pipes), or the code page asked for. In pipe mode progress records are silenced
 * (they would arrive as `#< CLIXML` on stderr).
 */
export function powershellPrelude(codePage: number, pipe: boolean): string {
  const encoding = codePage === 65001
    ? "New-Object System.Text.UTF8Encoding $false"
    : `[Text.Encoding]::GetEncoding(${codePage})`;
  return `$winterm_encoding=${encoding};[Console]::OutputEncoding=$winterm_encoding;` +
    "$OutputEncoding=$winterm_encoding;" +
    (pipe
      ? "[Console]::InputEncoding=$winterm_encoding;$ProgressPreference='SilentlyContinue';"
      : "") +
    "Remove-Variable winterm_encoding;";
}

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
  const override = setting(ctx, "WINTERM_POWERSHELL_PATH");
  if (flavor !== "windows") return firstFound([...(override ? [override] : []), "pwsh"], ctx);
  const programFiles = setting(ctx, "ProgramFiles") ?? "C:\\Program Files";
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

/**
 * cmd.exe: WINTERM_CMD_PATH, then %SystemRoot%\System32\cmd.exe, then PATH. Windows only.
 * ComSpec is not consulted: a request may set it for its child, but never choose the shell.
 */
export function findCmd(ctx: ShellContext): ShellSearch {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  if (flavor !== "windows") return { searched: ["cmd.exe exists only on Windows"] };
  const override = setting(ctx, "WINTERM_CMD_PATH");
  return firstFound([
    ...(override ? [override] : []),
    win32.join(systemRoot(ctx), "System32", "cmd.exe"),
    "cmd.exe",
  ], ctx);
}

/** An operator's setting: from the server's environment, never the request's. */
function setting(ctx: ShellContext, name: string): string | undefined {
  return envValue(ctx.server ?? serverEnvironment(), name, ctx.flavor ?? HOST_FLAVOR);
}

function systemRoot(ctx: ShellContext): string {
  return setting(ctx, "SystemRoot") ?? "C:\\Windows";
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
  return { type: kindOf(shell.path), path: shell.path };
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
export type ShellKind = "powershell" | "cmd" | "bash" | "sh" | "zsh" | "fish";

/** A shell found: what kind it is and where. */
interface ChosenShell {
  type: ShellKind;
  path: string;
}

/** What a shell needs to run: its arguments, and how they are passed and answered. */
interface ShellArguments {
  args: string[];
  verbatimArguments?: boolean;
  codePage?: number;
}

/** How a shell is to run: on pipes or a terminal, and in which code page if one was asked. */
interface ShellSetup {
  pipe: boolean;
  codePage?: number;
}

/** PowerShell running `script` after setting its encodings, with `extra` flags. */
function powershellArgs(script: string, extra: string[], setup: ShellSetup): ShellArguments {
  const codePage = setup.codePage ?? 65001;
  return {
    args: [
      ...POWERSHELL_FLAGS,
      ...extra,
      "-EncodedCommand",
      encodePowerShell(powershellPrelude(codePage, setup.pipe) + script),
    ],
    codePage,
  };
}

/** `chcp N>nul & ` when a code page was asked for: cmd then reads and writes in it. */
function chcp(setup: ShellSetup): string {
  return setup.codePage === undefined ? "" : `chcp ${setup.codePage}>nul & `;
}

/**
 * The arguments that make a shell run `command` and exit. One-shot commands also get
 * PowerShell's -NonInteractive (a prompt fails instead of hanging); terminals do not.
 */
function shellArgs(
  type: ShellKind,
  command: string,
  oneShot: boolean,
  setup: ShellSetup,
): ShellArguments {
  switch (type) {
    case "powershell":
      return powershellArgs(command, oneShot ? ["-NonInteractive"] : [], setup);
    case "cmd":
      // /s: cmd strips the outer quotes and runs the rest verbatim, so the user's own quoting
      // reaches cmd untouched.
      return {
        args: ["/d", "/s", "/c", `"${chcp(setup)}${command}"`],
        verbatimArguments: true,
        codePage: setup.codePage,
      };
    default:
      return { args: ["-c", command] };
  }
}

/**
 * The arguments that start a shell for a person (or agent) to type into; `startup` is what
 * PowerShell or cmd runs first (a script, a command line).
 */
function interactiveArgs(
  type: ShellKind,
  setup: ShellSetup,
  path: string,
  startup?: string,
): ShellArguments {
  switch (type) {
    case "powershell":
      return powershellArgs(startup ?? "", ["-NoExit"], setup);
    case "cmd": {
      const first = [
        ...(setup.codePage === undefined ? [] : [`chcp ${setup.codePage}>nul`]),
        ...(startup === undefined ? [] : [startup]),
      ].join(" & ");
      const codePage = setup.codePage;
      if (runningUnderWine()) {
        // Wine gives a pseudoconsole's child no console handles: an interactive cmd would read
        // end of input at once and exit. Started with its input and output on the console
        // (CON), it works; the cmd in front passes its exit code on.
        const inner = `${path} /d${first ? ` /k "${first}"` : ""} <CON >CON 2>&1`;
        return { args: ["/d", "/s", "/c", `"${inner}"`], verbatimArguments: true, codePage };
      }
      return first
        ? { args: ["/d", "/s", "/k", `"${first}"`], verbatimArguments: true, codePage }
        : { args: ["/d"] };
    }
    default:
      return { args: [] }; // on a terminal, every POSIX shell is interactive by itself
  }
}

/** What kind of shell a program is, from its name. */
function kindOf(path: string): ShellKind {
  const name = path.split(/[\\/]/).pop()!.toLowerCase().replace(/\.exe$/, "");
  if (name === "pwsh" || name === "powershell") return "powershell";
  if (name === "cmd") return "cmd";
  if (name === "zsh" || name === "fish") return name;
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

/**
 * Decides what runs for a command, in the code page asked for (the request's `encoding`, if
 * it names one). Throws {@link EngineError} naming the field at fault.
 */
export function buildInvocation(
  request: RunRequest,
  ctx: ShellContext,
  codePage?: number,
): Invocation {
  if (request.shellType !== "executable") {
    if (request.args?.length) {
      throw new EngineError(
        "invalid_input",
        [
          "args can only be used with ",
          { field: "shellType" },
          " 'executable'; put them in the command",
        ],
        "args",
      );
    }
    const shell = chooseShell(request.shellType, request.executable, {
      path: "executable",
      kind: "shellType",
    }, ctx);
    return {
      file: shell.path,
      ...shellArgs(shell.type, request.command, true, {
        pipe: request.usePty === false,
        codePage,
      }),
      shell: shell.type,
      display: request.command,
    };
  }
  if (request.executable) {
    return programInvocation([request.executable, ...(request.args ?? [])], "executable", ctx);
  }
  let argv: string[];
  try {
    argv = [
      ...((ctx.flavor ?? HOST_FLAVOR) === "windows" ? splitWindows : splitPosix)(request.command),
      ...(request.args ?? []),
    ];
  } catch (error) {
    if (error instanceof CommandLineError) {
      throw new EngineError("invalid_input", error.message, "command");
    }
    throw error;
  }
  if (argv.length === 0) throw new EngineError("invalid_input", "the command is blank", "command");
  return programInvocation(argv, "command", ctx);
}

/**
 * A program run itself, no shell between: `argv[0]` found (a failure names `field`), the rest
 * its exact arguments. A PowerShell script runs through PowerShell, as it would when typed at
 * a PowerShell prompt, but never waiting for an answer no one will give.
 */
function programInvocation(argv: string[], field: string, ctx: ShellContext): Invocation {
  const flavor = ctx.flavor ?? HOST_FLAVOR;
  const file = resolveField(argv[0], field, ctx);
  const display = flavor === "windows" ? safeWindowsDisplay(argv) : argv.map(quotePosix).join(" ");
  if (flavor === "windows" && file.toLowerCase().endsWith(".ps1")) {
    const shell = chooseShell("powershell", undefined, { path: "command", kind: "command" }, ctx);
    return {
      file: shell.path,
      args: [...POWERSHELL_FLAGS, "-NonInteractive", "-File", file, ...argv.slice(1)],
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

const SHELL_NAMES: readonly string[] = [
  "default",
  "powershell",
  "cmd",
  "bash",
  "sh",
  "zsh",
  "fish",
];

/**
 * Decides what a terminal runs: with `command` and arguments, that program with them (no shell:
 * exact arguments, and the program is what a policy judges; a `shell` is refused, as it would
 * run nothing); with `command` alone (no `args`, or none in them, as ACP agents send a whole
 * command line), that command line in the shell, as Zed runs every ACP command; with neither,
 * the shell itself, interactive.
 */
export function buildTerminalInvocation(
  request: CreateTerminalRequest,
  ctx: ShellContext,
  codePage?: number,
  integration?: (shell: ShellKind) => ShellIntegration | undefined,
): Invocation {
  // Arguments with no program to take them were dropped, and an interactive shell opened.
  if (request.command === undefined && request.args?.length) {
    throw new EngineError(
      "invalid_input",
      ["applies only with ", { field: "command" }, " (the program that takes them)"],
      "args",
    );
  }
  if (request.command !== undefined && request.args?.length) {
    if (request.shell !== undefined) {
      throw new EngineError(
        "invalid_input",
        [
          { field: "shell" },
          " cannot apply: ",
          { field: "command" },
          " with ",
          { field: "args" },
          " runs that program itself, with no shell; drop ",
          { field: "shell" },
          ", or give ",
          { field: "command" },
          " alone, as a command line that shell runs",
        ],
        "shell",
      );
    }
    return programInvocation([request.command, ...request.args], "command", ctx);
  }
  const named = request.shell === undefined || SHELL_NAMES.includes(request.shell);
  const fields = { path: "shell", kind: "shell" };
  const shell = named
    ? chooseShell((request.shell ?? "default") as ShellKind | "default", undefined, fields, ctx)
    : chooseShell("default", request.shell, fields, ctx);
  const setup = { pipe: false, codePage };
  if (request.command === undefined) {
    const integrated = integration?.(shell.type);
    const started = interactiveArgs(shell.type, setup, shell.path, integrated?.startup);
    return {
      file: shell.path,
      ...started,
      args: [...(integrated?.args ?? []), ...started.args],
      shell: shell.type,
      display: shell.path,
      ...(integrated ? { integration: integrated, env: integrated.env } : {}),
    };
  }
  return {
    file: shell.path,
    ...shellArgs(shell.type, request.command, false, setup),
    shell: shell.type,
    display: request.command,
  };
}
