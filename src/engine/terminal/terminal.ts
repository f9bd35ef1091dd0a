/**
 * Persistent terminals: shells, REPLs, dev servers and full-screen programs that live across
 * calls. Each keeps its output in a ring of numbered, timestamped lines (line numbers are never
 * reused), takes text and keys, can be waited on (until output matches, goes idle, or the
 * program exits), rendered as a screen, resized, killed and released (ACP's terminal
 * semantics). Idle terminals are released after a while; their number is capped. Each is
 * recorded (asciicast v2, bounded), can be watched (a snapshot of its screen, then every event
 * after it) and taken over by a viewer (takeover.ts).
 *
 * @example
 * ```ts
 * import { compilePattern, TerminalService } from "./terminal.ts";
 * const terminals = new TerminalService();
 * const shell = await terminals.create({});                       // the platform shell
 * await shell.write("echo ready\r");
 * const pattern = compilePattern("ready", "", "pattern");
 * const outcome = await shell.wait({ pattern, timeoutMs: 5000 });
 * outcome.condition; // "pattern"
 * await terminals.shutdown(500);
 * ```
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import { log } from "../../log.ts";
import {
  type ChildProcess,
  describeExit,
  type ExitStatus,
  type SignalName,
  type TerminalReader,
  WRITE_TIMEOUT_MS,
} from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import {
  inputFailure,
  type LaunchContext,
  Launcher,
  resolveDirectory,
} from "../launching/launcher.ts";
import { childEnvironment, pagerEnvironment } from "../launching/environment.ts";
import { EngineError } from "../errors.ts";
import { Listeners } from "../events.ts";
import { stopProcess } from "../launching/lifecycle.ts";
import { OutputBudget } from "../output/budget.ts";
import type { LineReadOptions } from "../output/lines.ts";
import type { EchoLocation, EchoSkip } from "../output/echo.ts";
import type { Pattern, PatternMatch } from "../output/patterns.ts";
import { Recording } from "../output/recording.ts";
import type { ScreenView } from "../output/screen.ts";
import { historyBefore, toFreshScreen } from "../output/scrollback.ts";
import { cutHead, DEFAULT_ANSWER_BYTES, estimateTokens, omissionMarker } from "../output/shape.ts";
import { StreamOutput, type StreamView } from "../output/stream.ts";
import { atOnce, type Steps } from "../slices.ts";
import { boundaryAtOrAfter, utf8Length } from "../output/utf8.ts";
import { buildTerminalInvocation, type TerminalInvocationRequest } from "../launching/shells.ts";
import { shellIntegration, ShellScripts } from "../launching/integration/mod.ts";
import type { SandboxInfo, SandboxRequest } from "../launching/sandbox.ts";
import { MarkFilter, newNonce } from "../output/marks.ts";
import { type FinishedCommand, ShellTracker } from "./shell_state.ts";
import {
  checkTerminalEncoding,
  ChildCodec,
  prepareEncodings,
  requestedEncoding,
} from "../encoding.ts";
import { type Clamped, clampSize, shortDisplay } from "../limits.ts";
import { Takeover } from "./takeover.ts";

export { LINE_MODES, type LineMode } from "../output/lines.ts";
export { estimateTokens } from "../output/shape.ts";
export {
  compilePattern,
  loadPatterns,
  type Pattern,
  type PatternMatch,
} from "../output/patterns.ts";

/** Limits and timings of a {@link TerminalService}. */
export interface TerminalServiceOptions {
  /** Terminals open at once. Default 64. */
  maxTerminals?: number;
  /** A terminal unused this long (ms) is released. Default 24 hours. */
  idleMs?: number;
  /** Lines of output kept per terminal. Default 10,000. */
  maxLines?: number;
  /** Bytes of output kept per terminal (and the most `outputByteLimit` can be). Default 10 MiB. */
  maxBytes?: number;
  /** Time between SIGTERM and SIGKILL when stopping, in ms. Default 2000. */
  killGraceMs?: number;
  /** Most bytes of output text in one answer (JSON-escaped). Default 2 MiB. */
  answerBytes?: number;
  /** The server-wide budget for retained output. Default: its own of 256 MiB. */
  budget?: OutputBudget;
  /** How long a write may wait for the terminal to take its input, in ms. Default 10,000. */
  writeTimeoutMs?: number;
  /** Bytes of asciicast recording kept per terminal (0: none). Default 4 MiB. */
  recordingMaxBytes?: number;
  /** Starts processes (policy, audit). Default: no policy, no audit. */
  launcher?: Launcher;
  /** Where shell integration files are kept. Default: a temporary directory. */
  shellScripts?: ShellScripts;
}

/** The default bound of a terminal's recording: 4 MiB. */
export const DEFAULT_RECORDING_MAX_BYTES = 4 * 1024 * 1024;

/** What {@link TerminalService.create} needs. */
export interface CreateTerminalRequest extends Omit<TerminalInvocationRequest, "integration"> {
  /**
   * Start a shell (no `command`) with shell integration (see launching/integration/), so that
   * its prompt, commands, exit codes and cwd are known. Default true.
   */
  shellIntegration?: boolean;
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  /** ACP: `terminal_output` returns at most this many of the newest bytes (at most `maxBytes`). */
  outputByteLimit?: number;
  /**
   * The program's encoding (`utf-8`, `oem`, `ansi`, a code page or a label): decodes its bytes
   * on POSIX; on Windows, where conhost always speaks UTF-8, it switches a cmd or PowerShell
   * shell's console to that code page.
   */
  encoding?: string;
  /**
   * Windows: start even though the ANSI view of the program, its arguments, the command or
   * the working directory differs from them (see launching/ansi_view.ts).
   */
  allowAnsiMismatch?: boolean;
  /** The front end that asked (for the audit log). */
  via?: FrontEnd;
  /** Aborted when the caller gives up: a start still waiting for its turn is not made. */
  signal?: AbortSignal;
  /** Its sandbox (it can only tighten the server's, which applies without one). */
  sandbox?: SandboxRequest;
}

/** Something that happened to a terminal. */
export type TerminalEvent =
  | { type: "output"; data: Uint8Array }
  | { type: "state" }
  | { type: "resize"; cols: number; rows: number }
  | { type: "exit"; status: ExitStatus };

/**
 * What a terminal is doing: `prompt` (its shell waits for a command), `running` (a command or
 * program runs), `input` (the program in the foreground is blocked reading the terminal), or
 * `exited`. Without shell integration a shell at its prompt reads the terminal: `input`.
 */
export type TerminalState = "prompt" | "running" | "input" | "exited";

/** A terminal's state, its shell's working directory and last exit code. */
export interface TerminalActivity {
  state: TerminalState;
  /** While `running` or `input` in a shell: the command, when it started, how long it runs. */
  running: { command: string | null; startedAt: string; durationMs: number } | null;
  /** The shell's working directory as it last reported it, else the one the terminal began in. */
  cwd: string;
  /** The exit code of the shell's last finished command; null when none or unknown. */
  lastExitCode: number | null;
  /** `active` once the shell's marks arrive, `starting` until then, `none` without. */
  shellIntegration: "active" | "starting" | "none";
}

/** How {@link Terminal.run} ended, and what it found. */
export interface RunOutcome {
  /** `done`: back at the prompt; `timeout`: still running; `exit`: the shell exited. */
  condition: "done" | "timeout" | "exit" | "cancelled";
  /** The command's output, cleaned: not the echo, not the prompt. */
  output: string;
  /** Some of it was left out (a marker says how much and how to read it). */
  truncated: boolean;
  /** Null on timeout, and when the shell did not say. */
  exitCode: number | null;
  /** The shell's cwd after the command; null when not back at the prompt. */
  cwd: string | null;
  durationMs: number;
  /** A limit the server applied to the request (`maxBytes` lowered to the answer limit). */
  notice?: string;
}

/**
 * A viewer's start: the screen as escape sequences at one point of the output, and its size;
 * {@link Watch.start} then delivers every event after that point, none missed, none twice.
 */
