/**
 * How the REST API says what the engine names (see src/engine/errors.ts): a field by its name
 * in the API (the body's and query's names are the engine's own; a terminal's id is the
 * path's `:id`), and a next step by the endpoint that takes it.
 *
 * @example
 * ```ts
 * import { EngineError } from "../engine/mod.ts";
 * import { REST_WORDING } from "./wording.ts";
 * const error = new EngineError("busy", "terminal t1 is running a command", {
 *   hint: { code: "wait-prompt", terminalId: "t1" },
 * });
 * error.worded(REST_WORDING, false);
 * // "…: wait for its prompt (GET /api/terminals/t1/stats until its state is prompt)"
 * REST_WORDING.field("terminalId"); // "id"
 * ```
 * @module
 */
import { renameField, type Way, type Wording } from "../engine/mod.ts";

/** The API's names where the engine's keys differ. */
const FIELD_NAMES = { terminalId: "id" };

/** The endpoint (and what to send it) that takes each way, for the terminal at `path`. */
const WAYS: Record<Way, (path: string) => string> = {
  type: (path) => `POST ${path}/input`,
  read: (path) => `GET ${path}/output`,
  "wait-prompt": (path) => `GET ${path}/stats until its state is prompt`,
  interrupt: (path) => `POST ${path}/input with {"input": "\\u0003", "appendNewline": false}`,
  "type-and-read": (path) => `POST ${path}/input, then GET ${path}/output`,
  release: (path) => `DELETE ${path}`,
  "wait-command": () => "GET /api/commands until some have ended",
  // The API starts no commands: only an MCP client of this server can end them.
  terminate: () => "over MCP: the API starts none",
  // The API starts terminals only: pipes are run_command's, over MCP.
  pipes: () => "over MCP: the API starts terminals only",
};

/** See the module documentation. */
export const REST_WORDING: Wording = {
  field: (key) => renameField(key, FIELD_NAMES),
  way: (way, hint) =>
    WAYS[way](
      hint.terminalId === undefined
        ? "/api/terminals/{id}"
        : `/api/terminals/${encodeURIComponent(hint.terminalId)}`,
    ),
};
