/**
 * fd accounting: a spawn that fails (ENOEXEC, a missing interpreter), in PTY and pipe mode,
 * closes every descriptor it opened exactly once, and never closes one it did not own (which
 * another thread may have been given in the meantime). Watched with strace: the calls of the
 * JavaScript thread between two markers, in a script started with the README's flags.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { START_FLAGS } from "../../helpers/mcp.ts";
import { tempDir } from "../../helpers/process.ts";

const linux = Deno.build.os === "linux";

function hasStrace(): boolean {
  try {
    new Deno.Command("strace", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

const SCRIPT = (mod: string, dir: string) => `
import { openDirectory, spawn } from ${JSON.stringify(mod)};
const say = (text) => Deno.stderr.writeSync(new TextEncoder().encode(text + "\\n"));
const failures = [];
// The reactor's wake-up pipe is made on first use and kept: make it before counting.
await (await spawn({ file: "/bin/true", args: [], cwd: "/", env: {} })).exited;
say("ACCOUNTING-BEGIN");
for (const file of ["garbage", "no-interpreter"]) {
  for (const mode of ["pty", "pipe"]) {
    // As the launcher does: the working directory opened, and closed after the spawn.
    const directory = openDirectory("/");
    try {
      await spawn({ file: ${
  JSON.stringify(dir)
} + "/" + file, args: [], cwd: "/", directory, env: {}, mode });
      failures.push(file + " " + mode + ": started");
    } catch (error) {
      failures.push(file + " " + mode + ": " + error.code);
    } finally {
      directory.close();
    }
  }
}
say("ACCOUNTING-END");
say("RESULT " + JSON.stringify(failures));
`;

Deno.test({
  name: "a failed spawn closes each descriptor exactly once (strace)",
  ignore: !linux || !hasStrace(),
  async fn() {
    const dir = tempDir("winterm-fds-");
    try {
      // Executable, but neither a program nor a script: execve says ENOEXEC.
      Deno.writeFileSync(join(dir, "garbage"), new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]), {
        mode: 0o755,
      });
      Deno.writeTextFileSync(join(dir, "no-interpreter"), "#!/no/such/interpreter\n", {
        mode: 0o755,
      });
      const script = join(dir, "spawn.mjs");
      const mod = new URL("../../../src/pty/mod.ts", import.meta.url).href;
      Deno.writeTextFileSync(script, SCRIPT(mod, dir));
      const trace = join(dir, "trace");
      const { code, stderr } = await new Deno.Command("strace", {
        // A file per thread: no call is split around another thread's (the spawn itself runs
        // on the blocking pool).
        args: [
          "-ff",
          "-qq",
          "-o",
          trace,
          "-e",
          "trace=openat,open,pipe,pipe2,dup,dup2,dup3,close,write",
          "-e",
          "signal=none",
          Deno.execPath(),
          "run",
          ...START_FLAGS,
          script,
        ],
        stdout: "null",
      }).output();
      const output = new TextDecoder().decode(stderr);
      assertEquals(code, 0, output);
      const result = JSON.parse(output.match(/RESULT (.*)/)![1]);
      assertEquals(result, [
        "garbage pty: ENOEXEC",
        "garbage pipe: ENOEXEC",
        "no-interpreter pty: ENOENT",
        "no-interpreter pipe: ENOENT",
      ]);

      // The JavaScript thread's calls between the markers (its file has them).
      const lines = [...Deno.readDirSync(dir)]
        .filter((entry) => entry.name.startsWith("trace."))
        .map((entry) => Deno.readTextFileSync(join(dir, entry.name)).split("\n"))
        .find((lines) => lines.some((line) => line.includes('"ACCOUNTING-BEGIN\\n"'))) ?? [];
      const begin = lines.findIndex((line) => line.includes('"ACCOUNTING-BEGIN\\n"'));
      const end = lines.findIndex((line) => line.includes('"ACCOUNTING-END\\n"'));
      ok(begin >= 0 && end > begin, "markers not found in the trace");
      const calls = lines.slice(begin, end).map((line) => line.trim());
      const opened: number[] = [];
      const closed = new Map<number, number>();
      for (const call of calls) {
        const pipe = call.match(/^pipe2?\(\[(\d+), (\d+)\].*= 0$/);
        if (pipe) opened.push(Number(pipe[1]), Number(pipe[2]));
        const open = call.match(/^open(?:at)?\(.*= (\d+)$/);
        if (open) opened.push(Number(open[1]));
        const close = call.match(/^close\((\d+)\)\s+= (-?\d+)/);
        if (close) {
          ok(close[2] === "0", `a close failed: ${call}`);
          closed.set(Number(close[1]), (closed.get(Number(close[1])) ?? 0) + 1);
        }
      }
      // Four attempts: a directory and a terminal (master, slave) or three pipes each.
      ok(opened.length >= 2 * 3 + 2 * 7, `only ${opened.length} descriptors opened`);
      const counts = new Map<number, number>();
      for (const fd of opened) counts.set(fd, (counts.get(fd) ?? 0) + 1);
      for (const [fd, times] of counts) {
        assertEquals(closed.get(fd) ?? 0, times, `fd ${fd} opened ${times}x`);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
