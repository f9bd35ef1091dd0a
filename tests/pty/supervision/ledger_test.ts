/**
 * The ledger and recovery (src/pty/supervision/ledger.ts, posix.ts): a live server's ledger is
 * left alone; a dead one's leads to exactly the processes it vouches for (its marks, its roots
 * with their recorded start times) and nothing else: not a pid reused by another process, not
 * another server's marks.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { abandonedLedgers, hasLedgers, Ledger } from "../../../src/pty/supervision/ledger.ts";
import { bootId } from "../../../src/pty/posix/procfs.ts";
import { processEntry } from "../../../src/pty/posix/process_table.ts";
import { endAbandoned } from "../../../src/pty/supervision/posix.ts";
import { TREE_VARIABLE } from "../../../src/pty/posix/tree.ts";
import { staysFalse, tempDir } from "../../helpers/process.ts";

const linux = Deno.build.os === "linux";

/** A sleep started by the test (not by any server), with `env`. */
function sleeper(env: Record<string, string> = {}) {
  const child = new Deno.Command("sleep", { args: ["300"], env, stdout: "null", stderr: "null" })
    .spawn();
  return { child, start: processEntry(child.pid)!.start };
}

Deno.test({
  name: "a live server's ledger is left alone",
  ignore: !linux,
  fn() {
    const dir = tempDir("winterm-ledger-");
    const ledger = Ledger.open(dir, {
      instance: "live" + crypto.randomUUID().replaceAll("-", ""),
      server: { pid: Deno.pid, start: 0 },
      roots: [],
    });
    try {
      ledger.write([{ pid: 12345, start: 6 }]);
      assertEquals(abandonedLedgers(dir), []);
      assertEquals(
        JSON.parse(Deno.readTextFileSync(ledger.path)).roots,
        [{ pid: 12345, start: 6 }],
      );
    } finally {
      ledger.close();
    }
    assertEquals([...Deno.readDirSync(join(dir, "processes"))], []);
    Deno.removeSync(dir, { recursive: true });
  },
});

