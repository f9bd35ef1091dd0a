/**
 * The REST API at /api, in the persistent-terminal service's shapes: `{success: true, data}`
 * or `{success: false, error: {code, message, details}}`.
 *
 * | route | does |
 * |---|---|
 * | `POST /api/terminals` | create `{shell?, cwd?, env?, cols?, rows?}` (also `command`, `args`, `outputByteLimit`, `encoding`, `allowAnsiMismatch`) |
 * | `POST /api/terminals/:id/input` | type `{input}`; Enter is added unless it ends with a newline |
 * | `POST /api/terminals/:id/run` | run `{command, timeoutMs?, maxBytes?}` in the shell: output, exit code, cwd |
 * | `GET /api/terminals/:id/output` | read: `since`, `mode`, `headLines`, `tailLines`, `maxLines`, `maxBytes`, `raw`, `grep`, `contextLines` |
 * | `GET /api/terminals/:id/stats` | statistics |
 * | `GET /api/terminals/:id/recording` | the recording, asciicast v2 (`application/x-asciicast`) |
 * | `GET /api/terminals` | list |
 * | `GET /api/commands` | the one-shot commands kept (running and finished) |
 * | `DELETE /api/terminals/:id` | terminate and release, `{signal?}` first |
 * | `GET /api/health` | status, uptime, terminals, version (no token needed) |
 *
 * Errors name the field (`details.field`, as this API names it: a terminal is the path's `id`)
 * and the rule; advice on what to do next names this API's endpoints (its code in
 * `details.hint`, see wording.ts). Engine errors keep their local detail (the server's
 * directories and PATH) out of the answer.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { parseConfig } from "../config.ts";
 * import { createEngine, layGroundwork } from "../engine/mod.ts";
 * import { RestApi } from "./rest.ts";
 * const { config } = parseConfig([], {});
 * const engine = await createEngine(config, await layGroundwork(config));
 * const app = new Hono().route("/api", new RestApi(engine).routes());
 * ```
 * @module
 */
import { type Static, Type } from "../typebox.ts";
import { type Context, Hono } from "hono";
import {
  agentPattern,
  type Command,
  describeExit,
  type Engine,
  EngineError,
  type FrontEnd,
  inAnswerTurn,
  inReadSlices,
  inSlices,
  LINE_MODES,
  SIGNAL_NAMES,
  type SignalName,
  type Terminal,
} from "../engine/mod.ts";
import { log } from "../log.ts";
import { jsonBytesSteps } from "../json_steps.ts";
import {
  AllowAnsiMismatch,
  ContextLines,
  CString,
  Encoding,
  Env,
  Grep,
  literals,
  Sandbox,
} from "../schema.ts";
import { validationErrors } from "../validation.ts";
import { VERSION } from "../version.ts";
import { REST_WORDING } from "./wording.ts";

/** The error codes of the API. */
export type ErrorCode =
  | "TERMINAL_NOT_FOUND"
  | "NOT_FOUND"
  | "TERMINAL_INACTIVE"
  | "TERMINAL_BUSY"
  | "LIMIT_REACHED"
  | "INVALID_INPUT"
  | "WRITE_FAILED"
  | "READ_FAILED"
  | "KILL_FAILED"
  | "INTERNAL_ERROR"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "UNAVAILABLE";

/** An error answer. */
export function restError(
  status: number,
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
  headers: HeadersInit = {},
): Response {
  return Response.json({ success: false, error: { code, message, details } }, { status, headers });
}

function ok(data: unknown, status = 200): Response {
  return Response.json({ success: true, data }, { status });
}

/**
 * {@link ok} for an answer that holds output (up to megabytes): serialized and encoded in
 * slices (see src/json_steps.ts), as MCP's answers are, rather than in one go.
 */
async function okInSlices(data: unknown): Promise<Response> {
  const chunks = await inSlices(() => jsonBytesSteps({ success: true, data }));
  return new Response(ReadableStream.from(chunks), {
    headers: { "content-type": "application/json" },
  });
}

function done(message: string): Response {
  return Response.json({ success: true, message });
}

const CreateBody = Type.Object({
  shell: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  command: Type.Optional(Type.String({ minLength: 1, maxLength: 32768 })),
  args: Type.Optional(Type.Array(CString, { maxItems: 1000 })),
  cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  env: Type.Optional(Env),
  cols: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  // What ACP's terminal_output answers at most (0: nothing), as over MCP.
  outputByteLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024 * 1024 * 1024 })),
  encoding: Type.Optional(Encoding),
  allowAnsiMismatch: Type.Optional(AllowAnsiMismatch),
  shellIntegration: Type.Optional(Type.Boolean()),
  sandbox: Type.Optional(Sandbox),
}, { additionalProperties: false });

