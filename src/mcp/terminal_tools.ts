/**
 * Persistent terminals as MCP tools: create, write (text and named keys), run a command in the
 * shell (shell integration), read (by line, head, tail, head-tail, or the rendered screen),
 * wait (pattern, prompt, input, idle, exit), resize, list, stats, and the ACP terminal methods
 * (output with outputByteLimit, wait_for_exit, kill, release).
 *
 * @module
 */
import { type Static, Type } from "../typebox.ts";
import {
  agentPattern,
  type CreateTerminalRequest,
  describeExit,
  EngineError,
  type ExitStatus,
  type FrontEnd,
  inAnswerSlices,
  inAnswerTurn,
  inReadSlices,
  sandboxHint,
  SIGNAL_NAMES,
  type Terminal,
  type TerminalService,
} from "../engine/mod.ts";
import { literals, nullable, withoutNulls } from "../schema.ts";
import {
  defineTool,
  READ_ONLY,
  type ToolContext,
  type ToolDefinition,
  withProgress,
} from "./tool.ts";
import {
  AcpFields,
  AcpIdOnly,
  ActivityFields,
  CreateInput,
  DEFAULT_WAIT_MS,
  ExitStatusSchema,
  IdOnly,
  ReadInput,
  ReadOutput,
  RunInput,
  RunOutput,
  TerminalId,
  TerminalInfo,
  WaitInput,
  WaitOutput,
  WriteInput,
  WriteOutput,
} from "./terminal_schemas.ts";

type WaitArgs = Pick<
  Static<typeof WaitInput>,
  "pattern" | "flags" | "idleMs" | "prompt" | "timeoutMs" | "since" | "maxBytes"
>;

/**
 * A wait's condition, compiled first: a bad pattern is refused before anything is typed.
 * `input`: terminal_wait's wait for a read of the terminal (terminal_write's `input` is text).
 * The pattern engine loads with the first pattern.
 */
async function waitCondition(args: WaitArgs, input?: boolean) {
  return {
    pattern: args.pattern === undefined
      ? undefined
      : await agentPattern(args.pattern, args.flags ?? "", "pattern"),
    idleMs: args.idleMs,
    prompt: args.prompt,
    input,
    timeoutMs: args.timeoutMs ?? DEFAULT_WAIT_MS,
    since: args.since,
  };
}

/** Waits as terminal_wait does and answers what it found (terminal_write shares it). */
async function waitAnswer(
  terminal: Terminal,
  condition: Awaited<ReturnType<typeof waitCondition>>,
  args: WaitArgs,
  context: ToolContext,
) {
  const started = performance.now();
  const outcome = await withProgress(
    terminal.wait({ ...condition, signal: context.signal }),
    context,
    args.pattern
      ? `/${args.pattern}/`
      : args.prompt
      ? "the prompt"
      : condition.input
      ? "a read of the terminal"
      : args.idleMs
      ? "quiet output"
      : "the exit",
  );
  // The output, and what goes with it (where to read on, the exit, the prompt's facts), as they
  // stood when the answer's steps began (see src/engine/slices.ts).
  const answer = await inAnswerSlices(
    function* () {
      const facts = {
        nextReadFrom: terminal.nextReadFrom,
        exit: exitField(terminal),
        activity: outcome.condition === "prompt" ? terminal.activity() : undefined,
      };
      return { ...facts, ...yield* terminal.waitOutputSteps(outcome.from, args.maxBytes) };
    },
    context,
  );
  const { output, truncated, notice, activity } = answer;
  return {
    condition: outcome.condition,
    output,
    truncated,
    match: outcome.match ?? null,
    nextReadFrom: answer.nextReadFrom,
    elapsedMs: Math.round(performance.now() - started),
    ...(outcome.skippedBytes ? { skippedBytes: outcome.skippedBytes } : {}),
    ...(notice ? { notice } : {}),
    ...answer.exit,
    ...(activity ? { lastExitCode: activity.lastExitCode, cwd: activity.cwd } : {}),
  };
}

