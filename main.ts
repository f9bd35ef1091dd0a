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
import type { Engine } from "./src/engine/mod.ts";
import { flushLog, log, setLogLevel } from "./src/log.ts";
import { createMcpServer } from "./src/mcp/server.ts";
import { StdioTransport } from "./src/mcp/stdio.ts";
import { NAME, VERSION } from "./src/version.ts";

/** Children get this long to exit on their first signal at shutdown; the exit stays under 2 s. */
const SHUTDOWN_GRACE_MS = 500;
const SHUTDOWN_DEADLINE_MS = 1800;
/** How long requests already read may take to be answered when the server stops. */
const ANSWER_WAIT_MS = 1000;
/** How long the last log lines may take to reach stderr at exit. */
const LOG_FLUSH_MS = 200;
/**
 * Over stdio the engine loads once `initialize` is answered (see `main`); a client that says
 * nothing for this long does not hold up the supervision of what predecessors left.
 */
const ENGINE_LOAD_FALLBACK_MS = 500;

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

/**
 * Returns the function that ends the server, once, whatever asks first: `stopServing` (stop
 * accepting requests), then every process the engine started, then exit with `code` (0 for a
 * requested stop; non-zero when the server cannot go on, so that a supervisor restarts it).
 */
function shutdownOnce(
  engine: () => Promise<Engine>,
  stopServing: () => Promise<void>,
): (reason: string, code?: number) => void {
  let stopping = false;
  return (reason, code = 0) => {
    if (stopping) return;
    stopping = true;
    (code === 0 ? log.info : log.error)("shutting down", { reason, exitCode: code });
    let started: Engine | undefined;
    const exit = () => {
      started?.killEverything();
      Deno.exit(code);
    };
    setTimeout(exit, SHUTDOWN_DEADLINE_MS);
    const stopEngine = engine().then((loaded) => {
      started = loaded;
      return loaded.shutdown(SHUTDOWN_GRACE_MS);
    });
    Promise.all([stopServing().catch(() => {}), stopEngine])
      .catch((error) => log.error("shutdown failed", { error }))
      .then(() => flushLog(LOG_FLUSH_MS))
      .finally(exit);
  };
}

/**
 * Returns the function that loads the engine (on first call; later calls get the same promise).
 * It is imported, not loaded with main.ts, so that answering `initialize` waits for nothing
 * but the MCP SDK. A configuration it cannot start with (a bad policy, an unwritable audit
 * log) ends the server with exit code 2, as before it would serve.
 */
function engineLoader(config: Config): () => Promise<Engine> {
  let loading: Promise<Engine> | undefined;
  return () =>
    loading ??= import("./src/engine/mod.ts").then(({ Engine }) => {
      try {
        const engine = new Engine(config);
        log.info("answering for the processes it starts", { ...engine.supervision });
        return engine;
      } catch (error) {
        fail((error as Error).message);
      }
    });
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

  const engine = engineLoader(config);
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
    const shutdown = shutdownOnce(engine, () => http.close());
    // A server that cannot accept connections is of no use: exit non-zero (Restart=on-failure).
    http.failed.then((error) => shutdown(`the HTTP listener failed: ${error.message}`, 1));
    onSignals(shutdown);
    return;
  }

  // The tools (their schemas, the engine, the output pipeline) load after `initialize` is
  // answered: when the client says it is initialized, asks for tools, or goes quiet. Loading
  // them at once would put their evaluation in front of the answer whenever the request
  // arrives while they load.
  const tools = () =>
    Promise.all([engine(), import("./src/mcp/profiles.ts")]).then(([loaded, { toolsFor }]) =>
      toolsFor(config.tools, loaded, "mcp-stdio")
    );
  let toolsLoading: ReturnType<typeof tools> | undefined;
  const loadTools = () => toolsLoading ??= tools();
  const server = createMcpServer(loadTools, "local");
  const transport = new StdioTransport();
  const shutdown = shutdownOnce(engine, async () => {
    // Closing drops the answers still being made: a client that sends its last requests and
    // closes stdin at once (a pipe) gets them first.
    await transport.answered(ANSWER_WAIT_MS);
    await server.close();
    await transport.flushed();
  });
  onSignals(shutdown);
  server.onclose = () => shutdown("transport closed");
  server.oninitialized = () => void loadTools();
  setTimeout(loadTools, ENGINE_LOAD_FALLBACK_MS);
  transport.ended.then(() => shutdown("stdin closed"));
  transport.outputFailed.then(() => shutdown("stdout closed"));
  await server.connect(transport);
  log.info("serving MCP on stdio", { version: VERSION, pid: Deno.pid, tools: config.tools });
}

if (import.meta.main) await main();
