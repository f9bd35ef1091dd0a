/**
 * The winterm-mcp tool set: run_command, query_command_status, enhanced_query_command_status,
 * send_command_input, terminate_command, get_version. Field names follow the winterm spec;
 * additions (wait_ms, max_bytes, raw, next offsets, signal) are optional and documented.
 *
 * @module
 */
import { type Static, Type } from "../typebox.ts";
import {
  agentPattern,
  type Command,
  type CommandGrep,
  type CommandRead,
  type CommandReadRequest,
  type CommandService,
  EngineError,
  type FrontEnd,
  importShells,
  inReadSlices,
  type RunRequest,
  sandboxHint,
  SHELL_TYPES,
  STDIN_MAX_BYTES,
  type Steps,
  waitFor,
} from "../engine/mod.ts";
import { COMMAND_MAX_BYTES_CEILING } from "../config.ts";
import { NAME, VERSION } from "../version.ts";
import {
  AllowAnsiMismatch,
  ContextLines,
  CString,
  Encoding,
  Env,
  Grep,
  literals,
  Sandbox,
  SandboxInfo,
} from "../schema.ts";
import { sizeShown } from "../schema_marks.ts";
import {
  defineTool,
  READ_ONLY,
  type ToolContext,
  type ToolDefinition,
  withProgress,
} from "./tool.ts";

const MIB = 1024 * 1024;
const Token = Type.String({ minLength: 1, maxLength: 100 });

/** How much of the output an answer shows, shared by run_command, query_command_status and friends. */
const Shape = {
  max_bytes: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 16 * MIB,
    default: 16 * 1024,
    description: "Over it: first and last lines, a marker.",
  })),
  tail_lines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  head_lines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  raw: Type.Optional(Type.Boolean({ default: false, description: "Keep escape sequences." })),
};

/** A search of the output instead of the output itself (see src/engine/output/grep.ts). */
const Search = {
  grep: Type.Optional(Grep),
  context_lines: Type.Optional(ContextLines),
};

const RunCommandInput = Type.Object({
  command: sizeShown(Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "Shell syntax, or with shell_type executable: a program and its arguments.",
  })),
  executable: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: "The program (shell_type executable) or the shell's path.",
  })),
  args: Type.Optional(Type.Array(CString, { maxItems: 1000 })),
  shell_type: Type.Optional(literals(SHELL_TYPES, { default: "default" })),
  timeout: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 30,
    description: "Seconds; then it and all it started are killed.",
  })),
  working_directory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  enable_streaming: Type.Optional(Type.Boolean({ default: false })),
  use_pty: Type.Optional(Type.Boolean({ default: true, description: "false: pipes." })),
  max_buffer_size: Type.Optional(Type.Integer({
    minimum: 1024,
    maximum: COMMAND_MAX_BYTES_CEILING,
    default: 10 * MIB,
    description: "Bytes kept per stream.",
  })),
  stdin: Type.Optional(Type.String({
    maxLength: STDIN_MAX_BYTES,
    description: "Input text, then end of input. Typed on a terminal (echoed; no control " +
      "characters but tab and \\n). At most 1 MiB.",
  })),
  env: Type.Optional(Env),
  encoding: Type.Optional(Encoding),
  sandbox: Type.Optional(Sandbox),
  allow_ansi_mismatch: Type.Optional(AllowAnsiMismatch),
  wait_ms: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 0,
    description: "Wait up to this long for the end; then answer as query_command_status.",
  })),
  ...Shape,
  ...Search,
}, { additionalProperties: false });

const QueryInput = Type.Object({
  token: Token,
  stdout_offset: Type.Optional(Type.Integer({ minimum: 0 })),
  stderr_offset: Type.Optional(Type.Integer({ minimum: 0 })),
  wait_ms: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 0,
    description: "Wait up to this long for the end.",
  })),
  ...Shape,
  ...Search,
}, { additionalProperties: false });

const EnhancedQueryInput = Type.Object({
  token: Token,
  since_timestamp: Type.Optional(Type.Number({ minimum: 0 })),
  max_bytes: Shape.max_bytes,
  raw: Shape.raw,
  ...Search,
}, { additionalProperties: false });

