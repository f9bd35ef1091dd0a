/**
 * The engine's error: a message a person can act on, and, when one input caused it, the name
 * of that input so a front end can say which field was wrong.
 *
 * @module
 */

/** What kind of failure, for front ends that map errors to codes (HTTP, REST). */
export type EngineErrorKind =
  | "invalid_input"
  | "not_found"
  | "inactive"
  | "limit"
  | "forbidden"
  | "failed";

/** See the module documentation. */
export class EngineError extends Error {
  /** The input field at fault, e.g. `working_directory`. */
  readonly field?: string;
  readonly kind: EngineErrorKind;
  constructor(kind: EngineErrorKind, message: string, field?: string) {
    super(message);
    this.name = "EngineError";
    this.kind = kind;
    this.field = field;
  }
}
