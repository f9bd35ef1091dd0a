/**
 * The sandbox through the real server (stdio MCP, the start task's permissions), attacked as an
 * agent's command would attack it, as root and as an ordinary user (where the test runs as root,
 * the bundle is served as `nobody` through setpriv; where it does not, the root case is skipped).
 * With `sandbox: {mode: "workspace-write", network: "off"}`: writes in the working directory
 * work; these fail with nothing changed on the host: a write to /etc, to $HOME, through a link
 * out of the workspace (one that was there, and one the command makes), through
 * /proc/self/root; reading ~/.ssh; a TCP connect and a UDP send to a loopback listener (0 bytes
 * arrive; without the sandbox they do); SIGSTOP to the server; ptrace of a sibling; a setuid
 * program gaining root (or, as root, capabilities); mounting and remounting; a raw disk. A
 * sandboxed terminal keeps its tty, a background job, resize, Ctrl+C, and is killed with its
 * tree. An allowlist lets a local upstream through (named by IP literal), refuses another with
 * the reason (in the answer, its hint, and the audit log), and refuses a direct connection.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { createSocket } from "node:dgram";
import { join } from "node:path";
import { landlockAbi } from "../../src/pty/posix/sandbox/linux_calls.ts";
import { processStat } from "../../src/pty/posix/procfs.ts";
import { withBundle } from "../helpers/bundle.ts";
import { connect, type Connection, SERVER_TEST_LIMIT_MS, startAlone } from "../helpers/mcp.ts";
import { request, startHttpServer } from "../helpers/http.ts";
import { eventually, exists, processesWith, staysFalse, uniqueMarker } from "../helpers/process.ts";

const usable = Deno.build.os === "linux" && landlockAbi() >= 4;
const runnerIsRoot = Deno.build.os !== "windows" && Deno.uid() === 0;
const PATH = "/usr/local/bin:/usr/bin:/bin";
const WORKSPACE = { mode: "workspace-write", network: "off" };
const NOBODY = { uid: 65534, gid: 65534 };

/** What run_command answers (the fields looked at). */
interface Answer {
  status: string;
  exit_code: number | null;
  stdout: string;
  message: string;
  sandbox?: {
    mode: string;
    network: unknown;
    backend: string;
    refused?: { host: string; port: number; reason: string }[];
  };
}

/** A server under test and its scratch places, owned by the server's user. */
interface Subject {
  mcp: Connection;
  uid: number;
  /** The scratch tree's root (the user's server can enter it). */
  base: string;
  home: string;
  work: string;
  outside: string;
  audit: string;
  marker: string;
}

/** The runner's Deno cache directory. */
async function denoDir(): Promise<string> {
  const { stdout } = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] })
    .output();
  return JSON.parse(new TextDecoder().decode(stdout)).denoDir;
}

/** Directories for a server running as `owner` (the runner's own user when not given). */
function scratch(owner?: { uid: number; gid: number }) {
  // Another user's tree goes in /tmp: the runner's TMPDIR may be a folder only it can enter
  // (CI gives the suite a 0700 one), where that user's server could not open its audit log.
  const base = Deno.realPathSync(
    Deno.makeTempDirSync({ prefix: "winterm-sandbox-e2e-", dir: owner ? "/tmp" : undefined }),
  );
  const home = join(base, "home"), work = join(base, "work"), outside = join(base, "outside");
  const tmp = join(base, "tmp");
  for (const dir of [home, work, outside, tmp, join(home, ".ssh")]) Deno.mkdirSync(dir);
  Deno.writeTextFileSync(join(home, ".ssh", "id_test"), "SECRET-KEY-MATERIAL\n");
  Deno.symlinkSync(outside, join(work, "out"));
  Deno.chmodSync(base, 0o755);
  if (owner) {
    for (
      const path of [
        base,
        home,
        work,
        outside,
        tmp,
        join(home, ".ssh"),
        join(home, ".ssh", "id_test"),
      ]
    ) {
      Deno.chownSync(path, owner.uid, owner.gid);
    }
  }
  return { base, home, work, outside, tmp, audit: join(base, "audit.jsonl") };
}

