/**
 * The POSIX platform layer against real pseudo-terminals, shells and python3.
 */
import { deepStrictEqual as assertEquals, ok, rejects, throws } from "node:assert/strict";
import fc from "fast-check";
import { describeExit, spawn, SpawnError } from "../../../src/pty/mod.ts";
import { libc } from "../../../src/pty/posix/libc.ts";
import { openPipe, reactor } from "../../../src/pty/posix/reactor.ts";
import { FdReader, SharedFd } from "../../../src/pty/posix/streams.ts";
import { START_FLAGS } from "../../helpers/mcp.ts";
import {
  concat,
  eventually,
  processState,
  sessionMembers,
  start,
  tempDir,
  within,
} from "../../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";
const encoder = new TextEncoder();
const PY = "python3";

Deno.test({
  name: "the child leads its own session with the PTY as controlling terminal, IUTF8 set",
  ignore: !posix,
  async fn() {
    const script = [
      "import os, sys, termios",
      "print('session-leader', os.getsid(0) == os.getpid())",
      "print('tty', os.isatty(0), os.ttyname(0) == os.ttyname(1) == os.ttyname(2))",
      "print('foreground', os.tcgetpgrp(0) == os.getpgrp())",
      "print('ctty', os.open('/dev/tty', os.O_RDWR) >= 0)",
      // IUTF8 is 0x4000 on Linux and macOS (not every python exports the name).
      "print('iutf8', bool(termios.tcgetattr(0)[0] & getattr(termios, 'IUTF8', 0x4000)))",
    ].join("\n");
    const run = await start(PY, ["-c", script]);
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    const out = run.stdout();
    for (
      const line of [
        "session-leader True",
        "tty True True",
        "foreground True",
        "ctty True",
        "iutf8 True",
      ]
    ) {
      ok(out.includes(line), `missing '${line}' in ${JSON.stringify(out)}`);
    }
  },
});

Deno.test({
  name: "signals are at their defaults and unblocked; no server fd reaches the child",
  ignore: !linux,
  async fn() {
    for (const mode of ["pty", "pipe"] as const) {
      // cat keeps the dispositions it was given (python would ignore SIGPIPE itself).
      const status = await start("cat", ["/proc/self/status"], { mode });
      await status.exited;
      const mask = (name: string) =>
        BigInt("0x" + status.stdout().match(new RegExp(`${name}:\\s+([0-9a-f]+)`))![1]);
      assertEquals(mask("SigBlk"), 0n);
      // Signals 1-31; glibc itself ignores its internal ones (32, 33) in every spawned child.
      assertEquals(mask("SigIgn") & 0x7fffffffn, 0n);
      // 0-2 and the fd that listdir itself opened (3): nothing else.
      const fds = await start(PY, [
        "-c",
        "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))",
      ], { mode });
      await fds.exited;
      ok(fds.stdout().includes("[0, 1, 2, 3]"), `${mode}: ${fds.stdout()}`);
    }
  },
});

Deno.test({
  name: "Ctrl+C written to the terminal interrupts the foreground program",
  ignore: !posix,
  async fn() {
    // The program runs once spawn returns (posix_spawn returns after the exec): no wait first.
    const run = await start("sleep", ["30"]);
    await run.child.write(encoder.encode("\x03"));
    assertEquals(await run.exited, { exitCode: null, signal: "SIGINT" });
  },
});

Deno.test({
  name: "resize changes the size and delivers SIGWINCH",
  ignore: !posix,
  async fn() {
    const script = [
      "import os, signal, sys, time",
      "signal.signal(signal.SIGWINCH, lambda *a: (print('winch', *os.get_terminal_size()), sys.stdout.flush()))",
      "print('size', *os.get_terminal_size(), flush=True)",
      "time.sleep(10)",
    ].join("\n");
    const run = await start(PY, ["-c", script], { cols: 90, rows: 30 });
    await run.waitFor("size 90 30");
    run.child.resize(132, 43);
    await run.waitFor("winch 132 43");
    run.child.kill("SIGKILL");
    await run.exited;
  },
});