export interface Watch {
  /**
   * The output kept before `offset` (see {@link Terminal.watch}'s `historyBytes`), from a line
   * start: written first, it leaves what scrolled off in the viewer's scrollback.
   */
  history: Uint8Array;
  /**
   * Written into a terminal of `cols` × `rows`, fresh or not (after `history`, say), it draws
   * the screen at `offset`, and leaves the terminal's scrollback as it was.
   */
  snapshot: Uint8Array;
  cols: number;
  rows: number;
  /** The output offset the snapshot stands at: the output events that follow start there. */
  offset: number;
  /** Delivers the events since the snapshot (the output kept after it first), then each as it happens. */
  start(): void;
  stop(): void;
}

/**
 * Conditions a wait ends on; the first to happen wins. The program's exit always ends a wait
 * (no output can come after it), so with no pattern and no idle time it waits for the exit.
 */
export interface WaitRequest {
  /** Output (cleaned, from `since` or the start of the wait) matches this (see patterns.ts). */
  pattern?: Pattern;
  /** The shell is at a prompt that showed after `since` (or the last write): shell integration. */
  prompt?: boolean;
  /** The program in the foreground is blocked reading the terminal (Linux). */
  input?: boolean;
  /** No output for this many ms. */
  idleMs?: number;
  timeoutMs: number;
  /**
   * Match from this line on. Default: the answer to the last write, from the line after the
   * terminal's echo of what was typed (see output/echo.ts), or since the start if nothing was
   * written: output that arrived before the wait began still counts, so a write followed by a
   * wait cannot miss a fast answer, and never matches the echo.
   */
  since?: number;
  signal?: AbortSignal;
}

/** How a wait ended. */
export interface WaitOutcome {
  condition: "pattern" | "prompt" | "input" | "idle" | "exit" | "timeout" | "cancelled";
  /** Offset the matched output starts from (see {@link Terminal.waitOutput}). */
  from: number;
  match?: PatternMatch;
  /** Output skipped unmatched because it came faster than the pattern could be matched. */
  skippedBytes: number;
}

/**
 * How long a run sent right after Ctrl+C waits for the shell to report the end of what it
 * interrupted, rather than being refused as busy.
 */
const INTERRUPT_GRACE_MS = 2_000;

/** Input written to a terminal, as a wait after it needs it. */
interface TypedInput {
  /** Where the output stood when it was written. */
  offset: number;
  text: string;
  /**
   * Written while the shell showed no prompt to read it at (before its first, or after a
   * command ended and before the next): the shell reads it at the next prompt, which comes at
   * output offset `readAt`.
   */
  beforePrompt?: { readAt?: number };
}

/** Where a wait looks (see `Terminal.#waitOrigin`). */
interface WaitOrigin {
  from: number;
  echo?: EchoSkip;
  /** The input waits for the prompt it is read at: `from` and `echo` are not final. */
  awaitingPrompt?: boolean;
}

/** The output since a wait's start, as a wait answers it. */
export interface WaitOutput {
  output: string;
  /** Some of it was left out (a marker says how much and how to read it). */
  truncated: boolean;
}

/** What {@link Terminal.read} reads (see lines.ts), and how much of it an answer shows. */
export interface TerminalReadRequest extends Omit<LineReadOptions, "final" | "budget" | "hint"> {
  /** Most bytes of output text in the answer (as JSON). Default 16 KiB; at most the answer limit. */
  maxBytes?: number;
}

/** A screen as an answer shows it. */
export interface ScreenRead extends ScreenView {
  /** The text was cut to its budget (rows past it are left out, with a marker). */
  truncated: boolean;
  /** Rows of the screen in the text (blank rows at the bottom are left out too). */
  rowsShown: number;
}

/** `view` within `budget` bytes of text as JSON: the top rows, then a marker for the rest. */
function cutScreen(view: ScreenView, budget: number): ScreenRead {
  const rows = view.text.split("\n").length - 1;
  const cut = cutHead(view.text, budget);
  if (cut === view.text.length) return { ...view, truncated: false, rowsShown: rows };
  const shown = view.text.slice(0, view.text.lastIndexOf("\n", cut - 1) + 1);
  const rowsShown = shown.split("\n").length - 1;
  const marker = omissionMarker({
    lines: rows - rowsShown,
    bytes: utf8Length(view.text) - utf8Length(shown),
    hint: "over maxBytes",
  });
  return { ...view, text: shown + marker, truncated: true, rowsShown };
}

/** What a line read takes that a screen read leaves unused. */
const SCREEN_UNUSED = ["since", "headLines", "tailLines", "maxLines", "raw"] as const;

const ENV_FOR_TERMINALS = { TERM: "xterm-256color" };
/** Pattern checks run at most this often while output streams in. */
const CHECK_INTERVAL_MS = 25;
const INPUT_HISTORY = 100;
/** Looks at whether the program reads the terminal, while a wait for input runs, this often. */
const INPUT_POLL_MS = 50;
/** The output kept after a watcher's snapshot is delivered in pieces of at most this size. */
const WATCH_PIECE_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/** How a terminal keeps and shows its output. */
interface OutputLimits {
  maxLines: number;
  maxBytes: number;
  answerBytes: number;
  budget: OutputBudget;
  recordingMaxBytes: number;
}

/** A terminal. */
export class Terminal {
  readonly id: string;
  /** When it was created, ms since the epoch. */
  readonly created: number = Date.now();
  /** Last input, output or read, ms since the epoch. */
  lastActivity: number = Date.now();
  readonly events: Listeners<TerminalEvent> = new Listeners();
  /** What runs, as a command line (shortened past 1000 characters). */
  readonly command: string;
  /** Everything the program wrote and every resize, in asciicast v2 (bounded). */
  readonly recording: Recording;
  /** A viewer typing alongside the agent (see takeover.ts). */
  readonly takeover: Takeover;
  /** Settles when the program has exited and its output is complete. */
  readonly exited: Promise<ExitStatus>;
  exitStatus: ExitStatus | null = null;
  /** When input was written, and how much (content is not kept). */
  readonly inputs: { time: number; bytes: number }[] = [];
  /** ACP's outputByteLimit, as applied (at most the server's per-terminal limit). */
  readonly outputByteLimit: number | undefined;
  /** Set when the requested outputByteLimit was over the server's limit. */
  readonly outputByteLimitClamped: Clamped | undefined;
  #child: ChildProcess;
  #output: StreamOutput;
  #answerBytes: number;
  #codec: ChildCodec;
  #stopping: Promise<ExitStatus> | undefined;
  /** The last input written, and where the output stood then: a wait answers it. */
  #lastInput: TypedInput | undefined;
  /** The shell's state from its integration marks (shells started with it). */
  readonly #shell: ShellTracker | undefined;
  /** The nonce the shell's marks carry (shells started with integration). */
  readonly #nonce: string | undefined;
  /** What `run` types for a command (see ShellIntegration.runWrapping). */
  readonly #runWrapping: { prefix: string; exitQuery?: string } | undefined;
  /** The last write: who was reading the terminal just before it, and whether it wakes them. */
  #lastWrite: { reader: TerminalReader | null | undefined; wakes: boolean } | undefined;
  /**
   * The last Ctrl+C typed: when (ms since the epoch), where the output stood (the prompt it
   * brings comes after that), and whether the shell ran a command then (else its line editor
   * took it).
   */
  #interrupt: { at: number; offset: number; commandRan: boolean } | undefined;
  /** The shell draws a new prompt when Ctrl+C reaches its line editor (see ShellIntegration). */
  readonly #promptOnInterrupt: boolean;
  /** The shell drops a run's line it would read on from itself (see ShellIntegration). */
  readonly #dropsContinuedRun: boolean;

