/**
 * The lines a search reads and how it matches them (see grep.ts): the kept output read a chunk
 * at a time and cleaned as every read cleans it (unless raw), each line matched whole if it is
 * not too long for the pattern ({@link CALL_WORK}), else in overlapping pieces; runs of short
 * lines matched at once first, where that can miss none. And the clock a search's own work is
 * counted on.
 *
 * @module
 */
import type { OutputReader } from "./buffer.ts";
import { Cleaner, isLowAfterHigh } from "./clean.ts";
import { compilePattern, MATCH_OVERLAP, type Pattern } from "./patterns.ts";
import { atOnce, type Steps } from "../slices.ts";

/** The work (ms, its own slices counted) one search does at most before it stops. */
export const SEARCH_WORK_MS = 2000;
/** Raw bytes read and cleaned at a time. */
const CHUNK_BYTES = 64 * 1024;
/**
 * The work one call into RE2 may do, counted in program instructions (see {@link Pattern.size})
 * times characters: a line is matched whole if it is at most this divided by the pattern's
 * program size long (within {@link MIN_WHOLE} and {@link MAX_WHOLE}), a longer one in pieces a
 * sixteenth of that long (at least {@link MIN_PIECE}), where the match found is also looked for
 * ({@link Pattern.find}, slower). Measured here, a character cost at most about 50 ns an
 * instruction: about 50 ms a call.
 */
export const CALL_WORK = 1 << 20;
const MIN_WHOLE = 4096, MAX_WHOLE = 1 << 20, MIN_PIECE = 1024;
/** Stands before a line whose start was dropped: neither a line's start nor a word character. */
const UNKNOWN_CONTEXT = "\ufffd";

/** A line as the search reads it: its number in the buffer, its (cleaned) text. */
export interface Line {
  number: number;
  text: string;
  /** Its start was dropped: what `text` follows is not known. */
  cut: boolean;
}

/** A line's match: where it starts in the line, if known; "stopped": time ran out in it. */
export type Found = { at: number | undefined } | "none" | "stopped";

/** Where a search starts: its first line (whole, or as kept), and the offset of what it reads. */
export interface First {
  line: number;
  start: number;
  /** The line's start was dropped. */
  cut: boolean;
}

/**
 * The time searches spend in their own steps (not while they wait for their slices, nor
 * between them), against a limit ({@link SEARCH_WORK_MS} unless told).
 */
export class SearchClock {
  #spent = 0;
  /** When the running step began (undefined while none runs). */
  #since: number | undefined;

  constructor(private readonly limitMs = SEARCH_WORK_MS) {}

  get over(): boolean {
    const running = this.#since === undefined ? 0 : performance.now() - this.#since;
    return this.#spent + running >= this.limitMs;
  }

  /** A search's work begins (again). */
  resume(): void {
    this.#since = performance.now();
  }

  /** It stops: the time since it began is counted. */
  pause(): void {
    if (this.#since !== undefined) this.#spent += performance.now() - this.#since;
    this.#since = undefined;
  }

  /** Yields (a place where the work may pause), counting its time apart from the wait. */
  *yield(): Steps<void> {
    this.pause();
    yield;
    this.resume();
  }

  /** `steps`, their pauses timed as {@link yield}'s. */
  *timed<T>(steps: Steps<T>): Steps<T> {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      yield* this.yield();
    }
  }
}

/** Lines read at once: their texts, and the same joined by line feeds. */
export interface Lines {
  /** The number of the first. */
  first: number;
  texts: string[];
  joined: string;
  /** The first is the search's first line, whose start was dropped. */
  cut: boolean;
}

/** The lines of [first, to), cleaned unless raw, a chunk at a time, as steps. */
export class LineReader {
  readonly #cleaner: Cleaner | undefined;
  /** Raw: the unfinished line so far. */
  #partial = "";
  #at: number;
  #ended: boolean;
  #finished = false;
  readonly #first: First;
  readonly #final: boolean;
  /** The range read ends inside a line (after its last line feed). */
  #endedInLine = false;
  /** The number of the next line. */
  number: number;

