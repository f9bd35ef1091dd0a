/**
 * The engine's error: a message a person can act on, in the engine's own language. When one
 * input caused it, it names that input by the engine's key for it (`cwd`, `shellType`,
 * `timeoutMs`: the fields of the engine's requests), and a message that mentions a field does
 * so by key too ({@link FieldMention}); where a next step is advised, it carries a hint code
 * ({@link Hint}) rather than words naming a tool. Each front end says all of it its own way
 * ({@link Wording}): the MCP tools in their argument names and tool names, the REST API in its
 * body fields and endpoints. What only the server's own user should see (directories searched,
 * the server's PATH and working directory) is kept apart in `detail`: the stdio front end shows
 * it, the HTTP front end does not.
 *
 * @example
 * ```ts
 * import { EngineError, type Wording } from "./errors.ts";
 * const error = new EngineError("invalid_input", "program 'x' not found on PATH", "command",
 *   "PATH=/usr/bin:/bin");
 * error.message;      // what any caller may read
 * error.localMessage; // "program 'x' not found on PATH (PATH=/usr/bin:/bin)"
 *
 * const busy = new EngineError("busy", ["terminal t1 is running; see ", { field: "cwd" }], {
 *   hint: { code: "wait-prompt", terminalId: "t1" },
 * });
 * const snake: Wording = {
 *   field: (key) => key === "cwd" ? "working_directory" : key,
 *   way: (way, hint) => `${way} on ${hint.terminalId}`,
 * };
 * busy.worded(snake, false); // "terminal t1 is running; see working_directory: wait for its prompt (wait-prompt on t1)"
 * ```
 * @module
 */

/** What kind of failure, for front ends that map errors to codes (HTTP, REST). */
export type EngineErrorKind =
  | "invalid_input"
  | "not_found"
  | "inactive"
  | "limit"
  | "forbidden"
  | "busy"
  | "shutting_down"
  | "failed";

/** A request field a message names, by the engine's key for it (a front end spells it). */
export interface FieldMention {
  field: string;
}

/** A message's words: text, and the request fields it names. */
export type Words = readonly (string | FieldMention)[];

/**
 * A way to take a next step, which each front end names its own way (a tool, an endpoint):
 * `type` into the terminal, `read` what it shows, wait for its shell's prompt, `interrupt` what
 * runs (Ctrl+C), or type and read what answers (for a terminal without shell integration);
 * `release` a terminal, wait for a command to end, `terminate` one (where a limit is reached);
 * run a program with `pipes` rather than on a terminal.
 */
export type Way =
  | "type"
  | "read"
  | "wait-prompt"
  | "interrupt"
  | "type-and-read"
  | "release"
  | "wait-command"
  | "terminate"
  | "pipes";

/** One step a hint advises: what to do, and the way to do it (none: nothing to name). */
export interface Step {
  do: string;
  way?: Way;
}

/** The next steps each hint code advises, in the engine's words. */
const HINT_STEPS = {
  /** A terminal whose shell does not report its prompt: type into it and read the answer. */
  "type-and-read": [{ do: "type and read instead", way: "type-and-read" }],
  /** A command line for a run must be one line: chain, or type what is not one. */
  "one-line": [
    { do: "chain commands with ; or &&" },
    { do: "type anything else", way: "type" },
  ],
  /** Look at what the terminal shows. */
  "see-output": [{ do: "see what it shows", way: "read" }],
  /** Wait for the shell's prompt. */
  "wait-prompt": [{ do: "wait for its prompt", way: "wait-prompt" }],
  /** Ctrl+C was sent and no prompt came yet: wait for it, or ask for a new one. */
  "wait-or-enter": [
    { do: "wait for it", way: "wait-prompt" },
    { do: "press Enter for a new one", way: "type" },
  ],
  /** A line is waiting to be read, or is read now: wait for it, or drop it. */
  "wait-or-drop": [
    { do: "wait for it", way: "wait-prompt" },
    { do: "drop it", way: "interrupt" },
  ],
  /** A command runs: wait for it, answer it, or interrupt it. */
  "wait-answer-or-interrupt": [
    { do: "wait for it", way: "wait-prompt" },
    { do: "answer it", way: "type" },
    { do: "interrupt it", way: "interrupt" },
  ],
  /** A line is not finished: finish it, or drop it. */
  "finish-or-drop": [
    { do: "finish it", way: "type" },
    { do: "drop it", way: "interrupt" },
  ],
  /** Text typed at the prompt and not entered: finish it, or clear it. */
  "finish-or-clear": [
    { do: "finish it", way: "type" },
    { do: "clear it", way: "interrupt" },
  ],
  /** Keys typed that may be held unseen: clear them, or finish the line. */
  "clear-or-finish": [
    { do: "clear them", way: "interrupt" },
    { do: "finish the line", way: "type" },
  ],
  /** The terminals allowed are open: release those no longer needed. */
  "release-some": [{ do: "release the ones no longer needed", way: "release" }],
  /** The commands allowed are running: wait for some to end, or terminate them. */
  "end-some": [
    { do: "wait for some to end", way: "wait-command" },
    { do: "terminate them", way: "terminate" },
  ],
  /** What only pipes do (a program's bytes decoded as it writes them): run it with pipes. */
  "use-pipes": [{ do: "run it with pipes to have its bytes decoded as given", way: "pipes" }],
} as const satisfies Record<string, readonly Step[]>;

