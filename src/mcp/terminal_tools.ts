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
  describeExit,
  EngineError,
  type ExitStatus,
  type FrontEnd,
  importPatterns,
  inAnswerSlices,
  inAnswerTurn,
  KEY_NAMES,
  LINE_MODES,
  sandboxHint,
  SIGNAL_NAMES,
  type Terminal,
  type TerminalService,
} from "../engine/mod.ts";
import {
  AllowAnsiMismatch,
  CString,
  Encoding,
  Env,
  literals,
  nullable,
  Sandbox,
  SandboxInfo,
  withoutNulls,
} from "../schema.ts";
import { defineTool, type ToolContext, type ToolDefinition, withProgress } from "./tool.ts";

const MIB = 1024 * 1024;
const TerminalId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The id terminal_create returned.",
});
const ExitStatusSchema = Type.Object({
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description:
      "Null when a signal ended it; null with signal null: it ended, but how is unknown.",
  }),
  signal: Type.Union([Type.String(), Type.Null()], {
    description: "POSIX name of the signal that ended it.",
  }),
});
const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
/** How long a wait lasts unless told: well within the 60 s MCP clients give a call by default. */
const DEFAULT_WAIT_MS = 30_000;

/** ACP's `_meta`, allowed at every level of its requests: accepted, not used. */
const Meta = nullable(Type.Record(Type.String(), Type.Unknown(), {
  description: "ACP's _meta: accepted and ignored.",
}));

/**
 * What every ACP terminal request carries besides its own fields. One server serves one
 * client's terminals, so the session id is accepted and not used.
 */
const AcpFields = {
  sessionId: nullable(Type.String({
    maxLength: 1000,
    description: "ACP's session id: accepted and ignored.",
  })),
  _meta: Meta,
};

const AcpEnv = Type.Array(
  Type.Object({
    name: Type.String({ pattern: "^[^=\\u0000]+$" }),
    value: CString,
    _meta: Meta,
  }, {
    additionalProperties: false,
  }),
  { maxItems: 500, description: "Environment as ACP sends it: [{name, value}]." },
);

const CreateInput = Type.Object({
  command: nullable(Type.String({
    minLength: 1,
    maxLength: 32768,
    description: "A command line, run by the shell (pipes, &&, redirections work), as ACP " +
      "clients run it. With args (one or more): the program to run with them, no shell. " +
      "Omitted: an interactive shell to type into.",
  })),
  args: nullable(Type.Array(CString, {
    maxItems: 1000,
    description: "Arguments of the program `command`, passed exactly, no shell. [] is the same " +
      "as none: `command` is then a command line for the shell.",
  })),
  shell: nullable(Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      "default (PowerShell on Windows, $SHELL or sh elsewhere), powershell, cmd, bash, sh, zsh, fish, or a shell's path.",
  })),
  shellIntegration: Type.Optional(Type.Boolean({
    default: true,
    description:
      "A shell opened without command reports its prompt, commands, exit codes and cwd (no file " +
      "of the user's is changed): terminal_run, wait with prompt, state. false: a plain shell.",
  })),
  cwd: nullable(
    Type.String({ minLength: 1, maxLength: 4096, description: "Working directory." }),
  ),
  env: nullable(Type.Union([Env, AcpEnv])),
  cols: nullable(Type.Integer({ minimum: 1, maximum: 1000, default: 80 })),
  rows: nullable(Type.Integer({ minimum: 1, maximum: 1000, default: 24 })),
  outputByteLimit: nullable(Type.Integer({
    minimum: 0,
    maximum: 1024 * MIB,
    description:
      "terminal_output returns at most this many bytes: the newest, cut at a character boundary " +
      "(0: none). At most the server's WINTERM_TERMINAL_MAX_BYTES (a larger value is lowered, and " +
      "the answer says so).",
  })),
  encoding: nullable(Encoding),
  sandbox: nullable(Sandbox),
  allowAnsiMismatch: nullable(AllowAnsiMismatch),
  ...AcpFields,
}, { additionalProperties: false });

