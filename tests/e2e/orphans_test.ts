/**
 * The orphan matrix: whatever a command or a terminal starts (in the foreground, with `&`,
 * `nohup`, `setsid`, a double fork, or setsid and a double fork together) is gone after every
 * way its owner can end: terminate_command, a timeout, terminal_kill, terminal_release, stdin
 * closed, SIGTERM, SIGINT, SIGHUP, and SIGKILL of the server followed by a restart. Through the real
 * server started with the README's flags; survivors are counted with `ps`, by markers unique
 * to this run (the sleeps' arguments), so other work on the machine does not count.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { connect, type Connection } from "../helpers/mcp.ts";
import { eventually, tempDir, uniqueMarker } from "../helpers/process.ts";

const linux = Deno.build.os === "linux";
/** This run's marker: every sleep it starts sleeps `<RUN>.<cell>` seconds. */
const RUN = uniqueMarker();

/** The ways a process can try to outlive its owner, as shell code starting `sleep <marker>`. */
const KINDS: Record<string, (marker: string) => string> = {
  foreground: (m) => `sleep ${m}`,
  ampersand: (m) => `sleep ${m} &`,
  nohup: (m) => `nohup sleep ${m} >/dev/null 2>&1 &`,
  setsid: (m) => `setsid sleep ${m} >/dev/null 2>&1 &`,
  "double fork": (m) => `(sleep ${m} >/dev/null 2>&1 &)`,
  "setsid and double fork": (m) => `(setsid sleep ${m} >/dev/null 2>&1 &)`,
};

let cells = 0;
/** A new marker (a sleep duration no one else uses). */
function marker(): string {
  return `${RUN}.${String(++cells).padStart(3, "0")}`;
}

/** The live sleeps (not zombies) of `markers`, counted with ps. */
async function survivors(markers: string[]): Promise<string[]> {
  const { stdout } = await new Deno.Command("ps", { args: ["-eo", "stat=,args="] }).output();
  const wanted = new Set(markers.map((m) => `sleep ${m}`));
  return new TextDecoder().decode(stdout).split("\n").filter((line) => {
    const [, stat, args] = line.match(/^\s*(\S+)\s+(.*)$/) ?? [];
    return stat && !stat.startsWith("Z") && wanted.has(args);
  });
}

async function allRunning(markers: string[], what: string): Promise<void> {
  let running: string[] = [];
  ok(
    await eventually(() => running.length === markers.length, 10_000, async () => {
      running = await survivors(markers);
    }),
    `${what}: ${running.length} of ${markers.length} started: ${running.join("; ")}`,
  );
}

async function noneLeft(markers: string[], what: string): Promise<void> {
  let left: string[] = [];
  ok(
    await eventually(() => left.length === 0, 10_000, async () => {
      left = await survivors(markers);
    }),
    `${what}: ${left.length} survivors: ${left.join("; ")}`,
  );
}

/**
 * Starts one command per kind: the kind's code, then (but for the foreground kind) a
 * foreground sleep that keeps the command running, both marked. Every other command runs on
 * pipes instead of a terminal.
 */
async function startCommands(mcp: Connection, extra: Record<string, unknown> = {}) {
  const started: { token: string; markers: string[] }[] = [];
  for (const [index, [kind, code]] of Object.entries(KINDS).entries()) {
    const markers = kind === "foreground" ? [marker()] : [marker(), marker()];
    const first = code(markers[0]);
    const { token } = await mcp.callOk<{ token: string }>("run_command", {
      command: markers.length === 1
        ? first
        : `${first}${first.endsWith("&") ? "" : ";"} sleep ${markers[1]}`,
      shell_type: "sh",
      use_pty: index % 2 === 0,
      ...extra,
    });
    started.push({ token, markers });
  }
  return started;
}

/** Starts one interactive bash per kind and types the kind's code into it. */
async function startTerminals(mcp: Connection) {
  const started: { terminalId: string; markers: string[] }[] = [];
  for (const code of Object.values(KINDS)) {
    const markers = [marker()];
    const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
      command: "bash",
      args: ["--norc", "--noprofile", "-i"],
    });
    await mcp.callOk("terminal_write", { terminalId, input: code(markers[0]) });
    started.push({ terminalId, markers });
  }
  return started;
}

/**
 * One state directory for this file's servers: should a test fail with its server killed, the
 * next server started here ends what it left.
 */
const STATE_ROOT = tempDir("winterm-state-");
const STATE_DIR = join(STATE_ROOT, "state");
globalThis.addEventListener("unload", () => Deno.removeSync(STATE_ROOT, { recursive: true }));

