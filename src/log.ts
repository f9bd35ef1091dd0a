/**
 * Levelled logging to stderr. stdout belongs to JSON-RPC, so nothing here ever writes there.
 *
 * Logging never blocks the server: lines go into a bounded queue that one writer drains with
 * asynchronous writes. When whoever reads stderr falls behind and the queue is full, new lines
 * are dropped and counted, and a line saying how many were dropped is written in their place.
 *
 * @example
 * ```ts
 * import { flushLog, log, setLogLevel } from "./log.ts";
 * setLogLevel("debug");
 * log.debug("spawned", { pid: 42 });
 * await flushLog(500);
 * ```
 * @module
 */
import { concatBytes } from "./bytes.ts";

/** The levels, from most to least verbose. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = typeof LOG_LEVELS[number];

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };
let threshold = RANK.info;
const encoder = new TextEncoder();

/** Parses a level name as users write it (`warning` is accepted for `warn`). */
export function parseLogLevel(text: string): LogLevel | undefined {
  const name = text.trim().toLowerCase();
  if (name === "warning") return "warn";
  return (LOG_LEVELS as readonly string[]).includes(name) ? name as LogLevel : undefined;
}

/** Sets the lowest level that is written. */
export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

/** Bytes of log lines waiting for stderr at most; beyond it lines are dropped. */
const MAX_QUEUED_BYTES = 1024 * 1024;
let queue: Uint8Array[] = [];
let queuedBytes = 0;
let dropped = 0;
let draining: Promise<void> | undefined;
let stderrGone = false;

function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  if (RANK[level] < threshold || stderrGone) return;
  let line = `${new Date().toISOString()} ${level.toUpperCase()} ${message}`;
  if (fields) {
    for (const [key, value] of Object.entries(fields)) {
      line += ` ${key}=${typeof value === "string" ? JSON.stringify(value) : safeJson(value)}`;
    }
  }
  enqueue(encoder.encode(line + "\n"));
}

function enqueue(bytes: Uint8Array): void {
  if (queuedBytes + bytes.length > MAX_QUEUED_BYTES) {
    dropped++;
    return;
  }
  if (dropped > 0) noteDropped();
  queue.push(bytes);
  queuedBytes += bytes.length;
  startDrain();
}

function startDrain(): void {
  if (draining) return;
  draining = drain().finally(() => {
    draining = undefined;
    // Lines queued while the last write was finishing.
    if (queue.length > 0 && !stderrGone) startDrain();
  });
}

/** Queues the line that says how many lines were dropped (it may exceed the bound: it is short). */
function noteDropped(): void {
  const time = new Date().toISOString();
  const note = encoder.encode(
    `${time} WARN ${dropped} log lines dropped: stderr was not read fast enough\n`,
  );
  dropped = 0;
  queue.push(note);
  queuedBytes += note.length;
}

async function drain(): Promise<void> {
  try {
    while (queue.length > 0) {
      const chunk = concatBytes(queue);
      queue = [];
      queuedBytes = 0;
      for (let at = 0; at < chunk.length;) at += await Deno.stderr.write(chunk.subarray(at));
      if (queue.length === 0 && dropped > 0) noteDropped();
    }
  } catch {
    // stderr is gone (the client closed it): logging must never take the server down.
    stderrGone = true;
    queue = [];
    queuedBytes = 0;
  }
}

/** Waits (at most `timeoutMs`) until the queued lines are written: call before exiting. */
export async function flushLog(timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
  const flushed = (async () => {
    while (draining) await draining;
  })();
  await Promise.race([flushed, deadline]);
  clearTimeout(timer);
}

function safeJson(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The logger. */
export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};
