/**
 * Which Landlock rules a sandbox gets (src/pty/posix/sandbox/landlock_plan.ts), over a made-up
 * file system: hidden paths carved out of every grant that covers them (read and write), /dev
 * reduced to its harmless devices and the terminal, the network and scopes by ABI, and kernels
 * too old refused with the reason. A property test checks, for random trees and hidden paths,
 * that no rule reaches into a hidden path and that every other existing path stays readable.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import { posix } from "node:path";
import {
  type Entry,
  FILE_RIGHTS,
  FS,
  type FsView,
  handledFs,
  landlockPlan,
  NET,
  type PathRule,
  type PlanInput,
  SCOPE,
  within,
} from "../../../../src/pty/posix/sandbox/landlock_plan.ts";
import { fc } from "../../../helpers/arbitraries.ts";

/** A file system from a list of paths (a trailing `/` marks a directory). */
function tree(paths: string[]): FsView & { all: Map<string, "directory" | "file"> } {
  const all = new Map<string, "directory" | "file">([["/", "directory"]]);
  for (const path of paths) {
    const clean = path.replace(/\/$/, "");
    const parts = clean.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) all.set("/" + parts.slice(0, i).join("/"), "directory");
    all.set(clean, path.endsWith("/") ? "directory" : (all.get(clean) ?? "file"));
  }
  return {
    all,
    entries(directory: string): Entry[] | undefined {
      if (all.get(directory) !== "directory") return undefined;
      return [...all].filter(([path]) => path !== "/" && posix.dirname(path) === directory)
        .map(([path, kind]) => ({ name: posix.basename(path), kind }));
    },
  };
}

/** The rights the rules give on `path` (Landlock: the union of every rule on it or above it). */
function rights(rules: PathRule[], path: string): number {
  return rules.filter((rule) => within(path, rule.path)).reduce(
    (all, rule) => all | rule.access,
    0,
  );
}

const FS_TREE = tree([
  "/etc/passwd",
  "/usr/bin/sh",
  "/dev/null",
  "/dev/sda",
  "/dev/pts/3",
  "/dev/pts/4",
  "/root/.ssh/id_ed25519",
  "/root/.bashrc",
  "/root/work/src/main.ts",
  "/root/.config/gh/hosts.yml",
  "/root/.config/nvim/init.lua",
  "/tmp/",
]);
const BASE: PlanInput = {
  abi: 7,
  mode: "workspace-write",
  writable: ["/root/work"],
  hidden: ["/root/.ssh", "/root/.config/gh", "/root/.aws"],
  terminal: "/dev/pts/3",
  network: { kind: "off" },
};

Deno.test("landlock plan: hidden paths are carved out; reads elsewhere, writes in the workspace", () => {
  const { rules } = landlockPlan(BASE, FS_TREE);
  const READ = FS.READ_FILE | FS.EXECUTE;
  assertEquals(rights(rules, "/root/.ssh/id_ed25519") & READ, 0);
  assertEquals(rights(rules, "/root/.config/gh/hosts.yml") & READ, 0);
  ok(rights(rules, "/root/.config/nvim/init.lua") & FS.READ_FILE);
  ok(rights(rules, "/root/.bashrc") & FS.READ_FILE);
  assertEquals(rights(rules, "/root/.bashrc") & FS.WRITE_FILE, 0);
  ok(rights(rules, "/etc/passwd") & FS.READ_FILE);
  assertEquals(rights(rules, "/etc/passwd") & (FS.WRITE_FILE | FS.TRUNCATE), 0);
  ok(rights(rules, "/root/work/src/main.ts") & FS.WRITE_FILE);
  ok(rights(rules, "/root/work") & FS.MAKE_REG);
  // A split directory can be listed, nothing made in it.
  ok(rights(rules, "/root") & FS.READ_DIR);
  assertEquals(rights(rules, "/root") & (FS.MAKE_REG | FS.REMOVE_FILE), 0);
  // /dev: the terminal and /dev/null, not a disk nor another terminal.
  ok(rights(rules, "/dev/pts/3") & FS.WRITE_FILE && rights(rules, "/dev/pts/3") & FS.IOCTL_DEV);
  assertEquals(rights(rules, "/dev/pts/4") & (FS.READ_FILE | FS.WRITE_FILE), 0);
  assertEquals(rights(rules, "/dev/sda") & FS.READ_FILE, 0);
  ok(rights(rules, "/dev/null") & FS.WRITE_FILE);
  // Files get file rights only.
  ok(rules.every((rule) => rule.directory || (rule.access & ~FILE_RIGHTS) === 0));
});

