/**
 * What the shell in a terminal is doing, from its integration marks (see output/marks.ts) and
 * from what was typed into it: at its prompt or running a command (which one, since when,
 * where its output starts), the exit codes and working directory it reported, and the
 * commands it finished, with where their output lies in the terminal's output.
 *
 * Marks are authoritative where a shell sends them. A shell without `C` (sh, cmd, bash before
 * 4.4, PowerShell without PSReadLine) is taken to run a command once a line that is not blank
 * is entered at its prompt, and the command's output to start after the terminal's echo of that
 * line (its first line feed): marks before that line feed are the prompt redrawn with the echo
 * (some consoles redraw the whole line), not news.
 *
 * @example
 * ```ts
 * import { ShellTracker } from "./shell_state.ts";
 * const shell = new ShellTracker(() => undefined);
 * shell.onMark({ kind: "prompt-end" }, 10);
 * shell.noteInput("false\r", 10);
 * shell.onMark({ kind: "output-start" }, 17);
 * shell.onMark({ kind: "command-end", exitCode: 1 }, 17);
 * shell.lastExitCode; // 1
 * ```
 * @module
 */
import type { ShellMark } from "../output/marks.ts";

/** A command the shell runs. */
export interface RunningCommand {
  /** The command line, as the shell reported it or as it was typed; null if unknown. */
  text: string | null;
  /** When it started, ms since the epoch. */
  since: number;
  /** Where its output starts (an output offset), once known. */
  start?: number;
  /** Where the line that started it was typed (shells without `C`). */
  typedAt?: number;
}

/** A command the shell finished. */
export interface FinishedCommand {
  text: string | null;
  /** Its output: the offsets [start, end). */
  start: number;
  end: number;
  /** Null when the shell did not say (cmd's own prompt, a shell that does not expand `$?`). */
  exitCode: number | null;
  /** The working directory the shell reported after it. */
  cwd?: string;
  /** How long it ran, ms. */
  durationMs: number;
}

/** How the terminal takes input that is written (see {@link ShellTracker.noteInput}). */
export interface InputContext {
  /**
   * Before the shell's first prompt, a program (its startup files) reads the terminal now, so
   * a line in it is that program's, not the shell's.
   */
  readElsewhere?: boolean;
  /**
   * The terminal collects lines with its echo off (`stty -echo`): a line entered shows no echo
   * before its output (shells without `C`).
   */
  unechoed?: boolean;
  /** The terminal passes keys on as they come (raw mode) while a command runs: it takes them. */
  rawProgram?: boolean;
}

/** Keys that may act on a line without showing (all controls but tab and line feed). */
// deno-lint-ignore no-control-regex -- those keys are control characters
const HIDDEN_KEYS = /[\x00-\x08\x0b-\x1f\x7f]/;

/** What a terminal sends before a paste, to a program that asked for bracketed pastes. */
const PASTE_START = "\x1b[200~";

/** Commands remembered after they finished. */
const FINISHED_KEPT = 16;
/** Characters of a typed command line kept for display. */
const TEXT_LIMIT = 1000;

/** See the module documentation. */
export class ShellTracker {
  /** A mark with the terminal's nonce has arrived: the integration works. */
  active = false;
  /** The working directory the shell last reported. */
  cwd: string | undefined;
  /** The exit code of the last finished command (null: the shell did not say). */
  lastExitCode: number | null | undefined;
  /** The command running, if any. */
  command: RunningCommand | undefined;
  /** Where the newest prompt ended (an output offset; -1: none yet). */
  promptEnd = -1;
  /** The newest finished commands, oldest first. */
  readonly finished: FinishedCommand[] = [];
  /**
   * Text typed at the prompt and not entered yet (also what was typed after a line entered: the
   * shell reads it after that line's command). Only Ctrl+U and Ctrl+C take it back.
   */
  typed = "";
  /** The shell sends `C` (learnt from the first one). */
  #sendsOutputStart = false;
  /** The command line the shell announced (`E`) or the line entered, for the next `C`. */
  #nextText: string | undefined;
  /** See {@link entered}; `ahead`: typed before the prompt it is read at, which is still to come. */
  #entered: { text: string | null; ahead: boolean; at?: number; since?: number } | undefined;
  /** Inside a bracketed paste (see {@link noteInput}). */
  #pasting = false;
  /**
   * Part of a line was typed while a command ran: whether the command took it, or the shell's
   * line editor holds it now, only the terminal's echo after the prompt can tell (`visible`).
   * `hidden`: not even that, as keys a line editor acts on without a sign (Escape or Ctrl+X as a
   * prefix, a cursor move) were among it, or no line editor reports (sh: the terminal holds it).
   */
  typedMaybe: false | "visible" | "hidden" = false;
  /** The shell says before each prompt whether a line waits (`W`; learnt from the first). */
  #reportsWaiting = false;
  /** It has said so since its last command ended. */
  #waitingReported = false;
  /** See {@link readsOn}. */
  #readsOn = false;
  #readsOnAt = -1;
  readonly #lineEnd: (offset: number) => number | undefined;

