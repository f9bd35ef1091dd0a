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
import { unadvertised } from "../schema_marks.ts";

const MIB = 1024 * 1024;
export const TerminalId = Type.String({ minLength: 1, maxLength: 100 });
export const ExitStatusSchema = Type.Object({
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
});
/** How long a wait lasts unless told: well within the 60 s MCP clients give a call by default. */
export const DEFAULT_WAIT_MS = 30_000;

/**
 * ACP's `_meta`, allowed at every level of its requests: accepted, not used. A plain object: a
 * record of unknown values would be sent as `patternProperties` holding an empty schema, which
 * clients read as untyped (the MCP Inspector warns of it).
 */
const Meta = unadvertised(nullable(Type.Object({})));

/**
 * What every ACP terminal request carries besides its own fields. One server serves one
 * client's terminals, so the session id is accepted and not used.
 */
export const AcpFields = {
  sessionId: unadvertised(nullable(Type.String({ maxLength: 1000 }))),
  _meta: Meta,
};

/** ACP's spelling of `env`, accepted and not advertised: models are taught the record. */
const AcpEnv = unadvertised(Type.Array(
  Type.Object({
    name: Type.String({ pattern: "^[^=\\u0000]+$" }),
    value: CString,
    _meta: Meta,
  }, {
    additionalProperties: false,
  }),
  { maxItems: 500 },
));

export const CreateInput = Type.Object({
  command: nullable(Type.String({
    minLength: 1,
    maxLength: 32768,
    description: "Omitted: a shell to type into. Else a command line; with args, a program.",
  })),
  args: nullable(Type.Array(CString, { maxItems: 1000 })),
  shell: nullable(Type.String({
    minLength: 1,
    maxLength: 4096,
    description: "Default: $SHELL (Windows: PowerShell).",
  })),
  shellIntegration: Type.Optional(Type.Boolean({ default: true })),
  cwd: nullable(Type.String({ minLength: 1, maxLength: 4096 })),
  env: nullable(Type.Union([Env, AcpEnv])),
  cols: nullable(Type.Integer({ minimum: 1, maximum: 1000, default: 80 })),
  rows: nullable(Type.Integer({ minimum: 1, maximum: 1000, default: 24 })),
  outputByteLimit: nullable(Type.Integer({
    minimum: 0,
    maximum: 1024 * MIB,
    description: "terminal_output keeps the newest this many bytes.",
  })),
  encoding: nullable(Encoding),
  sandbox: nullable(Sandbox),
  allowAnsiMismatch: nullable(AllowAnsiMismatch),
  ...AcpFields,
}, { additionalProperties: false });

export const ActivityFields = {
  state: literals(["prompt", "running", "input", "exited"] as const),
  running: Type.Union([
    Type.Object({
      command: Type.Union([Type.String(), Type.Null()]),
      startedAt: Type.String(),
      durationMs: Type.Integer(),
    }),
    Type.Null(),
  ]),
  cwd: Type.String(),
  lastExitCode: Type.Union([Type.Integer(), Type.Null()]),
  shellIntegration: literals(["active", "starting", "none"] as const),
};

export const TerminalInfo = Type.Object({
  terminalId: Type.String(),
  pid: Type.Integer(),
  command: Type.String(),
  ...ActivityFields,
  created: Type.String(),
  lastActivity: Type.String(),
  status: literals(["active", "exited"] as const),
  size: Type.Object({ cols: Type.Integer(), rows: Type.Integer() }),
  exitStatus: Type.Optional(ExitStatusSchema),
  notice: Type.Optional(Type.String()),
  sandbox: Type.Optional(SandboxInfo),
});

const MaxBytes = Type.Integer({ minimum: 1, maximum: 16 * MIB, default: 16 * 1024 });

/** The conditions of a wait, shared by terminal_wait and terminal_write. */
const WaitFields = {
  pattern: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "RE2 regex; never matches the echo.",
  })),
  flags: Type.Optional(Type.String({ pattern: "^[imsu]*$", maxLength: 4 })),
  idleMs: Type.Optional(Type.Integer({
    minimum: 10,
    maximum: 3_600_000,
    description: "Until quiet this long.",
  })),
  exit: Type.Optional(Type.Boolean()),
  prompt: Type.Optional(Type.Boolean({ description: "Until the shell's prompt." })),
  timeoutMs: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: DEFAULT_WAIT_MS,
  })),
  maxBytes: Type.Optional(MaxBytes),
};

export const WriteInput = Type.Object({
  terminalId: TerminalId,
  input: Type.Optional(Type.String({ maxLength: MIB })),
  keys: Type.Optional(Type.Array(literals(KEY_NAMES), {
    maxItems: 200,
    description: "Pressed after the text.",
  })),
  appendNewline: Type.Optional(Type.Boolean({
    default: true,
    description: "Enter after the text, unless keys are given.",
  })),
  ...WaitFields,
}, { additionalProperties: false });

export const ReadInput = Type.Object({
  terminalId: TerminalId,
  since: Type.Optional(Type.Integer({ minimum: 0 })),
  mode: Type.Optional(literals([...LINE_MODES, "screen"] as const, { default: "full" })),
  headLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 50 })),
  tailLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 50 })),
  maxLines: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 })),
  raw: Type.Optional(Type.Boolean({ default: false })),
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
    alternate: Type.Boolean(),
    unrenderedBytes: Type.Integer(),
  })),
  notice: Type.Optional(Type.String()),
  exitStatus: Type.Optional(ExitStatusSchema),
  matches: Type.Optional(Type.Integer({ description: "With grep: lines that matched." })),
});

export const WaitInput = Type.Object({
  terminalId: TerminalId,
  ...WaitFields,
  input: Type.Optional(Type.Boolean({
    description: "Until the program asks for input (Linux).",
  })),
  since: Type.Optional(Type.Integer({
    minimum: 0,
    description: "A line. Default: after the echo of the last write.",
  })),
}, { additionalProperties: false });

const WaitFieldsOutput = {
  condition: literals(
    ["pattern", "prompt", "input", "idle", "exit", "timeout", "cancelled"] as const,
  ),
  output: Type.String(),
  truncated: Type.Boolean(),
  match: Type.Union([
    Type.Object({
      text: Type.String(),
      index: Type.Integer(),
      groups: Type.Array(Type.Union([Type.String(), Type.Null()])),
    }),
    Type.Null(),
  ]),
  nextReadFrom: Type.Integer(),
  elapsedMs: Type.Integer(),
  skippedBytes: Type.Optional(Type.Integer()),
  notice: Type.Optional(Type.String()),
  exitStatus: Type.Optional(ExitStatusSchema),
  lastExitCode: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  cwd: Type.Optional(Type.String()),
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
  command: Type.String({ minLength: 1, maxLength: 32768, description: "One line." }),
  timeoutMs: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: 30_000,
    description: "Then answer what arrived; it runs on (terminal_wait prompt).",
  })),
  maxBytes: Type.Optional(MaxBytes),
}, { additionalProperties: false });

export const RunOutput = Type.Object({
  condition: literals(["done", "timeout", "exit", "cancelled"] as const),
  output: Type.String(),
  truncated: Type.Boolean(),
  notice: Type.Optional(Type.String()),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  cwd: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  hint: Type.Optional(Type.String()),
});

export const IdOnly = Type.Object({ terminalId: TerminalId }, { additionalProperties: false });
export const AcpIdOnly = Type.Object({ terminalId: TerminalId, ...AcpFields }, {
  additionalProperties: false,
});