const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const QueryFields = {
  token: Type.String(),
  status: literals(["pending", "running", "completed", "not_found", "terminated"] as const),
  exit_code: NullableInteger,
  signal: Type.Union([Type.String(), Type.Null()]),
  stdout: Type.String(),
  stderr: Type.String(),
  stdout_length: Type.Integer(),
  stderr_length: Type.Integer(),
  stdout_next_offset: Type.Integer(),
  stderr_next_offset: Type.Integer(),
  stdout_truncated: Type.Boolean(),
  stderr_truncated: Type.Boolean(),
  stdout_dropped_bytes: Type.Integer(),
  stderr_dropped_bytes: Type.Integer(),
  stdout_matches: Type.Optional(Type.Integer()),
  stderr_matches: Type.Optional(Type.Integer()),
  execution_time: NullableInteger,
  timeout_occurred: Type.Boolean(),
  last_output_timestamp: Type.Union([Type.Number(), Type.Null()]),
  message: Type.String(),
  sandbox: Type.Optional(SandboxInfo),
};
const QueryOutput = Type.Object(QueryFields);
type QueryOutput = Static<typeof QueryOutput>;

const RunCommandOutput = Type.Object({
  token: Type.String(),
  status: literals(["pending", "running", "completed", "terminated"] as const),
  message: Type.String(),
  pid: Type.Integer(),
  command: Type.String(),
  max_buffer_size: Type.Integer(),
  sandbox: Type.Optional(SandboxInfo),
  ...Object.fromEntries(
    Object.entries(QueryFields)
      .filter(([name]) => !["token", "status", "message", "sandbox"].includes(name))
      .map(([name, schema]) => [name, Type.Optional(schema)]),
  ),
});

const InputInput = Type.Object({
  token: Token,
  input: Type.String({ maxLength: MIB }),
  append_newline: Type.Optional(Type.Boolean({ default: true })),
  eof: Type.Optional(Type.Boolean({ default: false, description: "Then end the input." })),
}, { additionalProperties: false });

const Outcome = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  token: Type.String(),
});

const VersionOutput = Type.Object({
  name: Type.String(),
  version: Type.String(),
  service_status: Type.String(),
  runtime_version: Type.Object({
    deno: Type.String(),
    v8: Type.String(),
    typescript: Type.String(),
  }),
  platform: Type.String(),
  arch: Type.String(),
  shells: Type.Object({
    powershell: Type.Union([Type.String(), Type.Null()]),
    cmd: Type.Union([Type.String(), Type.Null()]),
  }),
  env: Type.Object({
    WINTERM_POWERSHELL_PATH: Type.Union([Type.String(), Type.Null()]),
    WINTERM_CMD_PATH: Type.Union([Type.String(), Type.Null()]),
    WINTERM_LOG_LEVEL: Type.Union([Type.String(), Type.Null()]),
  }),
});

function lookup(commands: CommandService, token: string): Command {
  const command = commands.get(token);
  if (!command) {
    throw new EngineError(
      "not_found",
      `no command with token ${token} (finished commands expire)`,
      "token",
    );
  }
  return command;
}

function describeState(command: Command): string {
  if (command.running) return `running for ${Math.round(command.executionTimeMs / 1000)} s`;
  if (command.status === "terminated") return "terminated";
  if (command.timeoutOccurred) return "timed out and was killed";
  if (command.signal) return `killed by ${command.signal}`;
  if (command.exitCode === null) {
    return "completed; its exit status is unknown (another process collected it)";
  }
  return `completed with exit code ${command.exitCode}`;
}

/**
 * For a sandboxed command that had failed when its answer began and whose output looks like a
 * refusal: that it may be the sandbox's ("" otherwise).
 */
function sandboxAdvice(
  command: Command,
  state: { status: string; exit_code: number | null },
  read: CommandRead,
): string {
  if (state.status === "running" || state.status === "pending" || state.exit_code === 0) return "";
  const hint = sandboxHint(command.sandbox, [read.stdout.text, read.stderr.text]);
  return hint ? `; ${hint}` : "";
}

/** The marker's advice for what an answer left out of a stream. */
function offsetHint(stream: string, offset: number): string {
  return `read them with ${stream}_offset=${offset}`;
}

/**
 * The search a call asks for (`grep`, `context_lines`), compiled: a bad pattern, or
 * `context_lines` without one, is refused before anything runs or waits.
 */