  /**
   * `lineEnd(offset)`: the offset after the first line feed at or after `offset`, if one came.
   * `marksOutputStart`: the shell is known to mark where each command's output starts (`C`)
   * before its first command does.
   */
  constructor(lineEnd: (offset: number) => number | undefined, marksOutputStart = false) {
    this.#lineEnd = lineEnd;
    this.#sendsOutputStart = marksOutputStart;
  }

  /**
   * Whether the shell is at its prompt: it showed one since its last command ended, runs
   * nothing, and reads no continuation line.
   */
  get atPrompt(): boolean {
    return this.active && this.command === undefined && this.promptEnd >= 0 &&
      !this.promptPending && this.#entered === undefined && !this.#readsOn;
  }

  /**
   * The newest line entered that the shell has neither started a command for (`C`) nor shown
   * the prompt after: it is about to start it, or it reads more (a continuation line). A line
   * typed ahead of a prompt counts until the prompt after the one it is read at. Output-start
   * marks (or a prompt) settle it; Ctrl+C, Ctrl+Z and Ctrl+\ drop it, as the terminal drops
   * what it holds unread then. A shell that says before its prompt whether a line waits to be
   * read at it (bash: `W`) is taken at its word: a line typed while a command ran, or the second
   * of two lines, counts too (its text unknown: null), and one a program read does not.
   */
  get entered(): string | null | undefined {
    return this.#entered?.text;
  }

  /**
   * The shell showed its continuation prompt (`A;k=s`) after the line last entered, and nothing
   * since: that line is not a whole command yet (an open quote, a trailing `|` or `\`, a
   * here-document), and the shell reads on for the rest of it. A line entered, Ctrl+C, or any
   * mark of a start, an end or a prompt ends it.
   */
  get readsOn(): boolean {
    return this.#readsOn;
  }

  /** Where the continuation mark that {@link readsOn} stands for came (an output offset). */
  get readsOnAt(): number {
    return this.#readsOnAt;
  }

  /**
   * Whether a command ended and the prompt after it is not shown yet (the shell runs its prompt
   * hooks): a line typed now is read at that prompt, and that prompt is not its answer.
   */
  get promptPending(): boolean {
    const last = this.finished.at(-1);
    return this.command === undefined && last !== undefined && last.end > this.promptEnd;
  }

  /**
   * A command ended, and the shell has yet to say whether a line waits to be read at the prompt
   * it is about to show: a line typed now would be read after that one, if there is one.
   */
  get waitingReportDue(): boolean {
    return this.#reportsWaiting && this.promptPending && !this.#waitingReported;
  }

