/**
 * The command policy and the audit log, through both front ends (REST over HTTP, MCP over
 * stdio): programs matched on the resolved file however they are reached, working
 * directories held to their roots through `..` and symbolic links, protected variables, and
 * a JSON-lines record of everything started, refused, typed, killed and ended.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { basename, join } from "node:path";
import { request, startHttpServer } from "../helpers/http.ts";
import { connect, startAlone, text } from "../helpers/mcp.ts";
import { eventually } from "../helpers/process.ts";

const linux = Deno.build.os === "linux";

/** A scratch tree: work/ (allowed), outside/, aliases of /usr/bin/sleep, an escaping link. */
function scratch() {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-policy-" }));
  const work = join(root, "work"), outside = join(root, "outside"), bin = join(root, "bin");
  for (const dir of [work, outside, bin]) Deno.mkdirSync(dir);
  const sleep = Deno.realPathSync("/usr/bin/sleep");
  Deno.symlinkSync(sleep, join(bin, "sleep")); // an earlier PATH entry
  Deno.symlinkSync(sleep, join(root, "nap")); // a symlink under another name
  Deno.symlinkSync(outside, join(work, "escape")); // a directory link out of the root
  const policy = join(root, "policy.json");
  Deno.writeTextFileSync(
    policy,
    JSON.stringify({
      programs: { deny: ["/usr/bin/sleep", "sudo"] },
      cwd: { allow: [work] },
      env: { protect: ["LD_PRELOAD"] },
    }),
  );
  return { root, work, outside, bin, policy, audit: join(root, "audit.jsonl"), sleep };
}