const RunBody = Type.Object({
  command: Type.String({ minLength: 1, maxLength: 32768 }),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024 })),
}, { additionalProperties: false });

const InputBody = Type.Object({
  input: Type.String({ maxLength: 1024 * 1024 }),
  appendNewline: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const DeleteBody = Type.Object({ signal: Type.Optional(literals(SIGNAL_NAMES)) }, {
  additionalProperties: false,
});

const OutputQuery = Type.Object({
  since: Type.Optional(Type.Integer({ minimum: 0 })),
  mode: Type.Optional(literals([...LINE_MODES, "screen"] as const)),
  headLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  tailLines: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  maxLines: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024 })),
  raw: Type.Optional(Type.Boolean()),
  grep: Type.Optional(Grep),
  contextLines: Type.Optional(ContextLines),
}, { additionalProperties: false });

/** A request that failed validation: 400 INVALID_INPUT with the problems. */
export class InvalidInput extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("; "));
  }
}

/** A body that may be left out: none is `{}`; anything sent (`null` too) is validated as sent. */
function bodyOrEmpty(body: unknown): unknown {
  return body === undefined ? {} : body;
}

function validate<
  T extends
    | typeof CreateBody
    | typeof InputBody
    | typeof RunBody
    | typeof DeleteBody
    | typeof OutputQuery,
>(
  schema: T,
  value: unknown,
): Static<T> {
  // Not an object at all: the body (or query) as a whole is at fault, not a field of it.
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const got = value === undefined
      ? "no body"
      : value === null
      ? "null"
      : Array.isArray(value)
      ? "an array"
      : `a ${typeof value}`;
    throw new InvalidInput([`the request body must be a JSON object (got ${got})`]);
  }
  const problems = validationErrors(schema, value);
  if (problems.length) throw new InvalidInput(problems);
  return value as Static<T>;
}

/** Query parameters as typed values: numbers and booleans where the schema wants them. */
function queryObject(url: URL): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  refuseUndecodableQuery(url.search);
  for (const [key, text] of url.searchParams) {
    // Else a nameless one was reported as the whole request, and a repeated one took its last.
    if (key === "") throw new InvalidInput(["a query parameter has no name (`&=` or `?=`)"]);
    if (Object.hasOwn(result, key)) {
      throw new InvalidInput([`'${key}' is given more than once: give it once`]);
    }
    const kind = (OutputQuery.properties as Record<string, { type?: string; anyOf?: unknown }>)[key]
      ?.type;
    if (kind === "integer") result[key] = /^-?\d+$/.test(text) ? Number(text) : text;
    else if (kind === "boolean") {
      result[key] = text === "true" ? true : text === "false" ? false : text;
    } else result[key] = text;
  }
  return result;
}

/** A terminal as the API lists it: `id` and `shell` are the API's names. */
function describe(terminal: Terminal) {
  const { terminalId, pid, command, cwd, created, lastActivity, status, sandbox, ...activity } =
    terminal.info();
  const { state, running, lastExitCode, shellIntegration, exitStatus } = activity;
  return {
    id: terminalId,
    pid,
    shell: command,
    cwd,
    created,
    lastActivity,
    status,
    state,
    running,
    lastExitCode,
    shellIntegration,
    ...(sandbox ? { sandbox } : {}),
    // How it ended, once it has (the web view's list says it in words).
    ...(exitStatus ? { exitStatus } : {}),
  };
}

/** A one-shot command as the API lists it. */
function describeCommand(command: Command) {
  return {
    token: command.token,
    pid: command.pid,
    command: command.display,
    cwd: command.cwd,
    mode: command.mode,
    status: command.status,
    exitCode: command.exitCode,
    signal: command.signal,
    timeoutOccurred: command.timeoutOccurred,
    started: new Date(command.startedAt).toISOString(),
    ...(command.endedAt ? { ended: new Date(command.endedAt).toISOString() } : {}),
    executionTimeMs: command.executionTimeMs,
  };
}

/**
 * Maps an engine failure to an answer, in the API's words (its field names and endpoints; the
 * hint's code in `details.hint`); `failure` is the route's code for "it did not work".
 */
export function engineError(error: EngineError, failure: ErrorCode): Response {
  const message = error.worded(REST_WORDING, false);
  const details = {
    ...(error.field ? { field: REST_WORDING.field(error.field) } : {}),
    ...(error.hint ? { hint: error.hint.code } : {}),
  };
  switch (error.kind) {
    case "not_found":
      return restError(404, "TERMINAL_NOT_FOUND", message, details);
    case "inactive":
      return restError(409, "TERMINAL_INACTIVE", message, details);
    case "busy":
      return restError(409, "TERMINAL_BUSY", message, details);
    case "invalid_input":
      return restError(400, "INVALID_INPUT", message, details);
    case "forbidden":
      return restError(403, "FORBIDDEN", message, details);
    case "limit":
      return restError(429, "LIMIT_REACHED", message, { ...details, reason: "limit" });
    case "shutting_down":
      return restError(503, "UNAVAILABLE", message, details);
    default:
      return restError(500, failure, message, details);
  }
}

