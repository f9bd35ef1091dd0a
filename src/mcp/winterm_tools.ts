/**
 * The winterm-mcp tool set: run_command, query_command_status, enhanced_query_command_status,
 * send_command_input, terminate_command, get_version. Field names follow the winterm spec;
 * additions (wait_ms, max_bytes, raw, next offsets, signal) are optional and documented.
 *
 * @module
 */
import { type Static, Type } from "../typebox.ts";
import {
  type Command,
  type CommandRead,
  type CommandReadRequest,
  type CommandService,
  EngineError,
  type FrontEnd,
  importShells,
  inAnswerSlices,
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
  CString,
  Encoding,
  Env,
  literals,
  Sandbox,
  SandboxInfo,
} from "../schema.ts";
import { defineTool, type ToolContext, type ToolDefinition, withProgress } from "./tool.ts";

const MIB = 1024 * 1024;
const Token = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The token run_command returned.",
});

/** How much of the output an answer shows, shared by run_command, query_command_status and friends. */
const Shape = {
  max_bytes: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 16 * MIB,
    default: 16 * 1024,
    description: "Most bytes of output text in the answer (as JSON, both streams together). " +
      "Output larger than this is shown as its first and last lines with a marker between " +
      "saying how many lines and bytes were left out and the *_offset to read them from. At " +
      "most the server's WINTERM_MAX_ANSWER_BYTES (2 MiB): a larger value is lowered, and the " +
      "message says so.",
  })),
  tail_lines: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 100_000,
    description: "Only the last this many lines of each stream (within max_bytes).",
  })),
  head_lines: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 100_000,
    description: "Only the first this many lines (from the offset, if given). With tail_lines: " +
      "both, a marker between.",
  })),
  raw: Type.Optional(Type.Boolean({
    default: false,
    description: "Keep escape sequences and carriage returns (default: cleaned text).",
  })),
};

const RunCommandInput = Type.Object({
  command: Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "The command. With a shell type it is shell syntax (pipes, &&, redirections); " +
      "with shell_type 'executable' it is split into program and arguments (quotes respected, no shell).",
  }),
  executable: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      "With 'executable': the program to run (then args are its arguments). With a shell type: " +
      "the path of that shell.",
  })),
  args: Type.Optional(Type.Array(CString, {
    maxItems: 1000,
    description: "Arguments, passed as they are (shell_type 'executable' only).",
  })),
  shell_type: Type.Optional(literals(SHELL_TYPES, {
    default: "default",
    description:
      "default: PowerShell on Windows, $SHELL or /bin/sh elsewhere. powershell, cmd (Windows), " +
      "bash, sh, or executable (no shell).",
  })),
  timeout: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 30,
    description: "Seconds before the command and everything it started are killed.",
  })),
  working_directory: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, description: "Working directory." }),
  ),
  enable_streaming: Type.Optional(Type.Boolean({
    default: false,
    description:
      "Also push output as it arrives, as MCP log notifications (logger winterm:<token>).",
  })),
  use_pty: Type.Optional(Type.Boolean({
    default: true,
    description:
      "Run on a pseudo-terminal (interactive programs, colours, Ctrl+C). false: pipes, with " +
      "stderr kept apart from stdout.",
  })),
  max_buffer_size: Type.Optional(Type.Integer({
    minimum: 1024,
    maximum: COMMAND_MAX_BYTES_CEILING,
    default: 10 * MIB,
    description: "Bytes of output kept per stream; older output is dropped past it. At most " +
      "the server's WINTERM_COMMAND_MAX_BYTES (a larger value is lowered, and the answer says so).",
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
    description: "Wait up to this long for the command to finish and answer with everything " +
      "query_command_status would (status, exit_code, stdout, stderr, ...): one call for a short " +
      "command. Still running then: status running, the output so far, and the token to query " +
      "later. 0 (default): answer at once with the token.",
  })),
  ...Shape,
}, { additionalProperties: false });

const QueryInput = Type.Object({
  token: Token,
  stdout_offset: Type.Optional(Type.Integer({
    minimum: 0,
    description: "Page stdout from this byte offset: pass the previous answer's " +
      "stdout_next_offset to get only what is new, or a marker's offset to read what it left out. " +
      "Offsets count raw bytes as the program wrote them (a terminal writes \\r\\n for \\n), not " +
      "characters of the cleaned text.",
  })),
  stderr_offset: Type.Optional(Type.Integer({ minimum: 0, description: "Likewise for stderr." })),
  wait_ms: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 0,
    description: "Wait up to this long for the command to finish before answering (progress is " +
      "sent every 2 s). Saves polling.",
  })),
  ...Shape,
}, { additionalProperties: false });

