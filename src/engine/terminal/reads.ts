/**
 * Reading a terminal: its output by line, the output since a wait began, ACP's output, the
 * screen as a person would see it, and a viewer's start (a snapshot, then every event).
 *
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import type { ExitStatus } from "../../pty/mod.ts";
import type { LineReadOptions } from "../output/lines.ts";
import type { ScreenView } from "../output/screen.ts";
import { historyBefore, toFreshScreen } from "../output/scrollback.ts";
import { cutHead, DEFAULT_ANSWER_BYTES, estimateTokens, omissionMarker } from "../output/shape.ts";
import type { StreamView } from "../output/stream.ts";
import type { Pattern } from "../output/patterns.ts";
import { EngineError } from "../errors.ts";
import { atOnce, type Steps } from "../slices.ts";
import { boundaryAtOrAfter, utf8Length } from "../output/utf8.ts";
import { type Clamped, clampSize } from "../limits.ts";
import type { Session, TerminalEvent } from "./session.ts";

/**
 * A viewer's start: the screen as escape sequences at one point of the output, and its size;
 * {@link Watch.start} then delivers every event after that point, none missed, none twice.
 */
export interface Watch {
  /**
   * The output kept before `offset` (see {@link Reads.watch}'s `historyBytes`), from a line
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

/** The output since a wait's start, as a wait answers it. */
export interface WaitOutput {
  output: string;
  /** Some of it was left out (a marker says how much and how to read it). */
  truncated: boolean;
}

/** What {@link Reads.readSteps} reads (see lines.ts), and how much of it an answer shows. */
export interface TerminalReadRequest extends Omit<LineReadOptions, "final" | "budget" | "hint"> {
  /** Most bytes of output text in the answer (as JSON). Default 16 KiB; at most the answer limit. */
  maxBytes?: number;
  /**
   * Instead of the lines: those (from `since`, if given) that match a pattern (see
   * output/grep.ts), numbered as `since` counts them. Only in mode `full`, without
   * `headLines`, `tailLines` and `maxLines`.
   */
  grep?: { pattern: Pattern; contextLines?: number };
}

/** What a search leaves no room for: the other ways to choose lines. */
const GREP_EXCLUDES = ["headLines", "tailLines", "maxLines"] as const;

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
  /** With grep: the lines that matched (shown or not). */
  matches?: number;
}

/** {@link Reads.screenRead}'s answer. */
export interface TerminalScreenRead extends TerminalRead {
  screen: Omit<ScreenRead, "text" | "truncated" | "rowsShown">;
}

/** What an answer says when a `maxBytes` was over the answer limit. */
function maxBytesNotice(clamped: Clamped): string {
  return `maxBytes ${clamped.requested} lowered to the server's ${clamped.limit} ` +
    "(WINTERM_MAX_ANSWER_BYTES)";
}

/** The output kept after a watcher's snapshot is delivered in pieces of at most this size. */
const WATCH_PIECE_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/** A terminal's reads. */
export class Reads {
  constructor(
    private readonly session: Session,
    /** Most bytes of output text in one answer (JSON-escaped). */
    private readonly answerBytes: number,
    /** ACP's outputByteLimit, as applied. */
    private readonly outputByteLimit: number | undefined,
  ) {}

