/**
 * winterm-mcp: an MCP server that gives AI agents real terminals.
 *
 * ```sh
 * deno task start            # MCP over stdio
 * deno task start --help
 * ```
 * @module
 */
import process from "node:process";
import { type Config, ConfigError, parseConfig, USAGE } from "./src/config.ts";
import { Engine } from "./src/engine/mod.ts";
import { log, setLogLevel } from "./src/log.ts";
import { StdioServerTransport } from "./src/mcp/sdk.ts";
import { createMcpServer } from "./src/mcp/server.ts";
import { toolsFor } from "./src/mcp/profiles.ts";
import { NAME, VERSION } from "./src/version.ts";

/** Children get this long to exit on SIGTERM at shutdown; the whole exit stays under 2 s. */
const SHUTDOWN_GRACE_MS = 500;
const SHUTDOWN_DEADLINE_MS = 1800;

function readConfig(): { config: Config; help: boolean; version: boolean } {
  try {
    return parseConfig(Deno.args, Deno.env.toObject());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`${NAME}: ${error.message}\n\n${USAGE}`);
    Deno.exit(2);
  }
}

/** Ends the engine's processes and exits 0, once, whatever asked first. */
function shutdownOnce(engine: Engine): (reason: string) => void {
  let stopping = false;
  return (reason) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { reason });
    setTimeout(() => Deno.exit(0), SHUTDOWN_DEADLINE_MS);
    engine.shutdown(SHUTDOWN_GRACE_MS)
      .catch((error) => log.error("shutdown failed", { error }))
      .finally(() => Deno.exit(0));
  };
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

  const engine = new Engine(config);
  const shutdown = shutdownOnce(engine);
  Deno.addSignalListener("SIGINT", () => shutdown("SIGINT"));
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", () => shutdown("SIGTERM"));

  const server = createMcpServer(toolsFor(config.tools, engine));
  server.onclose = () => shutdown("transport closed");
  // The SDK's stdio transport does not notice the end of stdin (typescript-sdk#2002).
  process.stdin.on("end", () => shutdown("stdin closed"));
  process.stdin.on("close", () => shutdown("stdin closed"));
  process.stdout.on("error", () => shutdown("stdout closed"));
  await server.connect(new StdioServerTransport());
  log.info("serving MCP on stdio", { version: VERSION, pid: Deno.pid, tools: config.tools });
}

if (import.meta.main) await main();