/** Starts a server (as `user`, from `entry`) over a fresh scratch tree. */
async function subject(entry?: string, user?: { uid: number; gid: number }) {
  const dirs = scratch(user);
  // A TMPDIR of its own: the runner's may be one only it can enter (see `scratch`).
  const env: Record<string, string> = {
    HOME: dirs.home,
    PATH,
    XDG_STATE_HOME: "",
    TMPDIR: dirs.tmp,
  };
  if (user) {
    // Deno's own cache dir must be the user's: the runner's is under /root.
    env.DENO_DIR = join(dirs.base, "deno");
    Deno.mkdirSync(env.DENO_DIR);
    Deno.chownSync(env.DENO_DIR, user.uid, user.gid);
  } else env.DENO_DIR = await denoDir(); // else HOME would move it, and npm would be fetched again
  const mcp = await connect(["--audit", dirs.audit], env, entry, user ? { user } : {});
  const marker = uniqueMarker();
  return {
    subject: { mcp, uid: user?.uid ?? Deno.uid(), marker, ...dirs } as Subject,
    remove: () => {
      Deno.removeSync(dirs.base, { recursive: true });
      // What a sandbox that failed would have left on the host.
      for (const entry of Deno.readDirSync("/etc")) {
        if (entry.name.startsWith(`winterm-sbx-${marker}`)) Deno.removeSync(`/etc/${entry.name}`);
      }
    },
  };
}

/** Runs `command` with bash in the workspace (sandboxed as `sandbox`; null: not sandboxed). */
async function run(
  s: Subject,
  command: string,
  sandbox: unknown = WORKSPACE,
): Promise<Answer> {
  return await s.mcp.callOk<Answer>("run_command", {
    command,
    shell_type: "bash",
    working_directory: s.work,
    env: { PATH },
    ...(sandbox === null ? {} : { sandbox }),
    wait_ms: 60_000,
  });
}

/** Runs an attack that must fail; returns its answer. */
async function refused(s: Subject, command: string): Promise<Answer> {
  const answer = await run(s, command);
  assertEquals(answer.status, "completed", command);
  ok(answer.exit_code !== 0, `not refused: ${command}\n${answer.stdout}`);
  return answer;
}

/** The root mount's line of mountinfo: what a remount would change. */
function rootMount(): string {
  return Deno.readTextFileSync("/proc/self/mountinfo").split("\n").find((line) =>
    line.split(" ")[4] === "/"
  )!;
}