  constructor(
    private readonly context: LaunchContext,
    private readonly launcher: Launcher,
    child: ChildProcess,
    command: string,
    readonly cwd: string,
    public cols: number,
    public rows: number,
    outputByteLimit: number | undefined,
    limits: OutputLimits,
    codec: ChildCodec,
    /** How long input may wait for the program to take it (then writing it fails). */
    readonly writeTimeoutMs: number,
    integration?: {
      nonce: string;
      runWrapping?: { prefix: string; exitQuery?: string };
      marksOutputStart?: boolean;
      promptOnInterrupt?: boolean;
      dropsContinuedRun?: boolean;
    },
  ) {
    this.id = context.id;
    this.#child = child;
    this.#codec = codec;
    this.command = shortDisplay(command);
    const applied = outputByteLimit === undefined
      ? undefined
      : clampSize(outputByteLimit, limits.maxBytes);
    this.outputByteLimit = applied?.value;
    this.outputByteLimitClamped = applied?.clamped;
    this.#answerBytes = limits.answerBytes;
    this.#runWrapping = integration?.runWrapping;
    this.#nonce = integration?.nonce;
    this.#promptOnInterrupt = integration?.promptOnInterrupt ?? false;
    this.#dropsContinuedRun = integration?.dropsContinuedRun ?? false;
    const shell = integration
      ? new ShellTracker((offset) => {
        const next = this.#output.lineStart(this.#output.lineAt(offset) + 1);
        return next > offset && next <= this.#output.end ? next : undefined;
      }, integration.marksOutputStart)
      : undefined;
    this.#shell = shell;
    this.#output = new StreamOutput({
      maxLines: limits.maxLines,
      maxBytes: limits.maxBytes,
      budget: limits.budget,
      decoder: codec.decoder(),
      columns: cols,
      marks: shell && {
        filter: new MarkFilter(integration!.nonce),
        onMark: (mark, offset) => {
          const input = this.#lastInput;
          const before = input?.beforePrompt;
          if (
            mark.kind === "prompt-end" && before && before.readAt === undefined &&
            offset >= input!.offset
          ) before.readAt = offset;
          if (shell.onMark(mark, offset)) this.events.emit({ type: "state" });
        },
      },
    });
    this.recording = new Recording({
      cols,
      rows,
      maxBytes: limits.recordingMaxBytes,
      command: this.command,
      title: `${this.id}: ${this.command}`,
      startedAt: this.created,
      budget: limits.budget,
    });
    this.takeover = new Takeover(
      this,
      (event, via) => launcher.control({ ...context, via }, event),
    );
    child.onData((raw) => {
      this.lastActivity = Date.now();
      this.#arrived(this.#output.append(raw, this.lastActivity));
    });
    this.exited = child.exited.then((status) => {
      this.#arrived(this.#output.finish());
      this.recording.end();
      this.exitStatus = status;
      this.events.emit({ type: "exit", status });
      log.info("terminal exited", { terminalId: this.id, ...status });
      return status;
    });
  }

  /**
   * Output as kept (decoded, UTF-8) goes to the recording and the listeners. The bytes may be
   * lent (see DataListener): the recording copies what it keeps, listeners get a copy.
   */
  #arrived(data: Uint8Array): void {
    if (data.length === 0) return;
    this.recording.output(data);
    if (this.events.size > 0) this.events.emit({ type: "output", data: data.slice() });
  }

  get pid(): number {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  /** Marks the terminal as used (reads count: an agent watching a server is using it). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * Types text (which may hold control characters and escape sequences). `field`: the request
   * field an error about the text names.
   */
  async write(text: string, via: FrontEnd = "internal", field = "input"): Promise<void> {
    this.#assertRunning();
    const bytes = this.#codec.encode(text, field);
    // Refused whole, it must leave no trace: the shell's state below counts it as typed.
    const refused = this.#child.refusal(bytes);
    if (refused !== undefined) throw new EngineError("failed", refused, field);
    this.launcher.input({ ...this.context, via }, text);
    const shell = this.#shell;
    // Only a whole line is read at the prompt; Ctrl+C (D, Z) brings a prompt of its own.
    // deno-lint-ignore no-control-regex -- those keys are control characters
    const aLine = /[\r\n]/.test(text) && !/[\x03\x04\x1a]/.test(text);
    const reader = this.#child.terminalReader();
    // Before the first prompt, a line goes to whatever reads the terminal then (a question the
    // startup files ask), if anything does.
    const readElsewhere = shell !== undefined && shell.promptEnd < 0 && !!reader;
    const beforePrompt = shell === undefined || shell.command !== undefined || !aLine ||
        readElsewhere || (shell.promptEnd >= 0 && !shell.promptPending)
      ? undefined
      : {};
    this.#lastInput = { offset: this.#output.end, text, beforePrompt };
    const modes = this.#child.inputModes();
    // Whether this wakes the reader blocked now: in raw mode any key does; in line mode the end
    // of a line, end of file, or a key that sends a signal.
    const wakes = text !== "" &&
      // deno-lint-ignore no-control-regex -- those keys are control characters
      (modes === undefined || !modes.lineMode || /[\r\n\x03\x04\x1a\x1c]/.test(text));
    this.#lastWrite = { reader, wakes };
    if (text.includes("\x03")) {
      this.#interrupt = {
        at: Date.now(),
        offset: this.#output.end,
        commandRan: shell?.command !== undefined,
      };
    }
    // A terminal collecting lines with its echo off shows nothing of them (a line editor in
    // raw mode shows them itself); in raw mode while a command runs, the command takes them.
    const context = {
      readElsewhere,
      unechoed: modes !== undefined && modes.lineMode && !modes.echo,
      rawProgram: modes !== undefined && !modes.lineMode && shell?.command !== undefined,
    };
    if (shell?.noteInput(text, this.#output.end, context)) {
      this.events.emit({ type: "state" });
    }
    this.touch();
    this.inputs.push({ time: this.lastActivity, bytes: bytes.length });
    if (this.inputs.length > INPUT_HISTORY) this.inputs.shift();
    await inputFailure(this.#child.write(bytes, this.writeTimeoutMs), field);
  }

  /** Resizes the terminal (and the screen view). */
  resize(cols: number, rows: number): void {
    this.#assertRunning();
    try {
      this.#child.resize(cols, rows);
    } catch (error) {
      throw new EngineError("failed", (error as Error).message);
    }
    this.cols = cols;
    this.rows = rows;
    this.#output.resize(cols, rows);
    this.recording.resize(cols, rows);
    this.events.emit({ type: "resize", cols, rows });
  }

  /** Sends a signal to the program's whole process tree. */
  signal(name: SignalName, via: FrontEnd = "internal"): void {
    this.#assertRunning();
    this.launcher.kill({ ...this.context, via }, name);
    this.#child.kill(name);
  }

  /** Stops the program and its tree (SIGHUP, as a closing terminal sends; SIGKILL after the grace period). */
  stop(graceMs: number, via: FrontEnd = "internal"): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    if (!this.#stopping) this.launcher.kill({ ...this.context, via }, "SIGHUP");
    this.#stopping ??= stopProcess(this.#child, graceMs, "SIGHUP");
    return this.#stopping;
  }

  /**
   * Reads output by line (see lines.ts) within the answer's budget; counts as activity. `full`
   * without `since` is the summary of what is kept: all of it if it fits, else its first and
   * last lines with a marker between (`head-tail`); with `since` it pages (`hasMore`).
   */
  read(request: TerminalReadRequest): TerminalRead {
    return atOnce(this.readSteps(request));
  }

  /**
   * {@link read} as steps (see src/engine/slices.ts): of the output, and the exit, as they
   * stood when the steps began.
   */
  *readSteps(request: TerminalReadRequest): Steps<TerminalRead> {
    this.touch();
    const exitStatus = this.exitStatus;
    return yield* this.#output.frozen((output) => this.#read(output, request, exitStatus));
  }

  *#read(
    output: StreamView,
    request: TerminalReadRequest,
    exitStatus: ExitStatus | null,
  ): Steps<TerminalRead> {
    const budget = this.#budget(request.maxBytes);
    const options = { ...request, final: !this.running, budget: budget.value };
    let read = yield* output.readLines(options);
    if ((request.mode ?? "full") === "full" && request.since === undefined && read.hasMore) {
      const half = Math.ceil((request.maxLines ?? 1000) / 2);
      read = yield* output.readLines({
        ...options,
        mode: "head-tail",
        headLines: half,
        tailLines: half,
      });
    }
    return {
      output: read.output,
      totalLines: read.totalLines,
      nextReadFrom: read.nextReadFrom,
      hasMore: read.hasMore,
      truncated: read.truncated,
      stats: {
        totalBytes: output.end,
        estimatedTokens: estimateTokens(read.output.length),
        linesShown: read.linesShown,
        linesOmitted: read.linesOmitted,
      },
      ...(budget.clamped ? { notice: maxBytesNotice(budget.clamped) } : {}),
      ...(exitStatus ? { exitStatus } : {}),
    };
  }

  /** An answer's budget: `maxBytes`, or the default, at most the answer limit. */
  #budget(maxBytes: number | undefined): { value: number; clamped?: Clamped } {
    return maxBytes === undefined
      ? { value: Math.min(DEFAULT_ANSWER_BYTES, this.#answerBytes) }
      : clampSize(maxBytes, this.#answerBytes);
  }

  /**
   * ACP terminal/output: the output so far (cleaned unless raw), its newest `outputByteLimit`
   * bytes if the terminal has one (cut forward to a character boundary), within the answer
   * size limit.
   */
  acpOutput(raw: boolean): { output: string; truncated: boolean } {
    return atOnce(this.acpOutputSteps(raw));
  }

  /** {@link acpOutput} as steps (see src/engine/slices.ts), of the output as it stood then. */
  *acpOutputSteps(raw: boolean): Steps<{ output: string; truncated: boolean }> {
    this.touch();
    const read = yield* this.#output.frozen((output) =>
      output.readNewest(0, {
        raw,
        final: !this.running,
        budget: this.#answerBytes,
      })
    );
    let output = read.text;
    let cut = read.start > 0;
    const limit = this.outputByteLimit;
    if (limit !== undefined) {
      const bytes = encoder.encode(output);
      if (bytes.length > limit) {
        output = new TextDecoder().decode(
          bytes.subarray(boundaryAtOrAfter(bytes, bytes.length - limit)),
        );
        cut = true;
      }
    }
    return { output, truncated: cut };
  }

  /**
   * The output since a wait began (offset `from`), cleaned, as a wait answers it: whole if it
   * fits `maxBytes` (default 16 KiB), else its head and tail with a marker between saying how
   * much was left out and from which line to read it.
   */
  waitOutput(from: number, maxBytes?: number, to?: number): WaitOutput & { notice?: string } {
    return atOnce(this.waitOutputSteps(from, maxBytes, to));
  }

  /** {@link waitOutput} as steps (see src/engine/slices.ts), of the output as it stood then. */
  waitOutputSteps(
    from: number,
    maxBytes?: number,
    to?: number,
  ): Steps<WaitOutput & { notice?: string }> {
    return this.#output.frozen((output) => this.#waitOutput(output, from, maxBytes, to));
  }

  *#waitOutput(
    output: StreamView,
    from: number,
    maxBytes?: number,
    to?: number,
  ): Steps<WaitOutput & { notice?: string }> {
    const budget = this.#budget(maxBytes);
    const notice = budget.clamped ? { notice: maxBytesNotice(budget.clamped) } : {};
    const end = Math.min(to ?? output.end, output.end);
    const gone = Math.max(0, Math.min(end, output.start) - from);
    const dropped = gone > 0
      ? omissionMarker({
        bytes: gone,
        hint: `no longer kept; the oldest line kept is ${output.firstLine}`,
      })
      : "";
    // An empty range (a command that printed nothing) reads nothing.
    if (to !== undefined && end <= Math.max(from, output.start)) {
      return { output: dropped, truncated: gone > 0, ...notice };
    }
    const hint = (line: number) => `read them with since=${line}`;
    const read = yield* output.readShaped(from, {
      final: !this.running || end < output.end,
      budget: budget.value,
      hint: (_offset, line) => hint(line),
    }, to);
    // A budget too small for head, marker and tail gave the first page: what follows it is
    // said at its end (a marker over a budget that small, rather than a silent cut).
    const rest = read.paged
      ? (read.text === "" || read.text.endsWith("\n") ? "" : "\n") +
        omissionMarker({ bytes: end - read.end, hint: hint(output.lineAt(read.end)) })
      : "";
    return {
      output: dropped + read.text + rest,
      truncated: gone > 0 || read.omitted !== undefined || read.paged === true,
      ...notice,
    };
  }

  /** What the terminal is: id, process, command, directory, times, state, size. */
  info(): TerminalInfo {
    const activity = this.activity();
    return {
      terminalId: this.id,
      pid: this.pid,
      command: this.command,
      ...activity,
      created: new Date(this.created).toISOString(),
      lastActivity: new Date(this.lastActivity).toISOString(),
      status: this.running ? "active" : "exited",
      size: { cols: this.cols, rows: this.rows },
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
      ...(this.sandbox ? { sandbox: this.sandbox } : {}),
    };
  }

  /** The sandbox it runs in, if any. */
  get sandbox(): SandboxInfo | undefined {
    return this.launcher.sandboxOf(this.#child);
  }

  /** What the terminal is doing now (see {@link TerminalActivity}). */
  activity(): TerminalActivity {
    const shell = this.#shell;
    const state = this.#state();
    const command = shell?.command;
    return {
      state,
      running: (state === "running" || state === "input") && command
        ? {
          command: command.text,
          startedAt: new Date(command.since).toISOString(),
          durationMs: Math.max(0, Date.now() - command.since),
        }
        : null,
      cwd: shell?.cwd ?? this.cwd,
      lastExitCode: shell?.lastExitCode ?? null,
      shellIntegration: !shell ? "none" : shell.promptEnd >= 0 ? "active" : "starting",
    };
  }

  #state(): TerminalState {
    if (!this.running) return "exited";
    if (this.#shell?.atPrompt) return "prompt";
    // At its continuation prompt the shell reads the rest of the line.
    if (this.#shell?.readsOn) return "input";
    return this.#readingInput() ? "input" : "running";
  }

  /**
   * Whether the foreground program is blocked reading the terminal, and not merely still
   * blocked in the read that the last write is about to wake (the thread has not run since).
   * A write that does not wake it (part of a line, in line mode) leaves it waiting.
   */
  #readingInput(): boolean {
    const reader = this.#child.terminalReader();
    if (!reader) return false;
    const before = this.#lastWrite;
    return !(
      before?.wakes && before.reader && before.reader.tid === reader.tid &&
      before.reader.switches === reader.switches
    );
  }

  /** The line an incremental read goes on from (a growing last line is read again). */
  get nextReadFrom(): number {
    return this.#output.settledLines(!this.running);
  }

  /** How much output there is, and how much is kept. */
  stats(): TerminalStats {
    const output = this.#output;
    return {
      terminalId: this.id,
      totalLines: output.lineCount,
      totalBytes: output.end,
      estimatedTokens: estimateTokens(output.end - output.start),
      bufferSize: output.lineCount - output.firstLine,
      oldestLine: output.firstLine,
      newestLine: Math.max(0, output.lineCount - 1),
      isActive: this.running,
      ...this.activity(),
    };
  }

  /**
   * Renders what a person would see now (the emulator fed within its time budget; requests
   * made while one waits to start share it): the slow part of a screen read, so a front end
   * does it before the read's answer turn, and output reads of other terminals do not wait on it.
   */
  renderScreen(): Promise<ScreenView> {
    this.touch();
    return this.#output.screen(this.cols, this.rows).render();
  }

  /**
   * What a person would see now, within `budget` bytes of text as JSON (the top rows first;
   * the rows past it are left out, with a marker): by default, the answer size limit's.
   */
  async screen(budget = this.#answerBytes - 200): Promise<ScreenRead> {
    return cutScreen(await this.renderScreen(), budget);
  }

  /**
   * A rendered screen ({@link renderScreen}) as a read's answer (`mode` `screen`): within
   * `maxBytes` (default 16 KiB, at most the answer limit), the rows shown and left out (blank
   * rows at the bottom are not shown), and the screen's own facts (size, cursor, alternate
   * screen) apart. A screen has no lines to page through: what a request sets of `since`,
   * `headLines`, `tailLines`, `maxLines` and `raw` is left unused, and the answer says so.
   */
  screenRead(
    view: ScreenView,
    request: Omit<TerminalReadRequest, "mode"> = {},
  ): TerminalScreenRead {
    const budget = this.#budget(request.maxBytes);
    const { text, truncated, rowsShown, ...screen } = cutScreen(view, budget.value);
    const unused = SCREEN_UNUSED.filter((field) => request[field] !== undefined);
    const notices = [
      ...(budget.clamped ? [maxBytesNotice(budget.clamped)] : []),
      ...(unused.length
        ? [`mode screen shows the screen as it is: ${unused.join(", ")} unused`]
        : []),
    ];
    const output = this.#output;
    return {
      output: text,
      totalLines: output.lineCount,
      nextReadFrom: this.nextReadFrom,
      hasMore: false,
      truncated,
      stats: {
        totalBytes: output.end,
        estimatedTokens: estimateTokens(text.length),
        linesShown: rowsShown,
        linesOmitted: screen.rows - rowsShown,
      },
      screen,
      ...(notices.length ? { notice: notices.join("; ") } : {}),
      ...(this.exitStatus ? { exitStatus: this.exitStatus } : {}),
    };
  }

  /**
   * Checks that this terminal can answer a wait's `prompt` and `input` conditions: a prompt
   * needs shell integration, input a platform that can tell (Linux). Throws naming the field.
   */
  checkWaitConditions(request: { prompt?: boolean; input?: boolean }): void {
    if (request.prompt && !this.#shell) {
      throw new EngineError(
        "invalid_input",
        `terminal ${this.id} runs ${this.command} without shell integration, so its prompt ` +
          "cannot be told from other output: wait for a pattern or idleMs instead",
        "prompt",
      );
    }
    if (request.input && this.running && this.#child.terminalReader() === undefined) {
      throw new EngineError(
        "invalid_input",
        `whether a program waits for input can be told on Linux only (this is ${Deno.build.os}): ` +
          "wait for a pattern or idleMs instead",
        "input",
      );
    }
  }

  /**
   * Where a wait looks: from line `since`, or the answer to the last write (after its echo),
   * or the start. The one place this rule lives.
   *
   * A line typed while the shell shows no prompt (before its first; after a command ended and
   * before the next, while its prompt hooks run) is read at the next prompt: the terminal echoed
   * it as it was typed, and the line editor shows it again after the prompt. Its answer starts
   * after that prompt and that second echo; until the prompt has come, the origin is awaiting it
   * (nothing matches, and that prompt is not the one a wait for a prompt wants), however long
   * the shell takes (a slow machine, startup files that run pyenv, prompt hooks that run `git
   * status` in a large repository), until the shell is known to show none: it replaced itself
   * with a program started without its nonce (a startup file's `exec sh`; see
   * {@link #integrationGone}). Then its waits look at the echo alone, as without integration.
   * Before, a wait right after `terminal_create` matched the line as typed, and a wait for the
   * prompt answered at the prompt the command was about to run at.
   */
  #waitOrigin(since: number | undefined): WaitOrigin {
    if (since !== undefined) return { from: this.#output.lineStart(since) };
    const input = this.#lastInput;
    if (!input) return { from: 0 };
    const before = input.beforePrompt;
    const from = before?.readAt ?? input.offset;
    const awaiting = before !== undefined && before.readAt === undefined &&
      !this.#integrationGone();
    return {
      from,
      echo: this.#output.echo(from, input.text),
      ...(awaiting ? { awaitingPrompt: true } : {}),
    };
  }

  /**
   * The shell has replaced itself (exec) with a program started without the terminal's nonce,
   * which sends no marks: known on Linux (see ChildProcess.startedWith), never assumed.
   */
  #integrationGone(): boolean {
    return this.#nonce !== undefined && this.#child.startedWith(this.#nonce) === false;
  }

  /**
   * Starts watching: a snapshot of the screen (the emulator catches up first, within its time
   * budget) at an exact output offset; once {@link Watch.start} is called, `listener` gets the
   * output kept after that offset (and the resizes in it, in order), then every event as it
   * happens: nothing missed, nothing twice. With `historyBytes`, the output kept before the
   * snapshot comes too, so much that it and the snapshot hold at most `historyBytes`. (A viewer
   * is not the agent: watching is not activity that keeps an idle terminal.)
   */
  watch(listener: (event: TerminalEvent) => void, historyBytes = 0): Promise<Watch> {
    const output = this.#output;
    return output.screen(this.cols, this.rows).snapshot((snapshot) => {
      const screen = concatBytes([toFreshScreen(snapshot.cols), snapshot.data]);
      const history = historyBefore(output, snapshot.offset, historyBytes - screen.length);
      // Called at the moment of the snapshot: what is kept after it and what comes next meet here.
      const held: TerminalEvent[] = [];
      let at = snapshot.offset;
      const keptUntil = (end: number) => {
        for (; at < end; at += WATCH_PIECE_BYTES) {
          const piece = output.readBytes(at, Math.min(end, at + WATCH_PIECE_BYTES));
          if (piece.bytes.length > 0) held.push({ type: "output", data: piece.bytes });
        }
        at = end;
      };
      for (const { offset, cols, rows } of snapshot.resizes) {
        keptUntil(offset);
        held.push({ type: "resize", cols, rows });
      }
      keptUntil(output.end);
      let waiting: TerminalEvent[] | undefined = held;
      const stop = this.events.add((event) => waiting ? waiting.push(event) : listener(event));
      return {
        history,
        snapshot: screen,
        cols: snapshot.cols,
        rows: snapshot.rows,
        offset: snapshot.offset,
        start() {
          const events = waiting ?? [];
          waiting = undefined;
          for (const event of events) listener(event);
        },
        stop() {
          stop();
          waiting = undefined;
        },
      };
    });
  }

  /** Waits for the first of the request's conditions. */
  wait(request: WaitRequest): Promise<WaitOutcome> {
    this.touch();
    this.checkWaitConditions(request);
    let origin = this.#waitOrigin(request.since);
    let from = origin.from;
    const pattern = request.pattern;
    let scanner = pattern ? this.#output.scan(pattern, from) : undefined;
    /** Called once the origin has settled (see `settle`). */
    let onSettled = () => {};
    /**
     * The origin once the prompt it waited for has come, or the shell is known to show none
     * (see `#waitOrigin`): looked at again on each change of state, and as output is matched.
     */
    const settle = (): WaitOrigin => {
      if (!origin.awaitingPrompt) return origin;
      const next = this.#waitOrigin(request.since);
      if (next.awaitingPrompt) return origin;
      origin = next;
      from = next.from;
      scanner?.cancel();
      scanner = pattern ? this.#output.scan(pattern, from) : undefined;
      onSettled();
      return origin;
    };
    /** The echo's end once known: matching (and the answer) start there. */
    const afterEcho = (): EchoLocation | undefined => {
      const where = settle().echo?.locate();
      if (where?.state === "found" && where.start !== from) {
        from = where.start;
        scanner?.cancel();
        scanner = pattern ? this.#output.scan(pattern, from) : undefined;
      }
      return where;
    };
    const shell = this.#shell;
    /** The condition about the shell or the program that holds now, if one asked for does. */
    const stateCondition = (): "prompt" | "input" | undefined => {
      // A prompt shown after the write (or `since`): never the one a command was typed at.
      const { awaitingPrompt, from: start } = settle();
      if (request.prompt && !awaitingPrompt && shell?.atPrompt && shell.promptEnd > start) {
        return "prompt";
      }
      if (request.input && this.running && !shell?.atPrompt && this.#readingInput()) {
        return "input";
      }
      return undefined;
    };
    return new Promise((resolve) => {
      let done = false;
      let checkTimer: ReturnType<typeof setTimeout> | undefined;
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      let inputTimer: ReturnType<typeof setTimeout> | undefined;
      const timers: ReturnType<typeof setTimeout>[] = [];
      let stopListening = () => {};
      const finish = (condition: WaitOutcome["condition"], match?: PatternMatch) => {
        if (done) return;
        done = true;
        for (const timer of [...timers, checkTimer, idleTimer, inputTimer]) clearTimeout(timer);
        if (!match) afterEcho();
        scanner?.cancel();
        stopListening();
        request.signal?.removeEventListener("abort", onAbort);
        this.touch();
        resolve({ condition, from, match, skippedBytes: scanner?.skipped ?? 0 });
      };
      /** Matches the new output; true when it matched (and the wait is over). */
      const check = async (final: boolean): Promise<boolean> => {
        if (!scanner || done) return false;
        const echo = afterEcho();
        // Typed before the prompt it is read at, not read yet: nothing after it is its answer yet.
        if (origin.awaitingPrompt && !final) return false;
        // The echo is arriving: match once it has (the output that completes it will come).
        if (echo?.state === "pending" && !final) return false;
        // Not echoed yet: match what is here, never the echo arriving while matching yields.
        const until = echo?.state === "unseen" ? this.#output.end : Infinity;
        const match = await scanner.scan(final, until);
        if (match) finish("pattern", match);
        return match !== undefined;
      };
      const armIdle = () => {
        // Quiet before the line typed early was even read is no answer to it.
        if (request.idleMs === undefined || origin.awaitingPrompt) return;
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => finish("idle"), request.idleMs);
      };
      const onExit = () => check(true).then((matched) => matched || finish("exit"));
      const onAbort = () => finish("cancelled");
      const checkState = () => {
        const condition = stateCondition();
        if (condition) finish(condition);
      };
      if (request.signal?.aborted) return finish("cancelled");
      request.signal?.addEventListener("abort", onAbort, { once: true });
      timers.push(setTimeout(() => finish("timeout"), request.timeoutMs));
      onSettled = armIdle;
      // A program blocks to read without a word: it is looked at every so often, and soon after
      // each output (a prompt is printed, then read).
      const poll = request.input ? setInterval(checkState, INPUT_POLL_MS) : undefined;
      armIdle();
      const stopEvents = this.events.add((event) => {
        if (event.type === "exit") {
          onExit();
          return;
        }
        if (event.type === "state") {
          checkState();
          return;
        }
        if (event.type !== "output") return;
        if (request.input) {
          inputTimer ??= setTimeout(() => {
            inputTimer = undefined;
            checkState();
          }, 10);
        }
        armIdle();
        checkTimer ??= setTimeout(() => {
          checkTimer = undefined;
          check(false);
        }, CHECK_INTERVAL_MS);
      });
      stopListening = () => {
        clearInterval(poll);
        stopEvents();
      };
      // What arrived before the wait counts too; an exit before it ends it at once.
      if (!this.running) onExit();
      else {
        checkState();
        check(false);
      }
    });
  }

  /**
   * Runs a command line in the shell and waits (at most `timeoutMs`) until the shell is back at
   * its prompt: the command's output (from its output-start mark, or the end of its echo, to
   * its end mark: not the echo, not the prompt), its exit code and the cwd after it. On timeout
   * it answers what arrived, and the command keeps running (a wait with `prompt` finishes it).
   * Needs shell integration, the shell at its prompt with nothing typed, and a command of one
   * line. Throws {@link EngineError} naming what is wrong.
   */
  async run(
    command: string,
    timeoutMs: number,
    options: { signal?: AbortSignal; via?: FrontEnd; maxBytes?: number } = {},
  ): Promise<RunOutcome> {
    const started = Date.now();
    const shell = this.#shell;
    if (!shell) {
      throw new EngineError(
        "invalid_input",
        `terminal ${this.id} runs ${this.command} without shell integration (it is started for ` +
          "bash, zsh, fish, sh, PowerShell and cmd shells opened without a command): use " +
          "terminal_write and terminal_wait",
        "terminalId",
      );
    }
    // deno-lint-ignore no-control-regex -- a command line holds no control characters
    if (/[\x00-\x1f\x7f]/.test(command) || command.trim() === "") {
      throw new EngineError(
        "invalid_input",
        "must be one line that is not blank, without control characters (line breaks, tabs, " +
          "escapes): chain commands with ; or &&, or type anything else with terminal_write",
        "command",
      );
    }
    this.#assertRunning();
    if (this.#integrationGone()) {
      throw new EngineError(
        "invalid_input",
        `terminal ${this.id}'s shell replaced itself with another program (exec, in its ` +
          "startup files perhaps), which does not report its prompt or commands: use " +
          "terminal_write and terminal_wait",
        "terminalId",
      );
    }
    if (shell.promptEnd < 0) {
      // Just opened: its first prompt is on its way.
      const first = await this.wait({ prompt: true, since: 0, timeoutMs, signal: options.signal });
      if (first.condition !== "prompt") {
        if (first.condition === "exit" || first.condition === "cancelled") {
          return this.#runOutcome(first.condition, this.#output.end, started, options.maxBytes);
        }
        throw new EngineError(
          "failed",
          `the shell of terminal ${this.id} showed no prompt within ${timeoutMs} ms (its ` +
            "integration did not start, or its startup files are still running): see terminal_read",
        );
      }
    }
    const left = () => Math.max(0, timeoutMs - (Date.now() - started));
    const stopped = () => {
      if (!options.signal?.aborted && this.running) return undefined;
      const condition = this.running ? "cancelled" : "exit";
      return this.#runOutcome(condition, this.#output.end, started, options.maxBytes);
    };
    // Ctrl+C typed, and no prompt shown since: the prompt it brings is on its way (a run typed
    // before it is read by the line editor the interruption tears down, or answered by that
    // prompt). At a line editor that always draws one (nothing ran), it is waited for as long as
    // the run may wait; a command it reached may ignore it, and is given a moment to end.
    const interrupt = this.#interrupt;
    if (interrupt && shell.promptEnd <= interrupt.offset) {
      const sure = this.#promptOnInterrupt && !interrupt.commandRan;
      await this.#until(
        () => shell.promptEnd > interrupt.offset,
        sure ? left() : Math.min(left(), interrupt.at + INTERRUPT_GRACE_MS - Date.now()),
        options.signal,
      );
      const outcome = stopped();
      if (outcome) return outcome;
      if (sure && shell.promptEnd <= interrupt.offset) {
        throw new EngineError(
          "busy",
          `terminal ${this.id} was sent Ctrl+C and its shell has shown no prompt since ` +
            `(${timeoutMs} ms): wait for it (terminal_wait with prompt), or press Enter ` +
            "(terminal_write) for a new one",
        );
      }
    }
    // Its prompt on its way: whether a line typed ahead waits to be read first is said before it
    // (right after the end mark, by the same hook).
    if (shell.waitingReportDue) {
      await this.#until(() => !shell.waitingReportDue, left(), options.signal);
      const outcome = stopped();
      if (outcome) return outcome;
      if (shell.waitingReportDue) {
        throw new EngineError(
          "busy",
          `terminal ${this.id}'s shell ended a command and has not said yet (${timeoutMs} ms) ` +
            "whether a line typed ahead waits: wait for its prompt (terminal_wait with prompt)",
        );
      }
    }
    if (shell.readsOn) {
      throw new EngineError(
        "busy",
        `terminal ${this.id} shows its shell's continuation prompt: the line entered before is ` +
          "not a whole command yet (an unclosed quote, a trailing |, a here-document), and the " +
          "shell reads on: finish it (terminal_write), or drop it (ctrl_c)",
      );
    }
    // A line written before (by terminal_write, or typed ahead of a prompt) comes first.
    const entered = shell.entered;
    if (entered !== undefined && shell.command === undefined) {
      throw new EngineError(
        "busy",
        `terminal ${this.id} has a line entered that its shell has not started yet ` +
          (entered === null
            ? "(input typed while a command ran, which it reads now; part of a line, perhaps): " +
              "drop it (ctrl_c), or wait for it (terminal_wait with prompt)"
            : `(${JSON.stringify(entered.slice(0, 100))}): wait for it (terminal_wait with ` +
              "prompt), or drop it (ctrl_c)"),
      );
    }
    // A command that just ended, its prompt on its way: the line is read at that prompt, and the
    // wait after it looks past it (see #waitOrigin).
    if (!shell.atPrompt && !shell.promptPending) {
      const running = shell.command;
      throw new EngineError(
        "busy",
        `terminal ${this.id} is running ${running?.text ?? "a command"} (for ` +
          `${Math.round((Date.now() - (running?.since ?? started)) / 1000)} s): wait for it ` +
          "(terminal_wait with prompt), answer it (terminal_write), or interrupt it (ctrl_c)",
      );
    }
    if (shell.typedMaybe === "hidden" && shell.atPrompt) {
      throw new EngineError(
        "busy",
        `terminal ${this.id} may hold keys typed while a command ran (keys a line editor acts ` +
          "on without a sign, such as Escape, or with no line editor to show them): clear them " +
          "(ctrl_c), or finish the line (terminal_write)",
      );
    }
    if (shell.typedMaybe === "visible" && shell.atPrompt) {
      // Part of a line typed while the command before ran (the terminal in line mode): it waits
      // in the terminal for whoever reads next, the line editor at this prompt, unless that
      // command took it. Its echo after the prompt would tell, but comes when the line editor
      // gets to it: no moment says it will not come. (Ctrl+C, or Enter, settles it.)
      const shown = this.waitOutput(shell.promptEnd, 1024, this.#output.end).output.trim();
      throw new EngineError(
        "busy",
        `terminal ${this.id} may have text typed at its prompt and not entered (part of a line ` +
          "typed while a command ran, which its line editor reads at the prompt unless that " +
          "command took it" +
          (shown === "" ? "" : `; the terminal shows ${JSON.stringify(shown.slice(0, 100))}`) +
          "): finish it (terminal_write), or clear it (ctrl_c)",
      );
    }
    if (shell.typed !== "") {
      throw new EngineError(
        "busy",
        `terminal ${this.id} has text typed at its prompt and not entered ` +
          `(${JSON.stringify(shell.typed.slice(0, 100))}): finish it, or clear it (ctrl_c)`,
      );
    }
    const from = this.#output.end;
    const wrap = this.#runWrapping;
    await this.write((wrap ? wrap.prefix + command : command) + "\r", options.via, "command");
    // The shell reads on from the line (an open quote or bracket, a trailing \ | or &&, a
    // here-document) and would wait for the rest for good: its continuation prompt says so.
    const readsOn = new AbortController();
    const stopWatching = this.events.add((event) => {
      if (event.type === "state" && shell.readsOn) readsOn.abort();
    });
    if (shell.readsOn) readsOn.abort();
    const outcome = await this.wait({
      prompt: true,
      timeoutMs: Math.max(1, left()),
      signal: options.signal ? AbortSignal.any([options.signal, readsOn.signal]) : readsOn.signal,
    }).finally(stopWatching);
    if (outcome.condition === "cancelled" && readsOn.signal.aborted && !options.signal?.aborted) {
      return await this.#dropContinued(left, options);
    }
    const condition = outcome.condition === "prompt"
      ? "done"
      : outcome.condition === "exit" || outcome.condition === "cancelled"
      ? outcome.condition
      : "timeout";
    const answer = this.#runOutcome(condition, from, started, options.maxBytes, outcome.from);
    if (condition !== "done" || wrap?.exitQuery === undefined) return answer;
    // cmd: the prompt ended the command, after the line break cmd writes before every prompt
    // (not the command's); its exit code is asked for now (see integration/cmd.ts).
    return {
      ...answer,
      output: answer.output.endsWith("\n") ? answer.output.slice(0, -1) : answer.output,
      exitCode: await this.#askExitCode(wrap.exitQuery, Math.max(1, left()), options),
    };
  }

  /**
   * cmd, at the prompt after a command: types `query`, whose output reports the exit code, and
   * waits for the prompt after it. Null when the shell holds something typed meanwhile (the
   * query would join it) or does not come back.
   */
  async #askExitCode(
    query: string,
    timeoutMs: number,
    options: { signal?: AbortSignal; via?: FrontEnd },
  ): Promise<number | null> {
    const shell = this.#shell!;
    if (!shell.atPrompt || shell.typed !== "" || shell.typedMaybe !== false) return null;
    const at = this.#output.end;
    await this.write(query + "\r", options.via, "command");
    const back = await this.wait({ prompt: true, timeoutMs, signal: options.signal });
    return back.condition === "prompt" ? shell.finishedAfter(at)?.exitCode ?? null : null;
  }

  /**
   * A run's line the shell reads on from (its continuation prompt showed): dropped with Ctrl+C
   * (or by the shell itself: fish), and refused naming `command` once the prompt that brings
   * has come, so that the next run finds the shell at it; if it did not come while the run could
   * wait, the refusal says so.
   */
  async #dropContinued(
    left: () => number,
    options: { signal?: AbortSignal; via?: FrontEnd },
  ): Promise<never> {
    const shell = this.#shell!;
    let offset = shell.readsOnAt;
    if (!this.#dropsContinuedRun) {
      // Ctrl+C is taken well once the line editor reads again: bash, interrupted while it still
      // drew its continuation prompt, drew it again and read on (where the platform can tell
      // who reads the terminal; elsewhere it is typed at once).
      if (this.#child.terminalReader() !== undefined) {
        await this.wait({ input: true, timeoutMs: Math.max(1, left()), signal: options.signal });
      }
      if (this.running) {
        await this.write("\x03", options.via);
        offset = this.#interrupt!.offset;
      }
    }
    await this.#until(() => shell.promptEnd > offset, left(), options.signal);
    const dropped = shell.promptEnd > offset;
    throw new EngineError(
      "invalid_input",
      "the shell read it as the start of a longer command and waits for the rest of it (an " +
        "unclosed quote or bracket, a trailing \\, | or &&, a here-document): nothing ran, and " +
        (dropped
          ? "the line was dropped. "
          : "the line was to be dropped (Ctrl+C), but the shell has shown no prompt since (see " +
            "terminal_read). ") +
        "Send the whole command on one line",
      "command",
    );
  }

  /**
   * Resolves once `done` holds (looked at on each change of state, output, or exit), or after
   * `ms`.
   */
  #until(done: () => boolean, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        stop();
        signal?.removeEventListener("abort", finish);
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      const stop = this.events.add((event) => {
        if (event.type === "exit" || (event.type !== "resize" && done())) finish();
      });
      signal?.addEventListener("abort", finish, { once: true });
      if (done() || signal?.aborted || !this.running) finish();
    });
  }

  /**
   * The answer of a run that typed its command at output offset `from`, read by the shell at
   * `readFrom` or later (typed ahead of a prompt, it is read after that prompt: the command
   * before it may have ended exactly at `from`).
   */
  #runOutcome(
    condition: RunOutcome["condition"],
    from: number,
    started: number,
    maxBytes: number | undefined,
    readFrom = from,
  ): RunOutcome {
    const shell = this.#shell!;
    const finished: FinishedCommand | undefined = condition === "done"
      ? shell.finishedAfter(readFrom)
      : undefined;
    const start = finished?.start ?? shell.outputStart() ?? this.#afterEcho(from);
    const { output, truncated, notice } = this.waitOutput(
      start,
      maxBytes,
      finished?.end ?? this.#output.end,
    );
    return {
      condition,
      output,
      truncated,
      ...(notice ? { notice } : {}),
      exitCode: condition === "exit"
        ? this.exitStatus?.exitCode ?? null
        : finished?.exitCode ?? null,
      cwd: finished ? finished.cwd ?? shell.cwd ?? null : null,
      durationMs: finished?.durationMs ?? Date.now() - started,
    };
  }

  /** After the first line feed from `offset` on (the echo of a typed line), if one came. */
  #afterEcho(offset: number): number {
    const next = this.#output.lineStart(this.#output.lineAt(offset) + 1);
    return next > offset && next <= this.#output.end ? next : offset;
  }

  /** Frees the screen and the kept output; the program must have ended. */
  dispose(): void {
    this.#output.release();
    this.recording.release();
  }

  #assertRunning(): void {
    if (!this.running) {
      throw new EngineError(
        "inactive",
        `terminal ${this.id} has exited (${describeExit(this.exitStatus!)})`,
      );
    }
  }
}