const EnhancedQueryInput = Type.Object({
  token: Token,
  since_timestamp: Type.Optional(Type.Number({
    minimum: 0,
    description:
      "Only output that arrived after this time (ms since the epoch); pass the previous " +
      "answer's last_output_timestamp.",
  })),
  max_bytes: Shape.max_bytes,
  raw: Shape.raw,
}, { additionalProperties: false });

const QueryFields = {
  token: Type.String(),
  status: literals(["pending", "running", "completed", "not_found", "terminated"] as const),
  exit_code: Type.Union([Type.Integer(), Type.Null()], {
    description: "-1 when terminated or timed out; null while running, when a signal ended it, " +
      "or when it ended with an exit status nobody can tell (signal null too). Windows exit " +
      "codes are unsigned (exit -1 is 4294967295).",
  }),
  signal: Type.Union([Type.String(), Type.Null()], {
    description: "Signal that ended the process, if any.",
  }),
  stdout: Type.String(),
  stderr: Type.String(),
  stdout_length: Type.Integer({
    description: "Bytes of stdout the program wrote so far (raw: what offsets count; the text " +
      "shown is cleaned, so its length differs).",
  }),
  stderr_length: Type.Integer(),
  stdout_next_offset: Type.Integer({
    description:
      "Where the stdout shown ends (raw bytes): pass as stdout_offset for what comes next.",
  }),
  stderr_next_offset: Type.Integer(),
  stdout_truncated: Type.Boolean({
    description: "This answer lacks some stdout: left out (a marker says what and where), past " +
      "max_bytes (read on from stdout_next_offset), or dropped by the buffer limit.",
  }),
  stderr_truncated: Type.Boolean(),
  stdout_dropped_bytes: Type.Integer({
    description: "Bytes asked for that the buffer had already dropped.",
  }),
  stderr_dropped_bytes: Type.Integer(),
  execution_time: Type.Union([Type.Integer(), Type.Null()], { description: "Milliseconds." }),
  timeout_occurred: Type.Boolean(),
  last_output_timestamp: Type.Union([Type.Number(), Type.Null()], {
    description: "Where the output shown ends (ms since the epoch): pass it as since_timestamp " +
      "to enhanced_query_command_status to follow the command; nothing is missed.",
  }),
  message: Type.String(),
  sandbox: Type.Optional(SandboxInfo),
};
const QueryOutput = Type.Object(QueryFields);
type QueryOutput = Static<typeof QueryOutput>;

const RunCommandOutput = Type.Object({
  token: Type.String(),
  status: literals(["pending", "running", "completed", "terminated"] as const, {
    description: "pending: started, not waited for (no wait_ms). running: wait_ms passed first. " +
      "completed, terminated: ended within wait_ms (with everything query_command_status gives).",
  }),
  message: Type.String(),
  pid: Type.Integer(),
  command: Type.String({ description: "What runs, as a command line." }),
  max_buffer_size: Type.Integer({ description: "Bytes kept per stream, as applied." }),
  sandbox: Type.Optional(SandboxInfo),
  ...Object.fromEntries(
    Object.entries(QueryFields)
      .filter(([name]) => !["token", "status", "message", "sandbox"].includes(name))
      .map(([name, schema]) => [name, Type.Optional(schema)]),
  ),
});

