/**
 * The audit log: one JSON object per line for every process started (or refused), every input
 * written (its size; its content only when asked for), every kill and every exit, every
 * take-over of a terminal by a viewer and its hand-back, every connection a sandbox's proxy
 * refused, with the time and the front end that asked.
 *
 * @example
 * ```ts
 * import { AuditLog } from "./audit.ts";
 * const path = `${Deno.makeTempDirSync()}/audit.jsonl`; // the operator's --audit FILE
 * const audit = new AuditLog(path, { inputContent: false });
 * audit.record({ event: "start", via: "rest", kind: "terminal", id: "term_1", program: "/bin/sh" });
 * Deno.readTextFileSync(path);
 * // '{"time":"2026-...Z","event":"start","via":"rest","kind":"terminal","id":"term_1",...}\n'
 * ```
 * @module
 */
import { log } from "../../log.ts";
import { openPrivateAppend } from "../../private_files.ts";

/**
 * Where a request came from: `web` is a person in the web view, `stream` a WebSocket client
 * with the token (`internal`: the engine's own callers, such as the benchmark).
 */
export type FrontEnd = "mcp-stdio" | "mcp-http" | "rest" | "web" | "stream" | "internal";

/** A record's fields besides the time. */
export type AuditRecord =
  & {
    event:
      | "start"
      | "refused"
      | "network-refused"
      | "input"
      | "kill"
      | "exit"
      | "takeover"
      | "handback";
  }
  & Record<string, unknown>;

const encoder = new TextEncoder();

/** See the module documentation. */
export class AuditLog {
  #file: Deno.FsFile;
  readonly inputContent: boolean;

  /**
   * Opens (appends to) the log, created readable by its owner only (0600): it names every
   * program run and can hold what was typed. Throws if the file cannot be opened.
   */
  constructor(readonly path: string, options: { inputContent: boolean }) {
    const file = openPrivateAppend(path);
    if (file.readableByOthers) {
      log.warn("the audit log can be read by other users (chmod 600 it)", { path });
    }
    this.#file = file;
    this.inputContent = options.inputContent;
  }

  /** Appends a record. A write failure is logged; it never stops the server. */
  record(record: AuditRecord): void {
    try {
      const bytes = encoder.encode(
        JSON.stringify({ time: new Date().toISOString(), ...record }) + "\n",
      );
      for (let written = 0; written < bytes.length;) {
        written += this.#file.writeSync(bytes.subarray(written));
      }
    } catch (error) {
      log.error("audit log write failed", { path: this.path, error });
    }
  }
}
