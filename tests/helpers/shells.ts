/**
 * Shells through the real server for the end-to-end tests: a test per server, whose shells get
 * HOME in a fresh directory (no rc files of this machine: its ~/.bashrc runs pyenv) where a test
 * may write its own, and the calls the tests make of them.
 *
 * @module
 */
import { connect, type Connection } from "./mcp.ts";
import { tempDir } from "./process.ts";

export const linux = Deno.build.os === "linux";

/** Whether `program` is installed (in /usr/bin, /bin or /usr/local/bin). */
export const has = (program: string): boolean =>
  ["/usr/bin", "/bin", "/usr/local/bin"].some((dir) => {
    try {
      return Deno.statSync(`${dir}/${program}`).isFile;
    } catch {
      return false;
    }
  });

/** What terminal_run answers. */
export interface Run {
  condition: string;
  output: string;
  truncated: boolean;
  exitCode: number | null;
  cwd: string | null;
  durationMs: number;
}

/** A terminal as terminal_list shows it. */
export interface Listed {
  terminalId: string;
  state: string;
  cwd: string;
  lastExitCode: number | null;
  shellIntegration: string;
  running?: { command: string | null; durationMs: number };
}

/** What terminal_wait (and terminal_write with a wait) answers. */
export interface Waited {
  condition: string;
  output: string;
  elapsedMs: number;
  lastExitCode?: number | null;
  cwd?: string;
}

/** The HOME the tests' shells get: an empty directory, or one a test filled. */
export let home = "";

/**
 * A server run (with `env` added to its environment), then closed; its shells find in HOME only
 * what `files` writes there.
 */
export function shellTest(
  name: string,
  fn: (mcp: Connection, home: string) => Promise<void>,
  options: { ignore?: boolean; files?: Record<string, string>; env?: Record<string, string> } = {},
): void {
  Deno.test({
    name,
    ignore: options.ignore ?? !linux,
    async fn() {
      home = tempDir("winterm-home-");
      for (const [file, text] of Object.entries(options.files ?? {})) {
        Deno.writeTextFileSync(`${home}/${file}`, text);
      }
      const mcp = await connect([], options.env);
      try {
        await fn(mcp, home);
      } finally {
        await mcp.close();
        Deno.removeSync(home, { recursive: true });
      }
    },
  });
}

/** Opens a terminal running `shell` (with integration) in `cwd`; its id. */
export async function open(mcp: Connection, shell: string, cwd = "/"): Promise<string> {
  const created = await mcp.callOk<{ terminalId: string }>("terminal_create", {
    shell,
    cwd,
    // fish's runtime files go there, not to a $TMPDIR/fish.$USER that would outlive the test.
    env: { HOME: home, XDG_RUNTIME_DIR: home },
  });
  return created.terminalId;
}

/** terminal_run, which must answer. */
export const run = (
  mcp: Connection,
  terminalId: string,
  command: string,
  timeoutMs = 15_000,
): Promise<Run> => mcp.callOk<Run>("terminal_run", { terminalId, command, timeoutMs });

/** The terminal as terminal_list shows it. */
export const listed = async (mcp: Connection, terminalId: string): Promise<Listed> =>
  (await mcp.callOk<{ terminals: Listed[] }>("terminal_list")).terminals.find((terminal) =>
    terminal.terminalId === terminalId
  )!;
