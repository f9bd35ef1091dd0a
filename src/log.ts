/**
 * Levelled logging to stderr. stdout belongs to JSON-RPC, so nothing here ever writes there.
 *
 * @example
 * ```ts
 * import { log, setLogLevel } from "./log.ts";
 * setLogLevel("debug");
 * log.debug("spawned", { pid: 42 });
 * ```
 * @module
 */

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

function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  if (RANK[level] < threshold) return;
  let line = `${new Date().toISOString()} ${level.toUpperCase()} ${message}`;
  if (fields) {
    for (const [key, value] of Object.entries(fields)) {
      line += ` ${key}=${typeof value === "string" ? JSON.stringify(value) : safeJson(value)}`;
    }
  }
  try {
    Deno.stderr.writeSync(encoder.encode(line + "\n"));
  } catch {
    // stderr is gone (the client closed it): logging must never take the server down.
  }
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