Deno.test({
  name: "orphans: terminate, timeout, terminal_kill and terminal_release leave no process",
  ignore: !linux,
  async fn() {
    const mcp = await connect([], { WINTERM_STATE_DIR: STATE_DIR });
    try {
      const terminated = await startCommands(mcp);
      const markers = terminated.flatMap((c) => c.markers);
      await allRunning(markers, "terminate");
      for (const { token } of terminated) await mcp.callOk("terminate_command", { token });
      await noneLeft(markers, "terminate_command");

      const timedOut = await startCommands(mcp, { timeout: 2 });
      const timeoutMarkers = timedOut.flatMap((c) => c.markers);
      await allRunning(timeoutMarkers, "timeout");
      for (const { token } of timedOut) {
        const status = await mcp.callOk<{ status: string }>("query_command_status", {
          token,
          wait_ms: 20_000,
        });
        assertEquals(status.status, "completed");
      }
      await noneLeft(timeoutMarkers, "timeout");

      for (const tool of ["terminal_kill", "terminal_release"]) {
        const terminals = await startTerminals(mcp);
        const termMarkers = terminals.flatMap((t) => t.markers);
        await allRunning(termMarkers, tool);
        for (const { terminalId } of terminals) await mcp.callOk(tool, { terminalId });
        await noneLeft(termMarkers, tool);
        if (tool === "terminal_kill") {
          for (const { terminalId } of terminals) {
            await mcp.callOk("terminal_release", { terminalId });
          }
        }
      }
      // Orphans that came back to the server were reaped: no zombie children are left.
      const zombies = async () => {
        const { stdout } = await new Deno.Command("ps", {
          args: ["-o", "stat=", "--ppid", String(mcp.pid)],
        }).output();
        return new TextDecoder().decode(stdout).split("\n").filter((s) => s.startsWith("Z"));
      };
      let left: string[] = [];
      ok(
        await eventually(() => left.length === 0, 5000, async () => left = await zombies()),
        `${left.length} zombie children of the server`,
      );
    } finally {
      await mcp.close();
    }
  },
});

Deno.test({
  name: "orphans: a command or a shell that ends by itself leaves no process behind",
  ignore: !linux,
  async fn() {
    const mcp = await connect([], { WINTERM_STATE_DIR: STATE_DIR });
    try {
      const escaping = Object.entries(KINDS).filter(([kind]) => kind !== "foreground");
      const markers: string[] = [];
      for (const [index, [, code]] of escaping.entries()) {
        const mark = marker();
        markers.push(mark);
        // Started, then the command ends at once: what it left must not outlive it.
        const { status } = await mcp.callOk<{ status: string }>("run_command", {
          command: `${code(mark)}${code(mark).endsWith("&") ? "" : ";"} sleep 0.2; exit 0`,
          shell_type: "sh",
          use_pty: index % 2 === 0,
          wait_ms: 20_000,
        });
        assertEquals(status, "completed");
      }
      const terminals = (await startTerminals(mcp)).slice(1); // not the foreground kind's
      for (const { terminalId, markers: own } of terminals) {
        markers.push(...own);
        await mcp.callOk("terminal_write", {
          terminalId,
          input: "sleep 0.2; exit",
          exit: true,
          timeoutMs: 20_000,
        });
      }
      await noneLeft(markers, "ended by itself");
    } finally {
      await mcp.close();
    }
  },
});

/**
 * A server with one command and one terminal of each kind running. The commands' own timeout
 * is the longest there is: with the default (30 s), a machine slow enough to take that long
 * between their start and the test's count saw the server end them itself, as it should, and
 * the test took it for another server's doing.
 */
async function busyServer() {
  const mcp = await connect([], { WINTERM_STATE_DIR: STATE_DIR });
  try {
    const commands = await startCommands(mcp, { timeout: 3600 });
    const terminals = await startTerminals(mcp);
    const markers = [...commands, ...terminals].flatMap((owner) => owner.markers);
    await allRunning(markers, "start");
    return { mcp, markers };
  } catch (error) {
    await mcp.close();
    throw error;
  }
}

async function exited(pid: number): Promise<boolean> {
  return await eventually(() => {
    try {
      Deno.kill(pid, "SIGCONT"); // signal 0 is not offered: SIGCONT is harmless
      return false;
    } catch {
      return true;
    }
  }, 10_000);
}