/**
 * Refuses a query whose parameters are not valid percent-encoded UTF-8, naming the parameter:
 * URLSearchParams reads `%FF` as U+FFFD and `%ZZ` as itself, so `grep=%FF` searched for
 * U+FFFD, where the same bytes in the path are refused.
 */
function refuseUndecodableQuery(search: string): void {
  for (const pair of search.slice(1).split("&")) {
    const at = pair.indexOf("=");
    const [name, value] = at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
    const bad = [name, value].find((part) => !decodes(part.replaceAll("+", " ")));
    if (bad === undefined) continue;
    const shown = bad === name ? "a parameter's name" : `'${decodeLoosely(name)}'`;
    throw new InvalidInput([
      `${shown} is not valid percent-encoded UTF-8 (${JSON.stringify(bad.slice(0, 64))})`,
    ]);
  }
}

/** A parameter's name as URLSearchParams reads it (for a message). */
function decodeLoosely(name: string): string {
  return new URLSearchParams(`${name}=`).keys().next().value ?? name;
}

/** The segment of `path` that is not valid percent-encoded UTF-8, if one is not. */
function undecodableSegment(path: string): string | undefined {
  return path.split("/").find((segment) => !decodes(segment));
}

/** Whether `text` is valid percent-encoded UTF-8. */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** The REST API over an engine. */
export class RestApi {
  readonly #started = Date.now();

  constructor(private readonly engine: Engine, private readonly via: FrontEnd = "rest") {}