Deno.test({
  name: "a dead server's ledger ends what it vouches for, and nothing else",
  ignore: !linux,
  async fn() {
    const dir = tempDir("winterm-ledger-");
    const dead = crypto.randomUUID().replaceAll("-", "");
    const root = sleeper(); // a root it recorded, still there
    const reused = sleeper(); // its pid "reused": the recorded start time is not this one's
    const marked = sleeper({ [TREE_VARIABLE]: `${dead}.7` }); // escaped, carrying its mark
    const stranger = sleeper({ [TREE_VARIABLE]: `someone${dead}.7` }); // another server's
    const bystander = sleeper(); // never named at all
    try {
      Deno.mkdirSync(join(dir, "processes"), { recursive: true });
      Deno.writeTextFileSync(
        join(dir, "processes", `${dead}.json`),
        JSON.stringify({
          instance: dead,
          server: { pid: 999999, start: 0, boot: bootId() },
          roots: [
            { pid: root.child.pid, start: root.start },
            { pid: reused.child.pid, start: reused.start - 1 },
          ],
        }),
      );
      assertEquals(endAbandoned(dir), 2);
      assertEquals((await root.child.status).signal, "SIGKILL");
      assertEquals((await marked.child.status).signal, "SIGKILL");
      for (const alive of [reused, stranger, bystander]) {
        ok(
          await staysFalse(() => processEntry(alive.child.pid)?.zombie !== false, 300),
          "a process the ledger did not vouch for was ended",
        );
      }
      assertEquals([...Deno.readDirSync(join(dir, "processes"))], []);
      // Once settled, a ledger is gone: a second look ends nothing.
      assertEquals(endAbandoned(dir), 0);
    } finally {
      for (const { child } of [root, reused, marked, stranger, bystander]) {
        try {
          child.kill("SIGKILL");
        } catch {
          // already ended
        }
        await child.status;
      }
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

/**
 * A test (POSIX only) with a state directory of its own and its ledger folder made, both
 * removed after it, passed or failed.
 */
function withLedgerFolder(name: string, fn: (state: string, folder: string) => void): void {
  Deno.test({
    name,
    ignore: Deno.build.os === "windows",
    fn() {
      const state = tempDir("winterm-ledger-");
      try {
        const folder = join(state, "processes");
        Deno.mkdirSync(folder);
        fn(state, folder);
      } finally {
        Deno.removeSync(state, { recursive: true });
      }
    },
  });
}

withLedgerFolder(
  "what is not a regular file in the ledger folder is passed over, never read",
  (dir, folder) => {
    // A FIFO blocked the server's thread for good; /dev/zero was read until memory ran out.
    new Deno.Command("mkfifo", { args: [join(folder, "fifo.json")] }).outputSync();
    Deno.symlinkSync("/dev/zero", join(folder, "zero.json"));
    Deno.writeTextFileSync(join(folder, "big.json"), " ".repeat(2 * 1024 * 1024));
    const found = abandonedLedgers(dir);
    assertEquals(found.map((ledger) => ledger.record), [
      { instance: "big", server: { pid: 0, start: 0 }, roots: [] },
    ]);
    for (const ledger of found) ledger.discard();
  },
);

withLedgerFolder(
  "what is no ledger goes from the folder: links, FIFOs and dead servers' drafts, not a new draft",
  (dir, folder) => {
    const old = join(folder, "dead.json.4242.new");
    const young = join(folder, "starting.json.4343.new");
    Deno.writeTextFileSync(old, "");
    Deno.writeTextFileSync(young, "");
    Deno.utimeSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    Deno.symlinkSync("/nonexistent/winterm", join(folder, "dangling.json"));
    Deno.symlinkSync("/dev/zero", join(folder, "zero.json.1.new"));
    // Not ours to remove: a file that only ends in .new, and a folder named as a ledger.
    Deno.writeTextFileSync(join(folder, "important.new"), "");
    Deno.utimeSync(join(folder, "important.new"), new Date(0), new Date(0));
    Deno.mkdirSync(join(folder, "dir.json"));
    Deno.writeTextFileSync(join(folder, "dir.json", "inside"), "");
    new Deno.Command("mkfifo", { args: [join(folder, "fifo.json")] }).outputSync();
    // Only what is no ledger is there: a server starting must still look.
    ok(hasLedgers(dir));
    assertEquals(abandonedLedgers(dir), []);
    assertEquals([...Deno.readDirSync(folder)].map((entry) => entry.name).sort(), [
      "dir.json",
      "important.new",
      "starting.json.4343.new",
    ]);
    ok(Deno.statSync("/dev/zero").isCharDevice, "what a link pointed to is left alone");
  },
);

withLedgerFolder(
  "a folder of many entries named as ledgers is dealt with 256 at a start, each once",
  (dir, folder) => {
    for (let i = 0; i < 150; i++) {
      Deno.writeTextFileSync(join(folder, `junk${i}.json`), "");
      Deno.symlinkSync("/nonexistent", join(folder, `link${i}.json`));
    }
    const left = () => [...Deno.readDirSync(folder)].length;
    assertEquals(endAbandoned(dir), 0);
    assertEquals(left(), 300 - 256);
    assertEquals(endAbandoned(dir), 0);
    assertEquals(left(), 0);
  },
);

withLedgerFolder(
  "a ledger folder that is a link is not used: nothing where it points is touched",
  (state, folder) => {
    const elsewhere = join(state, "elsewhere");
    Deno.mkdirSync(elsewhere);
    for (const name of ["settings.json", "notes.json.42.new"]) {
      Deno.writeTextFileSync(join(elsewhere, name), "{}");
      Deno.utimeSync(join(elsewhere, name), new Date(0), new Date(0));
    }
    Deno.removeSync(folder);
    Deno.symlinkSync(elsewhere, folder);
    ok(!hasLedgers(state));
    assertEquals(abandonedLedgers(state), []);
    assertEquals(endAbandoned(state), 0);
    assertEquals([...Deno.readDirSync(elsewhere)].map((entry) => entry.name).sort(), [
      "notes.json.42.new",
      "settings.json",
    ]);
    let refused: unknown;
    try {
      Ledger.open(state, { instance: "x", server: { pid: Deno.pid, start: 0 }, roots: [] });
    } catch (error) {
      refused = error;
    }
    ok(refused instanceof Error && /is no folder/.test(refused.message), String(refused));
  },
);

withLedgerFolder(
  "folders named as ledgers neither count against a start's ledgers nor hold them up",
  (dir, folder) => {
    for (let i = 0; i < 300; i++) Deno.mkdirSync(join(folder, `d${i}.json`));
    for (let i = 0; i < 50; i++) Deno.symlinkSync("/nonexistent", join(folder, `l${i}.json`));
    endAbandoned(dir);
    const links = [...Deno.readDirSync(folder)].filter((entry) => entry.isSymlink);
    assertEquals(links.length, 0);
  },
);
