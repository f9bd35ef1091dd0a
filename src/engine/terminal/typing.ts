/**
 * Typing into a terminal: the ONE Enter rule every front end types by ({@link typedInput}),
 * and the bookkeeping of what was typed (the last line, for a wait's origin and its echo; the
 * last write, for whether the program still waits to read; the last Ctrl+C, for a run after it).
 *
 * @example
 * ```ts
 * import { typedInput } from "./typing.ts";
 * typedInput({ text: "ls" });                             // "ls\r"
 * typedInput({ text: "ls", keys: ["tab"] });              // "ls\t": keys say what follows
 * typedInput({ text: "ls\n", enterUnlessEnded: true });   // "ls\n"
 * typedInput({ text: "print(1)" }, "\n");                 // "print(1)\n": Enter on a pipe
 * ```
 * @module
 */
import type { TerminalReader } from "../../pty/mod.ts";
import type { FrontEnd } from "../launching/audit.ts";
import { inputFailure } from "../launching/launcher.ts";
import { EngineError } from "../errors.ts";
import { keySequence } from "./keys.ts";
import type { Session } from "./session.ts";

/** What to type: text, then Enter by the rule, then named keys. */
export interface TypingRequest {
  /** Text; control characters and escape sequences pass as they are. */
  text?: string;
  /** Named keys (see keys.ts) pressed after the text. */
  keys?: readonly string[];
  /**
   * Press Enter after the text. Default true. Never after no text, nor when keys are given
   * (they say what is pressed after the text: add "enter" there).
   */
  enter?: boolean;
  /** Text that already ends a line (`\r` or `\n` last) is not given an Enter of its own. */
  enterUnlessEnded?: boolean;
}

/**
 * The ONE Enter rule: the text, then Enter (see {@link TypingRequest.enter}), then the keys.
 * `enterKey` is what Enter sends on the input it goes to: the key (`\r`) on a terminal, the
 * host's line end on a pipe (see {@link enterOn}).
 */
export function typedInput(
  request: TypingRequest,
  enterKey: string = keySequence("enter"),
): string {
  const text = request.text ?? "";
  const keys = request.keys ?? [];
  const enter = request.text !== undefined && keys.length === 0 && (request.enter ?? true) &&
    !(request.enterUnlessEnded && /[\r\n]$/.test(text));
  return text + (enter ? enterKey : "") + keys.map(keySequence).join("");
}

/** What Enter sends to a program's input: the key on a terminal, the host's line end on a pipe. */
export function enterOn(mode: "pty" | "pipe", host: "windows" | "posix"): string {
  return mode === "pty" ? keySequence("enter") : host === "windows" ? "\r\n" : "\n";
}

/** Input written to a terminal, as a wait after it needs it. */
export interface TypedInput {
  /** Where the output stood when it was written. */
  offset: number;
  text: string;
  /**
   * Written while the shell showed no prompt to read it at (before its first, or after a
   * command ended and before the next): the shell reads it at the next prompt, which comes at
   * output offset `readAt`.
   */
  beforePrompt?: { readAt?: number };
  /**
   * Typed while the terminal collected lines with its echo off (a password prompt): nothing
   * shows it, so no output is its echo.
   */
  unechoed?: boolean;
}

/**
 * The last Ctrl+C typed: when (ms since the epoch), where the output stood (the prompt it
 * brings comes after that), and whether the shell ran a command then (else its line editor
 * took it).
 */
export interface Interrupt {
  at: number;
  offset: number;
  commandRan: boolean;
}

const INPUT_HISTORY = 100;

/** Text a line editor shows as typed: no keys but Enter and Tab (see Typing.#shellReads). */
// deno-lint-ignore no-control-regex -- the keys are control characters
const PLAIN_TEXT = /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/;

/** A terminal's typing, and what it keeps of it. */
export class Typing {
  /** When input was written, and how much (content is not kept). */
  readonly inputs: { time: number; bytes: number }[] = [];
  /** The last input written, and where the output stood then: a wait answers it. */
  #lastInput: TypedInput | undefined;
  /** The last write: who was reading the terminal just before it, and whether it wakes them. */
  #lastWrite: { reader: TerminalReader | null | undefined; wakes: boolean } | undefined;
  #interrupt: Interrupt | undefined;

  constructor(private readonly session: Session) {
    session.onPromptEnd = (offset) => {
      const input = this.#lastInput;
      const before = input?.beforePrompt;
      if (before && before.readAt === undefined && offset >= input!.offset) before.readAt = offset;
    };
  }

  /** The last input written (see {@link TypedInput}). */
  get lastInput(): TypedInput | undefined {
    return this.#lastInput;
  }

  /** The last Ctrl+C typed, if any. */
  get interrupt(): Interrupt | undefined {
    return this.#interrupt;
  }

  /** Types by the Enter rule ({@link typedInput}); returns the bytes written (by the terminal's codec). */
  type(request: TypingRequest, via: FrontEnd = "internal"): Promise<number> {
    return this.write(typedInput(request), via);
  }