  /** `GET /api/health`, answered without a token. */
  health(): Response {
    return ok({
      status: "healthy",
      uptime: Math.round((Date.now() - this.#started) / 1000),
      activeTerminals: this.engine.terminals.list().filter((terminal) => terminal.running).length,
      version: VERSION,
    });
  }

  /**
   * The routes, to mount at /api (the token has been checked, and a JSON body parsed into
   * the context's `body`, before they run).
   */
  routes(): Hono<{ Variables: { body: unknown } }> {
    const api = new Hono<{ Variables: { body: unknown } }>({ strict: false });
    api.use(async (c, next) => {
      const bad = undecodableSegment(new URL(c.req.url).pathname);
      if (bad !== undefined) {
        throw new InvalidInput([
          `the path segment ${JSON.stringify(bad)} is not valid percent-encoded UTF-8`,
        ]);
      }
      await next();
    });
    api.get("/health", () => this.health());
    api.post("/terminals", (c) => this.#create(validate(CreateBody, bodyOrEmpty(c.get("body")))));
    api.get("/terminals", () => this.#list());
    api.post(
      "/terminals/:id/input",
      async (c) => await this.#input(c.req.param("id"), validate(InputBody, c.get("body"))),
    );
    api.post(
      "/terminals/:id/run",
      async (c) =>
        await this.#run(c.req.param("id"), validate(RunBody, c.get("body")), c.req.raw.signal),
    );
    api.get("/terminals/:id/output", (c) =>
      this.#output(
        c.req.param("id"),
        validate(OutputQuery, queryObject(new URL(c.req.url))),
        c.req.raw.signal,
      ));
    api.get("/terminals/:id/stats", (c) => this.#stats(c.req.param("id")));
    api.get("/terminals/:id/recording", (c) => this.#recording(c.req.param("id")));
    api.get("/commands", () => this.#commands());
    api.delete(
      "/terminals/:id",
      async (c) =>
        await this.#delete(c.req.param("id"), validate(DeleteBody, bodyOrEmpty(c.get("body")))),
    );
    api.all(
      "*",
      (c) =>
        restError(404, "NOT_FOUND", `no such route: ${c.req.method} ${c.req.path}`, {
          method: c.req.method,
          path: c.req.path,
        }),
    );
    api.onError((error, c) => this.#failed(error, c));
    return api;
  }

  /** An error thrown by a route, as an answer. */
  #failed(error: Error, c: Context): Response {
    if (error instanceof InvalidInput) {
      return restError(400, "INVALID_INPUT", error.message, { problems: error.problems });
    }
    const method = c.req.method;
    const failure: ErrorCode = method === "DELETE"
      ? "KILL_FAILED"
      : c.req.path.endsWith("/input") || c.req.path.endsWith("/run")
      ? "WRITE_FAILED"
      : method === "GET"
      ? "READ_FAILED"
      : "INTERNAL_ERROR";
    if (error instanceof EngineError) return engineError(error, failure);
    log.error("REST request failed", { route: c.req.path, error, stack: error.stack });
    return restError(
      500,
      failure,
      "the request failed unexpectedly (the server log has the detail)",
    );
  }

  async #create(body: Static<typeof CreateBody>): Promise<Response> {
    const terminal = await this.engine.terminals.create(body, { via: this.via });
    const { id, ...rest } = describe(terminal);
    const clamped = terminal.outputByteLimitClamped;
    const notice = clamped
      ? `outputByteLimit ${clamped.requested} lowered to the server's ${clamped.limit} ` +
        "(WINTERM_TERMINAL_MAX_BYTES)"
      : undefined;
    return ok({ terminalId: id, ...rest, ...(notice ? { notice } : {}) }, 201);
  }

  #list(): Response {
    const terminals = this.engine.terminals.list();
    return ok({ terminals: terminals.map(describe), count: terminals.length });
  }

  async #input(id: string, body: Static<typeof InputBody>): Promise<Response> {
    // Enter is pressed after the input unless it already ends a line (or the caller says not to).
    await this.engine.terminals.get(id).type(
      { text: body.input, enter: body.appendNewline, enterUnlessEnded: true },
      this.via,
    );
    return done("Input sent successfully");
  }

  /**
   * Runs a command; a client that goes away (`signal`, aborted when its connection closes) stops
   * the wait, which may otherwise last 10 minutes: nobody would read the answer.
   */
  async #run(id: string, body: Static<typeof RunBody>, signal: AbortSignal): Promise<Response> {
    const terminal = this.engine.terminals.get(id);
    const outcome = await terminal.run(body.command, body.timeoutMs ?? 30_000, {
      via: this.via,
      maxBytes: body.maxBytes,
      signal,
    });
    if (signal.aborted) log.debug("a REST run's client went away: its wait stopped", { id });
    return okInSlices(outcome);
  }

  /** Reads output in its answer turn; a client gone while it waits for one leaves the line. */
  async #output(
    id: string,
    query: Static<typeof OutputQuery>,
    signal: AbortSignal,
  ): Promise<Response> {
    const terminal = this.engine.terminals.get(id);
    const { mode, grep: source, contextLines, ...rest } = query;
    if (source === undefined && contextLines !== undefined) {
      throw new EngineError("invalid_input", "applies only with grep", "contextLines");
    }
    const grep = source === undefined
      ? undefined
      : { pattern: await agentPattern(source, "", "grep"), contextLines };
    const request = { ...rest, grep };
    const left = (error: unknown) => {
      if (!signal.aborted) throw error;
      log.debug("a REST read's client went away: it left the line", { id });
      return restError(499, "INTERNAL_ERROR", "the client went away");
    };
    // As terminal_read's: the output read in slices in its turn (a search in none), a screen
    // in its turn; the answer serialized in slices.
    if (mode !== "screen") {
      return inReadSlices(request, () => terminal.readSteps({ ...request, mode }), { signal })
        .then(okInSlices, left);
    }
    const view = await terminal.renderScreen();
    return inAnswerTurn(() => terminal.screenRead(view, request), { signal }).then(
      okInSlices,
      left,
    );
  }

  #stats(id: string): Response {
    return ok(this.engine.terminals.get(id).stats());
  }

  #commands(): Response {
    const commands = this.engine.commands.list();
    return ok({ commands: commands.map(describeCommand), count: commands.length });
  }

  /** The recording as it stands, streamed line by line (the events of this moment). */
  #recording(id: string): Response {
    const terminal = this.engine.terminals.get(id);
    const recording = terminal.recording;
    if (!recording.enabled) {
      return restError(
        409,
        "READ_FAILED",
        "recordings are off on this server (WINTERM_RECORDING_MAX_BYTES=0)",
      );
    }
    const lines = recording.lines();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // About 64 KiB a pull: a large recording is never one large string.
        let chunk = "";
        for (let next = lines.next(); !next.done; next = lines.next()) {
          chunk += next.value;
          if (chunk.length >= 64 * 1024) return controller.enqueue(encoder.encode(chunk));
        }
        if (chunk) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "application/x-asciicast; charset=utf-8",
        "content-disposition": `inline; filename="${terminal.id}.cast"`,
        "cache-control": "no-store",
      },
    });
  }

  async #delete(id: string, body: Static<typeof DeleteBody>): Promise<Response> {
    const terminal = this.engine.terminals.get(id);
    // One that had ended by itself is released, and said to have ended so: it was not ended here.
    const ended = terminal.exitStatus;
    if (body.signal && terminal.running) {
      terminal.signal(body.signal as SignalName, this.via);
      await terminal.wait({ timeoutMs: this.engine.terminals.killGraceMs });
    }
    await this.engine.terminals.release(id, this.via);
    return done(
      ended
        ? `Terminal had already exited (${describeExit(ended)}); released`
        : "Terminal terminated successfully",
    );
  }
}
