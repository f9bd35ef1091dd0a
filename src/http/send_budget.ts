/**
 * One server-wide bound on the bytes waiting to be sent to HTTP clients: everything handed to a
 * connection (answers, event streams, WebSocket frames) and not yet taken by the kernel counts
 * against it, whoever the connection serves. Past it, connections are closed until what waits
 * is back under nine tenths of it: those that never carried an authorized request first, then
 * of each kind the one whose sending has made no progress for longest (a client that does not
 * read, not one that reads slowly). A client with the token that reads what it asked for is
 * therefore the last to lose its connection, and never pays for a flood without it.
 *
 * @example
 * ```ts
 * import { SendBudget, type Sender } from "./send_budget.ts";
 * const budget = new SendBudget(1024, () => false);
 * const reader: Sender = { lastProgress: 0, destroy() {} };
 * budget.charge(reader, 800);
 * budget.charge(reader, 800); // 1600 > 1024: the stalest (here the only) sender is closed
 * ```
 * @module
 */
import { log } from "../log.ts";

/** A connection whose unsent bytes count against the budget. */
export interface Sender {
  /** When its sending last made progress (or began, when nothing was waiting before). */
  readonly lastProgress: number;
  /** Closes it: what it had waiting is discharged by its own close. */
  destroy(error?: Error): void;
}

/** What the choice of connections to close looks at. */
export interface ShedCandidate {
  /** Bytes it has waiting. */
  queued: number;
  /** When its sending last made progress. */
  lastProgress: number;
  /** It carried an authorized request. */
  trusted: boolean;
}

/**
 * The candidates to close, in order, so that at least `excess` bytes are freed: untrusted before
 * trusted, and of each kind the one stalled longest first; fewer when all of them free less.
 * Candidates with nothing waiting are never chosen (closing them frees nothing).
 */
export function chooseShed(candidates: readonly ShedCandidate[], excess: number): number[] {
  const order = candidates
    .map((candidate, index) => ({ candidate, index }))
    .filter(({ candidate }) => candidate.queued > 0)
    .sort((a, b) =>
      Number(a.candidate.trusted) - Number(b.candidate.trusted) ||
      a.candidate.lastProgress - b.candidate.lastProgress || a.index - b.index
    );
  const chosen: number[] = [];
  let freed = 0;
  for (const { candidate, index } of order) {
    if (freed >= excess) break;
    chosen.push(index);
    freed += candidate.queued;
  }
  return chosen;
}

/** See the module documentation. */
export class SendBudget {
  #queued = 0;
  #senders = new Map<Sender, number>();
  #shedding = false;
  #closes = { count: 0, lastLog: -Infinity };

  /** `trusted` tells whether a sender carried an authorized request. */
  constructor(readonly limit: number, private readonly trusted: (sender: Sender) => boolean) {}

  /** Bytes waiting to be sent, over all connections. */
  get queued(): number {
    return this.#queued;
  }

  /** `sender` has `bytes` more waiting; past the limit, connections are closed (see above). */
  charge(sender: Sender, bytes: number): void {
    if (bytes <= 0) return;
    this.#senders.set(sender, (this.#senders.get(sender) ?? 0) + bytes);
    this.#queued += bytes;
    if (this.#queued > this.limit) this.#shed();
  }

  /** `bytes` of what `sender` had waiting were sent, or dropped with it. */
  discharge(sender: Sender, bytes: number): void {
    const had = this.#senders.get(sender);
    if (had === undefined || bytes <= 0) return;
    const taken = Math.min(had, bytes);
    this.#queued -= taken;
    if (had - taken > 0) this.#senders.set(sender, had - taken);
    else this.#senders.delete(sender);
  }

  #shed(): void {
    if (this.#shedding) return;
    this.#shedding = true;
    try {
      const senders = [...this.#senders.keys()];
      const candidates = senders.map((sender) => ({
        queued: this.#senders.get(sender)!,
        lastProgress: sender.lastProgress,
        trusted: this.trusted(sender),
      }));
      const excess = this.#queued - Math.floor(this.limit * 0.9);
      for (const index of chooseShed(candidates, excess)) {
        this.#noteShed(candidates[index]);
        const sender = senders[index];
        sender.destroy(
          new Error("the server's send budget (WINTERM_HTTP_MAX_QUEUED_BYTES) ran out"),
        );
        // Whatever its close did not give back is given back here.
        this.discharge(sender, this.#senders.get(sender) ?? 0);
      }
    } finally {
      this.#shedding = false;
    }
  }

  /** Logs the closes, summarised (a flood would otherwise fill the log). */
  #noteShed(candidate: ShedCandidate): void {
    this.#closes.count++;
    const now = performance.now();
    if (now - this.#closes.lastLog < LOG_INTERVAL_MS) return;
    this.#closes.lastLog = now;
    log.warn(
      "HTTP send budget (WINTERM_HTTP_MAX_QUEUED_BYTES) reached: closing the connections that read least",
      {
        limit: this.limit,
        closed: this.#closes.count,
        lastStalledMs: Math.round(now - candidate.lastProgress),
        lastTrusted: candidate.trusted,
      },
    );
  }
}

/** How often closes for the budget are summarised in the log. */
const LOG_INTERVAL_MS = 10_000;
