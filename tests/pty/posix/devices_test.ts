/**
 * Terminals by device number (src/pty/posix/devices.ts): `tty_nr` decoded as the kernel
 * encodes it, hostile numbers included; `statx` read right, against python's `os.stat` and
 * the kernel's own `tty_nr` of a process in one of our terminals.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import {
  characterDevice,
  CONTROLLING_TERMINAL,
  decodeDevice,
  sameDevice,
} from "../../../src/pty/posix/devices.ts";
import { libc } from "../../../src/pty/posix/libc.ts";
import { openTerminal } from "../../../src/pty/posix/pty.ts";
import { start, tempDir } from "../../helpers/process.ts";

const linux = Deno.build.os === "linux";

/** Linux's `new_encode_dev`, as `/proc/<pid>/stat` prints it: a signed 32-bit number. */
function kernelEncoding(major: number, minor: number): number {
  return ((minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12)) | 0;
}

Deno.test("devices: tty_nr decodes to the major and minor it was encoded from", () => {
  // /dev/pts/0 and /dev/pts/256 (still major 136: the minor goes on past 255).
  assertEquals(decodeDevice(34816), { major: 136, minor: 0 });
  assertEquals(decodeDevice(kernelEncoding(136, 256)), { major: 136, minor: 256 });
  assertEquals(decodeDevice(1280), CONTROLLING_TERMINAL);
  ok(!sameDevice(decodeDevice(kernelEncoding(136, 256)), decodeDevice(kernelEncoding(137, 0))));
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0xfff }),
      fc.integer({ min: 0, max: 0xfffff }),
      (major, minor) => {
        assertEquals(decodeDevice(kernelEncoding(major, minor)), { major, minor });
      },
    ),
    { numRuns: 20_000 },
  );
  // Whatever a file says, the answer is a device number in range.
  fc.assert(
    fc.property(fc.oneof(fc.integer(), fc.double(), fc.constant(NaN)), (encoded) => {
      const { major, minor } = decodeDevice(encoded);
      ok(Number.isInteger(major) && major >= 0 && major <= 0xfff);
      ok(Number.isInteger(minor) && minor >= 0 && minor <= 0xfffff);
    }),
  );
});

Deno.test({
  name: "devices: statx tells character devices, by whatever name, and nothing else",
  ignore: !linux,
  fn() {
    assertEquals(characterDevice("/dev/null"), { major: 1, minor: 3 });
    assertEquals(characterDevice("/dev/tty"), CONTROLLING_TERMINAL);
    const dir = tempDir("winterm-devices-");
    try {
      Deno.writeTextFileSync(`${dir}/file`, "");
      Deno.symlinkSync("/dev/null", `${dir}/link`);
      assertEquals(characterDevice(`${dir}/link`), { major: 1, minor: 3 });
      assertEquals(characterDevice(`${dir}/file`), undefined);
      assertEquals(characterDevice(dir), undefined);
      assertEquals(characterDevice(`${dir}/missing`), undefined);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
    // A terminal of ours, against python's stat of it.
    const { parentFds, childFds, slavePath } = openTerminal(80, 24);
    try {
      const python = new Deno.Command("python3", {
        args: [
          "-c",
          "import os, sys; d = os.stat(sys.argv[1]).st_rdev; print(os.major(d), os.minor(d))",
          slavePath!,
        ],
      }).outputSync();
      const [major, minor] = new TextDecoder().decode(python.stdout).trim().split(" ").map(Number);
      assertEquals(characterDevice(slavePath!), { major, minor });
    } finally {
      for (const fd of [...parentFds, ...childFds]) libc().close(fd);
    }
  },
});

Deno.test({
  name: "devices: a process's tty_nr is the device of the terminal it runs in",
  ignore: !linux,
  async fn() {
    const script = "import os; d = os.fstat(0).st_rdev; " +
      "print('dev', open('/proc/self/stat').read().rsplit(')', 1)[1].split()[4], " +
      "os.major(d), os.minor(d), 'end')";
    const run = await start("python3", ["-c", script]);
    await run.exited;
    const [tty, major, minor] = run.stdout().match(/dev (-?\d+) (\d+) (\d+) end/)!.slice(1)
      .map(Number);
    assertEquals(decodeDevice(tty), { major, minor });
  },
});