const ActivityFields = {
  state: literals(["prompt", "running", "input", "exited"] as const, {
    description: "prompt: the shell waits for a command; running; input: the program in the " +
      "foreground is blocked reading the terminal (Linux); exited.",
  }),
  running: Type.Union([
    Type.Object({
      command: Type.Union([Type.String(), Type.Null()]),
      startedAt: Type.String({ description: "ISO 8601" }),
      durationMs: Type.Integer(),
    }),
    Type.Null(),
  ], { description: "The command the shell runs (while running or input), else null." }),
  cwd: Type.String({
    description: "The shell's working directory as it last reported it, else the starting one.",
  }),
  lastExitCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "Exit code of the shell's last finished command (null: none, or not reported).",
  }),
  shellIntegration: literals(["active", "starting", "none"] as const),
};

const TerminalInfo = Type.Object({
  terminalId: Type.String(),
  pid: Type.Integer(),
  command: Type.String(),
  ...ActivityFields,
  created: Type.String({ description: "ISO 8601" }),
  lastActivity: Type.String({ description: "ISO 8601" }),
  status: literals(["active", "exited"] as const),
  size: Type.Object({ cols: Type.Integer(), rows: Type.Integer() }),
  exitStatus: Type.Optional(ExitStatusSchema),
  notice: Type.Optional(Type.String({ description: "A limit the server applied to the request." })),
  sandbox: Type.Optional(SandboxInfo),
});

const MaxBytes = Type.Integer({
  minimum: 1,
  maximum: 16 * MIB,
  default: 16 * 1024,
  description: "Most bytes of output text in the answer (as JSON). Output larger than this is " +
    "shown as its first and last lines with a marker between saying how much was left out " +
    "and from which line to read it. At most the server's WINTERM_MAX_ANSWER_BYTES (2 MiB).",
});

/** The conditions of a wait, shared by terminal_wait and terminal_write. */
const WaitFields = {
  pattern: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "Wait until the cleaned output matches this regular expression (RE2 syntax: " +
      "no backreferences or lookaround; linear time). Never matches the echo of what was typed.",
  })),
  flags: Type.Optional(
    Type.String({ pattern: "^[imsu]*$", maxLength: 4, description: "Regex flags: i, m, s, u." }),
  ),
  idleMs: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: 3_600_000,
      description: "Stop once no output came for this long (a prompt waiting, a REPL done).",
    }),
  ),
  exit: Type.Optional(Type.Boolean({
    description: "Wait for the program to exit. An exit always ends a wait; with no other " +
      "condition this is what a wait waits for.",
  })),
  prompt: Type.Optional(Type.Boolean({
    description: "Wait until the shell is back at its prompt (a prompt shown after the last " +
      "write, or after since): shell integration. Ends a terminal_run that timed out.",
  })),
  timeoutMs: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: DEFAULT_WAIT_MS,
    description: "Give up after this long (condition timeout, output so far).",
  })),
  maxBytes: Type.Optional(MaxBytes),
};

const WriteInput = Type.Object({
  terminalId: TerminalId,
  input: Type.Optional(Type.String({
    maxLength: MIB,
    description: "Text to type; control characters and escape sequences pass as they are.",
  })),
  keys: Type.Optional(Type.Array(literals(KEY_NAMES), {
    maxItems: 200,
    description: 'Keys pressed after the text, e.g. ["up", "enter"] or ["ctrl_c"].',
  })),
  appendNewline: Type.Optional(Type.Boolean({
    default: true,
    description: 'Press Enter after the text. Ignored when keys are given (add "enter" there).',
  })),
  ...WaitFields,
}, { additionalProperties: false });

const ReadInput = Type.Object({
  terminalId: TerminalId,
  since: Type.Optional(
    Type.Integer({ minimum: 0, description: "First line (the previous answer's nextReadFrom)." }),
  ),
  mode: Type.Optional(literals([...LINE_MODES, "screen"] as const, {
    default: "full",
    description:
      "full (up to maxLines), head, tail, head-tail, or screen (what a person would see now: " +
      "the view for full-screen programs).",
  })),
  headLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 50 })),
  tailLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 50 })),
  maxLines: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 })),
  raw: Type.Optional(Type.Boolean({ default: false, description: "Keep escape sequences." })),
  maxBytes: Type.Optional(MaxBytes),
}, { additionalProperties: false });

