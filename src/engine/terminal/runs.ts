/**
 * Runs through shell integration: a command line typed at the shell's prompt, waited for until
 * the shell is back at its prompt, answered with its output, exit code and cwd; and what must
 * hold before one is typed (the shell at its prompt, nothing typed, no Ctrl+C still landing).
 *
 * @module
 */
import type { FrontEnd } from "../launching/audit.ts";
import { EngineError } from "../errors.ts";
import { inSlices } from "../slices.ts";
import type { FinishedCommand, ShellTracker } from "./shell_state.ts";
import type { Reads } from "./reads.ts";
import type { IntegrationTraits, Session } from "./session.ts";
import type { Typing } from "./typing.ts";
import type { Waits } from "./waits.ts";

/** How {@link Runs.run} ended, and what it found. */
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

/** What a run is asked with besides its command line. */
export interface RunOptions {
  signal?: AbortSignal;
  via?: FrontEnd;
  maxBytes?: number;
}

/**
 * How long a run sent right after Ctrl+C waits for the shell to report the end of what it
 * interrupted, rather than being refused as busy.
 */
const INTERRUPT_GRACE_MS = 2_000;

/** A terminal's runs through shell integration. */
export class Runs {
  constructor(
    private readonly session: Session,
    private readonly typing: Typing,
    private readonly waits: Waits,
    private readonly reads: Reads,
    /** What the shell's integration says about it (shells started with it). */
    private readonly traits: IntegrationTraits | undefined,
  ) {}

  /**
   * Runs a command line in the shell and waits (at most `timeoutMs`) until the shell is back at
   * its prompt: the command's output (from its output-start mark, or the end of its echo, to
   * its end mark: not the echo, not the prompt), its exit code and the cwd after it. On timeout
   * it answers what arrived, and the command keeps running (a wait with `prompt` finishes it).
   * Needs shell integration, the shell at its prompt with nothing typed, and a command of one
   * line. Throws {@link EngineError} naming what is wrong.
   */
  async run(command: string, timeoutMs: number, options: RunOptions = {}): Promise<RunOutcome> {
    const started = Date.now();
    const shell = this.#runnable(command);
    if (shell.promptEnd < 0) {
      // Just opened: its first prompt is on its way.
      const first = await this.waits.wait({
        prompt: true,
        since: 0,
        timeoutMs,
        signal: options.signal,
      });
      if (first.condition !== "prompt") {
        if (first.condition === "exit" || first.condition === "cancelled") {
          return this.#runOutcome(
            first.condition,
            this.session.output.end,
            started,
            options.maxBytes,
          );
        }
        throw new EngineError(
          "failed",
          `the shell of terminal ${this.session.id} showed no prompt within ${timeoutMs} ms (its ` +
            "integration did not start, or its startup files are still running)",
          { hint: { code: "see-output", terminalId: this.session.id } },
        );
      }
    }
    const left = () => Math.max(0, timeoutMs - (Date.now() - started));
    const before = await this.#settled(shell, timeoutMs, left, started, options);
    if (before) return before;
    this.#checkReady(shell, started);
    const from = this.session.output.end;
    const wrap = this.traits?.runWrapping;
    await this.typing.write(
      (wrap ? wrap.prefix + command : command) + "\r",
      options.via,
      "command",
    );
    // The shell reads on from the line (an open quote or bracket, a trailing \ | or &&, a
    // here-document) and would wait for the rest for good: its continuation prompt says so.
    const readsOn = new AbortController();
    const stopWatching = this.session.events.add((event) => {
      if (event.type === "state" && shell.readsOn) readsOn.abort();
    });
    if (shell.readsOn) readsOn.abort();
    const outcome = await this.waits.wait({
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
    const answer = await this.#runOutcome(
      condition,
      from,
      started,
      options.maxBytes,
      outcome.from,
    );
    if (condition !== "done" || wrap?.exitQuery === undefined) return answer;
    // cmd: the prompt ended the command, after the line break cmd writes before every prompt
    // (not the command's); its exit code is asked for now (see integration/cmd.ts).
    return {
      ...answer,
      output: answer.output.endsWith("\n") ? answer.output.slice(0, -1) : answer.output,
      exitCode: await this.#askExitCode(wrap.exitQuery, Math.max(1, left()), options),
    };
  }