/** terminal_read's search, compiled: a bad pattern, or contextLines without one, is refused. */
async function searchOf(args: Static<typeof ReadInput>) {
  if (args.grep === undefined) {
    if (args.contextLines === undefined) return undefined;
    throw new EngineError(
      "invalid_input",
      ["applies only with ", { field: "grep" }],
      "contextLines",
    );
  }
  return { pattern: await agentPattern(args.grep, "", "grep"), contextLines: args.contextLines };
}

function exitField(terminal: Terminal): { exitStatus?: ExitStatus } {
  return terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {};
}

/** What each tool is made over: the service (asked for by each call) and the front end. */
interface TerminalToolDeps {
  service: () => Promise<TerminalService>;
  via: FrontEnd;
}

/**
 * The terminal tools over a terminal service; `via` names the front end in the audit log. The
 * service is asked for by each call, so that the tools can be listed before it is loaded.
 */
export function terminalTools(
  service: () => Promise<TerminalService>,
  via: FrontEnd,
): ToolDefinition[] {
  const deps = { service, via };
  return [
    terminalCreateTool(deps),
    terminalWriteTool(deps),
    terminalReadTool(deps),
    terminalWaitTool(deps),
    terminalRunTool(deps),
    terminalOutputTool(deps),
    terminalWaitForExitTool(deps),
    terminalKillTool(deps),
    terminalReleaseTool(deps),
    terminalListTool(deps),
    terminalStatsTool(deps),
    terminalResizeTool(deps),
  ];
}

/**
 * `terminal_create`'s arguments as the engine's request: its names are the engine's already;
 * ACP's session fields go, and ACP's list of variables becomes a record.
 */
function createRequest(given: Static<typeof CreateInput>): CreateTerminalRequest {
  const { sessionId: _session, _meta, ...args } = withoutNulls(given);
  const env = Array.isArray(args.env)
    ? Object.fromEntries(args.env.map(({ name, value }) => [name, value]))
    : args.env;
  return { ...args, env };
}

/** `terminal_create`. */
function terminalCreateTool({ service, via }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_create",
    title: "Open a terminal",
    description:
      "Open a persistent terminal; returns its id. Without command: a shell for terminal_run or " +
      "terminal_write. terminal_release when done.",
    input: CreateInput,
    output: TerminalInfo,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    handler: async (given, context) => {
      const terminals = await service();
      const terminal = await terminals.create(createRequest(given), {
        via,
        signal: context.signal,
      });
      if (context.signal.aborted) {
        // Cancelled while it started: its caller never learns its id.
        await terminals.release(terminal.id, via).catch(() => {});
        throw context.signal.reason;
      }
      const clamped = terminal.outputByteLimitClamped;
      return {
        ...terminal.info(),
        ...(clamped
          ? {
            notice: `outputByteLimit ${clamped.requested} lowered to the server's ` +
              `${clamped.limit} (WINTERM_TERMINAL_MAX_BYTES)`,
          }
          : {}),
      };
    },
  });
}

/** `terminal_write`. */
function terminalWriteTool({ service, via }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_write",
    title: "Type into a terminal",
    description:
      "Type text and/or keys. Add a wait (pattern, prompt, idleMs, exit or timeoutMs, as " +
      "terminal_wait) to get the answer in the same call.",
    input: WriteInput,
    output: WriteOutput,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: async (args, context) => {
      const terminals = await service();
      if (args.input === undefined && !args.keys?.length) {
        throw new EngineError("invalid_input", "give input, keys, or both", "input");
      }
      const waits = args.pattern !== undefined || args.idleMs !== undefined || !!args.exit ||
        !!args.prompt || args.timeoutMs !== undefined;
      const condition = waits ? await waitCondition(args) : undefined;
      const terminal = terminals.get(args.terminalId);
      const bytesWritten = await terminal.type(
        { text: args.input, keys: args.keys, enter: args.appendNewline },
        via,
      );
      const written = {
        terminalId: args.terminalId,
        bytesWritten,
        message: `wrote ${bytesWritten} byte${bytesWritten === 1 ? "" : "s"}`,
      };
      if (!condition) return written;
      return { ...written, ...await waitAnswer(terminal, condition, args, context) };
    },
  });
}