/** What a hint advises; see {@link hintSteps}. */
export type HintCode = keyof typeof HINT_STEPS;

/** Every hint code. */
export const HINT_CODES = Object.keys(HINT_STEPS) as readonly HintCode[];

/** Advice on what to do next: its code, and the terminal it is about (if it is about one). */
export interface Hint {
  code: HintCode;
  terminalId?: string;
}

/** The steps a hint advises, in order. */
export function hintSteps(code: HintCode): readonly Step[] {
  return HINT_STEPS[code];
}

/** How a front end says what the engine names. */
export interface Wording {
  /** Its name of the request field the engine calls `key` (`key` itself where they agree). */
  field(key: string): string;
  /** How a client of it takes `way` on the terminal `hint` is about (a tool, an endpoint). */
  way(way: Way, hint: Hint): string;
}

/**
 * The name a front end gives a field path (`sandbox.network.allow[0]`): its first part renamed
 * by `names` (engine key to the front end's name), the rest as it is.
 */
export function renameField(path: string, names: Readonly<Record<string, string>>): string {
  const end = path.search(/[.[]/);
  const key = end < 0 ? path : path.slice(0, end);
  return (Object.hasOwn(names, key) ? names[key] : key) + (end < 0 ? "" : path.slice(end));
}

/** The advice of `hint` in `wording`: "wait for it (…), answer it (…), or interrupt it (…)". */
function advice(hint: Hint, wording: Wording): string {
  const steps = hintSteps(hint.code).map((step) =>
    step.way ? `${step.do} (${wording.way(step.way, hint)})` : step.do
  );
  return steps.length < 2
    ? steps.join("")
    : `${steps.slice(0, -1).join(", ")}, or ${steps[steps.length - 1]}`;
}

/** Where an error points, besides its message. */
export interface ErrorPlace {
  /** The engine's key of the input at fault, e.g. `cwd`. */
  field?: string;
  /** Facts about the server's own machine that explain the failure; for the local user only. */
  detail?: string;
  /** The next step advised. */
  hint?: Hint;
}

/** See the module documentation. */
export class EngineError extends Error {
  /** The engine's key of the input at fault, e.g. `cwd` (a front end spells it its own way). */
  readonly field?: string;
  readonly kind: EngineErrorKind;
  /** Facts about the server's own machine that explain the failure; for the local user only. */
  readonly detail?: string;
  /** The next step advised, if any (a front end words it: {@link worded}). */
  readonly hint?: Hint;
  /** The message's words, fields by key. */
  readonly words: Words;

  /**
   * `message`: text, or words that name fields. `place`: the field at fault (its key), or
   * the field, local detail and hint.
   */
  constructor(
    kind: EngineErrorKind,
    message: string | Words,
    place?: string | ErrorPlace,
    detail?: string,
  ) {
    const words = typeof message === "string" ? [message] : message;
    super(joinWords(words, (key) => key));
    const where = typeof place === "object" ? place : { field: place, detail };
    this.name = "EngineError";
    this.kind = kind;
    this.words = words;
    this.field = where.field;
    this.detail = where.detail;
    this.hint = where.hint;
  }

  /** The message with its local detail, for a front end whose user owns the server (stdio). */
  get localMessage(): string {
    return withDetail(this.message, this.detail);
  }

  /**
   * The message as a front end says it: fields in its names, then (for `local`, the server's
   * own user) the local detail, then the advice of the hint in its ways.
   */
  worded(wording: Wording, local: boolean): string {
    const text = joinWords(this.words, (key) => wording.field(key));
    const said = local ? withDetail(text, this.detail) : text;
    return this.hint ? `${said}: ${advice(this.hint, wording)}` : said;
  }

  /** This error with `more` said after its message, or naming another field; nothing else lost. */
  restated(change: { more?: string; field?: string }): EngineError {
    const words = change.more === undefined ? this.words : [...this.words, change.more];
    return new EngineError(this.kind, words, {
      field: change.field ?? this.field,
      detail: this.detail,
      hint: this.hint,
    });
  }
}

function joinWords(words: Words, name: (key: string) => string): string {
  return words.map((word) => typeof word === "string" ? word : name(word.field)).join("");
}

function withDetail(message: string, detail: string | undefined): string {
  return detail ? `${message} (${detail})` : message;
}

/** The answer to a request to start something once the server is shutting down. */
export function shuttingDown(): EngineError {
  return new EngineError("shutting_down", "the server is shutting down: nothing new starts");
}
