/**
 * The real server started as users start it (the README's flags), spoken to in raw JSON-RPC
 * lines: what a test sees is the server's own order and timing, not a client library's.
 *
 * @module
 */
import { MAIN, START_ENV, START_FLAGS } from "./mcp.ts";

/** The server as users start it, spoken to in raw JSON-RPC lines (no client library). */
export interface RawServer {
  process: Deno.ChildProcess;
  send(message: object): Promise<void>;
  /** Waits for the response with this id. */
  response(id: number): Promise<Record<string, unknown>>;
  /** Every stdout line so far. */
  lines: string[];
  closeStdin(): Promise<void>;
}

/** Starts it (stderr dropped; `env` added to the server's). */
export function startRaw(env: Record<string, string> = {}): RawServer {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", ...START_FLAGS, MAIN],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env: { WINTERM_LOG_LEVEL: "debug", ...START_ENV, ...env },
  }).spawn();
  const writer = process.stdin.getWriter();
  const lines: string[] = [];
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  (async () => {
    let pending = "";
    for await (const chunk of process.stdout.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        lines.push(line);
        const message = JSON.parse(line);
        waiting.get(message.id)?.(message);
      }
    }
  })();
  return {
    process,
    lines,
    send: (message) => writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n")),
    response: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    closeStdin: () => writer.close(),
  };
}