const InputInput = Type.Object({
  token: Token,
  input: Type.String({
    maxLength: MIB,
    description: "Text to send; control characters such as \\u0003 (Ctrl+C) pass as they are.",
  }),
  append_newline: Type.Optional(
    Type.Boolean({ default: true, description: "Press Enter after the text." }),
  ),
  eof: Type.Optional(
    Type.Boolean({
      default: false,
      description: "Then end the input (Ctrl+D on a terminal; closes the pipe otherwise).",
    }),
  ),
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

/** Pushes a command's output to the client as MCP log notifications, a few times a second. */
function streamOutput(command: Command, context: ToolContext): void {
  const logger = `winterm:${command.token}`;
  command.follow(
    (stream, text) =>
      context.log({ level: "info", logger, data: { token: command.token, stream, text } }),
    () =>
      context.log({
        level: "info",
        logger,
        data: {
          token: command.token,
          event: "exit",
          status: command.status,
          exit_code: command.exitCode,
        },
      }),
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
  appendNewline: "append_newline",
};

/**
 * The winterm tools over a command service; `via` names the front end in the audit log. The
 * service is asked for by each call, so that the tools can be listed before it is loaded.
 */
export function wintermTools(
  service: () => Promise<CommandService>,
  via: FrontEnd,
): ToolDefinition[] {
  return [
    defineTool({
      name: "run_command",
      title: "Run a command",
      description:
        "Run a command in a new pseudo-terminal (or with pipes). Cheapest: pass wait_ms (e.g. 30000) " +
        "and get status, exit_code and output in this one answer; output over max_bytes (16 KiB) shows " +
        "its first and last lines with a marker saying what was left out (tail_lines: just the end). " +
        "Without wait_ms it returns the token at once: then query_command_status. The command and " +
        "everything it starts are killed at the timeout (30 s). Pagers are off (PAGER, GIT_PAGER, ... " +
        "are cat). For servers, REPLs and anything that must outlive one command: terminal_create. " +
        "sandbox confines it (writes, network, credentials), within the server's sandbox.",
      input: RunCommandInput,
      output: RunCommandOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
      handler: async (args, context) => {
        const { command, bufferClamped } = await (await service()).run({
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
          if (args.enable_streaming) streamOutput(command, context);
          const started = {
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
          if (!args.wait_ms) return { ...started, status: "pending" as const };
          if (command.running) {
            await withProgress(
              waitFor(command.done, args.wait_ms, context.signal),
              context,
              "the command to finish",
            );
          }
          const answer = await inAnswerSlices(
            () => report(command, shapeOf(args)),
            context.signal,
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
    }),
    defineTool({
      name: "query_command_status",
      title: "Query a command",
      description:
        "Status, exit code and output of a command (wait_ms: wait for its end first). The output is " +
        "cleaned of escape sequences (unless raw) and bounded by max_bytes (16 KiB): larger output shows " +
        "its first and last lines with a marker saying how much was left out and the offset to read it " +
        "from. Cheapest: tail_lines for just the end; stdout_offset = the previous stdout_next_offset for " +
        "only what is new (a page: read on while stdout_truncated).",
      input: QueryInput,
      output: QueryOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      handler: async (args, context) => {
        const command = (await service()).get(args.token);
        if (!command) return notFound(args.token);
        if (args.wait_ms && command.running) {
          await withProgress(
            waitFor(command.done, args.wait_ms, context.signal),
            context,
            "the command to finish",
          );
        }
        return inAnswerSlices(
          () =>
            report(command, {
              ...shapeOf(args),
              offsets: { stdout: args.stdout_offset, stderr: args.stderr_offset },
            }),
          context.signal,
        );
      },
    }),
    defineTool({
      name: "enhanced_query_command_status",
      title: "Query a command's new output",
      description:
        "Like query_command_status, but returns only the output that arrived after since_timestamp " +
        "(ms since the epoch). Pass the previous answer's last_output_timestamp to follow a running command.",
      input: EnhancedQueryInput,
      output: QueryOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      handler: async (args, context) => {
        const command = (await service()).get(args.token);
        if (!command) return notFound(args.token);
        return inAnswerSlices(
          () =>
            report(command, {
              after: args.since_timestamp,
              maxBytes: args.max_bytes,
              raw: args.raw ?? false,
              hint: offsetHint,
            }),
          context.signal,
        );
      },
    }),
    defineTool({
      name: "send_command_input",
      title: "Send input to a command",
      description:
        "Type text into a running command (answers to prompts, REPL lines). Enter is pressed after " +
        "it unless append_newline is false. Send \\u0003 with append_newline false for Ctrl+C. " +
        "Fails, saying how much was taken, if the command does not take the input within " +
        "WINTERM_WRITE_TIMEOUT_MS (10 s); on a terminal in line mode, a line over 4095 bytes " +
        "(1024 on macOS) is refused whole.",
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
    }),
    defineTool({
      name: "terminate_command",
      title: "Terminate a command",
      description:
        "Stop a running command and every process it started (SIGTERM, then SIGKILL after a grace " +
        "period; the job object on Windows). Its output stays queryable; status becomes terminated.",
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
    }),
    defineTool({
      name: "get_version",
      title: "Version and environment",
      description:
        "Server version, runtime, platform, the shells found, and the WINTERM_* settings.",
      input: Type.Object({}, { additionalProperties: false }),
      output: VersionOutput,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
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
    }),
  ].map((tool) => ({ ...tool, fieldNames: FIELD_NAMES }));
}
