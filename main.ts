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
import process from "node:process";
import { type Config, ConfigError, parseConfig, USAGE } from "./src/config.ts";
import { Engine } from "./src/engine/mod.ts";
import { startHttp, UnsafeConfigError } from "./src/http/server.ts";
import { flushLog, log, setLogLevel } from "./src/log.ts";
import { toolsFor } from "./src/mcp/profiles.ts";
import { StdioServerTransport } from "./src/mcp/sdk.ts";
import { createMcpServer } from "./src/mcp/server.ts";
import { NAME, VERSION } from "./src/version.ts";

/** Children get this long to exit on their first signal at shutdown; the exit stays under 2 s. */
const SHUTDOWN_GRACE_MS = 500;
const SHUTDOWN_DEADLINE_MS = 1800;
/** How long the last log lines may take to reach stderr at exit. */
const LOG_FLUSH_MS = 200;

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
  engine: Engine,
  stopServing: () => Promise<void>,
): (reason: string, code?: number) => void {
  let stopping = false;
  return (reason, code = 0) => {
    if (stopping) return;
    stopping = true;
    (code === 0 ? log.info : log.error)("shutting down", { reason, exitCode: code });
    const exit = () => {
      engine.killEverything();
      Deno.exit(code);
    };
    setTimeout(exit, SHUTDOWN_DEADLINE_MS);
    Promise.all([stopServing().catch(() => {}), engine.shutdown(SHUTDOWN_GRACE_MS)])
      .catch((error) => log.error("shutdown failed", { error }))
      .then(() => flushLog(LOG_FLUSH_MS))
      .finally(exit);
  };
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

  let engine: Engine;
  try {
    engine = new Engine(config);
  } catch (error) {
    fail((error as Error).message);
  }
  log.info("answering for the processes it starts", { ...engine.supervision });

  if (config.http) {
    let http;
    try {
      http = startHttp(engine, config.http, config.tools);
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

  const server = createMcpServer(toolsFor(config.tools, engine, "mcp-stdio"), "local");
  const shutdown = shutdownOnce(engine, () => server.close());
  onSignals(shutdown);
  server.onclose = () => shutdown("transport closed");
  // The SDK's stdio transport does not notice the end of stdin (typescript-sdk#2002).
  process.stdin.on("end", () => shutdown("stdin closed"));
  process.stdin.on("close", () => shutdown("stdin closed"));
  process.stdout.on("error", () => shutdown("stdout closed"));
  await server.connect(new StdioServerTransport());
  log.info("serving MCP on stdio", { version: VERSION, pid: Deno.pid, tools: config.tools });
}

if (import.meta.main) await main();