Deno.test({
  name: "no output is lost when a child writes a lot and exits at once",
  ignore: !posix,
  async fn() {
    for (let round = 0; round < 10; round++) {
      for (const mode of ["pty", "pipe"] as const) {
        const run = await start("sh", ["-c", "head -c 1000000 /dev/zero | tr '\\0' x; exit 7"], {
          mode,
        });
        assertEquals(await run.exited, { exitCode: 7, signal: null });
        assertEquals(run.stdout().length, 1_000_000, `${mode} round ${round}`);
      }
    }
  },
});

Deno.test({
  name: "floods that stop and start again arrive whole and in order, in both modes",
  ignore: !posix,
  async fn() {
    // Bursts of 200 KB with pauses between: each burst is read on the blocking pool (Linux)
    // and handed back to the reactor when it pauses, so every hand-over is crossed many times.
    const script = "for i in $(seq 0 39); do seq $((i * 40000)) $((i * 40000 + 39999)); " +
      "if [ $((i % 4)) = 0 ]; then sleep 0.02; fi; done";
    const expected = Array.from({ length: 1_600_000 }, (_, i) => `${i}\n`).join("");
    for (const mode of ["pty", "pipe"] as const) {
      const run = await start("sh", ["-c", script], { mode });
      assertEquals(await run.exited, { exitCode: 0, signal: null });
      const text = mode === "pty" ? run.stdout().replaceAll("\r\n", "\n") : run.stdout();
      ok(text === expected, `${mode}: ${text.length} characters, ${expected.length} expected`);
    }
  },
});

Deno.test({
  name: "output is lent from a few blocks read into again, whatever its amount",
  ignore: !posix,
  async fn() {
    // 100 bursts of 24 KiB (each read on the blocking pool on Linux), then a flood of 8 MB:
    // every chunk is a view of one of the reader's few blocks, so the reader's memory stays
    // the same whatever goes through it, and the bytes copied out are the program's, in order.
    const script =
      "for i in $(seq 100); do head -c 24576 /dev/zero | tr '\\0' x; sleep 0.011; done; " +
      "seq 1000000";
    const expected = "x".repeat(2_457_600) +
      Array.from({ length: 1_000_000 }, (_, i) => `${i + 1}\n`).join("");
    for (const mode of ["pty", "pipe"] as const) {
      const copies: Uint8Array[] = [];
      const memories = new Set<ArrayBufferLike>();
      const child = await spawn({
        file: "sh",
        args: ["-c", script],
        cwd: "/",
        env: Deno.env.toObject(),
        mode,
      });
      child.onData((data) => {
        memories.add(data.buffer);
        copies.push(data.slice());
      });
      assertEquals(await child.exited, { exitCode: 0, signal: null });
      const text = new TextDecoder().decode(concat(copies));
      ok(
        (mode === "pty" ? text.replaceAll("\r\n", "\n") : text) === expected,
        `${mode}: ${text.length} characters`,
      );
      // The reader's own block as it grows (4 to 64 KiB: five) and the pool's two.
      ok(memories.size <= 7, `${mode}: chunks came from ${memories.size} blocks`);
    }
  },
});

