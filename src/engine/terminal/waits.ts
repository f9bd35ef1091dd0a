/**
 * Waiting on a terminal: for output that matches, a prompt, a program blocked reading, quiet,
 * or the exit, whichever comes first; and where a wait looks (its origin: the answer to the
 * last write, after its echo, or from a line asked for).
 *
 * @module
 */
import { EngineError } from "../errors.ts";
import type { EchoLocation, EchoSkip } from "../output/echo.ts";
import type { Pattern, PatternMatch } from "../output/patterns.ts";
import type { StreamOutput } from "../output/stream.ts";
import type { Session } from "./session.ts";
import type { Typing } from "./typing.ts";

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
  /** Offset the matched output starts from (see Reads.waitOutput). */
  from: number;
  match?: PatternMatch;
  /** Output skipped unmatched because it came faster than the pattern could be matched. */
  skippedBytes: number;
}

/** Where a wait looks (see {@link Waits.origin}). */
interface WaitOrigin {
  from: number;
  echo?: EchoSkip;
  /** The input waits for the prompt it is read at: `from` and `echo` are not final. */
  awaitingPrompt?: boolean;
}

/** Pattern checks run at most this often while output streams in. */
const CHECK_INTERVAL_MS = 25;
/** Looks at whether the program reads the terminal, while a wait for input runs, this often. */
const INPUT_POLL_MS = 50;

/** A terminal's waits. */
export class Waits {
  constructor(
    private readonly session: Session,
    private readonly typing: Typing,
  ) {}

  /**
   * Checks that this terminal can answer a wait's `prompt` and `input` conditions: a prompt
   * needs shell integration, input a platform that can tell (Linux). Throws naming the field.
   */
  checkConditions(request: { prompt?: boolean; input?: boolean }): void {
    const session = this.session;
    if (request.prompt && !session.shell) {
      throw new EngineError(
        "invalid_input",
        `terminal ${session.id} runs ${session.command} without shell integration, so its prompt ` +
          "cannot be told from other output: wait for a pattern or idleMs instead",
        "prompt",
      );
    }
    if (request.input && session.running && session.child.terminalReader() === undefined) {
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
   * Session.integrationGone). Then its waits look at the echo alone, as without integration.
   * Before, a wait right after `terminal_create` matched the line as typed, and a wait for the
   * prompt answered at the prompt the command was about to run at.
   */
  origin(since: number | undefined): WaitOrigin {
    const output = this.session.output;
    if (since !== undefined) return { from: output.lineStart(since) };
    const input = this.typing.lastInput;
    if (!input) return { from: 0 };
    const before = input.beforePrompt;
    const from = before?.readAt ?? input.offset;
    const awaiting = before !== undefined && before.readAt === undefined &&
      !this.session.integrationGone();
    return {
      from,
      // A line the shell reads at its next prompt is shown there by its line editor.
      echo: input.unechoed && !before ? undefined : output.echo(from, input.text),
      ...(awaiting ? { awaitingPrompt: true } : {}),
    };
  }

  /** Waits for the first of the request's conditions. */
  wait(request: WaitRequest): Promise<WaitOutcome> {
    const session = this.session;
    session.touch();
    this.checkConditions(request);
    const place = new WaitPlace(this, session, request);
    const shell = session.shell;
    /** The condition about the shell or the program that holds now, if one asked for does. */
    const stateCondition = (): "prompt" | "input" | undefined => {
      // A prompt shown after the write (or `since`): never the one a command was typed at.
      const { awaitingPrompt, from: start } = place.settle();
      if (request.prompt && !awaitingPrompt && shell?.atPrompt && shell.promptEnd > start) {
        return "prompt";
      }
      if (request.input && session.running && !shell?.atPrompt && this.typing.readingInput()) {
        return "input";
      }
      return undefined;
    };
    return new Promise((resolve) => {
      let done = false;
      const timers: ReturnType<typeof setTimeout>[] = [];
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      let stopListening = () => {};
      const finish = (condition: WaitOutcome["condition"], match?: PatternMatch) => {
        if (done) return;
        done = true;
        for (const timer of [...timers, idleTimer]) clearTimeout(timer);
        stopListening();
        request.signal?.removeEventListener("abort", onAbort);
        resolve(place.end(condition, match));
      };
      const check = async (final: boolean) => {
        if (done) return false;
        const match = await place.check(final);
        if (match) finish("pattern", match);
        return match !== undefined;
      };
      const armIdle = () => {
        // Quiet before the line typed early was even read is no answer to it. (An origin that
        // settles as the wait ends arms no timer.)
        if (done || request.idleMs === undefined || place.origin.awaitingPrompt) return;
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
      place.onSettled = armIdle;
      armIdle();
      stopListening = this.#listen(request, { onExit, checkState, armIdle, check });
      // What arrived before the wait counts too; an exit before it ends it at once.
      if (!session.running) onExit();
      else {
        checkState();
        check(false);
      }
    });
  }

  /**
   * A wait's listening: the terminal's events (exit, state, output) and, for `input`, a poll
   * (a program blocks to read without a word: it is looked at every so often, and soon after
   * each output: a prompt is printed, then read). Returns the function that stops it (and
   * clears the timers it set).
   */
  #listen(
    request: WaitRequest,
    on: {
      onExit(): void;
      checkState(): void;
      armIdle(): void;
      check(final: boolean): Promise<boolean>;
    },
  ): () => void {
    let checkTimer: ReturnType<typeof setTimeout> | undefined;
    let inputTimer: ReturnType<typeof setTimeout> | undefined;
    const poll = request.input ? setInterval(on.checkState, INPUT_POLL_MS) : undefined;
    const stopEvents = this.session.events.add((event) => {
      if (event.type === "exit") return on.onExit();
      if (event.type === "state") return on.checkState();
      if (event.type !== "output") return;
      if (request.input) {
        inputTimer ??= setTimeout(() => {
          inputTimer = undefined;
          on.checkState();
        }, 10);
      }
      on.armIdle();
      checkTimer ??= setTimeout(() => {
        checkTimer = undefined;
        on.check(false);
      }, CHECK_INTERVAL_MS);
    });
    return () => {
      clearInterval(poll);
      clearTimeout(checkTimer);
      clearTimeout(inputTimer);
      stopEvents();
    };
  }
}

/**
 * Where one wait looks, and its pattern's scanner: the origin settles once the prompt a line
 * typed early is read at has come (see {@link Waits.origin}), and moves past the echo once the
 * echo's end is known; each move starts the scanner again from there.
 */
class WaitPlace {
  origin: WaitOrigin;
  from: number;
  /** Called once the origin has settled (see {@link settle}). */
  onSettled: () => void = () => {};
  #scanner: ReturnType<StreamOutput["scan"]> | undefined;