/** A terminal's description; times in ISO 8601. */
export interface TerminalInfo extends TerminalActivity {
  terminalId: string;
  pid: number;
  command: string;
  created: string;
  lastActivity: string;
  status: "active" | "exited";
  size: { cols: number; rows: number };
  exitStatus?: ExitStatus;
  /** The sandbox it runs in. */
  sandbox?: SandboxInfo;
}

/** A line read, with statistics. */
export interface TerminalRead {
  output: string;
  totalLines: number;
  nextReadFrom: number;
  hasMore: boolean;
  truncated: boolean;
  stats: { totalBytes: number; estimatedTokens: number; linesShown: number; linesOmitted: number };
  /** A limit the server applied to the request (`maxBytes` lowered to the answer limit). */
  notice?: string;
  exitStatus?: ExitStatus;
}

/** {@link Terminal.readScreen}'s answer. */
export interface TerminalScreenRead extends TerminalRead {
  screen: Omit<ScreenRead, "text" | "truncated" | "rowsShown">;
}

/** A terminal's output statistics, and what it is doing. */
export interface TerminalStats extends TerminalActivity {
  terminalId: string;
  totalLines: number;
  totalBytes: number;
  estimatedTokens: number;
  /** Lines kept. */
  bufferSize: number;
  oldestLine: number;
  newestLine: number;
  isActive: boolean;
}