Deno.test({
  name:
    "REST: a denied program is refused however it is reached; cwd roots and protected variables hold",
  ignore: !linux,
  async fn() {
    const dirs = scratch();
    const server = await startHttpServer(["--policy", dirs.policy, "--audit", dirs.audit]);
    try {
      const create = (body: Record<string, unknown>) =>
        request(server, "POST", "/api/terminals", { body: { cwd: dirs.work, ...body } });
      const refusals: [Record<string, unknown>, RegExp][] = [
        [{ command: "sleep", args: ["1"] }, /matches programs\.deny entry '\/usr\/bin\/sleep'/],
        [{ command: "/usr/bin/../bin/sleep", args: ["1"] }, /programs\.deny/],
        [
          { command: "/bin/sleep", args: ["1"] },
          /\/bin\/sleep \(really \/usr\/bin\/sleep\) matches programs\.deny/,
        ],
        [
          { command: join(dirs.root, "nap"), args: ["1"] },
          /nap \(really \/usr\/bin\/sleep\) matches programs\.deny/,
        ],
        [
          { command: "sleep", args: ["1"], env: { PATH: `${dirs.bin}:/usr/bin:/bin` } },
          /bin\/sleep \(really \/usr\/bin\/sleep\)/,
        ],
        [
          { command: "echo", args: ["x"], cwd: dirs.outside },
          /outside the allowed roots \(cwd\.allow\)/,
        ],
        [
          { command: "echo", args: ["x"], cwd: join(dirs.work, "..", "outside") },
          /outside the allowed roots/,
        ],
        [
          { command: "echo", args: ["x"], cwd: join(dirs.work, "escape") },
          /outside the allowed roots/,
        ],
        [
          { command: "echo", args: ["x"], env: { LD_PRELOAD: "/tmp/x.so" } },
          /LD_PRELOAD may not be set \(env\.protect/,
        ],
      ];
      for (const [body, reason] of refusals) {
        const answer = await create(body);
        assertEquals(
          [answer.status, answer.json.error?.code],
          [403, "FORBIDDEN"],
          JSON.stringify(body),
        );
        match(answer.json.error.message, /^refused by policy: /);
        match(answer.json.error.message, reason);
      }
      const allowed = await create({ command: "echo", args: ["allowed"] });
      assertEquals(allowed.status, 201, JSON.stringify(allowed.json));
      const id = allowed.json.data.terminalId;
      const shell = await create({ shell: "sh" });
      assertEquals(shell.status, 201);
      await request(server, "POST", `/api/terminals/${shell.json.data.terminalId}/input`, {
        body: { input: "echo typed-secret" },
      });
      await request(server, "DELETE", `/api/terminals/${shell.json.data.terminalId}`);

      // The audit log: starts, refusals, input sizes (not content), kills, exits.
      // deno-lint-ignore no-explicit-any
      let records: any[] = [];
      // Both exits, in whichever order they came.
      await eventually(
        () =>
          [shell.json.data.terminalId, id].every((terminal) =>
            records.some((r) => r.event === "exit" && r.id === terminal)
          ),
        undefined,
        () => {
          records = Deno.readTextFileSync(dirs.audit).trim().split("\n").map((line) =>
            JSON.parse(line)
          );
        },
      );
      const refused = records.filter((r) => r.event === "refused");
      assertEquals(refused.length, refusals.length);
      ok(
        refused.every((r) =>
          r.via === "rest" && r.kind === "terminal" && typeof r.reason === "string"
        ),
      );
      const start = records.find((r) => r.event === "start" && r.id === id);
      assertEquals([start.via, start.program, start.args, start.cwd], ["rest", "/usr/bin/echo", [
        "allowed",
      ], dirs.work]);
      ok(typeof start.pid === "number" && !Number.isNaN(Date.parse(start.time)));
      const input = records.find((r) => r.event === "input");
      assertEquals([input.via, input.bytes, "content" in input], [
        "rest",
        "echo typed-secret\r".length,
        false,
      ]);
      ok(
        records.some((r) =>
          r.event === "kill" && r.id === shell.json.data.terminalId && r.signal === "SIGHUP"
        ),
      );
      ok(records.some((r) => r.event === "exit" && r.id === id && r.exitCode === 0));
    } finally {
      await server.stop();
      Deno.removeSync(dirs.root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "stdio MCP: the policy refuses with the rule; a shell it allows can run anything, unless shells are denied",
  ignore: !linux,
  async fn() {
    const dirs = scratch();
    const mcp = await connect(["--policy", dirs.policy, "--audit", dirs.audit], {
      WINTERM_AUDIT_INPUT: "content",
    });
    try {
      const direct = await mcp.call("run_command", {
        command: "sleep 1",
        shell_type: "executable",
        working_directory: dirs.work,
      });
      ok(direct.isError);
      match(
        text(direct),
        /^'command': refused by policy: .*programs\.deny entry '\/usr\/bin\/sleep'/,
      );
      // The policy governs what is started directly: sh is allowed, and sh can start sleep.
      const viaShell = await mcp.callOk<{ token: string }>("run_command", {
        command: "sleep 0.1; echo slept",
        working_directory: dirs.work,
      });
      const done = await mcp.callOk<{ stdout: string }>("query_command_status", {
        token: viaShell.token,
        wait_ms: 10_000,
      });
      assertEquals(done.stdout, "slept\n");
      const input = await mcp.callOk<{ token: string }>("run_command", {
        command: "cat",
        shell_type: "executable",
        working_directory: dirs.work,
      });
      await mcp.callOk("send_command_input", { token: input.token, input: "recorded", eof: true });
      // deno-lint-ignore no-explicit-any
      let records: any[] = [];
      await eventually(() => records.some((r) => r.event === "input"), 5000, () => {
        records = Deno.readTextFileSync(dirs.audit).trim().split("\n").map((line) =>
          JSON.parse(line)
        );
      });
      const typed = records.find((r) => r.event === "input");
      assertEquals([typed.via, typed.kind, typed.content], ["mcp-stdio", "command", "recorded\r"]);
    } finally {
      await mcp.close();
    }
    // A strict policy lists what may run, and so leaves shells out.
    Deno.writeTextFileSync(dirs.policy, JSON.stringify({ programs: { allow: ["echo"] } }));
    const strict = await connect(["--policy", dirs.policy]);
    try {
      const shell = await strict.call("run_command", { command: "echo hi" });
      ok(shell.isError);
      match(text(shell), /refused by policy: .*sh.* is not in programs\.allow/);
      const echo = await strict.callOk<{ token: string }>("run_command", {
        command: "echo hi",
        shell_type: "executable",
      });
      assertEquals(
        (await strict.callOk<{ stdout: string }>("query_command_status", {
          token: echo.token,
          wait_ms: 10_000,
        })).stdout,
        "hi\n",
      );
    } finally {
      await strict.close();
      Deno.removeSync(dirs.root, { recursive: true });
    }
  },
});

Deno.test({
  name: "a bad policy file stops the server from starting, with the reason",
  ignore: !linux,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const file = join(dir, "policy.json");
    for (
      const [content, reason] of [
        ["{ not json", /is not JSON/],
        [JSON.stringify({ programs: { allow: "git" } }), /'programs\.allow'/],
        [JSON.stringify({ commands: [] }), /Unexpected property/],
        [
          JSON.stringify({ cwd: { allow: ["/no/such/root"] } }),
          /cwd\.allow entry '\/no\/such\/root' does not exist/,
        ],
      ] as const
    ) {
      Deno.writeTextFileSync(file, content);
      const { code, stderr } = await startAlone(["--policy", file]);
      assertEquals(code, 2);
      match(stderr, reason);
    }
    Deno.removeSync(dir, { recursive: true });
  },
});

Deno.test({
  name: "an audit log that cannot be opened stops the server, naming the file",
  ignore: !linux,
  async fn() {
    const dir = Deno.makeTempDirSync();
    // Below a file: no user may create it (root passes permission checks, not this one).
    Deno.writeTextFileSync(join(dir, "file"), "");
    const audit = join(dir, "file", "audit.jsonl");
    const { code, stderr } = await startAlone(["--audit", audit]);
    assertEquals(code, 2);
    match(stderr, /winterm-mcp: Not a directory.*'[^']*\/file\/audit\.jsonl'/);
    Deno.removeSync(dir, { recursive: true });
  },
});

/**
 * The bypasses of a bare name and of `#!` lines (issue 37): with `python3` and `perl` denied,
 * the file python3 links to (by path and by its own name), a link to it under another name, and
 * scripts whose `#!` line names a denied interpreter (directly or through `/usr/bin/env`) are all
 * refused, from run_command and terminal_create, naming the rule; the audit log names the
 * interpreter.
 */
Deno.test({
  name:
    "stdio MCP: a denied bare name covers every file it denotes, links and other names included, and a script's #! interpreter is judged",
  ignore: !linux,
  async fn() {
    const python = Deno.realPathSync("/usr/bin/python3"); // /usr/bin/python3.11 here
    const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-policy-files-" }));
    const script = (name: string, line: string) => {
      const path = join(root, name);
      Deno.writeTextFileSync(path, `${line}\nprint("ran")\n`);
      Deno.chmodSync(path, 0o755);
      return path;
    };
    Deno.symlinkSync(python, join(root, "snake"));
    const perlScript = script("tool.pl", "#!/usr/bin/perl");
    const pythonScript = script("tool.py", `#!${python}`);
    const envScript = script("env.py", "#!/usr/bin/env python3");
    const policy = join(root, "policy.json"), audit = join(root, "audit.jsonl");
    Deno.writeTextFileSync(policy, JSON.stringify({ programs: { deny: ["python3", "perl"] } }));
    const mcp = await connect(["--policy", policy, "--audit", audit]);
    // The child's PATH, so that `python3.11` and env's `python3` are found where they are here.
    const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };
    try {
      const cases: [string, RegExp][] = [
        [
          python,
          /^'command': refused by policy: \/usr\/bin\/python3\S* matches programs\.deny entry 'python3'$/,
        ],
        [basename(python), /\/python3\S* matches programs\.deny entry 'python3'$/],
        [join(root, "snake"), /snake \(really .*\) matches programs\.deny entry 'python3'$/],
        [
          perlScript,
          /\/usr\/bin\/perl matches programs\.deny entry 'perl' \(it is the interpreter of .*tool\.pl's #! line\)/,
        ],
        [
          pythonScript,
          /matches programs\.deny entry 'python3' \(it is the interpreter of .*tool\.py's #! line\)/,
        ],
        [
          envScript,
          /python3 \(really .*\) matches programs\.deny entry 'python3' \(found on PATH by the #!\/usr\/bin\/env line of .*env\.py\)/,
        ],
      ];
      for (const [program, reason] of cases) {
        const run = await mcp.call("run_command", {
          command: program,
          shell_type: "executable",
          working_directory: root,
          env,
        });
        ok(run.isError, `run_command ${program} was not refused: ${text(run)}`);
        match(text(run), /^'command': refused by policy: /);
        match(text(run), reason);
        const terminal = await mcp.call("terminal_create", {
          command: program,
          args: ["-c", "1"],
          cwd: root,
          env,
        });
        ok(terminal.isError, `terminal_create ${program} was not refused: ${text(terminal)}`);
        match(text(terminal), reason);
      }
      // deno-lint-ignore no-explicit-any
      let records: any[] = [];
      await eventually(() => records.length >= cases.length * 2, 5000, () => {
        records = Deno.readTextFileSync(audit).trim().split("\n").filter(Boolean).map((line) =>
          JSON.parse(line)
        );
      });
      const refused = records.filter((r) => r.event === "refused");
      assertEquals(refused.length, cases.length * 2);
      const perl = refused.find((r) => r.program === perlScript);
      ok(perl, "the perl script's refusal is recorded");
      assertEquals(perl.interpreter, Deno.realPathSync("/usr/bin/perl"));
      const viaEnv = refused.find((r) => r.program === envScript);
      assertEquals(viaEnv.interpreter, [Deno.realPathSync("/usr/bin/env"), python]);
    } finally {
      await mcp.close();
      Deno.removeSync(root, { recursive: true });
    }
  },
});
