/**
 * The engine's error: a message a person can act on, and, when one input caused it, the name
 * of that input so a front end can say which field was wrong. What only the server's own user
 * should see (directories searched, the server's PATH and working directory) is kept apart in
 * `detail`: the stdio front end shows it, the HTTP front end does not.
 *
 * @example
 * ```ts
 * import { EngineError } from "./errors.ts";
 * const error = new EngineError("invalid_input", "program 'x' not found on PATH", "command",
 *   "PATH=/usr/bin:/bin");
 * error.message;      // what any caller may read
 * error.localMessage; // "program 'x' not found on PATH (PATH=/usr/bin:/bin)"
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
  | "failed";

/** See the module documentation. */
export class EngineError extends Error {
  /** The input field at fault, e.g. `working_directory`. */
  readonly field?: string;
  readonly kind: EngineErrorKind;
  /** Facts about the server's own machine that explain the failure; for the local user only. */
  readonly detail?: string;
  constructor(kind: EngineErrorKind, message: string, field?: string, detail?: string) {
    super(message);
    this.name = "EngineError";
    this.kind = kind;
    this.field = field;
    this.detail = detail;
  }

  /** The message with its local detail, for a front end whose user owns the server (stdio). */
  get localMessage(): string {
    return this.detail ? `${this.message} (${this.detail})` : this.message;
  }
}

/** The answer to a request to start something once the server is shutting down. */
export function shuttingDown(): EngineError {
  return new EngineError("failed", "the server is shutting down: nothing new starts");
}