const ReadOutput = Type.Object({
  output: Type.String(),
  totalLines: Type.Integer(),
  nextReadFrom: Type.Integer(),
  hasMore: Type.Boolean(),
  truncated: Type.Boolean(),
  stats: Type.Object({
    totalBytes: Type.Integer(),
    estimatedTokens: Type.Integer(),
    linesShown: Type.Integer(),
    linesOmitted: Type.Integer(),
  }),
  screen: Type.Optional(Type.Object({
    cols: Type.Integer(),
    rows: Type.Integer(),
    cursorX: Type.Integer(),
    cursorY: Type.Integer(),
    alternate: Type.Boolean({ description: "A full-screen program is on the alternate screen." }),
    unrenderedBytes: Type.Integer({
      description: "Output not shown yet: the program printed faster than the screen could " +
        "follow in this request (read again to see it).",
    }),
  })),
  notice: Type.Optional(Type.String({ description: "A limit the server applied to the request." })),
  exitStatus: Type.Optional(ExitStatusSchema),
});

const WaitInput = Type.Object({
  terminalId: TerminalId,
  ...WaitFields,
  input: Type.Optional(Type.Boolean({
    description: "Wait until the program in the foreground is blocked reading the terminal (a " +
      "question, a password prompt, a REPL), not at the shell's own prompt. Linux only.",
  })),
  since: Type.Optional(Type.Integer({
    minimum: 0,
    description: "Match (and return) output from this line on. Default: the answer to the last " +
      "terminal_write, from the line after the echo of what was typed (or the start if nothing " +
      "was written), so output that came before the wait still counts.",
  })),
}, { additionalProperties: false });

const WaitFieldsOutput = {
  condition: literals(
    ["pattern", "prompt", "input", "idle", "exit", "timeout", "cancelled"] as const,
  ),
  output: Type.String({
    description: "Cleaned output the wait looked at (the answer to the last write, or from " +
      "`since`): whole if it fits maxBytes, else its first and last lines with a marker between.",
  }),
  truncated: Type.Boolean({ description: "Some of it was left out (the marker says what)." }),
  match: Type.Union([
    Type.Object({
      text: Type.String(),
      index: Type.Integer({
        description: "Where the match starts, in cleaned characters from where the wait began " +
          "(or from where matching went on, after skippedBytes).",
      }),
      groups: Type.Array(Type.Union([Type.String(), Type.Null()])),
    }),
    Type.Null(),
  ]),
  nextReadFrom: Type.Integer(),
  elapsedMs: Type.Integer(),
  skippedBytes: Type.Optional(Type.Integer({
    description: "Output not matched: it came faster than the pattern could be matched.",
  })),
  notice: Type.Optional(Type.String({ description: "A limit the server applied to the request." })),
  exitStatus: Type.Optional(ExitStatusSchema),
  lastExitCode: Type.Optional(Type.Union([Type.Integer(), Type.Null()], {
    description: "With prompt: the exit code of the shell's last finished command.",
  })),
  cwd: Type.Optional(Type.String({ description: "With prompt: the shell's working directory." })),
};
const WaitOutput = Type.Object(WaitFieldsOutput);

const WriteOutput = Type.Object({
  terminalId: Type.String(),
  bytesWritten: Type.Integer(),
  message: Type.String(),
  ...Object.fromEntries(
    Object.entries(WaitFieldsOutput).map(([name, schema]) => [name, Type.Optional(schema)]),
  ),
});

const RunInput = Type.Object({
  terminalId: TerminalId,
  command: Type.String({
    minLength: 1,
    maxLength: 32768,
    description:
      "One command line (no line breaks or other control characters; chain with ; or &&).",
  }),
  timeoutMs: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: 30_000,
    description: "Answer after this long with what arrived; the command keeps running.",
  })),
  maxBytes: Type.Optional(MaxBytes),
}, { additionalProperties: false });

