/**
 * The terminal tools' schemas (TypeBox): what each takes and answers, and the defaults they
 * name. The tools themselves are in terminal_tools.ts.
 *
 * @module
 */
import { Type } from "../typebox.ts";
import { KEY_NAMES, LINE_MODES } from "../engine/mod.ts";
import {
  AllowAnsiMismatch,
  ContextLines,
  CString,
  Encoding,
  Env,
  Grep,
  literals,
  nullable,
  Sandbox,
  SandboxInfo,
} from "../schema.ts";

const MIB = 1024 * 1024;
export const TerminalId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The id terminal_create returned.",
});
export const ExitStatusSchema = Type.Object({
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description:
      "Null when a signal ended it; null with signal null: it ended, but how is unknown.",
  }),
  signal: Type.Union([Type.String(), Type.Null()], {
    description: "POSIX name of the signal that ended it.",
  }),
});
export const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
/** How long a wait lasts unless told: well within the 60 s MCP clients give a call by default. */
export const DEFAULT_WAIT_MS = 30_000;

/** ACP's `_meta`, allowed at every level of its requests: accepted, not used. */
const Meta = nullable(Type.Record(Type.String(), Type.Unknown(), {
  description: "ACP's _meta: accepted and ignored.",
}));

/**
 * What every ACP terminal request carries besides its own fields. One server serves one
 * client's terminals, so the session id is accepted and not used.
 */
export const AcpFields = {
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

export const CreateInput = Type.Object({
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

export const ActivityFields = {
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

export const TerminalInfo = Type.Object({
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

export const WriteInput = Type.Object({
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

export const ReadInput = Type.Object({
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
  grep: Type.Optional(Grep),
  contextLines: Type.Optional(ContextLines),
}, { additionalProperties: false });

export const ReadOutput = Type.Object({
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
  matches: Type.Optional(Type.Integer({ description: "With grep: lines that matched." })),
});

export const WaitInput = Type.Object({
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
export const WaitOutput = Type.Object(WaitFieldsOutput);

export const WriteOutput = Type.Object({
  terminalId: Type.String(),
  bytesWritten: Type.Integer(),
  message: Type.String(),
  ...Object.fromEntries(
    Object.entries(WaitFieldsOutput).map(([name, schema]) => [name, Type.Optional(schema)]),
  ),
});

export const RunInput = Type.Object({
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

export const RunOutput = Type.Object({
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

export const IdOnly = Type.Object({ terminalId: TerminalId }, { additionalProperties: false });
export const AcpIdOnly = Type.Object({ terminalId: TerminalId, ...AcpFields }, {
  additionalProperties: false,
});