Deno.test("landlock plan: a workspace holding a hidden path is split too; one inside a hidden path is refused", () => {
  const { rules } = landlockPlan({ ...BASE, writable: ["/root"] }, FS_TREE);
  assertEquals(rights(rules, "/root/.ssh/id_ed25519") & (FS.READ_FILE | FS.WRITE_FILE), 0);
  assertEquals(rights(rules, "/root/.ssh") & (FS.MAKE_REG | FS.REMOVE_FILE), 0);
  ok(rights(rules, "/root/.bashrc") & FS.WRITE_FILE);
  ok(rights(rules, "/root/work") & FS.MAKE_REG);
  throws(
    () => landlockPlan({ ...BASE, writable: ["/root/.ssh/keys"] }, FS_TREE),
    /writable path \/root\/\.ssh\/keys lies in the hidden path \/root\/\.ssh/,
  );
});

Deno.test("landlock plan: read-only writes nowhere but the terminal and the devices; scratch and readable are granted whatever is hidden", () => {
  const readOnly = landlockPlan({ ...BASE, mode: "read-only" }, FS_TREE).rules;
  assertEquals(rights(readOnly, "/root/work/src/main.ts") & FS.WRITE_FILE, 0);
  ok(rights(readOnly, "/dev/pts/3") & FS.WRITE_FILE);
  const { rules } = landlockPlan({
    ...BASE,
    hidden: [...BASE.hidden, "/tmp/sandboxes"],
    scratch: "/tmp/sandboxes/one",
    readable: ["/root/.ssh/integration"],
  }, tree([...FS_TREE.all.keys(), "/tmp/sandboxes/one/", "/tmp/sandboxes/two/x"]));
  ok(rights(rules, "/tmp/sandboxes/one/f") & FS.MAKE_REG);
  assertEquals(rights(rules, "/tmp/sandboxes/two/x") & FS.READ_FILE, 0);
  ok(rights(rules, "/root/.ssh/integration/bash.sh") & FS.READ_FILE);
});

Deno.test("landlock plan: network, scopes and handled rights follow the ABI; too old is refused", () => {
  assertEquals(handledFs(1), (1 << 13) - 1);
  assertEquals(handledFs(7), (1 << 16) - 1);
  const off = landlockPlan(BASE, FS_TREE);
  assertEquals([off.handledNet, off.connectPorts, off.scoped], [
    NET.BIND_TCP | NET.CONNECT_TCP,
    [],
    SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL,
  ]);
  const proxy = landlockPlan({ ...BASE, network: { kind: "proxy", port: 41234 } }, FS_TREE);
  assertEquals(proxy.connectPorts, [41234]);
  const on = landlockPlan({ ...BASE, network: { kind: "on" } }, FS_TREE);
  assertEquals(on.handledNet, 0);
  const abi4 = landlockPlan({ ...BASE, abi: 4 }, FS_TREE);
  assertEquals([abi4.scoped, abi4.handledFs & FS.IOCTL_DEV], [0, 0]);
  ok(abi4.rules.every((rule) => (rule.access & ~abi4.handledFs) === 0));
  const abi3 = landlockPlan({ ...BASE, abi: 3 }, FS_TREE);
  assertEquals(abi3.handledNet, 0);
  throws(
    () => landlockPlan({ ...BASE, abi: 2 }, FS_TREE),
    /Landlock ABI is 2; the sandbox needs 3/,
  );
  throws(() => landlockPlan({ ...BASE, abi: 0 }, FS_TREE), /absent \(Landlock off\)/);
  throws(
    () => landlockPlan({ ...BASE, abi: 3, network: { kind: "proxy", port: 1 } }, FS_TREE),
    /no TCP rules, which a network allowlist needs/,
  );
});

Deno.test("landlock plan: for random trees and hidden paths, nothing hidden is reachable and everything else is readable", () => {
  const name = fc.constantFrom("a", "b", "c", ".ssh", "x y", "é");
  const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((parts) => "/" + parts.join("/"));
  fc.assert(
    fc.property(
      fc.array(path, { minLength: 1, maxLength: 25 }),
      fc.array(path, { maxLength: 4 }),
      fc.option(path, { nil: undefined }),
      (files, hidden, workspace) => {
        const fs = tree(files);
        const writable = workspace !== undefined &&
            !hidden.some((secret) => within(workspace, secret))
          ? [workspace]
          : [];
        const { rules } = landlockPlan({ ...BASE, writable, hidden, terminal: undefined }, fs);
        for (const [file, kind] of fs.all) {
          const given = rights(rules, file);
          const reading = kind === "file" ? FS.READ_FILE : FS.READ_DIR;
          const isHidden = hidden.some((secret) => within(file, secret));
          const underDev = within(file, "/dev");
          if (isHidden) {
            // Listing a split directory's names is all: no content, no change.
            if ((given & ~FS.READ_DIR) !== 0) return false;
          } else if (!underDev && !(given & reading)) return false;
        }
        return true;
      },
    ),
    { numRuns: 500 },
  );
});
