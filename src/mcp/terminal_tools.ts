/**
 * Persistent terminals as MCP tools: create, write (text and named keys), run a command in the
 * shell (shell integration), read (by line, head, tail, head-tail, or the rendered screen),
 * wait (pattern, prompt, input, idle, exit), resize, list, stats, and the ACP terminal methods
 * (output with outputByteLimit, wait_for_exit, kill, release).
 *
 * @module
 */
import { Type } from "@sinclair/typebox";
import type { FrontEnd } from "../engine/launching/audit.ts";
import { EngineError } from "../engine/errors.ts";
import { KEY_NAMES, keySequence } from "../engine/services/keys.ts";
import {
  compilePattern,
  describeExit,
  estimateTokens,
  LINE_MODES,
  type Terminal,
  type TerminalService,
} from "../engine/services/terminals.ts";
import { type ExitStatus, SIGNAL_NAMES } from "../pty/mod.ts";
import { Encoding, Env, literals } from "../schema.ts";
import { defineTool, type ToolDefinition, withProgress } from "./tool.ts";

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
const encoder = new TextEncoder();

const AcpEnv = Type.Array(
  Type.Object({
    name: Type.String({ pattern: "^[^=\\u0000]+$" }),
    value: Type.String({ maxLength: 32768 }),
  }, {
    additionalProperties: false,
  }),
  { maxItems: 500, description: "Environment as ACP sends it: [{name, value}]." },
);

const CreateInput = Type.Object({
  command: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 32768,
    description:
      "With args: the program to run (no shell). Without args: a command line for the shell. " +
      "Omitted: an interactive shell.",
  })),
  args: Type.Optional(Type.Array(Type.String({ maxLength: 32768 }), { maxItems: 1000 })),
  shell: Type.Optional(Type.String({
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
  cwd: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, description: "Working directory." }),
  ),
  env: Type.Optional(Type.Union([Env, AcpEnv])),
  cols: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 80 })),
  rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 24 })),
  outputByteLimit: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 1024 * MIB,
    description:
      "terminal_output returns at most this many bytes: the newest, cut at a character boundary. " +
      "At most the server's WINTERM_TERMINAL_MAX_BYTES (a larger value is lowered, and the answer " +
      "says so).",
  })),
  encoding: Type.Optional(Encoding),
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
});

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
  exitStatus: Type.Optional(ExitStatusSchema),
});

const WaitInput = Type.Object({
  terminalId: TerminalId,
  pattern: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "A regular expression (RE2 syntax: no backreferences or lookaround; matched in " +
      "linear time) to wait for in the cleaned output. Matched against new output plus the " +
      "newest 4 KiB before it.",
  })),
  flags: Type.Optional(
    Type.String({ pattern: "^[imsu]*$", maxLength: 4, description: "Regex flags: i, m, s, u." }),
  ),
  idleMs: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: 3_600_000,
      description: "Stop once no output came for this long.",
    }),
  ),
  exit: Type.Optional(Type.Boolean({
    description:
      "Wait for the program to exit. An exit always ends a wait; with no other condition this is the default.",
  })),
  prompt: Type.Optional(Type.Boolean({
    description: "Wait until the shell is back at its prompt (a prompt shown after the last " +
      "write, or after since): shell integration. Ends a terminal_run that timed out.",
  })),
  input: Type.Optional(Type.Boolean({
    description: "Wait until the program in the foreground is blocked reading the terminal (a " +
      "question, a password prompt, a REPL), not at the shell's own prompt. Linux only.",
  })),
  timeoutMs: Type.Integer({
    minimum: 1,
    maximum: 600_000,
    description: "Give up after this long.",
  }),
  since: Type.Optional(Type.Integer({
    minimum: 0,
    description:
      "Match (and return) output from this line on. Default: since the last terminal_write (or " +
      "since the start if nothing was written), so output that came before the wait still counts.",
  })),
}, { additionalProperties: false });

const WaitOutput = Type.Object({
  condition: literals(
    ["pattern", "prompt", "input", "idle", "exit", "timeout", "cancelled"] as const,
  ),
  output: Type.String({
    description: "Cleaned output since the last write (or since `since`): the newest 64 KiB of " +
      "it, with a marker in front saying what was left out and how to read it.",
  }),
  truncated: Type.Boolean({ description: "Older output was left out." }),
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
  skippedBytes: Type.Optional(Type.Integer({
    description: "Output not matched: it came faster than the pattern could be matched.",
  })),
  exitStatus: Type.Optional(ExitStatusSchema),
  lastExitCode: Type.Optional(Type.Union([Type.Integer(), Type.Null()], {
    description: "With prompt: the exit code of the shell's last finished command.",
  })),
  cwd: Type.Optional(Type.String({ description: "With prompt: the shell's working directory." })),
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
}, { additionalProperties: false });