async function searchOf(
  args: { grep?: string; context_lines?: number },
): Promise<CommandGrep | undefined> {
  if (args.grep === undefined) {
    if (args.context_lines === undefined) return undefined;
    throw new EngineError(
      "invalid_input",
      ["applies only with ", { field: "grep" }],
      "contextLines",
    );
  }
  return {
    pattern: await agentPattern(args.grep, "", "grep"),
    contextLines: args.context_lines,
    resume: (stream, offset) => `search on with ${stream}_offset=${offset}`,
  };
}

/** The shaping arguments of a query, as the engine takes them. */
function shapeOf(args: Static<typeof QueryInput> | Static<typeof RunCommandInput>) {
  return {
    maxBytes: args.max_bytes,
    headLines: args.head_lines,
    tailLines: args.tail_lines,
    raw: args.raw ?? false,
    hint: offsetHint,
  };
}

/**
 * A command's answer, built in slices (see src/engine/slices.ts): its state and its output as
 * they stood when the steps began (a command that ends meanwhile is answered as running, with
 * the output it had then, never as ended with part of its output).
 */
function* report(command: Command, request: CommandReadRequest): Steps<QueryOutput> {
  const state = {
    token: command.token,
    status: command.status,
    exit_code: command.exitCode,
    signal: command.signal,
    execution_time: command.executionTimeMs,
    timeout_occurred: command.timeoutOccurred,
    message: describeState(command),
  };
  const read: CommandRead = yield* command.readSteps(request);
  const { stdout, stderr } = read;
  const clamped = read.maxBytesClamped
    ? ` (max_bytes ${read.maxBytesClamped.requested} lowered to ${read.maxBytesClamped.limit}, ` +
      "the most one answer carries (WINTERM_MAX_ANSWER_BYTES))"
    : "";
  return {
    token: state.token,
    status: state.status,
    exit_code: state.exit_code,
    signal: state.signal,
    stdout: stdout.text,
    stderr: stderr.text,
    stdout_length: stdout.length,
    stderr_length: stderr.length,
    stdout_next_offset: stdout.end,
    stderr_next_offset: stderr.end,
    stdout_truncated: stdout.truncated,
    stderr_truncated: stderr.truncated,
    stdout_dropped_bytes: stdout.dropped,
    stderr_dropped_bytes: stderr.dropped,
    ...(stdout.matches === undefined ? {} : {
      stdout_matches: stdout.matches,
      stderr_matches: stderr.matches ?? 0,
    }),
    execution_time: state.execution_time,
    timeout_occurred: state.timeout_occurred,
    last_output_timestamp: read.lastOutputTime,
    message: state.message + sandboxAdvice(command, state, read) + clamped +
      (command.stdinUntaken ? `; it did not take all of its stdin (${command.stdinUntaken})` : ""),
    ...(command.sandbox ? { sandbox: command.sandbox } : {}),
  };
}

function notFound(token: string): QueryOutput {
  return {
    token,
    status: "not_found",
    exit_code: null,
    signal: null,
    stdout: "",
    stderr: "",
    stdout_length: 0,
    stderr_length: 0,
    stdout_next_offset: 0,
    stderr_next_offset: 0,
    stdout_truncated: false,
    stderr_truncated: false,
    stdout_dropped_bytes: 0,
    stderr_dropped_bytes: 0,
    execution_time: null,
    timeout_occurred: false,
    last_output_timestamp: null,
    message: "Token not found (it never existed, or the finished command expired)",
  };
}

/**
 * Pushes a command's output to the client as MCP log notifications, a few times a second, then
 * its exit: each after the one before, and after the call's answer where that could contradict
 * them. A call that `waits` has its output pushed meanwhile; one that does not answers
 * "submitted" before any (a fast command's exit came before it); the exit always follows the
 * answer (which says running, or the same end).
 */
function streamOutput(command: Command, context: ToolContext, waits: boolean): void {
  const logger = `winterm:${command.token}`;
  let sent: Promise<unknown> = waits ? Promise.resolve() : context.answered;
  const notify = (data: Record<string, unknown>, after: Promise<unknown> = sent) => {
    sent = after.then(() => void context.log({ level: "info", logger, data }));
  };
  command.follow(
    (stream, text) => notify({ token: command.token, stream, text }),
    () =>
      notify(
        {
          token: command.token,
          event: "exit",
          status: command.status,
          exit_code: command.exitCode,
        },
        Promise.all([sent, context.answered]),
      ),
  );
}