Deno.test({
  name: "floods stopped midway leave no fd open and no read running",
  ignore: !posix,
  async fn() {
    // In a process of its own: the tests beside it in this one (--parallel runs files in one
    // process) open and close fds meanwhile, and a count of this process's fds came back 56
    // where it had been 70.
    const dir = tempDir("winterm-floods-");
    const script = `${dir}/floods.ts`;
    const url = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
    Deno.writeTextFileSync(
      script,
      `
import { eventually, start } from ${url("../../helpers/process.ts")};
const openFds = () => [...Deno.readDirSync("/dev/fd")].length;
const flood = (mode) => start("sh", ["-c", "yes flood"], { mode });
// The reactor's own fds are opened by the first child.
const first = await flood("pty");
first.child.kill("SIGKILL");
await first.exited;
const before = openFds();
const runs = await Promise.all(Array.from({ length: 12 }, (_, i) => flood(i % 2 ? "pipe" : "pty")));
const flooding = (run) => eventually(() => run.bytes("stdout").length > 1 << 20);
const going = (await Promise.all(runs.map(flooding))).every(Boolean);
for (const run of runs) run.child.kill("SIGKILL");
await Promise.all(runs.map((run) => run.exited));
const closed = await eventually(() => openFds() === before);
console.log(JSON.stringify({ going, closed, before, after: openFds() }));
Deno.exit(0);
`,
    );
    try {
      // All access, as the suite has: counting /dev/fd needs it (the pty layer does not).
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", script],
      }).output();
      assertEquals(code, 0, new TextDecoder().decode(stderr));
      const { going, closed, before, after } = JSON.parse(new TextDecoder().decode(stdout));
      ok(going, "every flood got going");
      ok(closed, `fds open: ${after}, before: ${before}`);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "pipe mode keeps stderr apart and takes input until end of file",
  ignore: !posix,
  async fn() {
    const run = await start("sh", ["-c", "echo out; echo err >&2; cat; echo after-eof"], {
      mode: "pipe",
    });
    await run.child.write(encoder.encode("typed\n"));
    await run.child.closeInput();
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    assertEquals(run.stdout(), "out\ntyped\nafter-eof\n");
    assertEquals(run.stderr(), "err\n");
    throws(() => run.child.resize(10, 10), /PTY mode/);
  },
});

Deno.test({
  name: "end of input on a terminal is Ctrl+D",
  ignore: !posix,
  async fn() {
    const run = await start("sh", ["-c", "cat; echo done"]);
    await run.child.write(encoder.encode("line\r"));
    await run.child.closeInput();
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    ok(run.stdout().includes("done"));
    await rejects(run.child.write(encoder.encode("late")), /exited/);
  },
});

Deno.test({
  name: "kill reaches every process of the session, background jobs of an interactive shell too",
  ignore: !linux,
  async fn() {
    const run = await start("bash", ["--norc", "--noprofile", "-i"], {
      env: { ...Deno.env.toObject(), PS1: "$ " },
    });
    await run.waitFor("$ ");
    // Jobs of an interactive shell get process groups of their own.
    await run.child.write(
      encoder.encode("sleep 300 & sleep 301 & (sleep 302; true) & echo jobs-started\r"),
    );
    await run.waitFor(/jobs-started\r?\n/);
    ok(await eventually(() => sessionMembers(run.child.pid).length >= 4), "jobs did not start");
    run.child.kill("SIGKILL");
    await run.exited;
    ok(
      await eventually(() => sessionMembers(run.child.pid).length === 0),
      "session members survived",
    );
  },
});

Deno.test({
  name: "what a child leaves running in its session is killed when it exits; no zombies",
  ignore: !linux,
  async fn() {
    const run = await start("sh", ["-c", "sleep 300 & echo job $!; sleep 301 & echo job $!"]);
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    ok(
      await eventually(() => sessionMembers(run.child.pid).length === 0),
      "background jobs survived",
    );
    assertEquals(processState(run.child.pid), undefined);
    // The jobs die after the shell: each is a zombie until its SIGCHLD is handled. (Only they
    // are looked at: other test files, run in this process, have children of their own.)
    const jobs = [...run.stdout().matchAll(/job (\d+)/g)].map((match) => Number(match[1]));
    assertEquals(jobs.length, 2, run.stdout());
    const zombies = () => jobs.filter((pid) => processState(pid) !== undefined);
    ok(await eventually(() => zombies().length === 0), `zombies left: ${zombies()}`);
  },
});

Deno.test({
  name: "100 terminals at once, and the runtime's blocking pool stays free for other work",
  ignore: !posix,
  async fn() {
    const runs = await Promise.all(Array.from(
      { length: 100 },
      (_, i) => start("sh", ["-c", `echo ready ${i}; read line; echo got $line`]),
    ));
    await Promise.all(runs.map((run, i) => run.waitFor(`ready ${i}`)));
    // File reads use the same blocking pool that a thread-per-terminal design would exhaust.
    const reads = await Promise.all(
      Array.from({ length: 64 }, () => Deno.readTextFile("/proc/self/status")),
    );
    ok(reads.every((text) => text.includes("Pid:")));
    let settled = 0;
    for (const run of runs) run.exited.then(() => settled++);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assertEquals(settled, 0, "terminals ended before the reads");
    await Promise.all(runs.map((run, i) => run.child.write(encoder.encode(`line${i}\r`))));
    const statuses = await Promise.all(runs.map((run) => run.exited));
    ok(statuses.every((status) => status.exitCode === 0));
    runs.forEach((run, i) => ok(run.stdout().includes(`got line${i}`), run.stdout()));
  },
});

