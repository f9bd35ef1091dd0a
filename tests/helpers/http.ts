/**
 * Starts the real server in HTTP mode (main.ts --http, on a free port) and talks to it with
 * real HTTP requests.
 *
 * @module
 */
import { MAIN, START_ENV, START_FLAGS } from "./mcp.ts";

/** A running HTTP server. */
export interface HttpServer {
  url: string;
  token: string;
  /** The web view's one-time login link, as printed on stderr at start. */
  loginLink: string;
  process: Deno.ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Sends a signal (default SIGTERM) and waits for the exit. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/**
 * Starts `main.ts --http --port 0` (or another `entry`, such as a bundle) with extra flags and
 * environment; with `fdLimit`, under that many open files (`ulimit -n`, POSIX), as a service
 * configured that way would run.
 */
export async function startHttpServer(
  args: string[] = [],
  env: Record<string, string> = {},
  options: { fdLimit?: number; entry?: string } = {},
): Promise<HttpServer> {
  const token = env.WINTERM_TOKEN ?? "test-token-" + crypto.randomUUID();
  const entry = options.entry ?? MAIN;
  const deno = [Deno.execPath(), "run", ...START_FLAGS, entry, "--http", "--port", "0", ...args];
  const command = options.fdLimit === undefined
    ? deno
    : ["bash", "--norc", "-c", `ulimit -n ${options.fdLimit} && exec "$@"`, "bash", ...deno];
  const process = new Deno.Command(command[0], {
    args: command.slice(1),
    env: { WINTERM_LOG_LEVEL: "warn", WINTERM_TOKEN: token, ...START_ENV, ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const [url, loginLink] = await new Promise<[string, string]>((resolve, reject) => {
    (async () => {
      for await (const chunk of process.stderr.pipeThrough(new TextDecoderStream())) {
        stderr += chunk;
        const url = stderr.match(/serving MCP at (http:\/\/\S+)\/mcp/);
        const link = stderr.match(/web view: (http:\/\/\S+)/);
        if (url && link) resolve([url[1], link[1]]);
      }
      reject(new Error(`the server exited before serving: ${stderr}`));
    })();
  });
  return {
    url,
    token,
    loginLink,
    process,
    stderr: () => stderr,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        process.kill(signal);
      } catch {
        // already gone
      }
      return await process.status;
    },
  };
}

/** An answer: status, headers and the parsed JSON body. */
export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** Sends a request with the server's token (or `token`, or none with `token: null`). */
export async function request(
  server: HttpServer,
  method: string,
  path: string,
  options: {
    body?: unknown;
    /** The body as sent: text, or bytes (which need not be UTF-8). */
    raw?: string | Uint8Array<ArrayBuffer>;
    headers?: Record<string, string>;
    token?: string | null;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? server.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | Uint8Array<ArrayBuffer> | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const response = await fetch(server.url + path, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, json };
}

/**
 * Sends a hand-written HTTP/1.1 request (fetch will not send a forged Host header) and returns
 * the status and body.
 */
export async function rawRequest(
  server: HttpServer,
  head: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(server.url);
  const connection = await Deno.connect({ hostname, port: Number(port) });
  await connection.write(
    new TextEncoder().encode(head.replaceAll("\n", "\r\n") + "Connection: close\r\n\r\n"),
  );
  let text = "";
  for await (const chunk of connection.readable.pipeThrough(new TextDecoderStream())) text += chunk;
  const [headers, ...body] = text.split("\r\n\r\n");
  return { status: Number(headers.split(" ")[1]), body: body.join("\r\n\r\n") };
}

/**
 * Registers a test that runs `fn` against a fresh HTTP server, stopped afterwards. POSIX only
 * unless `everywhere` (the test starts no POSIX program and runs on Windows too).
 */
export function withHttp(
  name: string,
  fn: (server: HttpServer) => Promise<void>,
  options: { args?: string[]; env?: Record<string, string>; everywhere?: boolean } = {},
): void {
  Deno.test({
    name,
    ignore: Deno.build.os === "windows" && !options.everywhere,
    async fn() {
      const server = await startHttpServer(options.args, options.env);
      try {
        await fn(server);
      } finally {
        await server.stop();
      }
    },
  });
}