  /**
   * Types text (which may hold control characters and escape sequences). `field`: the request
   * field an error about the text names. Returns the bytes written (by the terminal's codec).
   */
  async write(text: string, via: FrontEnd = "internal", field = "input"): Promise<number> {
    const session = this.session;
    session.assertRunning();
    // Refused before it waits for anything: text that cannot be written is not held.
    session.codec.encode(text, field);
    await this.#shellReads(text);
    session.assertRunning();
    const child = session.child;
    const bytes = session.codec.encode(text, field);
    // Refused whole, it must leave no trace: the shell's state below counts it as typed.
    const refused = child.refusal(bytes);
    if (refused !== undefined) throw new EngineError("failed", refused, field);
    session.launcher.input({ ...session.context, via }, text);
    const shell = session.shell;
    // Only a whole line is read at the prompt; Ctrl+C (D, Z) brings a prompt of its own.
    // deno-lint-ignore no-control-regex -- those keys are control characters
    const aLine = /[\r\n]/.test(text) && !/[\x03\x04\x1a]/.test(text);
    const reader = child.terminalReader();
    // Before the first prompt, a line goes to whatever reads the terminal then (a question the
    // startup files ask), if anything does.
    const readElsewhere = shell !== undefined && shell.promptEnd < 0 && !!reader;
    const beforePrompt = shell === undefined || shell.command !== undefined || !aLine ||
        readElsewhere || (shell.promptEnd >= 0 && !shell.promptPending)
      ? undefined
      : {};
    const end = session.output.end;
    const modes = child.inputModes();
    const unechoed = modes !== undefined && modes.lineMode && !modes.echo;
    this.#lastInput = { offset: end, text, beforePrompt, ...(unechoed ? { unechoed } : {}) };
    // Whether this wakes the reader blocked now: in raw mode any key does; in line mode the end
    // of a line, end of file, or a key that sends a signal.
    const wakes = text !== "" &&
      // deno-lint-ignore no-control-regex -- those keys are control characters
      (modes === undefined || !modes.lineMode || /[\r\n\x03\x04\x1a\x1c]/.test(text));
    this.#lastWrite = { reader, wakes };
    if (text.includes("\x03")) {
      this.#interrupt = { at: Date.now(), offset: end, commandRan: shell?.command !== undefined };
    }
    // A terminal collecting lines with its echo off shows nothing of them (a line editor in
    // raw mode shows them itself); in raw mode while a command runs, the command takes them.
    const context = {
      readElsewhere,
      unechoed,
      rawProgram: modes !== undefined && !modes.lineMode && shell?.command !== undefined,
    };
    if (shell?.noteInput(text, end, context)) session.events.emit({ type: "state" });
    session.touch();
    this.inputs.push({ time: session.lastActivity, bytes: bytes.length });
    if (this.inputs.length > INPUT_HISTORY) this.inputs.shift();
    await inputFailure(child.write(bytes, session.writeTimeoutMs), field);
    return bytes.length;
  }

  /**
   * Settles when the shell takes what is typed. A shell that reports its prompt (integration)
   * starts its line editor with its first prompt: a line typed before is echoed by the terminal,
   * then shown again by the line editor at the prompt (it showed twice). Plain text therefore
   * waits for the first prompt's mark, and is typed at the prompt, shown once. It is typed at
   * once when a program of the startup files reads the terminal in line mode (a question: the
   * text answers it; Linux, where it can be told) or the shell is known never to show a prompt
   * (it replaced itself, see Session.integrationGone). The wait ends at the prompt's mark, when
   * the shell is seen to have replaced itself, at the exit, or when keys that are not text are
   * typed (Ctrl+C for a slow startup file: what waits goes first, in order). Past the write
   * timeout it is typed ahead as before (the waits know such a line, see Waits.origin): also
   * what a question asked after the text was written gets.
   */
  #shellReads(text: string): Promise<void> {
    const held = this.#held;
    if (held) {
      if (!PLAIN_TEXT.test(text)) held.release.abort();
      return held.done;
    }
    const session = this.session, shell = session.shell, child = session.child;
    if (!shell || shell.promptEnd >= 0 || !PLAIN_TEXT.test(text)) return Promise.resolve();
    // A line editor reads in raw mode: one reading in line mode before the first prompt is not
    // the shell's line editor (whose prompt's mark may be on its way).
    const asked = !!child.terminalReader() && child.inputModes()?.lineMode === true;
    if (asked || session.integrationGone()) return Promise.resolve();
    const release = new AbortController();
    const done = session.until(
      () => shell.promptEnd >= 0 || session.integrationGone(),
      session.writeTimeoutMs,
      release.signal,
    ).then(() => void (this.#held = undefined));
    this.#held = { done, release };
    return done;
  }

  /** Input waiting for the shell's first prompt (see {@link #shellReads}): all of it ends at once. */
  #held: { done: Promise<void>; release: AbortController } | undefined;

  /**
   * Whether the foreground program is blocked reading the terminal, and not merely still
   * blocked in the read that the last write is about to wake (the thread has not run since).
   * A write that does not wake it (part of a line, in line mode) leaves it waiting.
   *
   * Only once what it printed has arrived: it wrote its prompt before it began to wait, so once
   * the reader is seen waiting, the prompt is in the output unless the terminal still holds
   * some of what was written (asked after, never before, the reader was seen). Without this,
   * `input` answered 1 to 54 ms after a start with the prompt not yet read, 3 times in 50 beside
   * a busy CPU.
   */
  readingInput(): boolean {
    const child = this.session.child;
    const reader = child.terminalReader();
    if (!reader) return false;
    const before = this.#lastWrite;
    if (
      before?.wakes && before.reader && before.reader.tid === reader.tid &&
      before.reader.switches === reader.switches
    ) return false;
    return child.outputDelivered() !== false;
  }
}