for (const ending of ["stdin closed", "SIGTERM", "SIGINT", "SIGHUP"] as const) {
  Deno.test({
    name: `orphans: ${ending} ends the server and leaves no process`,
    ignore: !linux,
    async fn() {
      const { mcp, markers } = await busyServer();
      if (ending === "stdin closed") await mcp.close();
      else Deno.kill(mcp.pid, ending);
      ok(await exited(mcp.pid), "the server did not exit");
      await noneLeft(markers, ending);
      await mcp.close().catch(() => {});
    },
  });
}

Deno.test({
  name:
    "orphans: after a SIGKILL the next server ends what was left, and leaves a live server's alone",
  ignore: !linux,
  async fn() {
    let live: Awaited<ReturnType<typeof busyServer>> | undefined;
    let killed: Awaited<ReturnType<typeof busyServer>> | undefined;
    try {
      live = await busyServer();
      killed = await busyServer();
      Deno.kill(killed.mcp.pid, "SIGKILL");
      ok(await exited(killed.mcp.pid), "the server did not die");
      // Nothing cleans up after a SIGKILL at once: most processes are still there (those on a
      // terminal whose master closed got its hangup; nohup, setsid and daemons did not)...
      const left = (await survivors(killed.markers)).length;
      ok(left >= 6, `only ${left} of ${killed.markers.length} outlived the SIGKILL`);
      // ...until the next server starts.
      const next = await connect([], { WINTERM_STATE_DIR: STATE_DIR });
      try {
        await noneLeft(killed.markers, "SIGKILL and restart");
        // The live server's processes are its own business.
        assertEquals((await survivors(live.markers)).length, live.markers.length);
      } finally {
        await next.close();
      }
      await live.mcp.close();
      await noneLeft(live.markers, "the live server's shutdown");
    } finally {
      await killed?.mcp.close().catch(() => {});
      await live?.mcp.close().catch(() => {});
    }
  },
});

Deno.test({
  name: "the ledger comes with the first child and goes with the server: an idle server has none",
  ignore: !linux,
  async fn() {
    const stateDir = join(STATE_ROOT, "ledger");
    const ledgers = () => {
      try {
        return [...Deno.readDirSync(join(stateDir, "processes"))].map((entry) => entry.name);
      } catch {
        return [];
      }
    };
    const mcp = await connect([], { WINTERM_STATE_DIR: stateDir });
    try {
      // A tool call waits for the groundwork: what predecessors left is settled by then.
      await mcp.callOk("get_version");
      assertEquals(ledgers(), []);
      await mcp.callOk("run_command", { command: "true", shell_type: "sh", wait_ms: 10_000 });
      assertEquals(ledgers().length, 1, ledgers().join());
    } finally {
      await mcp.close();
    }
    ok(await eventually(() => ledgers().length === 0, 10_000), `left: ${ledgers().join()}`);
  },
});

Deno.test({
  name: "state files and the audit log are private (0600, folders 0700) whatever the umask",
  ignore: !linux,
  async fn() {
    for (const umask of ["000", "0277"]) {
      const root = join(STATE_ROOT, `umask-${umask}`);
      Deno.mkdirSync(root);
      const stateDir = join(root, "state"), audit = join(root, "audit.jsonl");
      const mode = (path: string) => (Deno.statSync(path).mode! & 0o777).toString(8);
      const mcp = await connect(["--audit", audit], { WINTERM_STATE_DIR: stateDir }, undefined, {
        umask,
      });
      try {
        const { terminalId } = await mcp.callOk<{ terminalId: string }>("terminal_create", {
          shell: "bash",
        });
        const ledgers = [...Deno.readDirSync(join(stateDir, "processes"))].map((entry) =>
          join(stateDir, "processes", entry.name)
        );
        // The ledger was made and written (under 0277 it came out 0400, and could not be).
        assertEquals(ledgers.length, 1, `umask ${umask}`);
        ok(Deno.readTextFileSync(ledgers[0]).includes('"roots":[{'), `umask ${umask}`);
        const integration = [...Deno.readDirSync(join(stateDir, "shell-integration"))];
        const files = [
          audit,
          ...ledgers,
          ...integration.filter((entry) => entry.isFile).map((entry) =>
            join(stateDir, "shell-integration", entry.name)
          ),
        ];
        for (const file of files) assertEquals([file, mode(file)], [file, "600"], umask);
        const folders = [
          stateDir,
          join(stateDir, "processes"),
          join(stateDir, "shell-integration"),
        ];
        for (const folder of folders) assertEquals([folder, mode(folder)], [folder, "700"], umask);
        await mcp.callOk("terminal_release", { terminalId });
      } finally {
        await mcp.close();
      }
    }
  },
});