const RunOutput = Type.Object({
  condition: literals(["done", "timeout", "exit", "cancelled"] as const, {
    description: "done: back at the prompt; timeout: still running (terminal_wait with prompt " +
      "finishes it); exit: the shell exited.",
  }),
  output: Type.String({
    description: "The command's output, cleaned: not the echo, not the prompt. Whole if it fits " +
      "maxBytes, else its first and last lines with a marker saying how to read the rest.",
  }),
  truncated: Type.Boolean(),
  notice: Type.Optional(Type.String({ description: "A limit the server applied to the request." })),
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "Null on timeout, and where the shell does not tell.",
  }),
  cwd: Type.Union([Type.String(), Type.Null()], {
    description: "The shell's working directory after the command (null unless done).",
  }),
  durationMs: Type.Integer(),
  hint: Type.Optional(Type.String({
    description: "Set when a command in a sandboxed terminal failed with output that looks " +
      "like the sandbox's refusal (permission denied, read-only file system, a refused " +
      "connection): what the sandbox allows.",
  })),
});

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
  let pattern;
  if (args.pattern !== undefined) {
    const { compilePattern, loadPatterns } = await importPatterns();
    await loadPatterns();
    pattern = compilePattern(args.pattern, args.flags ?? "", "pattern");
  }
  return {
    pattern,
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
  const answer = await inAnswerSlices(function* () {
    const facts = {
      nextReadFrom: terminal.nextReadFrom,
      exit: exitField(terminal),
      activity: outcome.condition === "prompt" ? terminal.activity() : undefined,
    };
    return { ...facts, ...yield* terminal.waitOutputSteps(outcome.from, args.maxBytes) };
  }, context.signal);
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

const IdOnly = Type.Object({ terminalId: TerminalId }, { additionalProperties: false });
const AcpIdOnly = Type.Object({ terminalId: TerminalId, ...AcpFields }, {
  additionalProperties: false,
});

function exitField(terminal: Terminal): { exitStatus?: ExitStatus } {
  return terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {};
}

/**
 * The terminal tools' names for the engine's keys, where they differ: their arguments are the
 * engine's own; `usePty` is a choice only run_command has (a terminal is always one).
 */
const FIELD_NAMES = { usePty: "run_command's use_pty" };

/**
 * The terminal tools over a terminal service; `via` names the front end in the audit log. The
 * service is asked for by each call, so that the tools can be listed before it is loaded.
 */
export function terminalTools(
  service: () => Promise<TerminalService>,
  via: FrontEnd,
): ToolDefinition[] {
  return [
    defineTool({
      name: "terminal_create",
      title: "Open a terminal",
      description:
        "Start a persistent terminal and return its id at once: an interactive shell (no command: " +
        "then type with terminal_write, which can also wait for the answer), a command line run by the " +
        "shell (command, as ACP's terminal/create), or a program with exact arguments (command + args). " +
        "Pagers are off (PAGER, GIT_PAGER, ... are cat). terminal_release when done. sandbox confines " +
        "it and all it starts (writes, network, credentials), within the server's sandbox.",
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
        const { sessionId: _session, _meta, ...args } = withoutNulls(given);
        const env = Array.isArray(args.env)
          ? Object.fromEntries(args.env.map(({ name, value }) => [name, value]))
          : args.env;
        const terminal = await terminals.create({ ...args, env, via, signal: context.signal });
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
    }),
    defineTool({
      name: "terminal_write",
      title: "Type into a terminal",
      description:
        "Type text and/or press named keys (enter, tab, escape, backspace, up, down, left, right, home, " +
        "end, pageup, pagedown, delete, f1-f12, ctrl_a-ctrl_z such as ctrl_c, ...). Enter follows the text " +
        "unless appendNewline is false or keys are given. Type and see the answer in one call: add a wait " +
        "(pattern, prompt, idleMs, exit or timeoutMs, as terminal_wait) and the answer has terminal_wait's fields " +
        "too, the output starting after the echo of what was typed. bytesWritten is what the terminal " +
        "took: input it does not take within WINTERM_WRITE_TIMEOUT_MS (10 s) fails, saying how much it " +
        "took, and in line mode a line over 4095 bytes (1024 on macOS) is refused whole.",
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
    }),
    defineTool({
      name: "terminal_read",
      title: "Read a terminal",
      description:
        "Read output by line. Cheapest: mode tail with tailLines, or since = the previous answer's " +
        "nextReadFrom for what is new. full (default) without since: everything kept if it fits maxBytes " +
        "(16 KiB), else its first and last lines with a marker saying what was left out and from which " +
        "line to read it; with since: a page (hasMore, nextReadFrom). Also head, head-tail, and screen: " +
        "what a person would see now (vim, htop, progress displays). Cleaned of escape sequences unless raw.",
      input: ReadInput,
      output: ReadOutput,
      annotations: READ_ONLY,
      handler: async (args, context) => {
        const terminal = (await service()).get(args.terminalId);
        if (args.mode === "screen") {
          const view = await terminal.renderScreen();
          return inAnswerTurn(() => terminal.screenRead(view, args), context.signal);
        }
        const request = { ...args, mode: args.mode ?? "full" };
        return inAnswerSlices(() => terminal.readSteps(request), context.signal);
      },
    }),
    defineTool({
      name: "terminal_wait",
      title: "Wait for a terminal",
      description:
        "Wait until the output matches a pattern, the shell is back at its prompt (prompt), the program " +
        "is blocked reading the terminal (input: a question, a password prompt; Linux), the output goes " +
        "idle for idleMs, or the program exits (the first wins), at most timeoutMs (default 30 s). Returns which happened, the output meanwhile (after the " +
        "echo of the last write; at most maxBytes, first and last lines if more) and the match. Use instead " +
        "of sleeping and polling; terminal_write takes the same arguments to type and wait in one call. " +
        "Sends progress every 2 s; cancellable.",
      input: WaitInput,
      output: WaitOutput,
      annotations: READ_ONLY,
      handler: async (args, context) => {
        const terminal = (await service()).get(args.terminalId);
        return waitAnswer(terminal, await waitCondition(args, args.input), args, context);
      },
    }),
    defineTool({
      name: "terminal_run",
      title: "Run a command in a terminal's shell",
      description:
        "Type one command line into a terminal's shell and wait until the shell is back at its " +
        "prompt: answers only that command's output (not the echo, not the prompt), its exit " +
        "code and the shell's cwd after it, known from the shell's own marks (no guessing). On " +
        "timeout, what arrived; the command keeps running (terminal_wait with prompt finishes " +
        "it). Needs a shell opened by terminal_create without command (shell integration).",
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
    }),
    defineTool({
      name: "terminal_output",
      title: "Terminal output (ACP)",
      description:
        "ACP terminal/output: the output so far (cleaned unless raw), keeping only the newest " +
        "outputByteLimit bytes if the terminal was created with one, and the exit status once it has exited.",
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
        return inAnswerSlices(function* () {
          const exit = exitField(terminal); // with the output as it stands now
          return { ...yield* terminal.acpOutputSteps(args.raw ?? false), ...exit };
        }, context.signal);
      },
    }),
    defineTool({
      name: "terminal_wait_for_exit",
      title: "Wait for a terminal's exit (ACP)",
      description:
        "ACP terminal/wait_for_exit: waits until the program exits and returns its exit code and " +
        "signal. Gives up after timeoutMs (default 30 s) with an error saying it still runs: call " +
        "again to wait on. Sends progress every 2 s.",
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
    }),
    defineTool({
      name: "terminal_kill",
      title: "Kill a terminal's program (ACP)",
      description:
        "ACP terminal/kill: ends the program and everything it started (SIGHUP, then SIGKILL after a " +
        "grace period), or sends just the given signal. The terminal stays: its output and exit status remain " +
        "readable until terminal_release.",
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
    }),
    defineTool({
      name: "terminal_release",
      title: "Release a terminal (ACP)",
      description:
        "ACP terminal/release: kills the program if it still runs and frees the terminal; its id is " +
        "invalid afterwards.",
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
    }),
    defineTool({
      name: "terminal_list",
      title: "List terminals",
      description: "Every open terminal: id, pid, command, state (prompt, running with the " +
        "command and how long, input, exited), cwd, lastExitCode, created, lastActivity, status, size.",
      input: Type.Object({}, { additionalProperties: false }),
      output: Type.Object({ terminals: Type.Array(TerminalInfo), count: Type.Integer() }),
      annotations: READ_ONLY,
      handler: async () => {
        const list = (await service()).list().map((terminal) => terminal.info());
        return { terminals: list, count: list.length };
      },
    }),
    defineTool({
      name: "terminal_stats",
      title: "Terminal statistics",
      description:
        "Size of a terminal's output (lines and bytes ever written, lines kept, estimated tokens), " +
        "and its state, cwd and lastExitCode.",
      input: IdOnly,
      output: Type.Object({
        terminalId: Type.String(),
        totalLines: Type.Integer(),
        totalBytes: Type.Integer(),
        estimatedTokens: Type.Integer(),
        bufferSize: Type.Integer({ description: "Lines kept." }),
        oldestLine: Type.Integer(),
        newestLine: Type.Integer(),
        isActive: Type.Boolean(),
        ...ActivityFields,
      }),
      annotations: READ_ONLY,
      handler: async (args) => (await service()).get(args.terminalId).stats(),
    }),
    defineTool({
      name: "terminal_resize",
      title: "Resize a terminal",
      description:
        "Change the terminal's size; the program gets SIGWINCH (on Windows, ConPTY resizes).",
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
    }),
  ].map((tool) => ({ ...tool, fieldNames: FIELD_NAMES }));
}