/** `terminal_read`. */
function terminalReadTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_read",
    title: "Read a terminal",
    description:
      "Read output: mode tail, or since=nextReadFrom for what is new; grep: matching lines; " +
      "screen: what a person sees. Over maxBytes: first and last lines and a marker.",
    input: ReadInput,
    output: ReadOutput,
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const { grep: _grep, contextLines: _contextLines, ...rest } = args;
      const request = { ...rest, grep: await searchOf(args) };
      const terminal = (await service()).get(args.terminalId);
      if (args.mode === "screen") {
        const view = await terminal.renderScreen();
        return inAnswerTurn(
          () => terminal.screenRead(view, request),
          context,
        );
      }
      const read = { ...request, mode: args.mode ?? "full" };
      return inReadSlices(
        read,
        () => terminal.readSteps(read),
        context,
      );
    },
  });
}

/** `terminal_wait`. */
function terminalWaitTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_wait",
    title: "Wait for a terminal",
    description:
      "Wait for pattern, prompt, input, idleMs of quiet or the exit, whichever comes first: " +
      "answers which, the output and the match. Instead of polling.",
    input: WaitInput,
    output: WaitOutput,
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const terminal = (await service()).get(args.terminalId);
      return waitAnswer(terminal, await waitCondition(args, args.input), args, context);
    },
  });
}

/** `terminal_run`. */
function terminalRunTool({ service, via }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_run",
    title: "Run a command in a terminal's shell",
    description:
      "Run one command line in a terminal's shell: answers its output, exitCode and cwd once the " +
      "prompt returns.",
    input: RunInput,
    output: RunOutput,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    handler: async (args, context) => {
      const terminal = (await service()).get(args.terminalId);
      const answer = await withProgress(
        terminal.run(args.command, args.timeoutMs ?? 30_000, {
          signal: context.signal,
          via,
          maxBytes: args.maxBytes,
        }),
        context,
        "the command",
      );
      const hint = answer.exitCode !== null && answer.exitCode !== 0
        ? sandboxHint(terminal.sandbox, [answer.output])
        : undefined;
      return hint ? { ...answer, hint } : answer;
    },
  });
}

/** `terminal_output`. */
function terminalOutputTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_output",
    title: "Terminal output (ACP)",
    description: "ACP terminal/output: the output so far and the exit status.",
    input: Type.Object({
      terminalId: TerminalId,
      raw: nullable(Type.Boolean({ default: false })),
      ...AcpFields,
    }, {
      additionalProperties: false,
    }),
    output: Type.Object({
      output: Type.String(),
      truncated: Type.Boolean(),
      exitStatus: Type.Optional(ExitStatusSchema),
    }),
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const terminal = (await service()).get(args.terminalId);
      return inAnswerSlices(
        function* () {
          const exit = exitField(terminal); // with the output as it stands now
          return { ...yield* terminal.acpOutputSteps(args.raw ?? false), ...exit };
        },
        context,
      );
    },
  });
}

/** `terminal_wait_for_exit`. */
function terminalWaitForExitTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_wait_for_exit",
    title: "Wait for a terminal's exit (ACP)",
    description:
      "ACP terminal/wait_for_exit: the exit status; past timeoutMs an error says it still runs " +
      "(call again).",
    input: Type.Object({
      terminalId: TerminalId,
      timeoutMs: nullable(
        Type.Integer({ minimum: 1, maximum: 3_600_000, default: DEFAULT_WAIT_MS }),
      ),
      ...AcpFields,
    }, { additionalProperties: false }),
    output: ExitStatusSchema,
    annotations: READ_ONLY,
    handler: async (args, context) => {
      const terminal = (await service()).get(args.terminalId);
      const timeoutMs = args.timeoutMs ?? DEFAULT_WAIT_MS;
      const outcome = await withProgress(
        terminal.wait({ timeoutMs, signal: context.signal }),
        context,
        "the exit",
      );
      if (!terminal.exitStatus) {
        throw new EngineError(
          "inactive",
          `terminal ${terminal.id} is still running (${
            outcome.condition === "timeout"
              ? `after ${timeoutMs} ms; call again to wait on`
              : outcome.condition
          })`,
        );
      }
      return terminal.exitStatus;
    },
  });
}