async function filesystemAttacks(s: Subject): Promise<void> {
  const inside = await run(
    s,
    "echo made > inside.txt && cat inside.txt && echo tmp > $TMPDIR/t && cat $TMPDIR/t",
  );
  assertEquals([inside.exit_code, inside.stdout], [0, "made\ntmp\n"]);
  assertEquals(Deno.readTextFileSync(join(s.work, "inside.txt")), "made\n");
  assertEquals(inside.sandbox?.mode, "workspace-write");
  assertEquals(inside.sandbox?.network, "off");
  assertEquals(inside.sandbox?.backend, "landlock+seccomp");
  const etc = `/etc/winterm-sbx-${s.marker}`;
  const attempt = await refused(s, `echo x > ${etc}`);
  match(attempt.stdout, /Permission denied/);
  match(attempt.message, /it ran in a sandbox \(workspace-write, network off\)/);
  await refused(s, `echo x > "$HOME/winterm-sbx-${s.marker}"`);
  await refused(s, "echo x > out/escaped");
  await refused(s, `ln -s ${s.outside} mine && echo x > mine/escaped2`);
  await refused(s, `echo x > /proc/self/root${s.outside}/viaproc`);
  await refused(s, `echo x > /proc/self/root/etc/winterm-sbx-${s.marker}-proc`);
  await refused(s, `touch ${s.outside}/direct`);
  // A hard link into the workspace of a file outside it: refused before anything is written.
  Deno.writeTextFileSync(join(s.outside, "linked"), "original\n");
  if (s.uid !== Deno.uid()) Deno.chownSync(join(s.outside, "linked"), s.uid, s.uid);
  await refused(s, `ln ${s.outside}/linked hard && echo changed >> hard`);
  assertEquals(Deno.readTextFileSync(join(s.outside, "linked")), "original\n");
  for (
    const path of [
      etc,
      `${etc}-proc`,
      join(s.home, `winterm-sbx-${s.marker}`),
      join(s.outside, "escaped"),
      join(s.outside, "escaped2"),
      join(s.outside, "viaproc"),
      join(s.outside, "direct"),
    ]
  ) ok(!exists(path), `${path} was written`);
  // Credentials.
  for (
    const command of [
      'cat "$HOME/.ssh/id_test"',
      'cd "$HOME/.ssh" && cat id_test',
      'cp -r "$HOME/.ssh" ./copied && cat copied/id_test',
      `cat /proc/self/root${s.home}/.ssh/id_test`,
    ]
  ) {
    const read = await refused(s, command);
    ok(!read.stdout.includes("SECRET"), `read the key: ${command}`);
  }
  // Mounts: not a new one, not a remount of /.
  const before = rootMount();
  Deno.mkdirSync(join(s.work, "mnt"));
  if (s.uid !== 0) Deno.chownSync(join(s.work, "mnt"), s.uid, s.uid);
  const remount = await refused(s, "mount -o remount,rw / 2>&1; mount -t tmpfs none mnt 2>&1");
  match(remount.stdout, /permission denied|not permitted|must be superuser/i);
  assertEquals(rootMount(), before);
  ok(!Deno.readTextFileSync("/proc/self/mountinfo").includes(join(s.work, "mnt")));
  await refused(s, "unshare -r -m true");
  // A raw disk (root could read anything through it).
  const disk = [...Deno.readDirSync("/sys/block")].map((entry) => `/dev/${entry.name}`)
    .find((device) => exists(device));
  if (disk) {
    const raw = await run(s, `head -c 4096 ${disk} | wc -c`);
    assertEquals(raw.stdout.trim().split("\n").at(-1), "0", `read ${disk}`);
  }
}

async function networkAttacks(s: Subject): Promise<void> {
  // TCP: nothing may arrive with the sandbox; everything does without it (the test's control).
  let tcpBytes = 0;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buffer = new Uint8Array(1024);
        for (let read; (read = await conn.read(buffer).catch(() => null)) !== null;) {
          tcpBytes += read;
        }
        conn.close();
      })();
    }
  })().catch(() => {});
  let udpBytes = 0;
  const udp = createSocket("udp4");
  udp.on("message", (message) => udpBytes += message.length);
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const udpPort = udp.address().port;
  try {
    const tcp = await refused(s, `echo hello > /dev/tcp/127.0.0.1/${listener.addr.port}`);
    match(tcp.stdout, /Operation not permitted|Permission denied/);
    await refused(s, `echo hello > /dev/udp/127.0.0.1/${udpPort}`);
    await refused(
      s,
      `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', ${udpPort}))"`,
    );
    ok(await staysFalse(() => tcpBytes > 0 || udpBytes > 0, 1000), "bytes arrived");
    const control = await run(
      s,
      `echo hello > /dev/tcp/127.0.0.1/${listener.addr.port}; echo hello > /dev/udp/127.0.0.1/${udpPort}`,
      null,
    );
    assertEquals(control.exit_code, 0);
    ok(await eventually(() => tcpBytes === 6 && udpBytes === 6), "the control's bytes");
  } finally {
    listener.close();
    await accepting;
    udp.close();
  }
}