/** The winterm tools' argument names where the engine's keys differ (see mcp/wording.ts). */
const FIELD_NAMES = {
  cwd: "working_directory",
  shellType: "shell_type",
  usePty: "use_pty",
  allowAnsiMismatch: "allow_ansi_mismatch",
  maxBufferSize: "max_buffer_size",
  timeoutSeconds: "timeout",
  maxBytes: "max_bytes",
  headLines: "head_lines",
  tailLines: "tail_lines",
  contextLines: "context_lines",
  appendNewline: "append_newline",
};

/** What each tool is made over: the service (asked for by each call) and the front end. */
interface CommandToolDeps {
  service: () => Promise<CommandService>;
  via: FrontEnd;
}

/**
 * The winterm tools over a command service; `via` names the front end in the audit log. The
 * service is asked for by each call, so that the tools can be listed before it is loaded.
 */
export function wintermTools(
  service: () => Promise<CommandService>,
  via: FrontEnd,
): ToolDefinition[] {
  const deps = { service, via };
  return [
    runCommandTool(deps),
    queryCommandStatusTool(deps),
    enhancedQueryCommandStatusTool(deps),
    sendCommandInputTool(deps),
    terminateCommandTool(deps),
    getVersionTool(deps),
  ].map((tool) => ({ ...tool, fieldNames: FIELD_NAMES }));
}

/** `run_command`'s arguments in the engine's words (FIELD_NAMES maps them back for errors). */
function runRequest(args: Static<typeof RunCommandInput>): RunRequest {
  return {
    command: args.command,
    executable: args.executable,
    args: args.args,
    shellType: args.shell_type ?? "default",
    timeoutSeconds: args.timeout ?? 30,
    cwd: args.working_directory,
    usePty: args.use_pty ?? true,
    maxBufferSize: args.max_buffer_size,
    env: args.env,
    encoding: args.encoding,
    sandbox: args.sandbox,
    allowAnsiMismatch: args.allow_ansi_mismatch,
    stdin: args.stdin,
  };
}

/** What `run_command` answers of a command it started, whether or not it waits for its end. */
function startedAnswer(command: Command, bufferClamped?: { requested: number; limit: number }) {
  return {
    token: command.token,
    message: bufferClamped
      ? `submitted; max_buffer_size ${bufferClamped.requested} lowered to the server's ` +
        `${bufferClamped.limit} (WINTERM_COMMAND_MAX_BYTES)`
      : "submitted",
    pid: command.pid,
    command: command.display,
    max_buffer_size: command.bufferSize,
    ...(command.sandbox ? { sandbox: command.sandbox } : {}),
  };
}

/** `run_command`. */
function runCommandTool({ service, via }: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "run_command",
    title: "Run a command",
    description:
      "Run a command. With wait_ms: status, exit_code and output in this one answer (tail_lines: " +
      "just the end; grep: matching lines); without: a token for query_command_status. Shells, " +
      "REPLs, servers: terminal_create.",
    input: RunCommandInput,
    output: RunCommandOutput,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    handler: async (args, context) => {
      const grep = await searchOf(args);
      if (grep && !args.wait_ms) {
        throw new EngineError(
          "invalid_input",
          "needs wait_ms (without it the answer holds no output; query_command_status takes grep too)",
          "grep",
        );
      }
      const commands = await service();
      const read = { ...shapeOf(args), grep };
      commands.checkRead(read);
      const { command, bufferClamped } = await commands.run(runRequest(args), {
        via,
        signal: context.signal,
      });
      // Cancelled before its answer: nobody holds its token to stop it, so it is stopped.
      const abandon = () => void command.terminate(via).catch(() => {});
      if (context.signal.aborted) {
        abandon();
        throw context.signal.reason;
      }
      context.signal.addEventListener("abort", abandon, { once: true });
      try {
        if (args.enable_streaming) streamOutput(command, context, Boolean(args.wait_ms));
        const started = startedAnswer(command, bufferClamped);
        if (!args.wait_ms) return { ...started, status: "pending" as const };
        if (command.running) {
          await withProgress(
            waitFor(command.done, args.wait_ms, context.signal),
            context,
            "the command to finish",
          );
        }
        const answer = await inReadSlices(
          read,
          () => report(command, read),
          context,
        );
        return {
          ...answer,
          ...started,
          status: answer.status as "running" | "completed" | "terminated",
          message: started.message === "submitted"
            ? answer.message
            : `${answer.message}; ${started.message}`,
        };
      } finally {
        context.signal.removeEventListener("abort", abandon);
      }
    },
  });
}

