/**
 * The server's configuration, from command-line flags first and WINTERM_* environment
 * variables second. Parsing is pure (arguments and environment are passed in) and every bad
 * value is refused with a message naming the flag or variable.
 *
 * @example
 * ```ts
 * import { parseConfig } from "./config.ts";
 * const { config } = parseConfig(["--log-level", "debug"], {});
 * config.logLevel; // "debug"
 * ```
 * @module
 */
import { parseFlags } from "./flags.ts";
import { type LogLevel, parseLogLevel } from "./log.ts";
import { SANDBOX_MODES, type SandboxMode } from "./engine/vocabulary.ts";

const MIB = 1024 * 1024;
/** The most WINTERM_COMMAND_MAX_BYTES may be: what a command's max_buffer_size can ask at most. */
export const COMMAND_MAX_BYTES_CEILING = 1024 * MIB;
/**
 * The most output text one answer carries, as JSON bytes. An MCP result holds it twice (the
 * structured content, and its JSON again as text, where each quote and backslash is escaped
 * once more: at most twice the size), so a whole message stays under 3 times this plus a few
 * KiB: about 6.1 MiB, well under the 10 MiB an SDK client accepts.
 */
export const MAX_ANSWER_BYTES = 2 * MIB;

/** Which tools the MCP server lists. */
export const TOOL_PROFILES = ["all", "winterm", "terminals"] as const;
/** One of {@link TOOL_PROFILES}. */
export type ToolProfile = typeof TOOL_PROFILES[number];

/** A sandbox network setting: `off`, `on`, or an allowlist of hosts. */
export type NetworkSetting = "off" | "on" | { allow: string[] };

/**
 * The operator's sandbox settings as given (flags, environment, or the policy file's `sandbox`);
 * checked and combined when the server lays its groundwork (engine/launching/sandbox.ts).
 */
export interface SandboxConfig {
  mode?: SandboxMode;
  network?: NetworkSetting;
  writable?: string[];
  hidden?: string[];
}

/** Everything the server can be told. */
export interface Config {
  logLevel: LogLevel;
  tools: ToolProfile;
  /** Commands running at once. */
  maxCommands: number;
  /** Finished commands kept for queries. */
  commandRetention: number;
  /** Minutes a finished command stays queryable. */
  commandRetentionMinutes: number;
  /** Milliseconds between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** Terminals open at once. */
  maxTerminals: number;
  /** Seconds a terminal may sit unused before it is released. */
  terminalIdleSeconds: number;
  /** Lines of output kept per terminal. */
  terminalMaxLines: number;
  /** Bytes of output kept per terminal (and the most a client's outputByteLimit can be). */
  terminalMaxBytes: number;
  /** Bytes of output kept per stream of a command (the most max_buffer_size can be). */
  commandMaxBytes: number;
  /** Output retained by all commands and terminals together. */
  outputBudgetBytes: number;
  /** Output text in one answer (JSON-escaped bytes, all streams together). */
  maxAnswerBytes: number;
  /** Bytes of asciicast recording kept per terminal (0: no recordings). */
  recordingMaxBytes: number;
  /** The policy file, if any. */
  policyPath?: string;
  /** The audit log file, if any. */
  auditPath?: string;
  /** Whether the audit log records what was typed (not just how much). */
  auditInputContent: boolean;
  /** Where the server keeps its process ledger (undefined: nowhere, no crash recovery). */
  stateDir?: string;
  /** Milliseconds a write may wait for a program to take its input. */
  writeTimeoutMs: number;
  /** The sandbox every command and terminal gets by default, and the most a call may ask. */
  sandbox: SandboxConfig;
  /** Serve over HTTP instead of stdio. */
  http?: HttpConfig;
}

/** The HTTP front end's settings. */
export interface HttpConfig {
  host: string;
  port: number;
  /** The bearer token clients must send; undefined: one is generated at start. */
  token?: string;
  /** Host names accepted in Host and Origin headers besides the loopback names. */
  allowedHosts: string[];
  /** Origins allowed to call from a browser (CORS); none by default. */
  corsOrigins: string[];
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** From a connection's start (or its previous answer) to a request's complete headers. */
  headersTimeoutMs: number;
  /** From a request's start to its complete body. */
  requestTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  idleTimeoutMs: number;
  /** Connections open at once (a standing MCP event stream aside: one per session at most). */
  maxConnections: number;
  /** A write to a client that makes no progress for this long closes its connection. */
  writeTimeoutMs: number;
  /** Bytes waiting to be sent to all clients together; past it, those that read least are cut. */
  maxQueuedBytes: number;
  /** MCP sessions unused this long are closed. */
  sessionIdleSeconds: number;
  /** MCP sessions open at once. */
  maxSessions: number;
  /** WebSocket streams open at once. */
  maxStreams: number;
  /** Bytes a stream may have queued for a client that reads too slowly before it is cut off. */
  streamMaxBufferedBytes: number;
  /** How often stream clients are pinged (and how long, at least, a pong may take). */
  streamPingSeconds: number;
  /** How long the one-time login link of the web view stays valid, in seconds. */
  webLoginSeconds: number;
  /** How long a browser stays logged in without using the web view, in hours. */
  webSessionHours: number;
}