  constructor(
    private readonly waits: Waits,
    private readonly session: Session,
    private readonly request: WaitRequest,
  ) {
    this.origin = waits.origin(request.since);
    this.from = this.origin.from;
    this.#scanner = this.#scan();
  }

  #scan() {
    const pattern = this.request.pattern;
    return pattern ? this.session.output.scan(pattern, this.from) : undefined;
  }

  /**
   * The origin once the prompt it waited for has come, or the shell is known to show none
   * (see `Waits.origin`): looked at again on each change of state, and as output is matched.
   */
  settle(): WaitOrigin {
    if (!this.origin.awaitingPrompt) return this.origin;
    const next = this.waits.origin(this.request.since);
    if (next.awaitingPrompt) return this.origin;
    this.origin = next;
    this.from = next.from;
    this.#scanner?.cancel();
    this.#scanner = this.#scan();
    this.onSettled();
    return this.origin;
  }

  /** The echo's end once known: matching (and the answer) start there. */
  afterEcho(): EchoLocation | undefined {
    const where = this.settle().echo?.locate();
    if (where?.state === "found" && where.start !== this.from) {
      this.from = where.start;
      this.#scanner?.cancel();
      this.#scanner = this.#scan();
    }
    return where;
  }

  /** Matches the new output (all of it if `final`): the match, if there is one. */
  async check(final: boolean): Promise<PatternMatch | undefined> {
    if (!this.#scanner) return undefined;
    const echo = this.afterEcho();
    // Typed before the prompt it is read at, not read yet: nothing after it is its answer yet.
    if (this.origin.awaitingPrompt && !final) return undefined;
    // The echo is arriving: match once it has (the output that completes it will come).
    if (echo?.state === "pending" && !final) return undefined;
    // Not echoed yet: match what is here, never the echo arriving while matching yields.
    const until = echo?.state === "unseen" ? this.session.output.end : Infinity;
    return await this.#scanner.scan(final, until);
  }

  /** The wait's outcome, the scanner stopped. */
  end(condition: WaitOutcome["condition"], match?: PatternMatch): WaitOutcome {
    if (!match) this.afterEcho();
    this.#scanner?.cancel();
    this.session.touch();
    return { condition, from: this.from, match, skippedBytes: this.#scanner?.skipped ?? 0 };
  }
}
