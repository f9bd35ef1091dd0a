/**
 * `#!` lines read as Linux reads them (src/pty/posix/shebang.ts): hostile lines (long, without
 * a newline, NULs, only blanks) parsed exactly as the kernel runs them, checked against the
 * kernel itself; env's argument followed only where it can be told; interpreter chains bounded.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  envTarget,
  LINE_BYTES,
  MAX_INTERPRETERS,
  parseShebang,
  scriptInterpreters,
} from "../../../src/pty/posix/shebang.ts";
import { fc } from "../../helpers/arbitraries.ts";

const linux = Deno.build.os === "linux";
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

Deno.test("parseShebang: the kernel's splitting (one argument, blanks trimmed, NUL ends it)", () => {
  assertEquals(parseShebang(bytes("#!/bin/sh\n")), { interpreter: "/bin/sh" });
  assertEquals(parseShebang(bytes("#! \t/usr/bin/env  python3 -u \t\nx")), {
    interpreter: "/usr/bin/env",
    argument: "python3 -u",
  });
  assertEquals(parseShebang(bytes("#!/bin/sh")), { interpreter: "/bin/sh" }); // ends at the file's end
  assertEquals(parseShebang(bytes("#!/bin/a\0b c\n")), { interpreter: "/bin/a" });
  assertEquals(parseShebang(bytes("#!/bin/a b\0c\n")), { interpreter: "/bin/a", argument: "b" });
  assertEquals(parseShebang(bytes("#!  \t \n")), undefined);
  assertEquals(parseShebang(bytes("#!\n/bin/sh\n")), undefined);
  assertEquals(parseShebang(bytes("\x7fELF...")), undefined);
  assertEquals(parseShebang(bytes(" #!/bin/sh\n")), undefined);
  // A name running past the bytes read: the kernel runs nothing.
  assertEquals(parseShebang(bytes("#!/" + "a".repeat(400))), undefined);
  // A long argument is cut where the kernel cuts it.
  const long = parseShebang(bytes("#!/bin/sh " + "b".repeat(400)));
  assertEquals(long?.interpreter, "/bin/sh");
  assertEquals(long?.argument, "b".repeat(LINE_BYTES - 1 - "#!/bin/sh ".length));
});

Deno.test({
  name: "parseShebang agrees with the kernel on hostile lines (run through /bin/echo)",
  ignore: !linux,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "winterm-shebang-" });
    const script = join(dir, "script");
    const piece = fc.constantFrom("a", "b", " ", "  ", "\t", "x y", "\0", "\n", "-", "/", "é");
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("", " ", "\t", "  \t"),
          fc.array(piece, { maxLength: 60 }),
          fc.integer({ min: 0, max: 300 }),
          fc.boolean(),
          async (lead, pieces, padding, newline) => {
            // An argument that echo takes as an option would change what it prints.
            const argument = pieces.join("").replace(/^[\s\0]*-/, "");
            const line = `#!${lead}/bin/echo ${argument}${"z".repeat(padding)}` +
              (newline ? "\n" : "");
            Deno.writeFileSync(script, bytes(line));
            Deno.chmodSync(script, 0o755);
            const parsed = parseShebang(Deno.readFileSync(script));
            let output: string | undefined;
            try {
              const result = await new Deno.Command(script, { stdout: "piped", stderr: "null" })
                .output();
              output = new TextDecoder().decode(result.stdout);
            } catch {
              output = undefined; // the kernel would not run it (ENOEXEC)
            }
            if (parsed === undefined) return output === undefined;
            const expected = parsed.argument === undefined
              ? `${script}\n`
              : `${parsed.argument} ${script}\n`;
            return parsed.interpreter === "/bin/echo" && output === expected;
          },
        ),
        { numRuns: 80 },
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test("envTarget: a name, nothing, or unclear; never a guess", () => {
  assertEquals(envTarget("python3"), { name: "python3" });
  assertEquals(envTarget(undefined), { nothing: true });
  assertEquals(envTarget("-S python3 -u"), { name: "python3" });
  assertEquals(envTarget("-Spython3"), { name: "python3" });
  assertEquals(envTarget("--split-string=-i node --x"), { name: "node", path: "/bin:/usr/bin" });
  assertEquals(envTarget("-S -u PATH perl"), { name: "perl", path: "/bin:/usr/bin" });
  assertEquals(envTarget("-S -uHOME perl"), { name: "perl" });
  assertEquals(envTarget("-S FOO=1 -- ruby"), { name: "ruby" });
  assertEquals(envTarget("-S FOO=1 ruby"), { name: "ruby" });
  assertEquals(envTarget("FOO=1"), { nothing: true });
  ok("unclear" in envTarget("-S PATH=/tmp/x python3"));
  ok("unclear" in envTarget("-S ${X} python3"));
  ok("unclear" in envTarget("-S 'python3'"));
  ok("unclear" in envTarget("-C /tmp python3"));
  ok("unclear" in envTarget("-S --chdir=/tmp python3"));
  ok("unclear" in envTarget("-S -u"));
  // Without -S the whole argument is one name (env finds no such program).
  assertEquals(envTarget("python3 -u"), { name: "python3 -u" });
});

Deno.test({
  name: "scriptInterpreters: the chain through env and nested scripts, bounded",
  ignore: !linux,
  fn() {
    const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "winterm-chain-" }));
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      Deno.writeTextFileSync(path, text);
      Deno.chmodSync(path, 0o755);
      return path;
    };
    try {
      const env = { PATH: `${dir}:/usr/bin:/bin` };
      const inner = write("inner", "#!/bin/sh\necho inner\n");
      const outer = write("outer", `#!${inner}\n`);
      const viaEnv = write("via-env", "#!/usr/bin/env inner\n");
      const sh = Deno.realPathSync("/bin/sh");
      assertEquals(scriptInterpreters(outer, { cwd: dir, env }), {
        chain: [
          { name: inner, realPath: inner, script: outer },
          { name: "/bin/sh", realPath: sh, script: inner },
        ],
      });
      const chain = scriptInterpreters(viaEnv, { cwd: dir, env }).chain;
      assertEquals(chain.map((step) => [step.realPath, step.viaEnv ?? false]), [
        [Deno.realPathSync("/usr/bin/env"), false],
        [inner, true],
        [sh, false],
      ]);
      // A script naming itself: bounded, and said to be unclear.
      const loop = write("loop", `#!${join(dir, "loop")}\n`);
      const looped = scriptInterpreters(loop, { cwd: dir, env });
      assertEquals(looped.chain.length, MAX_INTERPRETERS);
      ok(looped.unclear?.includes("nested"));
      // A program the server cannot read cannot be told.
      const hidden = write("hidden", "#!/bin/sh\n");
      Deno.chmodSync(hidden, 0o111);
      if (Deno.uid() !== 0) ok(scriptInterpreters(hidden, { cwd: dir, env }).unclear);
      // A relative interpreter is found from the working directory, as the kernel finds it.
      write("rel", "#!./inner\n");
      assertEquals(
        scriptInterpreters(join(dir, "rel"), { cwd: dir, env }).chain[0].realPath,
        inner,
      );
      // env finds nothing: nothing more runs.
      write("none", "#!/usr/bin/env no-such-program-here\n");
      assertEquals(scriptInterpreters(join(dir, "none"), { cwd: dir, env }).chain.length, 1);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