/** `terminal_kill`. */
function terminalKillTool({ service, via }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_kill",
    title: "Kill a terminal's program (ACP)",
    description:
      "ACP terminal/kill: end the program and all it started, or send signal; its output stays " +
      "readable.",
    input: Type.Object(
      { terminalId: TerminalId, signal: nullable(literals(SIGNAL_NAMES)), ...AcpFields },
      {
        additionalProperties: false,
      },
    ),
    output: Type.Object({
      terminalId: Type.String(),
      message: Type.String(),
      exitStatus: Type.Optional(ExitStatusSchema),
    }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    handler: async (args) => {
      const terminals = await service();
      const terminal = terminals.get(args.terminalId);
      if (!terminal.running) {
        return {
          terminalId: terminal.id,
          message: `already exited (${describeExit(terminal.exitStatus!)})`,
          ...exitField(terminal),
        };
      }
      if (args.signal) {
        terminal.signal(args.signal, via);
        // Give the program a moment to act on the signal before answering.
        await terminal.wait({ timeoutMs: 1000 });
        return {
          terminalId: terminal.id,
          message: `sent ${args.signal}`,
          ...exitField(terminal),
        };
      }
      const status = await terminal.stop(terminals.killGraceMs, via);
      return {
        terminalId: terminal.id,
        message: `killed (${describeExit(status)})`,
        exitStatus: status,
      };
    },
  });
}

/** `terminal_release`. */
function terminalReleaseTool({ service, via }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_release",
    title: "Release a terminal (ACP)",
    description: "ACP terminal/release: kill the program if it runs and free the terminal.",
    input: AcpIdOnly,
    output: Type.Object({
      terminalId: Type.String(),
      released: Type.Boolean(),
      exitStatus: ExitStatusSchema,
    }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: async (args) => {
      const exitStatus = await (await service()).release(args.terminalId, via);
      return { terminalId: args.terminalId, released: true, exitStatus };
    },
  });
}

/** `terminal_list`. */
function terminalListTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_list",
    title: "List terminals",
    description: "Every open terminal and what it is doing.",
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object({ terminals: Type.Array(TerminalInfo), count: Type.Integer() }),
    annotations: READ_ONLY,
    handler: async () => {
      const list = (await service()).list().map((terminal) => terminal.info());
      return { terminals: list, count: list.length };
    },
  });
}

/** `terminal_stats`. */
function terminalStatsTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_stats",
    title: "Terminal statistics",
    description: "A terminal's output size (lines, bytes, estimated tokens) and state.",
    input: IdOnly,
    output: Type.Object({
      terminalId: Type.String(),
      totalLines: Type.Integer(),
      totalBytes: Type.Integer(),
      estimatedTokens: Type.Integer(),
      bufferSize: Type.Integer(),
      oldestLine: Type.Integer(),
      newestLine: Type.Integer(),
      isActive: Type.Boolean(),
      ...ActivityFields,
    }),
    annotations: READ_ONLY,
    handler: async (args) => (await service()).get(args.terminalId).stats(),
  });
}

/** `terminal_resize`. */
function terminalResizeTool({ service }: TerminalToolDeps): ToolDefinition {
  return defineTool({
    name: "terminal_resize",
    title: "Resize a terminal",
    description: "Resize a terminal (SIGWINCH).",
    input: Type.Object({
      terminalId: TerminalId,
      cols: Type.Integer({ minimum: 1, maximum: 1000 }),
      rows: Type.Integer({ minimum: 1, maximum: 1000 }),
    }, { additionalProperties: false }),
    output: Type.Object({
      terminalId: Type.String(),
      cols: Type.Integer(),
      rows: Type.Integer(),
    }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    handler: async (args) => {
      (await service()).get(args.terminalId).resize(args.cols, args.rows);
      return { terminalId: args.terminalId, cols: args.cols, rows: args.rows };
    },
  });
}