  /** The shell, if a run can be typed into it at all; else throws naming what is wrong. */
  #runnable(command: string): ShellTracker {
    const shell = this.session.shell;
    if (!shell) {
      throw new EngineError(
        "invalid_input",
        `terminal ${this.session.id} runs ${this.session.command} without shell integration (it is started for ` +
          "bash, zsh, fish, sh, PowerShell and cmd shells opened without a command)",
        { field: "terminalId", hint: { code: "type-and-read", terminalId: this.session.id } },
      );
    }
    // deno-lint-ignore no-control-regex -- a command line holds no control characters
    if (/[\x00-\x1f\x7f]/.test(command) || command.trim() === "") {
      throw new EngineError(
        "invalid_input",
        "must be one line that is not blank, without control characters (line breaks, tabs, " +
          "escapes)",
        { field: "command", hint: { code: "one-line", terminalId: this.session.id } },
      );
    }
    this.session.assertRunning();
    if (this.session.integrationGone()) {
      throw new EngineError(
        "invalid_input",
        `terminal ${this.session.id}'s shell replaced itself with another program (exec, in its ` +
          "startup files perhaps), which does not report its prompt or commands",
        { field: "terminalId", hint: { code: "type-and-read", terminalId: this.session.id } },
      );
    }
    return shell;
  }

  /**
   * Waits (as long as the run may) for what is on its way to land: the prompt a Ctrl+C brings,
   * the shell's word on a line typed ahead. The run's answer if it was cancelled or the shell
   * exited meanwhile; throws if what it waited for did not come.
   */
  async #settled(
    shell: ShellTracker,
    timeoutMs: number,
    left: () => number,
    started: number,
    options: RunOptions,
  ): Promise<RunOutcome | undefined> {
    const stopped = () => {
      if (!options.signal?.aborted && this.session.running) return undefined;
      const condition = this.session.running ? "cancelled" : "exit";
      return this.#runOutcome(condition, this.session.output.end, started, options.maxBytes);
    };
    // Ctrl+C typed, and no prompt shown since: the prompt it brings is on its way (a run typed
    // before it is read by the line editor the interruption tears down, or answered by that
    // prompt). At a line editor that always draws one (nothing ran), it is waited for as long as
    // the run may wait; a command it reached may ignore it, and is given a moment to end.
    const interrupt = this.typing.interrupt;
    if (interrupt && shell.promptEnd <= interrupt.offset) {
      const sure = this.traits?.promptOnInterrupt && !interrupt.commandRan;
      await this.session.until(
        () => shell.promptEnd > interrupt.offset,
        sure ? left() : Math.min(left(), interrupt.at + INTERRUPT_GRACE_MS - Date.now()),
        options.signal,
      );
      const outcome = stopped();
      if (outcome) return outcome;
      if (sure && shell.promptEnd <= interrupt.offset) {
        throw new EngineError(
          "busy",
          `terminal ${this.session.id} was sent Ctrl+C and its shell has shown no prompt since ` +
            `(${timeoutMs} ms)`,
          { hint: { code: "wait-or-enter", terminalId: this.session.id } },
        );
      }
    }
    // Its prompt on its way: whether a line typed ahead waits to be read first is said before it
    // (right after the end mark, by the same hook).
    if (shell.waitingReportDue) {
      await this.session.until(() => !shell.waitingReportDue, left(), options.signal);
      const outcome = stopped();
      if (outcome) return outcome;
      if (shell.waitingReportDue) {
        throw new EngineError(
          "busy",
          `terminal ${this.session.id}'s shell ended a command and has not said yet (${timeoutMs} ms) ` +
            "whether a line typed ahead waits",
          { hint: { code: "wait-prompt", terminalId: this.session.id } },
        );
      }
    }
    return undefined;
  }

  /** Throws unless the shell is at its prompt with nothing typed or entered that comes first. */
  #checkReady(shell: ShellTracker, started: number): void {
    if (shell.readsOn) {
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} shows its shell's continuation prompt: the line entered before is ` +
          "not a whole command yet (an unclosed quote, a trailing |, a here-document), and the " +
          "shell reads on",
        { hint: { code: "finish-or-drop", terminalId: this.session.id } },
      );
    }
    // A line written before (by terminal_write, or typed ahead of a prompt) comes first.
    const entered = shell.entered;
    if (entered !== undefined && shell.command === undefined) {
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} has a line entered that its shell has not started yet ` +
          (entered === null
            ? "(input typed while a command ran, which it reads now; part of a line, perhaps)"
            : `(${JSON.stringify(entered.slice(0, 100))})`),
        { hint: { code: "wait-or-drop", terminalId: this.session.id } },
      );
    }
    // A command that just ended, its prompt on its way: the line is read at that prompt, and the
    // wait after it looks past it (see Waits.origin).
    if (!shell.atPrompt && !shell.promptPending) {
      const running = shell.command;
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} is running ${running?.text ?? "a command"} (for ` +
          `${Math.round((Date.now() - (running?.since ?? started)) / 1000)} s)`,
        { hint: { code: "wait-answer-or-interrupt", terminalId: this.session.id } },
      );
    }
    if (shell.typedMaybe === "hidden" && shell.atPrompt) {
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} may hold keys typed while a command ran (keys a line editor acts ` +
          "on without a sign, such as Escape, or with no line editor to show them)",
        { hint: { code: "clear-or-finish", terminalId: this.session.id } },
      );
    }
    if (shell.typedMaybe === "visible" && shell.atPrompt) {
      // Part of a line typed while the command before ran (the terminal in line mode): it waits
      // in the terminal for whoever reads next, the line editor at this prompt, unless that
      // command took it. Its echo after the prompt would tell, but comes when the line editor
      // gets to it: no moment says it will not come. (Ctrl+C, or Enter, settles it.)
      const shown = this.reads.waitOutput(shell.promptEnd, 1024, this.session.output.end).output
        .trim();
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} may have text typed at its prompt and not entered (part of a line ` +
          "typed while a command ran, which its line editor reads at the prompt unless that " +
          "command took it" +
          (shown === "" ? "" : `; the terminal shows ${JSON.stringify(shown.slice(0, 100))}`) +
          ")",
        { hint: { code: "finish-or-clear", terminalId: this.session.id } },
      );
    }
    if (shell.typed !== "") {
      throw new EngineError(
        "busy",
        `terminal ${this.session.id} has text typed at its prompt and not entered ` +
          `(${JSON.stringify(shell.typed.slice(0, 100))})`,
        { hint: { code: "finish-or-clear", terminalId: this.session.id } },
      );
    }
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
    const shell = this.session.shell!;
    if (!shell.atPrompt || shell.typed !== "" || shell.typedMaybe !== false) return null;
    const at = this.session.output.end;
    await this.typing.write(query + "\r", options.via, "command");
    const back = await this.waits.wait({ prompt: true, timeoutMs, signal: options.signal });
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
    const shell = this.session.shell!;
    let offset = shell.readsOnAt;
    if (!this.traits?.dropsContinuedRun) {
      // Ctrl+C is taken well once the line editor reads again: bash, interrupted while it still
      // drew its continuation prompt, drew it again and read on (where the platform can tell
      // who reads the terminal; elsewhere it is typed at once).
      if (this.session.child.terminalReader() !== undefined) {
        await this.waits.wait({
          input: true,
          timeoutMs: Math.max(1, left()),
          signal: options.signal,
        });
      }
      if (this.session.running) {
        await this.typing.write("\x03", options.via);
        offset = this.typing.interrupt!.offset;
      }
    }
    await this.session.until(() => shell.promptEnd > offset, left(), options.signal);
    const dropped = shell.promptEnd > offset;
    throw new EngineError(
      "invalid_input",
      "the shell read it as the start of a longer command and waits for the rest of it (an " +
        "unclosed quote or bracket, a trailing \\, | or &&, a here-document): nothing ran, and " +
        (dropped
          ? "the line was dropped. Send the whole command on one line"
          : "the line was to be dropped (Ctrl+C), but the shell has shown no prompt since. Send " +
            "the whole command on one line once it shows one"),
      {
        field: "command",
        ...(dropped ? {} : { hint: { code: "see-output", terminalId: this.session.id } }),
      },
    );
  }

  /**
   * The answer of a run that typed its command at output offset `from`, read by the shell at
   * `readFrom` or later (typed ahead of a prompt, it is read after that prompt: the command
   * before it may have ended exactly at `from`).
   */
  async #runOutcome(
    condition: RunOutcome["condition"],
    from: number,
    started: number,
    maxBytes: number | undefined,
    readFrom = from,
  ): Promise<RunOutcome> {
    const shell = this.session.shell!;
    const finished: FinishedCommand | undefined = condition === "done"
      ? shell.finishedAfter(readFrom)
      : undefined;
    const start = finished?.start ?? shell.outputStart() ?? this.session.afterEcho(from);
    const end = finished?.end ?? this.session.output.end;
    const state = {
      exitCode: condition === "exit"
        ? this.session.exitStatus?.exitCode ?? null
        : finished?.exitCode ?? null,
      cwd: finished ? finished.cwd ?? shell.cwd ?? null : null,
      durationMs: finished?.durationMs ?? Date.now() - started,
    };
    // Read in slices (slices.ts): megabytes of output edited in place held the event loop for a
    // run's answer as for a read's. In no answer turn: the first slice freezes the output now,
    // where waiting for a turn behind other callers' reads let the run's own output leave the
    // buffer first (the answer then said "no longer kept" instead of the command's lines).
    const { output, truncated, notice } = await inSlices(
      () => this.reads.waitOutputSteps(start, maxBytes, end),
    );
    return { condition, output, truncated, ...(notice ? { notice } : {}), ...state };
  }
}