export { describeExit };

/** What an answer says when a `maxBytes` was over the answer limit. */
function maxBytesNotice(clamped: Clamped): string {
  return `maxBytes ${clamped.requested} lowered to the server's ${clamped.limit} ` +
    "(WINTERM_MAX_ANSWER_BYTES)";
}

/** Creates, finds and ends terminals. */
export class TerminalService {
  #terminals = new Map<string, Terminal>();
  /** Terminals being started (their program is being spawned): they count against the limit. */
  #starting = 0;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  readonly maxTerminals: number;
  readonly idleMs: number;
  readonly maxLines: number;
  readonly maxBytes: number;
  readonly killGraceMs: number;
  readonly writeTimeoutMs: number;
  readonly launcher: Launcher;
  readonly answerBytes: number;
  readonly recordingMaxBytes: number;
  readonly #budget: OutputBudget;
  readonly #scripts: ShellScripts;

  constructor(options: TerminalServiceOptions = {}) {
    this.maxTerminals = options.maxTerminals ?? 64;
    this.idleMs = options.idleMs ?? 24 * 60 * 60 * 1000;
    this.maxLines = options.maxLines ?? 10_000;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.launcher = options.launcher ?? new Launcher();
    this.answerBytes = options.answerBytes ?? 2 * 1024 * 1024;
    this.#budget = options.budget ?? new OutputBudget(256 * 1024 * 1024);
    this.#scripts = options.shellScripts ?? new ShellScripts();
    this.recordingMaxBytes = options.recordingMaxBytes ?? DEFAULT_RECORDING_MAX_BYTES;
  }

