/**
 * winterm-mcp: an MCP server that gives AI agents real terminals.
 *
 * ```sh
 * deno task start                  # MCP over stdio
 * deno task start --http           # MCP at http://127.0.0.1:3001/mcp, REST at /api
 * deno task start --help
 * ```
 * @module
 */
import { type Config, ConfigError, parseConfig, USAGE } from "./src/config.ts";
import { setAnswerRoom } from "./src/engine/answer_turns.ts";
import type { Groundwork } from "./src/engine/groundwork.ts";
import type { Engine } from "./src/engine/mod.ts";
import { shuttingDown } from "./src/engine/errors.ts";
import { flushLog, log, setLogLevel } from "./src/log.ts";
import { createMcpServer } from "./src/mcp/server.ts";
import { StdioTransport } from "./src/mcp/stdio.ts";
import { NAME, VERSION } from "./src/version.ts";

/** Children get this long to exit on their first signal at shutdown; the exit stays under 2 s. */
const SHUTDOWN_GRACE_MS = 500;
const SHUTDOWN_DEADLINE_MS = 1800;
/** How long requests already read may take to be answered when the server stops. */
const ANSWER_WAIT_MS = 1000;
/**
 * Then how long the calls that waited on the processes it ended may take to answer, at least:
 * they get what is left before the deadline (less the log's flush). Answers that read output
 * take turns (src/engine/answer_turns.ts): 170 of them took more than 200 ms here.
 */
const KILLED_ANSWER_MS = 200;
/**
 * At the exit, how long an answer being written (stdio) may take to be written whole: a slow
 * reader of a 2 MiB answer got a line cut in two at the deadline.
 */
const LAST_LINE_MS = 2000;
/** How long the last log lines may take to reach stderr at exit. */
const LOG_FLUSH_MS = 200;
/**
 * Over stdio the groundwork is laid once `initialize` is answered (see `main`); a client that
 * says nothing for this long does not hold up the supervision of what predecessors left.
 */
const GROUNDWORK_FALLBACK_MS = 500;

function fail(message: string, usage = false): never {
  console.error(`${NAME}: ${message}${usage ? `\n\n${USAGE}` : ""}`);
  Deno.exit(2);
}

function readConfig(): { config: Config; help: boolean; version: boolean } {
  try {
    return parseConfig(Deno.args, Deno.env.toObject());
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, true);
    throw error;
  }
}

/** Something loaded when first asked for; later calls get the same promise. */
interface Lazy<T> {
  (): Promise<T>;
  /** The load, if something asked for it. */
  started(): Promise<T> | undefined;
  /** From now on, a load not yet started fails with `error` instead of starting. */
  refuse(error: Error): void;
}

function lazy<T>(load: () => Promise<T>): Lazy<T> {
  let loading: Promise<T> | undefined;
  let refusal: Error | undefined;
  return Object.assign(
    () => loading ?? (refusal ? Promise.reject(refusal) : loading = load()),
    { started: () => loading, refuse: (error: Error) => void (refusal = error) },
  );
}

/** What a front end does at shutdown, around the engine's stop. */
interface Serving {
  /** Settles when every request read so far is answered, or after `timeoutMs`. */
  answered(timeoutMs: number): Promise<void>;
  /** Stops serving: no request is read or answered after it. */
  close(): Promise<void>;
  /**
   * At the exit: begins nothing more to send, and settles once what is being sent is whole, or
   * after `ms` (stdio: a line being written).
   */
  lastLine?(ms: number): Promise<void>;
}

/**
 * Returns the function that ends the server, once, whatever asks first, then exits with `code`
 * (0 for a requested stop; non-zero when the server cannot go on, so that a supervisor restarts
 * it). In order: the requests read so far get ANSWER_WAIT_MS to be answered (a client may send
 * its last ones and close stdin at once: a short command finishes); then the engine, if it was
 * loaded, ends every process it started and starts nothing more, which ends the calls still
 * waiting on them, whose answers get the time left (KILLED_ANSWER_MS at least); then the front
 * end closes. The
 * groundwork is laid meanwhile if it was not yet (it ends what killed predecessors left).
 */
function shutdownOnce(
  groundwork: Lazy<Groundwork>,
  engine: Lazy<Engine>,
  serving: Serving,
): (reason: string, code?: number) => void {
  let stopping = false;
  return (reason, code = 0) => {
    if (stopping) return;
    stopping = true;
    (code === 0 ? log.info : log.error)("shutting down", { reason, exitCode: code });
    let laid: Groundwork | undefined;
    let exiting = false;
    const exit = () => {
      if (exiting) return;
      exiting = true;
      laid?.endEverything();
      // An answer being written goes out whole to a client that reads it, for a while.
      void (serving.lastLine?.(LAST_LINE_MS) ?? Promise.resolve()).finally(() => Deno.exit(code));
    };
    setTimeout(exit, SHUTDOWN_DEADLINE_MS);
    const deadline = performance.now() + SHUTDOWN_DEADLINE_MS - LOG_FLUSH_MS;
    const stopEngine = async () => {
      // Loaded after this, it would start what nothing ends: a request for it is refused.
      engine.refuse(shuttingDown());
      const loading = engine.started();
      if (loading) await (await loading).shutdown(SHUTDOWN_GRACE_MS);
    };
    Promise.all([
      serving.answered(ANSWER_WAIT_MS).then(stopEngine)
        .then(() => serving.answered(Math.max(KILLED_ANSWER_MS, deadline - performance.now())))
        .finally(() => serving.close()),
      groundwork().then((ready) => void (laid = ready)),
    ])
      .catch((error) => log.error("shutdown failed", { error }))
      .then(() => flushLog(LOG_FLUSH_MS))
      .finally(exit);
  };
}