/** `query_command_status`. */
function queryCommandStatusTool({ service }: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "query_command_status",
    title: "Query a command",
    description:
      "A command's status, exit code and output (wait_ms: after its end; grep: matching lines). " +
      "stdout_offset = the previous stdout_next_offset: only what is new.",
    input: QueryInput,
    output: QueryOutput,
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const commands = await service();
      const read = {
        ...shapeOf(args),
        offsets: { stdout: args.stdout_offset, stderr: args.stderr_offset },
        grep: await searchOf(args),
      };
      commands.checkRead(read);
      const command = commands.get(args.token);
      if (!command) return notFound(args.token);
      if (args.wait_ms && command.running) {
        await withProgress(
          waitFor(command.done, args.wait_ms, context.signal),
          context,
          "the command to finish",
        );
      }
      return inReadSlices(
        read,
        () => report(command, read),
        context,
      );
    },
  });
}

/** `enhanced_query_command_status`. */
function enhancedQueryCommandStatusTool({ service }: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "enhanced_query_command_status",
    title: "Query a command's new output",
    description:
      "A command's output since since_timestamp (the previous last_output_timestamp): follows " +
      "it, missing nothing.",
    input: EnhancedQueryInput,
    output: QueryOutput,
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const read = {
        after: args.since_timestamp,
        maxBytes: args.max_bytes,
        raw: args.raw ?? false,
        hint: offsetHint,
        grep: await searchOf(args),
      };
      const command = (await service()).get(args.token);
      if (!command) return notFound(args.token);
      return inReadSlices(
        read,
        () => report(command, read),
        context,
      );
    },
  });
}

/** `send_command_input`. */
function sendCommandInputTool({ service, via }: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "send_command_input",
    title: "Send input to a command",
    description:
      "Type into a running command; Enter follows unless append_newline is false (\\u0003 without " +
      "Enter: Ctrl+C).",
    input: InputInput,
    output: Outcome,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: async (args) => {
      const command = lookup(await service(), args.token);
      await command.type({ text: args.input, enter: args.append_newline }, via);
      if (args.eof) await command.closeInput();
      return {
        success: true,
        message: args.eof ? "input sent, then end of input" : "input sent",
        token: args.token,
      };
    },
  });
}

/** `terminate_command`. */
function terminateCommandTool({ service, via }: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "terminate_command",
    title: "Terminate a command",
    description: "Stop a command and every process it started; its output stays readable.",
    input: Type.Object({ token: Token }, { additionalProperties: false }),
    output: Outcome,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    handler: async (args) => {
      const command = lookup(await service(), args.token);
      await command.terminate(via);
      return {
        success: true,
        message: `terminated after ${command.executionTimeMs} ms`,
        token: args.token,
      };
    },
  });
}

/** `get_version`. */
function getVersionTool(_: CommandToolDeps): ToolDefinition {
  return defineTool({
    name: "get_version",
    title: "Version and environment",
    description: "Server version, platform, shells found and WINTERM_* settings.",
    input: Type.Object({}, { additionalProperties: false }),
    output: VersionOutput,
    annotations: READ_ONLY,
    handler: async () => {
      // Shell discovery belongs to the engine's launching code: loaded when first asked.
      const { findCmd, findPowerShell } = await importShells();
      const env = Deno.env.toObject();
      const context = { cwd: Deno.cwd(), env };
      return {
        name: NAME,
        version: VERSION,
        service_status: "running",
        runtime_version: {
          deno: Deno.version.deno,
          v8: Deno.version.v8,
          typescript: Deno.version.typescript,
        },
        platform: Deno.build.os,
        arch: Deno.build.arch,
        shells: {
          powershell: findPowerShell(context).path ?? null,
          cmd: findCmd(context).path ?? null,
        },
        env: {
          WINTERM_POWERSHELL_PATH: env.WINTERM_POWERSHELL_PATH ?? null,
          WINTERM_CMD_PATH: env.WINTERM_CMD_PATH ?? null,
          WINTERM_LOG_LEVEL: env.WINTERM_LOG_LEVEL ?? null,
        },
      };
    },
  });
}