/** What the command line asked for. */
export interface ParsedCommandLine {
  config: Config;
  help: boolean;
  version: boolean;
}

/** A flag or variable with a value the server cannot use. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** The text of `--help`. */
export const USAGE = `winterm-mcp: real terminals for AI agents, over MCP.

Usage: winterm-mcp [options]          (serves MCP on stdin/stdout)

Options:
  --log-level LEVEL   debug | info | warn | error | silent (env WINTERM_LOG_LEVEL; default info)
  --tools PROFILE     all | winterm | terminals: which tools to offer (env WINTERM_TOOLS; default all)
  --policy FILE       command policy, JSON (env WINTERM_POLICY)
  --sandbox MODE      off | workspace-write | read-only: the sandbox every command and terminal
                      gets, and the loosest a call may ask (env WINTERM_SANDBOX; default off).
                      workspace-write: writes only under the working directory, its TMPDIR and
                      the writable paths; read-only: no writes. Reads of credentials (~/.ssh,
                      ~/.aws, ...) are refused in both. A call can only tighten it.
  --sandbox-network NET  off | on | allow:HOST,HOST,...: a sandbox's network (env
                      WINTERM_SANDBOX_NETWORK; default off). allow: only through the server's
                      proxy, to these hosts (api.example.com, *.example.org, 10.0.0.5:8080)
  --audit FILE        audit log, JSON lines (env WINTERM_AUDIT)
  --state-dir DIR     where the process ledger lives, through which a server ends what a killed
                      predecessor left running (env WINTERM_STATE_DIR; default
                      $XDG_STATE_HOME/winterm-mcp, ~/.local/state/winterm-mcp, or on macOS
                      ~/Library/Application Support/winterm-mcp; unused on Windows)
  --http              serve MCP (at /mcp) and the REST API (at /api) over HTTP instead of stdio
  --host HOST         address to bind (env WINTERM_HTTP_HOST; default 127.0.0.1)
  --port PORT         port (env WINTERM_HTTP_PORT; default 3001; 0 picks a free one)
  -h, --help          this text
  -v, --version       the version

Environment:
  WINTERM_POWERSHELL_PATH, WINTERM_CMD_PATH   shells to use on Windows
  WINTERM_MAX_COMMANDS            commands running at once (default 256)
  WINTERM_COMMAND_RETENTION       finished commands kept (default 500)
  WINTERM_COMMAND_RETENTION_MINUTES  how long they are kept (default 60)
  WINTERM_KILL_GRACE_MS           SIGTERM to SIGKILL delay when stopping (default 2000)
  WINTERM_WRITE_TIMEOUT_MS        how long input may wait for a program to take it (default 10000)
  WINTERM_MAX_TERMINALS           terminals open at once (default 64)
  WINTERM_TERMINAL_IDLE_SECONDS   unused terminals are released after this (default 86400)
  WINTERM_TERMINAL_MAX_LINES      lines kept per terminal (default 10000)
  WINTERM_TERMINAL_MAX_BYTES      bytes kept per terminal; caps outputByteLimit (default 10485760)
  WINTERM_COMMAND_MAX_BYTES       bytes kept per command stream; caps max_buffer_size
                                  (default 10485760)
  WINTERM_OUTPUT_BUDGET_BYTES     output kept by all commands and terminals together; past it
                                  finished commands are evicted, then the largest buffers
                                  trimmed (default 268435456)
  WINTERM_MAX_ANSWER_BYTES        output text in one answer, as JSON bytes; caps max_bytes
                                  (default and most 2097152: a whole MCP message stays under
                                  about 6.1 MiB)
  WINTERM_RECORDING_MAX_BYTES     asciicast recording kept per terminal (default 4194304; 0: none);
                                  at the bound recording stops, the start is kept
  WINTERM_AUDIT_INPUT             "content" to log what is typed, not only its size
  WINTERM_SANDBOX_WRITABLE        paths every sandboxed command may also write under, and the
                                  most a call's sandbox.writable may name (PATH-style list)
  WINTERM_SANDBOX_HIDDEN          paths no sandboxed process may read (PATH-style list; replaces
                                  the default: ~/.ssh ~/.aws ~/.gnupg ~/.azure ~/.kube ~/.docker
                                  ~/.config/gcloud ~/.config/gh ~/.netrc ~/.git-credentials
                                  ~/.npmrc ~/.pypirc ~/.password-store ~/.local/share/keyrings;
                                  the audit log is always hidden)
  WINTERM_TOKEN                   HTTP bearer token, at least 32 characters of A-Z a-z 0-9 - . _ ~ + /
                                  (e.g. \`openssl rand -hex 24\`; generated and printed to stderr
                                  if unset; required to bind a non-loopback address)
  WINTERM_ALLOWED_HOSTS           extra host names accepted in Host/Origin (comma-separated)
  WINTERM_CORS_ORIGINS            origins allowed to call from a browser (comma-separated)
  WINTERM_HTTP_MAX_BODY_BYTES     largest request body (default 1048576)
  WINTERM_HTTP_HEADERS_TIMEOUT_MS a request's headers must arrive within this (default 10000)
  WINTERM_HTTP_REQUEST_TIMEOUT_MS ... and its body within this of its start (default 30000)
  WINTERM_HTTP_IDLE_TIMEOUT_MS    kept-alive connections close after this idle (default 30000)
  WINTERM_HTTP_MAX_CONNECTIONS    connections open at once (default 256): an idle one makes
                                  room for a newcomer; when all are busy, 503. An MCP session's
                                  standing event stream (GET /mcp) does not count: the session
                                  table bounds those (one per session)
  WINTERM_HTTP_WRITE_TIMEOUT_MS   a connection whose answer makes no progress (the client reads
                                  nothing of it) for this long is closed (default 30000)
  WINTERM_HTTP_MAX_QUEUED_BYTES   bytes waiting to be sent to all clients together (default
                                  67108864): past it, the connections that read least are
                                  closed, those that never carried the token first
  WINTERM_MCP_SESSION_IDLE_SECONDS  MCP sessions unused this long are closed (default 3600)
  WINTERM_MCP_MAX_SESSIONS        MCP sessions at once (default 512): the least recently used
                                  idle one makes room for a new client (its event stream ends)
  WINTERM_STREAM_MAX_CONNECTIONS  WebSocket streams (/api/terminals/:id/stream) at once (default 32)
  WINTERM_STREAM_MAX_BUFFERED_BYTES  output queued for a slow stream client at most (default
                                  4194304): beyond, a terminal's client misses output, then
                                  gets the screen afresh; a command's client is disconnected
  WINTERM_STREAM_PING_SECONDS     streams are pinged this often (default 30): a client is let go
                                  that does not answer within that, plus the time to read what
                                  was sent before the ping at 64 KiB/s
  WINTERM_WEB_LOGIN_SECONDS       the web view's one-time login link is valid this long (default 600)
  WINTERM_WEB_SESSION_HOURS       a browser stays logged in this long without use (default 12)

Logs go to stderr; stdout carries only MCP messages.`;