  constructor(
    private readonly buffer: OutputReader,
    first: First,
    private readonly to: number,
    options: { raw?: boolean; columns?: number; final?: boolean },
    private readonly clock: SearchClock,
  ) {
    this.#cleaner = options.raw ? undefined : new Cleaner({ columns: options.columns });
    this.#first = first;
    this.#at = first.start;
    this.#ended = first.start >= to;
    this.number = first.line;
    this.#final = options.final === true && to === buffer.end;
  }

  /** Nothing is left to read. */
  get exhausted(): boolean {
    return this.#finished || (this.#ended && !this.#open);
  }

  /**
   * The last line read is still being written: the stream goes on, and it had no newline yet.
   * Meaningful once the lines are exhausted.
   */
  get growing(): boolean {
    return !this.#final && this.to === this.buffer.end && this.#endedInLine;
  }

  /** Whether a line started before where reading stopped has not been taken yet. */
  get #open(): boolean {
    const start = Math.max(this.#first.start, this.buffer.lineStart(this.number));
    return !this.#finished && start < this.#at;
  }

  /** The next lines (none while a chunk completes none), or undefined after the last. */
  *next(): Steps<Lines | undefined> {
    while (!this.#ended) {
      const lines = yield* this.#read();
      if (lines.texts.length > 0) return lines;
    }
    if (this.#finished) return undefined;
    const open = this.#open;
    this.#finished = true;
    const rest = this.#cleaner ? this.#cleaner.end() : this.#partial;
    if (!open) return undefined;
    this.#endedInLine = true;
    return this.#lines([rest], rest);
  }

  /** Reads and cleans the next chunk: the lines it completes. */
  *#read(): Steps<Lines> {
    const end = Math.min(this.to, this.#at + CHUNK_BYTES);
    const range = this.buffer.readText(this.#at, end, this.#final && end === this.to);
    if (range.end <= this.#at) {
      // Less than a character is left (its rest has not arrived): reading ends here.
      this.#ended = true;
      return this.#lines([], "");
    }
    this.#at = range.end;
    this.#ended = this.#at >= this.to;
    let joined: string;
    if (this.#cleaner) {
      joined = yield* this.clock.timed(this.#cleaner.pushSteps(range.text));
    } else {
      // Only the new text is looked through: a line that never ends costs no more each time.
      const cut = range.text.lastIndexOf("\n") + 1;
      joined = cut === 0 ? "" : this.#partial + range.text.slice(0, cut);
      this.#partial = cut === 0 ? this.#partial + range.text : range.text.slice(cut);
    }
    const texts = joined.split("\n");
    texts.pop(); // each line ends in "\n"
    yield* this.clock.yield();
    return this.#lines(texts, joined);
  }

  #lines(texts: string[], joined: string): Lines {
    const lines = {
      first: this.number,
      texts,
      joined,
      cut: this.#first.cut && this.number === this.#first.line,
    };
    this.number += texts.length;
    return lines;
  }
}

/**
 * The same pattern with `^` and `$` at every line's start and end (the m flag), to match many
 * lines at once (see {@link LineMatcher.candidates}); none if it could match less than the
 * lines one by one: `\A` and `\z` (a text's own start and end), or the m flag turned off.
 */
const atOnceOf = new WeakMap<Pattern, Pattern | null>();

function manyLines(pattern: Pattern): Pattern | null {
  let found = atOnceOf.get(pattern);
  if (found === undefined) {
    const unsafe = /\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m/.test(pattern.source);
    try {
      found = unsafe ? null : compilePattern(pattern.source, "m", "grep");
    } catch {
      found = null; // it compiled without the flag, so it should with it; else line by line
    }
    atOnceOf.set(pattern, found);
  }
  return found;
}

/**
 * Matches lines: each whole if it is at most {@link LineMatcher.whole} characters long, else in
 * pieces (see the module documentation), yielding now and then.
 */
export class LineMatcher {
  /** The longest text matched at once: a line, or a run of lines (see {@link candidates}). */
  readonly whole: number;
  /** The pieces of a longer line. */
  readonly #piece: number;
  readonly #manyLines: Pattern | null;
  /** Lines matched whole since the last yield: how many, how long. */
  readonly #batch = { lines: 0, characters: 0 };

  constructor(private readonly pattern: Pattern, private readonly clock: SearchClock) {
    const size = Math.max(1, pattern.size);
    this.whole = Math.round(Math.min(MAX_WHOLE, Math.max(MIN_WHOLE, CALL_WORK / size)));
    this.#piece = Math.round(Math.min(this.whole, Math.max(MIN_PIECE, CALL_WORK / 16 / size)));
    this.#manyLines = manyLines(pattern);
  }

  /**
   * Which of `lines` may match: those of runs of lines (at most {@link whole} characters
   * together) in which the pattern with the m flag finds a match (each matched alone then
   * says). A run holds a match for it whenever one of its lines does alone: none is missed.
   */
  *candidates(lines: Lines): Steps<boolean[]> {
    const { texts, joined } = lines;
    const may = new Array<boolean>(texts.length).fill(true);
    const many = this.#manyLines;
    if (many === null || lines.cut) return may;
    for (let i = 0, at = 0; i < texts.length;) {
      // A line as long as a run, or longer, is matched alone.
      if (texts[i].length >= this.whole) {
        at += texts[i++].length + 1;
        continue;
      }
      let end = i, to = at;
      while (end < texts.length && to - at + texts[end].length < this.whole) {
        to += texts[end++].length + 1;
      }
      if (!many.test(joined.slice(at, to - 1))) may.fill(false, i, end);
      [i, at] = [end, to];
      yield* this.clock.yield();
    }
    return may;
  }

  /** Matches a line. */
  *match(line: Line): Steps<Found> {
    const { text } = line;
    if (line.cut || text.length > this.whole) {
      return yield* this.#inPieces(text, line.cut ? UNKNOWN_CONTEXT : "");
    }
    const found = this.pattern.test(text);
    // Short lines are matched many to a step: a step costs about as much as a short line.
    this.#batch.lines++;
    this.#batch.characters += text.length;
    if (this.#batch.lines >= 64 || this.#batch.characters >= MIN_PIECE * 4) {
      [this.#batch.lines, this.#batch.characters] = [0, 0];
      yield* this.clock.yield();
    }
    return found ? { at: undefined } : "none";
  }

  /**
   * Where the first match in a line that matched starts, to show the line around it (the
   * line's start if its pieces do not see the match: one longer than their overlap).
   */
  locate(line: Line): number {
    const found = atOnce(this.#inPieces(line.text, line.cut ? UNKNOWN_CONTEXT : ""));
    return typeof found === "object" ? found.at ?? 0 : 0;
  }

  /**
   * Matches `text` in overlapping pieces, each with the character before it as context (`^`
   * and `\b` see it; the line's own start has `context`). A match a piece shows ending where
   * the piece is cut inside the line is not taken: `$` and `\b` would see an end that is not
   * there; the next piece, which overlaps it, sees it whole if it is shorter than the overlap.
   */
  *#inPieces(text: string, context: string): Steps<Found> {
    const piece = this.#piece, overlap = Math.min(MATCH_OVERLAP, Math.floor(piece / 2));
    for (let from = 0;;) {
      let to = Math.min(text.length, from + piece);
      if (isLowAfterHigh(text, to)) to++;
      const before = from === 0 ? context : text[from - 1];
      const slice = before + text.slice(from, to);
      const match = this.pattern.test(slice) ? this.pattern.find(slice, before.length) : undefined;
      if (match && (to === text.length || match.index + match.text.length < slice.length)) {
        return { at: from + match.index - before.length };
      }
      if (to === text.length) return "none";
      yield* this.clock.yield();
      if (this.clock.over) return "stopped";
      from = to - overlap;
      if (isLowAfterHigh(text, from)) from--;
    }
  }
}