const RunOutput = Type.Object({
  condition: literals(["done", "timeout", "exit", "cancelled"] as const, {
    description: "done: back at the prompt; timeout: still running (terminal_wait with prompt " +
      "finishes it); exit: the shell exited.",
  }),
  output: Type.String({
    description: "The command's output, cleaned: not the echo, not the prompt. Over 64 KiB: " +
      "head and tail with a marker saying how to read the rest.",
  }),
  truncated: Type.Boolean(),
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "Null on timeout, and where the shell does not tell.",
  }),
  cwd: Type.Union([Type.String(), Type.Null()], {
    description: "The shell's working directory after the command (null unless done).",
  }),
  durationMs: Type.Integer(),
});

const IdOnly = Type.Object({ terminalId: TerminalId }, { additionalProperties: false });

function exitField(terminal: Terminal): { exitStatus?: ExitStatus } {
  return terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {};
}

/** The terminal tools over a terminal service; `via` names the front end in the audit log. */
export function terminalTools(terminals: TerminalService, via: FrontEnd): ToolDefinition[] {
  return [
    defineTool({
      name: "terminal_create",
      title: "Open a terminal",
      description:
        "Start a persistent terminal and return its id at once: an interactive shell (no command), " +
        "a command line run by the shell (command), or a program with arguments (command + args, as ACP). " +
        "Then terminal_write, terminal_wait, terminal_read; terminal_release when done.",
      input: CreateInput,
      output: TerminalInfo,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
      handler: (args) => {
        const env = Array.isArray(args.env)
          ? Object.fromEntries(args.env.map(({ name, value }) => [name, value]))
          : args.env;
        const terminal = terminals.create({ ...args, env, via });
        const clamped = terminal.outputByteLimitClamped;
        return Promise.resolve({
          ...terminal.info(),
          ...(clamped
            ? {
              notice: `outputByteLimit ${clamped.requested} lowered to the server's ` +
                `${clamped.limit} (WINTERM_TERMINAL_MAX_BYTES)`,
            }
            : {}),
        });
      },
    }),
    defineTool({
      name: "terminal_write",
      title: "Type into a terminal",
      description:
        "Type text and/or press named keys (enter, tab, escape, backspace, up, down, left, right, home, " +
        "end, pageup, pagedown, delete, f1-f12, ctrl_a-ctrl_z such as ctrl_c, ...). Enter follows the text " +
        "unless appendNewline is false or keys are given. bytesWritten is what the terminal took: " +
        "input it does not take within WINTERM_WRITE_TIMEOUT_MS (10 s) fails, saying how much it " +
        "took, and in line mode a line over 4095 bytes (1024 on macOS) is refused whole.",
      input: WriteInput,
      output: Type.Object({
        terminalId: Type.String(),
        bytesWritten: Type.Integer(),
        message: Type.String(),
      }),
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      handler: async (args) => {
        if (args.input === undefined && !args.keys?.length) {
          throw new EngineError("invalid_input", "give input, keys, or both", "input");
        }
        const enter = args.input !== undefined && !args.keys?.length &&
          (args.appendNewline ?? true);
        const text = (args.input ?? "") + (enter ? keySequence("enter") : "") +
          (args.keys ?? []).map(keySequence).join("");
        await terminals.get(args.terminalId).write(text, via);
        const bytesWritten = encoder.encode(text).length;
        return {
          terminalId: args.terminalId,
          bytesWritten,
          message: `wrote ${bytesWritten} bytes`,
        };
      },
    }),
    defineTool({
      name: "terminal_read",
      title: "Read a terminal",
      description:
        "Read output by line: since a line number (nextReadFrom of the previous read), whole (full, " +
        "up to maxLines), head, tail or head-tail (which marks what it left out); or the screen as a person " +
        "would see it (mode screen: for vim, htop, progress displays). Output is cleaned unless raw.",
      input: ReadInput,
      output: ReadOutput,
      annotations: READ_ONLY,
      handler: async (args) => {
        const terminal = terminals.get(args.terminalId);
        if (args.mode === "screen") {
          const { text, truncated, ...screen } = await terminal.screen();
          const stats = terminal.stats();
          return {
            output: text,
            totalLines: stats.totalLines,
            nextReadFrom: terminal.nextReadFrom,
            hasMore: false,
            truncated,
            stats: {
              totalBytes: stats.totalBytes,
              estimatedTokens: estimateTokens(text.length),
              linesShown: screen.rows,
              linesOmitted: 0,
            },
            screen,
            ...exitField(terminal),
          };
        }
        return terminal.read({ ...args, mode: args.mode ?? "full" });
      },
    }),
    defineTool({
      name: "terminal_wait",
      title: "Wait for a terminal",
      description:
        "Wait until the output matches a pattern, goes idle for idleMs, or the program exits (the first " +
        "wins), at most timeoutMs. Returns which happened, the output meanwhile and the match. Use instead of " +
        "sleeping and polling. Sends progress while it waits; cancellable.",
      input: WaitInput,
      output: WaitOutput,
      annotations: READ_ONLY,
      handler: async (args, context) => {
        const terminal = terminals.get(args.terminalId);
        const pattern = args.pattern === undefined
          ? undefined
          : compilePattern(args.pattern, args.flags ?? "", "pattern");
        const started = performance.now();
        const outcome = await withProgress(
          terminal.wait({
            pattern,
            prompt: args.prompt,
            input: args.input,
            idleMs: args.idleMs,
            timeoutMs: args.timeoutMs,
            since: args.since,
            signal: context.signal,
          }),
          context,
          args.pattern
            ? `/${args.pattern}/`
            : args.prompt
            ? "the prompt"
            : args.input
            ? "a read of the terminal"
            : args.idleMs
            ? "quiet output"
            : "the exit",
        );
        const { output, truncated } = terminal.outputSince(outcome.from);
        const activity = outcome.condition === "prompt" ? terminal.activity() : undefined;
        return {
          condition: outcome.condition,
          output,
          truncated,
          match: outcome.match ?? null,
          nextReadFrom: terminal.nextReadFrom,
          elapsedMs: Math.round(performance.now() - started),
          ...(outcome.skippedBytes ? { skippedBytes: outcome.skippedBytes } : {}),
          ...exitField(terminal),
          ...(activity ? { lastExitCode: activity.lastExitCode, cwd: activity.cwd } : {}),
        };
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
        const terminal = terminals.get(args.terminalId);
        return await withProgress(
          terminal.run(args.command, args.timeoutMs ?? 30_000, { signal: context.signal, via }),
          context,
          "the command",
        );
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
        raw: Type.Optional(Type.Boolean({ default: false })),
      }, {
        additionalProperties: false,
      }),
      output: Type.Object({
        output: Type.String(),
        truncated: Type.Boolean(),
        exitStatus: Type.Optional(ExitStatusSchema),
      }),
      annotations: READ_ONLY,
      handler: (args) => {
        const terminal = terminals.get(args.terminalId);
        return Promise.resolve({
          ...terminal.acpOutput(args.raw ?? false),
          ...exitField(terminal),
        });
      },
    }),
    defineTool({
      name: "terminal_wait_for_exit",
      title: "Wait for a terminal's exit (ACP)",
      description:
        "ACP terminal/wait_for_exit: waits until the program exits and returns its exit code and " +
        "signal. With timeoutMs, gives up (as an error) if it is still running then. Sends progress.",
      input: Type.Object({
        terminalId: TerminalId,
        timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
      }, { additionalProperties: false }),
      output: ExitStatusSchema,
      annotations: READ_ONLY,
      handler: async (args, context) => {
        const terminal = terminals.get(args.terminalId);
        const outcome = await withProgress(
          terminal.wait({ timeoutMs: args.timeoutMs ?? 3_600_000, signal: context.signal }),
          context,
          "the exit",
        );
        if (!terminal.exitStatus) {
          throw new EngineError(
            "inactive",
            `terminal ${terminal.id} is still running (${outcome.condition})`,
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
        { terminalId: TerminalId, signal: Type.Optional(literals(SIGNAL_NAMES)) },
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
      input: IdOnly,
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
        const exitStatus = await terminals.release(args.terminalId, via);
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
      handler: () => {
        const list = terminals.list().map((terminal) => terminal.info());
        return Promise.resolve({ terminals: list, count: list.length });
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
      handler: (args) => Promise.resolve(terminals.get(args.terminalId).stats()),
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
      handler: (args) => {
        terminals.get(args.terminalId).resize(args.cols, args.rows);
        return Promise.resolve({ terminalId: args.terminalId, cols: args.cols, rows: args.rows });
      },
    }),
  ];
}