function integer(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got '${text}')`);
  }
  return value;
}

function oneOf<T extends string>(what: string, text: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(text)) return text as T;
  throw new ConfigError(`${what} must be one of ${allowed.join(", ")} (got '${text}')`);
}

/** The sandbox settings of the flags and environment. */
function sandboxConfig(
  values: { sandbox?: string; "sandbox-network"?: string },
  env: Record<string, string | undefined>,
): SandboxConfig {
  const config: SandboxConfig = {};
  const mode = values.sandbox ?? nonEmpty(env.WINTERM_SANDBOX);
  if (mode !== undefined) {
    config.mode = oneOf(values.sandbox ? "--sandbox" : "WINTERM_SANDBOX", mode, SANDBOX_MODES);
  }
  const network = values["sandbox-network"] ?? nonEmpty(env.WINTERM_SANDBOX_NETWORK);
  if (network !== undefined) {
    const source = values["sandbox-network"] ? "--sandbox-network" : "WINTERM_SANDBOX_NETWORK";
    if (network === "off" || network === "on") config.network = network;
    else if (network.startsWith("allow:") && list(network.slice(6)).length) {
      config.network = { allow: list(network.slice(6)) };
    } else {
      throw new ConfigError(
        `${source} must be off, on, or allow: and a comma-separated list of hosts (got '${network}')`,
      );
    }
  }
  const separator = Deno.build.os === "windows" ? ";" : ":";
  const paths = (text: string | undefined) => text?.split(separator).filter(Boolean);
  const writable = paths(nonEmpty(env.WINTERM_SANDBOX_WRITABLE));
  if (writable) config.writable = writable;
  const hidden = paths(nonEmpty(env.WINTERM_SANDBOX_HIDDEN));
  if (hidden) config.hidden = hidden;
  return config;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text?.trim() ? text.trim() : undefined;
}

function list(text: string | undefined): string[] {
  return (text ?? "").split(",").map((item) => item.trim()).filter(Boolean);
}

/** The user's state directory for this server, by the platform's convention. */
function defaultStateDir(env: Record<string, string | undefined>): string | undefined {
  if (Deno.build.os === "windows") return undefined; // job objects need no ledger
  const home = nonEmpty(env.HOME);
  if (Deno.build.os === "darwin") {
    return home && `${home}/Library/Application Support/winterm-mcp`;
  }
  // XDG: a relative XDG_STATE_HOME is invalid and to be ignored.
  const xdg = nonEmpty(env.XDG_STATE_HOME);
  const state = xdg?.startsWith("/") ? xdg : home && `${home}/.local/state`;
  return state && `${state}/winterm-mcp`;
}

/** The command line's flags (docs/configuration.md names each: tests/house/docs_test.ts). */
export const FLAGS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  "log-level": { type: "string" },
  tools: { type: "string" },
  policy: { type: "string" },
  sandbox: { type: "string" },
  "sandbox-network": { type: "string" },
  audit: { type: "string" },
  "state-dir": { type: "string" },
  http: { type: "boolean" },
  host: { type: "string" },
  port: { type: "string" },
} as const;
type FlagValues = ReturnType<typeof readFlags>;

function readFlags(args: string[]) {
  try {
    return parseFlags(args, FLAGS);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** Parses flags and environment. Throws {@link ConfigError} on bad values. */
export function parseConfig(
  args: string[],
  env: Record<string, string | undefined>,
): ParsedCommandLine {
  const values = readFlags(args);
  const levelText = values["log-level"] ?? env.WINTERM_LOG_LEVEL ?? "info";
  const logLevel = parseLogLevel(levelText);
  if (!logLevel) {
    const source = values["log-level"] ? "--log-level" : "WINTERM_LOG_LEVEL";
    throw new ConfigError(
      `${source} must be debug, info, warn, error or silent (got '${levelText}')`,
    );
  }
  const config: Config = {
    logLevel,
    tools: oneOf(
      values.tools ? "--tools" : "WINTERM_TOOLS",
      values.tools ?? env.WINTERM_TOOLS ?? "all",
      TOOL_PROFILES,
    ),
    maxCommands: integer(env, "WINTERM_MAX_COMMANDS", 256, 1, 10_000),
    commandRetention: integer(env, "WINTERM_COMMAND_RETENTION", 500, 0, 100_000),
    commandRetentionMinutes: integer(env, "WINTERM_COMMAND_RETENTION_MINUTES", 60, 1, 7 * 24 * 60),
    killGraceMs: integer(env, "WINTERM_KILL_GRACE_MS", 2000, 0, 60_000),
    maxTerminals: integer(env, "WINTERM_MAX_TERMINALS", 64, 1, 10_000),
    terminalIdleSeconds: integer(
      env,
      "WINTERM_TERMINAL_IDLE_SECONDS",
      24 * 60 * 60,
      1,
      365 * 24 * 60 * 60,
    ),
    terminalMaxLines: integer(env, "WINTERM_TERMINAL_MAX_LINES", 10_000, 10, 10_000_000),
    terminalMaxBytes: integer(
      env,
      "WINTERM_TERMINAL_MAX_BYTES",
      10 * 1024 * 1024,
      1024,
      1024 * 1024 * 1024,
    ),
    commandMaxBytes: integer(
      env,
      "WINTERM_COMMAND_MAX_BYTES",
      10 * MIB,
      1024,
      COMMAND_MAX_BYTES_CEILING,
    ),
    outputBudgetBytes: integer(
      env,
      "WINTERM_OUTPUT_BUDGET_BYTES",
      256 * MIB,
      MIB,
      1024 * 1024 * MIB,
    ),
    maxAnswerBytes: integer(
      env,
      "WINTERM_MAX_ANSWER_BYTES",
      MAX_ANSWER_BYTES,
      16 * 1024,
      MAX_ANSWER_BYTES,
    ),
    recordingMaxBytes: integer(env, "WINTERM_RECORDING_MAX_BYTES", 4 * MIB, 0, 1024 * MIB),
    policyPath: values.policy ?? nonEmpty(env.WINTERM_POLICY),
    auditPath: values.audit ?? nonEmpty(env.WINTERM_AUDIT),
    auditInputContent:
      oneOf("WINTERM_AUDIT_INPUT", env.WINTERM_AUDIT_INPUT || "size", ["size", "content"]) ===
        "content",
    stateDir: values["state-dir"] ?? nonEmpty(env.WINTERM_STATE_DIR) ?? defaultStateDir(env),
    writeTimeoutMs: integer(env, "WINTERM_WRITE_TIMEOUT_MS", 10_000, 100, 600_000),
    sandbox: sandboxConfig(values, env),
  };
  if (values.http) config.http = httpConfig(values, env);
  else if (values.host || values.port) throw new ConfigError("--host and --port need --http");
  return { config, help: values.help ?? false, version: values.version ?? false };
}

/** The HTTP front end's settings (with --http). */
function httpConfig(values: FlagValues, env: Record<string, string | undefined>): HttpConfig {
  const http: HttpConfig = {
    host: values.host ?? nonEmpty(env.WINTERM_HTTP_HOST) ?? "127.0.0.1",
    port: integer(
      { [values.port ? "--port" : "WINTERM_HTTP_PORT"]: values.port ?? env.WINTERM_HTTP_PORT },
      values.port ? "--port" : "WINTERM_HTTP_PORT",
      3001,
      0, // 0: any free port (the address is logged)
      65535,
    ),
    token: nonEmpty(env.WINTERM_TOKEN),
    allowedHosts: list(env.WINTERM_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
    corsOrigins: list(env.WINTERM_CORS_ORIGINS),
    maxBodyBytes: integer(
      env,
      "WINTERM_HTTP_MAX_BODY_BYTES",
      1024 * 1024,
      1024,
      256 * 1024 * 1024,
    ),
    headersTimeoutMs: integer(env, "WINTERM_HTTP_HEADERS_TIMEOUT_MS", 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, "WINTERM_HTTP_REQUEST_TIMEOUT_MS", 30_000, 100, 3_600_000),
    idleTimeoutMs: integer(env, "WINTERM_HTTP_IDLE_TIMEOUT_MS", 30_000, 100, 3_600_000),
    maxConnections: integer(env, "WINTERM_HTTP_MAX_CONNECTIONS", 256, 1, 100_000),
    writeTimeoutMs: integer(env, "WINTERM_HTTP_WRITE_TIMEOUT_MS", 30_000, 100, 3_600_000),
    maxQueuedBytes: integer(
      env,
      "WINTERM_HTTP_MAX_QUEUED_BYTES",
      64 * 1024 * 1024,
      8 * 1024 * 1024,
      16 * 1024 * 1024 * 1024,
    ),
    sessionIdleSeconds: integer(env, "WINTERM_MCP_SESSION_IDLE_SECONDS", 3600, 1, 7 * 24 * 3600),
    maxSessions: integer(env, "WINTERM_MCP_MAX_SESSIONS", 512, 1, 100_000),
    maxStreams: integer(env, "WINTERM_STREAM_MAX_CONNECTIONS", 32, 1, 10_000),
    streamMaxBufferedBytes: integer(
      env,
      "WINTERM_STREAM_MAX_BUFFERED_BYTES",
      4 * 1024 * 1024,
      64 * 1024,
      1024 * 1024 * 1024,
    ),
    streamPingSeconds: integer(env, "WINTERM_STREAM_PING_SECONDS", 30, 1, 3600),
    webLoginSeconds: integer(env, "WINTERM_WEB_LOGIN_SECONDS", 600, 10, 7 * 24 * 3600),
    webSessionHours: integer(env, "WINTERM_WEB_SESSION_HOURS", 12, 1, 24 * 365),
  };
  if (http.requestTimeoutMs < http.headersTimeoutMs) {
    // node:http refuses it: the headers are part of the request.
    throw new ConfigError(
      "WINTERM_HTTP_REQUEST_TIMEOUT_MS must be at least WINTERM_HTTP_HEADERS_TIMEOUT_MS " +
        `(got ${http.requestTimeoutMs} < ${http.headersTimeoutMs})`,
    );
  }
  return http;
}