Deno.test({
  name: "spawn failures name the cause",
  ignore: !posix,
  async fn() {
    await rejects(
      () => start("no-such-program-xyz", []),
      (error: unknown) => error instanceof SpawnError && error.code === "ENOENT",
    );
    await rejects(
      () => start("sh", [], { cwd: "/no/such/dir" }),
      (error: unknown) => error instanceof SpawnError && /working directory/.test(error.message),
    );
    const dir = Deno.makeTempDirSync();
    Deno.writeTextFileSync(`${dir}/not-executable`, "echo hi\n", { mode: 0o644 });
    await rejects(
      () => start(`${dir}/not-executable`, []),
      (error: unknown) => error instanceof SpawnError && error.code === "EACCES",
    );
    Deno.removeSync(dir, { recursive: true });
    await rejects(
      () => start("sh", ["a\0b"]),
      (error: unknown) => error instanceof SpawnError && error.code === "EINVAL",
    );
  },
});

Deno.test({
  name: "the program is found on the child's PATH, not the server's",
  ignore: !posix,
  async fn() {
    const dir = Deno.makeTempDirSync();
    try {
      Deno.writeTextFileSync(`${dir}/only-here`, "#!/bin/sh\necho found-it\n", { mode: 0o755 });
      const run = await start("only-here", [], { env: { PATH: `${dir}:/usr/bin:/bin` } });
      await run.exited;
      ok(run.stdout().includes("found-it"));
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a child whose status someone else took ends with an unknown status, not success",
  ignore: !posix,
  async fn() {
    // It runs until told: the reactor looks once as it starts watching (a child started on the
    // blocking pool may have exited already), and must find it running.
    const run = await start("sh", ["-c", "read line; exit 3"], { mode: "pipe" });
    await run.child.write(new TextEncoder().encode("go\n"));
    // Take the status first: a blocking waitpid on this thread, before the reactor can.
    const status = new Int32Array(1);
    assertEquals(libc().waitpid(run.child.pid, new Uint8Array(status.buffer), 0), run.child.pid);
    assertEquals((status[0] >> 8) & 0xff, 3);
    const exit = await run.exited;
    assertEquals(exit, { exitCode: null, signal: null });
    assertEquals(describeExit(exit), "exit status unknown");
  },
});

Deno.test({
  name: "a write the program does not take in time fails, saying truly how much it took",
  ignore: !linux,
  async fn() {
    // Each program reads nothing for a second, then counts what it was given.
    const programs = {
      pipe: "sleep 1; wc -c",
      pty: "stty raw -echo; echo ready; sleep 1; timeout --foreground 1 cat | wc -c",
    };
    for (const [mode, script] of Object.entries(programs) as ["pipe" | "pty", string][]) {
      const run = await start("sh", ["-c", script], { mode });
      if (mode === "pty") await run.waitFor("ready");
      const error = await run.child.write(new Uint8Array(1024 * 1024).fill(0x61), 300).then(
        () => undefined,
        (error: Error) => error,
      );
      const taken = error?.message.match(
        /^the program is not reading its input: it took (\d+) of 1048576 bytes within 0\.3 s; the rest was not sent$/,
      );
      ok(taken, `${mode}: ${error?.message}`);
      ok(Number(taken[1]) > 0 && Number(taken[1]) < 1024 * 1024, `${mode}: took ${taken[1]}`);
      if (mode === "pipe") await run.child.closeInput();
      assertEquals((await run.exited).exitCode, 0);
      // What the program read is exactly what the error said it took.
      ok(run.stdout().trim().endsWith(taken[1]), `${mode}: ${JSON.stringify(run.stdout())}`);
    }
  },
});

Deno.test({
  name: "the last input arrives whole on a terminal, lines of any length, after a line left open",
  ignore: !linux,
  async fn() {
    // Lines about the 4095 bytes a terminal in line mode keeps, characters of 1 to 4 bytes
    // across that limit, a line already open before: what the program reads is every byte.
    const piece = fc.constantFrom("a", "é", "€", "😀", "\n", "\t");
    const line = fc.oneof(
      fc.array(piece, { maxLength: 20 }).map((chars) => chars.join("")),
      fc.tuple(fc.integer({ min: 4080, max: 4100 }), piece).map(([n, char]) =>
        "x".repeat(n) + char
      ),
      fc.tuple(fc.integer({ min: 1300, max: 1400 }), piece).map(([n, char]) =>
        "é".repeat(n) + "😀" + char
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "é", "😀"), { maxLength: 30 }),
        fc.array(line, { maxLength: 6 }),
        async (open, lines) => {
          const before = open.join("");
          const text = lines.join("");
          const run = await start("sh", ["-c", "stty -echo; echo ready; sha256sum"]);
          try {
            await run.waitFor("ready");
            if (before) await run.child.write(encoder.encode(before));
            await run.child.writeLast(encoder.encode(text));
            // Input not ended would leave it reading for good.
            const ended = await within(run.exited, 30_000, "sha256sum did not see the end");
            assertEquals(ended, { exitCode: 0, signal: null });
          } finally {
            run.child.kill("SIGKILL"); // nothing once it has exited
          }
          const digest = new Uint8Array(
            await crypto.subtle.digest("SHA-256", encoder.encode(before + text)),
          );
          const hex = [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
          ok(run.stdout().includes(`${hex}  -`), `${before.length} + ${text.length} bytes`);
        },
      ),
      { numRuns: 12 },
    );
  },
});

Deno.test({
  name: "the last input on pipes is every byte as it is, then the pipe closed",
  ignore: !posix,
  async fn() {
    const run = await start("sh", ["-c", "od -An -tx1; echo after-eof"], { mode: "pipe" });
    await run.child.writeLast(new Uint8Array([0x03, 0x04, 0x0d, 0x61]));
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    assertEquals(run.stdout(), " 03 04 0d 61\nafter-eof\n");
    await rejects(run.child.write(encoder.encode("late")), /exited|closed/);
  },
});

Deno.test({
  name: "a terminal in line mode refuses a line longer than it keeps, whole; shorter lines pass",
  ignore: !linux,
  async fn() {
    const run = await start("sh", ["-c", "stty -echo; echo ready; wc -c"]);
    await run.waitFor("ready");
    // Linux keeps 4095 bytes of a line; the 4096th and later would be dropped without a word.
    await rejects(
      run.child.write(encoder.encode("z".repeat(4096) + "\n")),
      /line mode \(canonical input\), which keeps at most 4095 bytes of a line until Enter/,
    );
    // A line is counted across writes, until it ends.
    await run.child.write(encoder.encode("a".repeat(3000)));
    await rejects(run.child.write(encoder.encode("b".repeat(1096))), /line mode/);
    await run.child.write(encoder.encode("b".repeat(1095) + "\n" + "c".repeat(4095) + "\n"));
    await run.child.closeInput();
    assertEquals(await run.exited, { exitCode: 0, signal: null });
    ok(run.stdout().includes(String(4096 + 4096)), run.stdout());
  },
});

Deno.test({
  name: "under the shipped flags /proc is read through libc, and a tree is ended whole",
  ignore: !linux,
  async fn() {
    const dir = tempDir("winterm-flags-");
    const token = String(10000 + Math.floor(Math.random() * 89999));
    const markers = [1, 2, 3, 4].map((n) => `9${token}.${n}`);
    const script = `${dir}/tree.ts`;
    const url = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
    Deno.writeTextFileSync(
      script,
      `
import { spawn } from ${url("../../../src/pty/mod.ts")};
import { processesWith } from ${url("../../helpers/process.ts")};
let procRefused = false;
try {
  Deno.readDirSync("/proc");
} catch {
  procRefused = true;
}
const markers = ${JSON.stringify(markers)};
const child = await spawn({
  file: "sh",
  args: ["-c", \`setsid sleep \${markers[0]} & (sleep \${markers[1]} &); nohup sleep \${markers[2]} >/dev/null 2>&1 & sleep \${markers[3]}\`],
  cwd: "/",
  env: Deno.env.toObject(),
});
const count = () => markers.filter((m) => processesWith("sleep " + m).length > 0).length;
let deadline = Date.now() + 60_000;
while (count() < markers.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
const seen = count();
child.kill("SIGKILL");
await child.exited;
// Killed processes are gone once the kernel has ended them (zombies are not counted).
deadline = Date.now() + 60_000;
while (count() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({ procRefused, seen, survivors: count() }));
`,
    );
    try {
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["run", ...START_FLAGS, script],
      }).output();
      assertEquals(code, 0, new TextDecoder().decode(stderr));
      // Deno's own file API sees nothing there under these flags; libc sees every process.
      assertEquals(JSON.parse(new TextDecoder().decode(stdout)), {
        procRefused: true,
        seen: 4,
        survivors: 0,
      });
      // And from outside, with ps.
      const ps = await new Deno.Command("ps", { args: ["-eo", "args="] }).output();
      const lines = new TextDecoder().decode(ps.stdout).split("\n");
      assertEquals(lines.filter((line) => markers.some((m) => line === `sleep ${m}`)), []);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "when the drain limit passes while the blocking pool reads a flood, nothing written before it is lost",
  ignore: Deno.build.os !== "linux",
  async fn() {
    // The reactor only decides when to read: stood in for, so that the limit passes exactly
    // while a pool read is in flight (the reads are real). A machine at load 7-76 got there by
    // itself: the pool's read in flight was dropped, and the rest never read.
    const pooling = {
      add() {},
      remove() {},
      update() {},
      countRead() {},
      inTime: () => true,
      poolFlood: () => true,
      floodShared: () => false,
      poolDone() {},
    };
    const [readEnd, writeEnd] = openPipe({ read: true, write: true });
    const fill = (bytes: number) =>
      assertEquals(Number(libc().write(writeEnd, new Uint8Array(bytes), BigInt(bytes))), bytes);
    fill(64 * 1024);
    let got = 0, drained = false, finished = false;
    const { promise: ended, resolve: end } = Promise.withResolvers<void>();
    const reader: FdReader = new FdReader(
      pooling as unknown as ReturnType<typeof reactor>,
      new SharedFd(readEnd, 1),
      (data) => {
        got += data.length;
        // The first chunk read on the pool: the next read is in flight. The writer writes the
        // last of its output, exits (its end closes), and the drain limit passes.
        if (drained && !finished) {
          finished = true;
          fill(48 * 1024);
          libc().close(writeEnd);
          reader.finish();
        }
      },
      () => end(),
      true,
    );
    reader.drain();
    drained = true;
    await ended;
    ok(finished, "the pool read nothing");
    assertEquals(got, (64 + 48) * 1024);
  },
});

Deno.test({
  name: "when the drain limit passes, what the stream holds is read before reading stops",
  ignore: !posix,
  fn() {
    // A child wrote and exited while the event loop was held up past the limit: its output is
    // still in the pipe, unread by the reactor, when the limit's timer fires.
    const [readEnd, writeEnd] = openPipe({ read: true, write: false });
    const text = new TextEncoder().encode("written before the exit\n");
    assertEquals(Number(libc().write(writeEnd, text, BigInt(text.length))), text.length);
    libc().close(writeEnd);
    const got: Uint8Array[] = [];
    let ended = false;
    const reader = new FdReader(reactor(), new SharedFd(readEnd, 1), (data) => {
      got.push(data.slice());
    }, () => ended = true);
    reader.finish();
    ok(ended, "reading stopped");
    assertEquals(new TextDecoder().decode(concat(got)), "written before the exit\n");
  },
});