/**
 * Returns the function that lays the engine's groundwork (groundwork.ts: the policy, the audit
 * log, and the supervision of what the server starts, which first ends what killed
 * predecessors left). It is imported, not loaded with main.ts, so that answering `initialize`
 * waits for nothing but the MCP SDK. A configuration it cannot start with (a bad policy, an
 * unwritable audit log) ends the server with exit code 2, as before it would serve.
 */
function groundworkLoader(config: Config): Lazy<Groundwork> {
  return lazy(() =>
    import("./src/engine/groundwork.ts").then(async ({ layGroundwork }) => {
      let groundwork;
      try {
        groundwork = await layGroundwork(config);
      } catch (error) {
        fail((error as Error).message);
      }
      return groundwork;
    })
  );
}

/** Returns the function that loads the engine over the groundwork. */
function engineLoader(config: Config, groundwork: Lazy<Groundwork>): Lazy<Engine> {
  return lazy(() =>
    Promise.all([groundwork(), import("./src/engine/engine.ts")]).then(([laid, { Engine }]) => {
      try {
        return new Engine(config, laid);
      } catch (error) {
        fail((error as Error).message);
      }
    })
  );
}

/** SIGINT, SIGTERM and SIGHUP (its terminal went away) end the server in order. */
function onSignals(shutdown: (reason: string) => void): void {
  const signals = Deno.build.os === "windows"
    ? ["SIGINT"] as const
    : ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) Deno.addSignalListener(signal, () => shutdown(signal));
}

async function main(): Promise<void> {
  const { config, help, version } = readConfig();
  if (help) return console.log(USAGE);
  if (version) return console.log(`${NAME} ${VERSION}`);
  setLogLevel(config.logLevel);

  // A failure in one request must never take the server down.
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log.error("unhandled rejection", { error: event.reason, stack: event.reason?.stack });
  });

  const groundwork = groundworkLoader(config);
  const engine = engineLoader(config, groundwork);
  if (config.http) {
    const [loaded, { startHttp, UnsafeConfigError }] = await Promise.all([
      engine(),
      import("./src/http/server.ts"),
    ]);
    let http;
    try {
      http = startHttp(loaded, config.http, config.tools);
    } catch (error) {
      if (error instanceof UnsafeConfigError) fail(error.message);
      fail(
        `cannot serve HTTP on ${config.http.host}:${config.http.port}: ${(error as Error).message}`,
      );
    }
    const shutdown = shutdownOnce(groundwork, engine, {
      answered: (timeoutMs) => http.answered(timeoutMs),
      close: () => http.close(),
    });
    // A server that cannot accept connections is of no use: exit non-zero (Restart=on-failure).
    http.failed.then((error) => shutdown(`the HTTP listener failed: ${error.message}`, 1));
    onSignals(shutdown);
    return;
  }

  // The groundwork and the tools (their schemas) load after `initialize` is answered: when the
  // client says it is initialized, asks for tools, or goes quiet. Loading them at once would put
  // their evaluation in front of the answer whenever the request arrives while they load. The
  // engine (the services, the output pipeline, launching) loads with the first tool call: an
  // idle server does not hold it.
  const loadTools = lazy(() =>
    import("./src/mcp/profiles.ts").then(({ toolsFor }) =>
      toolsFor(config.tools, engine, "mcp-stdio")
    )
  );
  const prepare = () => {
    void groundwork();
    void loadTools();
  };
  const server = createMcpServer(loadTools, "local");
  const transport = new StdioTransport();
  setAnswerRoom(() => transport.room());
  const shutdown = shutdownOnce(groundwork, engine, {
    answered: (timeoutMs) => transport.answered(timeoutMs),
    close: async () => {
      await server.close();
      await transport.flushed();
    },
    lastLine: (ms) => transport.lastLine(ms),
  });
  onSignals(shutdown);
  server.onclose = () => shutdown("transport closed");
  server.oninitialized = prepare;
  // Not setTimeout: Deno's is Node's, whose first use loads part of Deno's Node layer (about
  // 3 MiB, measured), which an idle server otherwise never needs. This timer does not keep the
  // process alive; reading stdin does.
  AbortSignal.timeout(GROUNDWORK_FALLBACK_MS).addEventListener("abort", prepare);
  transport.ended.then(() => shutdown("stdin closed"));
  transport.outputFailed.then(() => shutdown("stdout closed"));
  await server.connect(transport);
  log.info("serving MCP on stdio", { version: VERSION, pid: Deno.pid, tools: config.tools });
}

if (import.meta.main) await main();