  /**
   * Reads output by line (see lines.ts) within the answer's budget; counts as activity. `full`
   * without `since` is the summary of what is kept: all of it if it fits, else its first and
   * last lines with a marker between (`head-tail`), `maxLines` of them in all (the marker is no
   * line of the output); with `since` it pages (`hasMore`). In steps (see
   * src/engine/slices.ts): of the output, and the exit, as they stood when the steps began.
   */
  *readSteps(request: TerminalReadRequest): Steps<TerminalRead> {
    this.session.touch();
    const exitStatus = this.session.exitStatus;
    return yield* this.session.output.frozen((output) => this.#read(output, request, exitStatus));
  }

  *#read(
    output: StreamView,
    request: TerminalReadRequest,
    exitStatus: ExitStatus | null,
  ): Steps<TerminalRead> {
    const budget = this.#budget(request.maxBytes);
    if (request.grep) return yield* this.#grep(output, request, request.grep, budget, exitStatus);
    const options = { ...request, final: !this.session.running, budget: budget.value };
    let read = yield* output.readLines(options);
    if ((request.mode ?? "full") === "full" && request.since === undefined && read.hasMore) {
      // An odd one goes to the end, where a terminal's latest is.
      const lines = request.maxLines ?? 1000;
      read = yield* output.readLines({
        ...options,
        mode: "head-tail",
        headLines: Math.floor(lines / 2),
        tailLines: Math.ceil(lines / 2),
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

  /** {@link readSteps} with `grep`: the lines that match, numbered as `since` counts them. */
  *#grep(
    output: StreamView,
    request: TerminalReadRequest,
    grep: NonNullable<TerminalReadRequest["grep"]>,
    budget: { value: number; clamped?: Clamped },
    exitStatus: ExitStatus | null,
  ): Steps<TerminalRead> {
    if ((request.mode ?? "full") !== "full") {
      throw new EngineError("invalid_input", ["must be full with ", { field: "grep" }], "mode");
    }
    for (const field of GREP_EXCLUDES) {
      if (request[field] !== undefined) {
        throw new EngineError("invalid_input", [
          "cannot be used with ",
          { field: "grep" },
          " (it shows the lines that match)",
        ], field);
      }
    }
    const found = yield* output.grep({
      pattern: grep.pattern,
      contextLines: grep.contextLines ?? 0,
      from: request.since === undefined ? undefined : { line: request.since },
      raw: request.raw,
      final: !this.session.running,
      budget: budget.value,
      lineBase: 0,
      offsets: false,
      resume: (_offset, line) => `search on with since=${line}`,
    });
    return {
      output: found.text,
      totalLines: output.lineCount,
      nextReadFrom: found.nextLine,
      hasMore: !found.complete,
      truncated: !found.complete || found.dropped > 0 || found.droppedLines > 0,
      stats: {
        totalBytes: output.end,
        estimatedTokens: estimateTokens(found.text.length),
        linesShown: found.linesShown,
        linesOmitted: found.matches - found.shown,
      },
      matches: found.matches,
      ...(budget.clamped ? { notice: maxBytesNotice(budget.clamped) } : {}),
      ...(exitStatus ? { exitStatus } : {}),
    };
  }

  /** An answer's budget: `maxBytes`, or the default, at most the answer limit. */
  #budget(maxBytes: number | undefined): { value: number; clamped?: Clamped } {
    return maxBytes === undefined
      ? { value: Math.min(DEFAULT_ANSWER_BYTES, this.answerBytes) }
      : clampSize(maxBytes, this.answerBytes);
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
    this.session.touch();
    const read = yield* this.session.output.frozen((output) =>
      output.readNewest(0, {
        raw,
        final: !this.session.running,
        budget: this.answerBytes,
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
    return this.session.output.frozen((output) => this.#waitOutput(output, from, maxBytes, to));
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
      final: !this.session.running || end < output.end,
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

  /** The line an incremental read goes on from (a growing last line is read again). */
  get nextReadFrom(): number {
    return this.session.output.settledLines(!this.session.running);
  }

  /**
   * Renders what a person would see now (the emulator fed within its time budget; requests
   * made while one waits to start share it): the slow part of a screen read, so a front end
   * does it before the read's answer turn, and output reads of other terminals do not wait on it.
   */
  renderScreen(): Promise<ScreenView> {
    this.session.touch();
    return this.session.output.screen(this.session.cols, this.session.rows).render();
  }

  /**
   * What a person would see now, within `budget` bytes of text as JSON (the top rows first;
   * the rows past it are left out, with a marker): by default, the answer size limit's.
   */
  async screen(budget = this.answerBytes - 200): Promise<ScreenRead> {
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
    if (request.grep) {
      throw new EngineError("invalid_input", ["cannot be used with mode screen"], "grep");
    }
    const budget = this.#budget(request.maxBytes);
    const { text, truncated, rowsShown, ...screen } = cutScreen(view, budget.value);
    const unused = SCREEN_UNUSED.filter((field) => request[field] !== undefined);
    const notices = [
      ...(budget.clamped ? [maxBytesNotice(budget.clamped)] : []),
      ...(unused.length
        ? [`mode screen shows the screen as it is: ${unused.join(", ")} unused`]
        : []),
    ];
    const output = this.session.output;
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
      ...(this.session.exitStatus ? { exitStatus: this.session.exitStatus } : {}),
    };
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
    const output = this.session.output;
    return output.screen(this.session.cols, this.session.rows).snapshot((snapshot) => {
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
      const stop = this.session.events.add((event) =>
        waiting ? waiting.push(event) : listener(event)
      );
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
}