  /** A mark arrived, at output offset `offset`; returns whether the state changed. */
  onMark(mark: ShellMark, offset: number): boolean {
    this.active = true;
    if (mark.kind === "cwd") {
      this.cwd = mark.path;
      const last = this.finished.at(-1);
      if (!this.command && last && last.end <= offset) last.cwd = mark.path;
      return true;
    }
    if (mark.kind === "command") {
      this.#nextText = clip(mark.text);
      return false;
    }
    if (mark.kind === "line-waiting") {
      this.#reportsWaiting = this.#waitingReported = true;
      const before = this.#entered;
      if (mark.waiting) this.#entered = { text: before?.ahead ? before.text : null, ahead: true };
      // A line written before the first prompt that a program of the startup files read. (Once
      // a command has ended, what is written next is after the shell looked.)
      else if (before?.ahead && this.promptEnd < 0) this.#entered = undefined;
      return true;
    }
    if (mark.kind === "continuation") {
      this.#readsOn = true;
      this.#readsOnAt = offset;
      // A shell without `C` was taken to run the line once it was entered: it runs nothing.
      if (!this.#sendsOutputStart) this.command = undefined;
      return true;
    }
    this.#readsOn = false;
    if (mark.kind === "output-start") {
      this.#sendsOutputStart = !mark.lineBreak;
      this.command = {
        text: this.#nextText ?? this.command?.text ?? null,
        since: this.command?.since ?? Date.now(),
        // After its line break (once it came), or right here.
        ...(mark.lineBreak ? { typedAt: offset } : { start: offset }),
      };
      this.#nextText = undefined;
      this.#entered = undefined;
      this.typedMaybe = false;
      return true;
    }
    const command = this.command;
    if (command && command.start === undefined && command.typedAt !== undefined) {
      // No `C`: the output starts after the echo; marks before its end are a redrawn prompt.
      const echoed = this.#lineEnd(command.typedAt);
      if (echoed === undefined || offset < echoed) return false;
      command.start = echoed;
    }
    if (mark.kind === "command-end") {
      const startedNothing = !command && this.#finishStartedNothing(mark.exitCode, offset);
      if (command) this.#finish(mark.exitCode, offset);
      this.#waitingReported = false;
      return command !== undefined || startedNothing;
    }
    // A prompt: whatever ran has ended (cmd says no more than that).
    if (command) this.#finish(null, offset);
    else this.#finishStartedNothing(null, offset);
    if (mark.kind === "prompt-end") {
      this.promptEnd = offset;
      this.#pasting = false;
      // What was typed after the line entered is still there: the line editor reads it next.
      // The prompt a line typed ahead is read at; or the one after a line that started nothing.
      if (this.#entered?.ahead) this.#entered.ahead = false;
      else this.#entered = undefined;
    }
    return true;
  }

  /**
   * Input is about to be written at output offset `offset`; returns whether the state changed.
   * How the terminal takes it (see {@link InputContext}).
   */
  noteInput(text: string, offset: number, context: InputContext = {}): boolean {
    const { readElsewhere = false, unechoed = false, rawProgram = false } = context;
    const hadEntered = this.#entered !== undefined;
    const { line, entered, flushed, ended, interrupted } = this.#keysOn(this.typed, text);
    if (flushed) this.#entered = undefined;
    // The shell reads the line entered next (it may read on again), or drops what it read.
    if (entered !== undefined || interrupted) this.#readsOn = false;
    const dropped = hadEntered && this.#entered === undefined;
    if (this.command && rawProgram) {
      // A program that reads keys as they come (an editor, a pager) takes them: none is left
      // for the shell's line editor.
      this.typed = "";
      return dropped;
    }
    if (this.command) {
      // Typed while a command runs: the command may take it, or the shell at its next prompt.
      // Up to a line break, it is a line (the shell says so: W); after the last one, unknown.
      const fresh = ended ? line : line.slice(this.typed.length);
      if (ended) {
        this.typed = "";
        if (this.typedMaybe === "visible" || interrupted) this.typedMaybe = false;
      }
      if (fresh !== "") {
        const hidden = HIDDEN_KEYS.test(fresh) || !this.#reportsWaiting;
        this.typedMaybe = hidden || this.typedMaybe === "hidden" ? "hidden" : "visible";
      }
      return dropped;
    }
    if (!this.active) {
      if (entered !== undefined && !readElsewhere) {
        this.#entered = { text: clip(entered), ahead: true };
      }
      return dropped;
    }
    this.typed = line;
    if (interrupted || (ended && this.typedMaybe === "visible")) this.typedMaybe = false;
    if (entered === undefined) return dropped;
    this.#entered = {
      text: clip(entered),
      ahead: this.promptEnd < 0 || this.promptPending,
      at: offset,
      since: Date.now(),
    };
    this.#nextText = clip(entered);
    if (this.#sendsOutputStart) return true;
    this.command = {
      text: this.#nextText,
      since: Date.now(),
      ...(unechoed ? { start: offset } : { typedAt: offset }),
    };
    this.#nextText = undefined;
    return true;
  }

  /**
   * What `text`, typed after `typed`, does to the line: the line as it then stands, the last
   * line it entered (cleaned), and whether it flushed what the terminal held unread, ended the
   * line typed before it, or interrupted (Ctrl+C). Follows bracketed paste as it goes.
   */
  #keysOn(typed: string, text: string): {
    line: string;
    entered: string | undefined;
    flushed: boolean;
    ended: boolean;
    interrupted: boolean;
  } {
    // Ctrl+U discards the line typed so far; Ctrl+C that line and, as Ctrl+Z and Ctrl+\ do, the
    // lines the terminal holds unread (its line discipline flushes them with the signal).
    let line = typed;
    let entered: string | undefined;
    let flushed = false;
    /** A line break (or Ctrl+U, Ctrl+C) came: what was typed before it is no longer typed. */
    let ended = false;
    /** Ctrl+C came: the line editor starts afresh, whatever it held. */
    let interrupted = false;
    // deno-lint-ignore no-control-regex -- those keys are control characters
    const pieces = text.split(/(\x1b\[20[01]~|\r\n|\r|\n|[\x03\x15\x1a\x1c])/);
    pieces.forEach((piece, index) => {
      if (index % 2 === 0) line += piece;
      else if (piece.startsWith("\x1b")) this.#pasting = piece === PASTE_START;
      // A line editor takes what is pasted (bracketed) as text: its line breaks enter nothing.
      else if (this.#pasting && piece !== "\x03" && piece !== "\x1a" && piece !== "\x1c") {
        line += piece;
      } else if (piece === "\x15") {
        // Ctrl+U kills the line before the cursor: all of it, unless a key may have moved that.
        if (!HIDDEN_KEYS.test(line)) {
          line = "";
          ended = true;
        }
        // Typed ahead, its whole being unknown, and at the line editor now: taken back with the
        // line (no more than part of a line, else it would have started a command).
        if (this.#entered?.text === null && !this.#entered.ahead) flushed = true;
      } else if (piece === "\x03" || piece === "\x1a" || piece === "\x1c") {
        if (piece === "\x03") {
          line = "";
          ended = interrupted = true;
          // A paste never ended (no ESC[201~) is over: the line editor starts afresh.
          this.#pasting = false;
        }
        entered = undefined;
        flushed = true;
      } else {
        ended = true;
        // deno-lint-ignore no-control-regex -- what was typed, without its keys
        const plain = line.replace(/[\r\n]+/g, " ").replace(/[\x00-\x1f\x7f]/g, "").trim();
        if (plain !== "") entered = plain;
        line = "";
      }
    });
    return { line, entered, flushed, ended, interrupted };
  }

  /** The first command that finished at or after output offset `offset`. */
  finishedAfter(offset: number): FinishedCommand | undefined {
    return this.finished.find((command) => command.end >= offset);
  }

  /** Where the running command's output starts, as far as is known now. */
  outputStart(): number | undefined {
    const command = this.command;
    if (!command) return undefined;
    return command.start ??
      (command.typedAt === undefined ? undefined : this.#lineEnd(command.typedAt));
  }

  /**
   * A line entered at the prompt that started nothing (a comment, a syntax error, a failed
   * history expansion: no `C`) ends at `offset`, where the shell reported its status or drew
   * its prompt: its answer is what the shell said about it after its echo. Returns whether
   * there was one.
   */
  #finishStartedNothing(exitCode: number | null, offset: number): boolean {
    const line = this.#entered;
    if (line?.at === undefined || line.ahead) return false;
    this.command = { text: line.text, since: line.since ?? Date.now(), typedAt: line.at };
    const echoed = this.#lineEnd(line.at);
    if (echoed !== undefined && echoed <= offset) this.command.start = echoed;
    this.#finish(exitCode, offset);
    return true;
  }

  #finish(exitCode: number | null, offset: number): void {
    const command = this.command!;
    // The line entered at the prompt has had its answer (sh: it started this command).
    if (this.#entered && !this.#entered.ahead) this.#entered.at = undefined;
    this.finished.push({
      text: command.text,
      start: Math.min(command.start ?? offset, offset),
      end: offset,
      exitCode,
      durationMs: Math.max(0, Date.now() - command.since),
    });
    if (this.finished.length > FINISHED_KEPT) this.finished.shift();
    this.lastExitCode = exitCode;
    this.command = undefined;
  }
}

function clip(text: string): string {
  return text.length > TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) + "…" : text;
}
