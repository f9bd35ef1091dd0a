/**
 * The policy cannot be raced: a program link flipped without pause between an allowed and a
 * denied script over 400 launches never runs the denied one, a working-directory link flipped
 * between the allowed root and a directory outside it over 400 launches never starts a process
 * outside, and every audit record names the file and directory that were really used. Through
 * the real server (stdio MCP) started with the README's flags.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { connect, type Connection, text } from "../helpers/mcp.ts";
import { tempDir } from "../helpers/process.ts";

const posix = Deno.build.os !== "windows";
const LAUNCHES = 400;
/** Launches in flight at once (the machine is shared: a few are enough to keep it busy). */
const PARALLEL = 8;

/** A link flipping between two targets in a worker; the returned function stops it. */
async function flipping(
  link: string,
  targets: [string, string],
): Promise<() => Promise<number>> {
  const worker = new Worker(new URL("../helpers/flip_worker.ts", import.meta.url), {
    type: "module",
  });
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const messages: unknown[] = [];
  let wake = () => {};
  worker.onmessage = (event) => {
    messages.push(event.data);
    wake();
  };
  const next = async () => {
    while (messages.length === 0) await new Promise<void>((resolve) => wake = resolve);
    return messages.shift();
  };
  worker.postMessage({ link, targets, stop });
  await next(); // "flipping"
  return async () => {
    Atomics.store(stop, 0, 1);
    const flips = await next() as number;
    worker.terminate();
    return flips;
  };
}

/** Runs `launch` `count` times, `PARALLEL` at a time. */
async function launches<T>(count: number, launch: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < count) {
      const index = next++;
      results[index] = await launch(index);
    }
  }));
  return results;
}

interface Outcome {
  token?: string;
  refusal?: string;
  stdout?: string;
}

/** Starts a command; waits for its output if it started. */
async function attempt(mcp: Connection, args: Record<string, unknown>): Promise<Outcome> {
  const result = await mcp.call("run_command", {
    command: "race",
    shell_type: "executable",
    use_pty: false,
    ...args,
  });
  if (result.isError) return { refusal: text(result) };
  const { token } = result.structuredContent as { token: string };
  const done = await mcp.callOk<{ stdout: string; status: string }>("query_command_status", {
    token,
    wait_ms: 30_000,
  });
  assertEquals(done.status, "completed");
  return { token, stdout: done.stdout };
}

// deno-lint-ignore no-explicit-any
function auditRecords(path: string): any[] {
  return Deno.readTextFileSync(path).trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test({
  name: "policy race: 400 launches under a flipping program link, 400 under a flipping cwd link",
  ignore: !posix,
  async fn() {
    const root = Deno.realPathSync(tempDir("winterm-race-"));
    const bin = join(root, "bin"), work = join(root, "work"), outside = join(root, "outside");
    const inside = join(work, "inside");
    for (const dir of [bin, work, inside, outside]) Deno.mkdirSync(dir);
    const allowed = join(bin, "allowed"), denied = join(bin, "denied");
    const trace = join(root, "denied-ran");
    Deno.writeTextFileSync(allowed, "#!/bin/sh\necho ALLOWED\n", { mode: 0o755 });
    Deno.writeTextFileSync(denied, `#!/bin/sh\necho DENIED >> '${trace}'\necho DENIED\n`, {
      mode: 0o755,
    });
    const policy = join(root, "policy.json"), audit = join(root, "audit.jsonl");
    Deno.writeTextFileSync(
      policy,
      JSON.stringify({
        // The scripts' interpreter is judged too: an allow list names it.
        programs: { allow: [allowed, "pwd", "sh"], deny: [denied] },
        cwd: { allow: [work] },
      }),
    );
    const programLink = join(root, "program"), cwdLink = join(root, "cwd");
    Deno.symlinkSync(allowed, programLink);
    Deno.symlinkSync(inside, cwdLink);
    const pwd = Deno.realPathSync("/bin/pwd");
    const mcp = await connect(["--policy", policy, "--audit", audit]);
    try {
      // The program link.
      let stop = await flipping(programLink, [allowed, denied]);
      const programs = await launches(
        LAUNCHES,
        () => attempt(mcp, { executable: programLink, working_directory: work }),
      ).finally(stop);
      const ran = programs.filter((outcome) => outcome.token);
      for (const outcome of programs) {
        if (outcome.refusal) {
          match(outcome.refusal, /really .*\/bin\/denied\) matches programs\.deny/);
        } else assertEquals(outcome.stdout, "ALLOWED\n");
      }
      let deniedRuns = 0;
      try {
        deniedRuns = Deno.readTextFileSync(trace).split("\n").filter(Boolean).length;
      } catch {
        // never ran: no trace
      }
      assertEquals(deniedRuns, 0, "a denied program ran");
      // Both sides of the flip were seen, or the race was not run at all.
      ok(ran.length > 0 && ran.length < LAUNCHES, `${ran.length} of ${LAUNCHES} started`);

      // The working-directory link.
      stop = await flipping(cwdLink, [inside, outside]);
      const directories = await launches(
        LAUNCHES,
        () => attempt(mcp, { executable: "pwd", args: ["-P"], working_directory: cwdLink }),
      ).finally(stop);
      const started = directories.filter((outcome) => outcome.token);
      for (const outcome of directories) {
        if (outcome.refusal) match(outcome.refusal, /outside the allowed roots/);
        else assertEquals(outcome.stdout, `${inside}\n`, "a command ran outside the root");
      }
      ok(
        started.length > 0 && started.length < LAUNCHES,
        `${started.length} of ${LAUNCHES} started`,
      );

      // Every start record names what ran, and where.
      const records = auditRecords(audit);
      const starts = new Map(
        records.filter((r) => r.event === "start").map((record) => [record.id, record]),
      );
      for (const { token } of ran) {
        const record = starts.get(token);
        assertEquals([record.program, record.requested, record.cwd], [allowed, programLink, work]);
      }
      for (const { token } of started) {
        const record = starts.get(token);
        assertEquals([record.program, record.cwd], [pwd, inside]);
      }
      const refused = records.filter((r) => r.event === "refused");
      assertEquals(refused.length, 2 * LAUNCHES - ran.length - started.length);
      for (const record of refused) {
        ok(
          record.program === denied || (record.program === pwd && record.cwd === outside),
          JSON.stringify(record),
        );
      }
    } finally {
      await mcp.close();
      Deno.removeSync(root, { recursive: true });
    }
  },
});
