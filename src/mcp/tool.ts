/**
 * How a tool is defined (TypeBox schemas for input and output, annotations, a handler) and
 * how a call is checked: arguments are validated before the handler runs, and a failure is
 * answered with a message that names the field and the rule it broke.
 *
 * @example
 * ```ts
 * import { Type } from "../typebox.ts";
 * import { defineTool } from "./tool.ts";
 * const echo = defineTool({
 *   name: "echo",
 *   title: "Echo",
 *   description: "Returns its text.",
 *   input: Type.Object({ text: Type.String({ maxLength: 100 }) }),
 *   output: Type.Object({ text: Type.String() }),
 *   annotations: { readOnlyHint: true },
 *   handler: ({ text }) => Promise.resolve({ text }),
 * });
 * ```
 * @module
 */
import type { Static, TObject } from "../typebox.ts";
import type { LoggingMessageNotification, ToolAnnotations } from "./sdk.ts";

/** The annotations of a tool that only reads (the same answer for the same call). */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** What a handler can do besides computing its answer. */
export interface ToolContext {
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Reports progress, if the caller asked for it (a no-op otherwise). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message notification to this client (MCP logging). */
  log(params: LoggingMessageNotification["params"]): Promise<void>;
  /**
   * Settles once this call's answer is handed to the transport, or once none will be sent
   * (cancelled): what is sent after it goes out after the answer.
   */
  answered: Promise<void>;
  /**
   * Settles once the place this call's answer goes can take one more (Streamable HTTP: the
   * request's event stream, once its reader has taken what it holds); an answer that reads
   * output waits for it before it is made (see src/engine/answer_turns.ts). None: always room.
   */
  room?: () => Promise<void>;
  /** The client the call is for (its MCP session's server): answer turns go round clients. */
  client?: object;
}

/** A tool. */
export interface ToolDefinition<I extends TObject = TObject, O extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /**
   * The tool's argument names that differ from the engine's keys for them (engine key to
   * argument name), so that an error names the field as the caller spelled it.
   */
  fieldNames?: Readonly<Record<string, string>>;
  handler(args: Static<I>, context: ToolContext): Promise<Static<O>>;
}

/** Identity, for type inference of a tool's handler from its schemas. */
export function defineTool<I extends TObject, O extends TObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** How often a long wait tells the client it is still alive. */
const PROGRESS_INTERVAL_MS = 2000;

/**
 * Awaits `promise` (which must end on its own: a wait with a timeout), sending progress every
 * few seconds meanwhile, so that clients which reset their request timeout on progress keep
 * waiting.
 */
export async function withProgress<T>(
  promise: Promise<T>,
  context: ToolContext,
  what: string,
): Promise<T> {
  const started = performance.now();
  const timer = setInterval(() => {
    const elapsed = Math.round(performance.now() - started);
    context.progress(elapsed, undefined, `waiting for ${what}: ${Math.round(elapsed / 1000)} s`);
  }, PROGRESS_INTERVAL_MS);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}