  /** Starts a terminal. Throws {@link EngineError} naming the input at fault. */
  async create(request: CreateTerminalRequest): Promise<Terminal> {
    // Before any check: from here on to the launch nothing waits (see CommandService.run).
    await prepareEncodings(request.encoding);
    this.launcher.checkOpen();
    const open = this.#terminals.size + this.#starting;
    if (open >= this.maxTerminals) {
      throw new EngineError(
        "limit",
        `${open} terminals are open, the most allowed (WINTERM_MAX_TERMINALS); ` +
          "release some first (close the ones no longer needed)",
      );
    }
    this.#starting++;
    try {
      return await this.#create(request);
    } finally {
      this.#starting--;
    }
  }

  async #create(request: CreateTerminalRequest): Promise<Terminal> {
    const cwd = resolveDirectory(request.cwd, "cwd");
    const env = childEnvironment(request.env, { ...pagerEnvironment(), ...ENV_FOR_TERMINALS });
    const encoding = requestedEncoding(request.encoding);
    const nonce = newNonce();
    const invocation = buildTerminalInvocation({
      ...request,
      codePage: encoding?.codePage,
      integration: request.shellIntegration === false ? undefined : (shell) => {
        try {
          return shellIntegration(shell, nonce, env, this.#scripts);
        } catch (error) {
          // No place to write its files: the shell starts plain (and says so: `none`).
          log.warn("shell integration unavailable", { shell, error });
          return undefined;
        }
      },
    }, { cwd, env });
    Object.assign(env, invocation.env);
    for (const name of invocation.integration?.unset ?? []) delete env[name];
    checkTerminalEncoding(encoding, true, invocation.codePage);
    const cols = request.cols ?? 80, rows = request.rows ?? 24;
    let id: string;
    do id = `term_${crypto.randomUUID().slice(0, 8)}`; while (this.#terminals.has(id));
    const context: LaunchContext = { via: request.via ?? "internal", kind: "terminal", id };
    const child = await this.launcher.launch(
      invocation,
      {
        cwd,
        env,
        envOverrides: request.env ?? {},
        mode: "pty",
        cols,
        rows,
        signal: request.signal,
        sandbox: request.sandbox,
        // A sandboxed shell reads its integration files whatever is hidden.
        readable: invocation.integration ? this.#scripts.location() : undefined,
        allowAnsiMismatch: request.allowAnsiMismatch,
      },
      {
        program: request.command === undefined ? "shell" : "command",
        cwd: "cwd",
        env: "env",
        ansiOptIn: "allowAnsiMismatch",
      },
      context,
    );
    const terminal = new Terminal(
      context,
      this.launcher,
      child,
      invocation.display,
      cwd,
      cols,
      rows,
      request.outputByteLimit,
      {
        maxLines: this.maxLines,
        maxBytes: this.maxBytes,
        answerBytes: this.answerBytes,
        budget: this.#budget,
        recordingMaxBytes: this.recordingMaxBytes,
      },
      new ChildCodec(child, encoding, invocation.codePage),
      this.writeTimeoutMs,
      invocation.integration
        ? {
          nonce,
          runWrapping: invocation.integration.runWrapping,
          marksOutputStart: invocation.integration.marksOutputStart,
          promptOnInterrupt: invocation.integration.promptOnInterrupt,
          dropsContinuedRun: invocation.integration.dropsContinuedRun,
        }
        : undefined,
    );
    this.#terminals.set(id, terminal);
    this.#startSweeper();
    log.info("terminal created", { terminalId: id, pid: child.pid, command: invocation.display });
    return terminal;
  }

  /** The terminal with this id; throws a not-found error naming `terminalId`. */
  get(id: string): Terminal {
    const terminal = this.#terminals.get(id);
    if (!terminal) {
      throw new EngineError(
        "not_found",
        `no terminal ${id} (never created, released, or expired)`,
        "terminalId",
      );
    }
    return terminal;
  }

  /** Every terminal, oldest first. */
  list(): Terminal[] {
    return [...this.#terminals.values()];
  }

  /** Kills the terminal if it runs, frees it; its id is invalid afterwards. */
  async release(id: string, via: FrontEnd = "internal"): Promise<ExitStatus> {
    const terminal = this.get(id);
    this.#terminals.delete(id);
    const status = await terminal.stop(this.killGraceMs, via);
    terminal.dispose();
    log.info("terminal released", { terminalId: id });
    return status;
  }

  /** Stops every terminal (grace `graceMs`) and frees them all. */
  async shutdown(graceMs: number = this.killGraceMs): Promise<void> {
    clearInterval(this.#sweeper);
    const all = [...this.#terminals.values()];
    this.#terminals.clear();
    await Promise.all(all.map((terminal) => terminal.stop(graceMs).then(() => terminal.dispose())));
    this.#scripts.remove();
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    const sweeper = setInterval(
      () => this.#sweep(),
      Math.min(60_000, Math.max(1000, this.idleMs / 4)),
    );
    // The sweep must not keep the server alive on its own.
    Deno.unrefTimer(sweeper);
    this.#sweeper = sweeper;
  }

  #sweep(): void {
    const oldest = Date.now() - this.idleMs;
    for (const terminal of this.#terminals.values()) {
      if (terminal.lastActivity < oldest) {
        log.info("releasing an idle terminal", { terminalId: terminal.id });
        this.release(terminal.id).catch((error) => log.error("release failed", { error }));
      }
    }
  }
}