async function processAttacks(s: Subject): Promise<void> {
  const server = s.mcp.pid;
  await refused(s, `kill -STOP ${server}`);
  // The server's environment (it holds WINTERM_TOKEN over HTTP): root read it under Landlock
  // alone (CAP_SYS_PTRACE passes Landlock's ptrace check), hence no capability at all.
  const environ = await refused(s, `head -c 200 /proc/${server}/environ`);
  ok(!environ.stdout.includes("PATH="), "read the server's environment");
  assertEquals(processStat(server)?.state === "T", false, "the server was stopped");
  // A sibling: another command, not sandboxed.
  const sibling = await s.mcp.callOk<{ pid: number; token: string }>("run_command", {
    command: `sleep ${s.marker}3`,
    shell_type: "executable",
    working_directory: s.work,
    timeout: 300,
  });
  try {
    // Signals to other processes are scoped by Landlock ABI 6 (Linux 6.12); before it, only the
    // server is kept out of reach (by the seccomp filter), as the answer's `unenforced` says.
    if (landlockAbi() >= 6) await refused(s, `kill -KILL ${sibling.pid}`);
    const ptrace = (pid: string) =>
      `python3 -c "import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); ` +
      `r=l.ptrace(16, ${pid}, 0, 0); print('ptrace', r, ctypes.get_errno()); sys.exit(r != 0)"`;
    const traced = await refused(s, ptrace(String(sibling.pid)));
    match(traced.stdout, /ptrace -1 1\b/);
    const own = await refused(s, `sleep 30 & ${ptrace("$!")}; r=$?; kill $!; exit $r`);
    match(own.stdout, /ptrace -1 1\b/);
    ok(processesWith(`sleep ${s.marker}3`).length === 1, "the sibling was killed");
  } finally {
    await s.mcp.callOk("terminate_command", { token: sibling.token });
  }
  // Status: no capability (root: not even in the bounding set; an ordinary user cannot empty
  // it, and no_new_privs keeps exec from gaining any), no new privileges, seccomp; the server
  // itself has none of that.
  const status = await run(s, "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status");
  match(status.stdout, /CapEff:\s+0{16}\nCapBnd:\s+\w+\nNoNewPrivs:\s+1\nSeccomp:\s+2/);
  if (s.uid === 0) match(status.stdout, /CapBnd:\s+0{16}/);
  const own = Deno.readTextFileSync(`/proc/${server}/status`);
  match(own, /NoNewPrivs:\s+0\nSeccomp:\s+0/);
}

/** A setuid-root copy of grep (the runner must be root to make one). */
async function setuidAttack(s: Subject): Promise<void> {
  const dir = Deno.makeTempDirSync({ prefix: "winterm-suid-", dir: s.base });
  try {
    Deno.chmodSync(dir, 0o755);
    const grep = join(dir, "grep");
    Deno.copyFileSync(Deno.realPathSync("/usr/bin/grep"), grep);
    Deno.chownSync(grep, 0, 0);
    Deno.chmodSync(grep, 0o4755);
    const command = `${grep} -E '^(Uid|CapEff):' /proc/self/status`;
    const confined = await run(s, command);
    const [uids, caps] = confined.stdout.trim().split("\n");
    assertEquals(uids.split(/\s+/)[2], String(s.uid), "the effective uid changed");
    match(caps, /CapEff:\s+0{16}/);
    if (s.uid !== 0) {
      // Without the sandbox the copy does run as root: the attack is real.
      const control = await run(s, command, null);
      assertEquals(control.stdout.split("\n")[0].split(/\s+/)[2], "0");
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

async function terminal(s: Subject): Promise<void> {
  const created = await s.mcp.callOk<{ terminalId: string; sandbox?: { mode: string } }>(
    "terminal_create",
    { shell: "bash", cwd: s.work, env: { PATH }, sandbox: WORKSPACE },
  );
  assertEquals(created.sandbox?.mode, "workspace-write");
  const terminalId = created.terminalId;
  const run = (command: string) =>
    s.mcp.callOk<{ output: string; exitCode: number | null; hint?: string }>("terminal_run", {
      terminalId,
      command,
      timeoutMs: 60_000,
    });
  try {
    match((await run("tty")).output, /^\/dev\/pts\/\d+\n$/);
    await run(`sleep ${s.marker}7 &`);
    match((await run("jobs")).output, /Running\s+sleep/);
    await s.mcp.callOk("terminal_resize", { terminalId, cols: 101, rows: 33 });
    // Typed, not terminal_run: a run right after a resize can be answered by the prompt the
    // resize redraws (seen without a sandbox too: issue 35's business).
    const size = await s.mcp.callOk<{ condition: string }>("terminal_write", {
      terminalId,
      input: "stty size",
      pattern: "33 101",
      timeoutMs: 60_000,
    });
    assertEquals(size.condition, "pattern", JSON.stringify(size));
    const denied = await run(`touch /etc/winterm-sbx-${s.marker}-t`);
    ok(denied.exitCode !== 0 && denied.hint?.includes("sandbox"), JSON.stringify(denied));
    // Ctrl+C reaches the foreground job.
    await s.mcp.callOk("terminal_write", { terminalId, input: `sleep ${s.marker}8` });
    ok(await eventually(() => processesWith(`sleep ${s.marker}8`).length === 1));
    await s.mcp.callOk("terminal_write", { terminalId, keys: ["ctrl_c"] });
    ok(await eventually(() => processesWith(`sleep ${s.marker}8`).length === 0));
    assertEquals((await run("echo back")).output, "back\n");
    ok(processesWith(`sleep ${s.marker}7`).length === 1);
  } finally {
    await s.mcp.callOk("terminal_release", { terminalId });
  }
  ok(await eventually(() => processesWith(`sleep ${s.marker}7`).length === 0), "the tree lives");
}

async function allowlist(s: Subject): Promise<void> {
  const upstream = (name: string) =>
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response(name));
  const a = upstream("upstream-A"), b = upstream("upstream-B");
  try {
    const sandbox = {
      mode: "workspace-write",
      network: { allow: [`127.0.0.1:${a.addr.port}`] },
    };
    const curl = "curl -sS --max-time 30";
    const through = await run(s, `${curl} http://127.0.0.1:${a.addr.port}/`, sandbox);
    assertEquals([through.exit_code, through.stdout], [0, "upstream-A"]);
    const tunnel = await run(s, `${curl} -p http://127.0.0.1:${a.addr.port}/`, sandbox);
    assertEquals([tunnel.exit_code, tunnel.stdout], [0, "upstream-A"]);
    const other = await run(s, `${curl} -f http://127.0.0.1:${b.addr.port}/`, sandbox);
    ok(other.exit_code !== 0 && !other.stdout.includes("upstream-B"));
    const refusal = other.sandbox?.refused?.at(-1);
    assertEquals([refusal?.host, refusal?.port], ["127.0.0.1", b.addr.port]);
    match(refusal!.reason, /is not in the sandbox's network allowlist/);
    match(other.message, /its network proxy refused 1 connection/);
    const direct = await run(
      s,
      `${curl} --noproxy '*' http://127.0.0.1:${a.addr.port}/`,
      sandbox,
    );
    ok(direct.exit_code !== 0 && !direct.stdout.includes("upstream-A"), direct.stdout);
    // The audit log names the refusal.
    const records = () =>
      Deno.readTextFileSync(s.audit).trim().split("\n").map((line) => JSON.parse(line));
    ok(
      await eventually(() =>
        records().some((r) => r.event === "network-refused" && r.port === b.addr.port)
      ),
    );
    const start = records().find((r) => r.event === "start" && r.sandbox?.network?.allow);
    assertEquals(start.sandbox, {
      mode: "workspace-write",
      network: { allow: [`127.0.0.1:${a.addr.port}`] },
      backend: "landlock+seccomp",
    });
  } finally {
    await Promise.all([a.shutdown(), b.shutdown()]);
  }
}

/** Every check against one server. */
async function attack(s: Subject, withSetuid: boolean): Promise<void> {
  await filesystemAttacks(s);
  await networkAttacks(s);
  await processAttacks(s);
  if (withSetuid) await setuidAttack(s);
  await terminal(s);
  await allowlist(s);
}

async function bounded(fn: () => Promise<void>, pid: () => number | undefined): Promise<void> {
  const limit = setTimeout(() => {
    const server = pid();
    if (server) Deno.kill(server, "SIGKILL");
  }, 2 * SERVER_TEST_LIMIT_MS);
  try {
    await fn();
  } finally {
    clearTimeout(limit);
  }
}

Deno.test({
  name: "sandbox as root: workspace-write with the network off holds against every attack",
  ignore: !usable || !runnerIsRoot,
  async fn() {
    const { subject: s, remove } = await subject();
    try {
      await bounded(() => attack(s, true), () => s.mcp.pid);
    } finally {
      await s.mcp.close();
      remove();
    }
  },
});

Deno.test({
  name:
    "sandbox as an ordinary user: workspace-write with the network off holds against every attack",
  ignore: !usable,
  async fn() {
    if (!runnerIsRoot) {
      // The runner is the ordinary user: the server runs as it, from source.
      const { subject: s, remove } = await subject();
      try {
        await bounded(() => attack(s, false), () => s.mcp.pid);
      } finally {
        await s.mcp.close();
        remove();
      }
      return;
    }
    // As root: the bundle, served as nobody (the runner's Deno cache is under /root).
    await withBundle(async (main) => {
      for (let dir = join(main, ".."); dir.includes("/dist/"); dir = join(dir, "..")) {
        Deno.chmodSync(dir, 0o755);
      }
      const { subject: s, remove } = await subject(main, NOBODY);
      try {
        await bounded(() => attack(s, true), () => s.mcp.pid);
      } finally {
        await s.mcp.close();
        remove();
      }
    });
  },
});

Deno.test({
  name: "the policy file's sandbox is every call's default and ceiling; REST takes sandbox too",
  ignore: !usable,
  async fn() {
    const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-sandbox-policy-" }));
    const policy = join(dir, "policy.json");
    Deno.writeTextFileSync(policy, JSON.stringify({ sandbox: { mode: "read-only" } }));
    const mcp = await connect(["--policy", policy], { DENO_DIR: await denoDir() });
    try {
      const plain = await mcp.callOk<Answer>("run_command", {
        command: "touch made",
        working_directory: dir,
        wait_ms: 60_000,
      });
      assertEquals(plain.sandbox?.mode, "read-only");
      ok(plain.exit_code !== 0 && !exists(join(dir, "made")));
      match(plain.message, /it ran in a sandbox \(read-only, network off\): it may write nowhere/);
      const looser = await mcp.call("run_command", {
        command: "true",
        sandbox: { mode: "workspace-write" },
      });
      ok(looser.isError);
      match(
        (looser.content as { text: string }[])[0].text,
        /^'sandbox\.mode': sandbox mode 'workspace-write' is looser than the server's 'read-only'/,
      );
    } finally {
      await mcp.close();
    }
    // A policy file whose sandbox cannot be used stops the server, with the reason.
    Deno.writeTextFileSync(policy, JSON.stringify({ sandbox: { writable: ["/no/such/dir"] } }));
    const { code, stderr } = await startAlone(["--policy", policy]);
    assertEquals(code, 2);
    match(stderr, /sandbox\.writable\[0\] '\/no\/such\/dir' does not exist/);
    // REST.
    const server = await startHttpServer([], { DENO_DIR: await denoDir() });
    try {
      const created = await request(server, "POST", "/api/terminals", {
        body: { command: "tty", args: [], cwd: dir, sandbox: { mode: "workspace-write" } },
      });
      assertEquals(created.status, 201, JSON.stringify(created.json));
      assertEquals(created.json.data.sandbox.mode, "workspace-write");
      const bad = await request(server, "POST", "/api/terminals", {
        body: { command: "true", cwd: dir, sandbox: { network: { allow: ["bad host"] } } },
      });
      assertEquals(bad.status, 400, JSON.stringify(bad.json));
      match(bad.json.error.message, /is not a host/);
    } finally {
      await server.stop();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
