/**
 * The test command: `deno task test` (the README's `npx -y deno@2.9.6 task test`, and CI's).
 * On Linux it first makes sure the programs the suite drives are there, so that no suite is
 * skipped for want of one: zsh (shell integration), vim (the full-screen program), strace (the
 * descriptor accounting) and chromium (the web view's browser tests: Debian's package, or the
 * browser WINTERM_CHROMIUM names; never a downloaded one). What is missing is installed with
 * apt-get, as root or through passwordless sudo, fish with them where the distribution has it
 * (its tests run where it is installed). Where that cannot be done, it stops at once, before any
 * test, naming what to install. Then it runs `deno test --allow-all --parallel` with the
 * arguments it was given (CI passes `--junit-path=...`), and exits with its status.
 *
 * ```sh
 * deno task test                              # everything
 * deno task test tests/e2e/web_test.ts        # one file (the set-up is checked all the same)
 * ```
 * @module
 */

/** A program the suite drives, and the Debian package that brings it. */
export interface Need {
  program: string;
  package: string;
  /** Its tests run where it is installed; its absence stops nothing. */
  optional?: boolean;
}

/** What the suite needs on Linux (chromium is looked for apart: see {@link findBrowser}). */
export const NEEDS: Need[] = [
  { program: "zsh", package: "zsh" },
  { program: "vim", package: "vim" },
  { program: "strace", package: "strace" },
  { program: "fish", package: "fish", optional: true },
];

/** Where the browser tests look for chromium when WINTERM_CHROMIUM names none. */
export const DEFAULT_BROWSER = "/usr/bin/chromium";

/** What this machine and user allow. */
export interface Machine {
  /** The user is root. */
  root: boolean;
  /** `sudo -n` works (passwordless). */
  sudo: boolean;
  /** apt-get is there (Debian, Ubuntu). */
  apt: boolean;
}

/**
 * What to do about the packages missing: nothing, install them with apt-get (`prefix`: what
 * runs it as root, none for root), or stop (the message names what to install).
 */
export type Plan =
  | { kind: "ready" }
  | { kind: "install"; prefix: string[] }
  | { kind: "stop"; message: string };

/** Decides how to get `missing`, the packages the suite needs. */
export function plan(missing: string[], machine: Machine): Plan {
  if (missing.length === 0) return { kind: "ready" };
  const list = missing.join(" ");
  if (!machine.apt) {
    return {
      kind: "stop",
      message: `The tests need ${list}, which are not installed (and there is no apt-get ` +
        `here to install them with). Install them with this system's package manager, then ` +
        `run the tests again.`,
    };
  }
  if (!machine.root && !machine.sudo) {
    return {
      kind: "stop",
      message: `The tests need ${list}, which are not installed, and this user cannot ` +
        `install them (not root, and sudo asks for a password). Install them, then run the ` +
        `tests again:\n  sudo apt-get install ${list}`,
    };
  }
  return { kind: "install", prefix: machine.root ? [] : ["sudo", "-n"] };
}

/** Whether `program` is an executable file on PATH. */
export function onPath(program: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const info = Deno.statSync(`${dir}/${program}`);
      if (info.isFile && (info.mode ?? 0o111) & 0o111) return true;
    } catch {
      // not there
    }
  }
  return false;
}

/** Whether `path` is a browser that runs (`--version`): a snap's stub without snapd does not. */
function runs(path: string): boolean {
  try {
    return new Deno.Command(path, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** The browser the web view's tests will drive, if there is one that runs. */
export function findBrowser(): string | undefined {
  const named = Deno.env.get("WINTERM_CHROMIUM");
  if (named) return runs(named) ? named : undefined;
  return runs(DEFAULT_BROWSER) ? DEFAULT_BROWSER : undefined;
}

/** Runs a command with the output shown; whether it succeeded. */
async function run(command: string[]): Promise<boolean> {
  console.error(`== ${command.join(" ")}`);
  try {
    const { success } = await new Deno.Command(command[0], { args: command.slice(1) }).spawn()
      .status;
    return success;
  } catch (error) {
    console.error(`cannot run ${command[0]}: ${(error as Error).message}`);
    return false;
  }
}

function isRoot(): boolean {
  return Deno.uid() === 0;
}

function hasSudo(): boolean {
  if (!onPath("sudo")) return false;
  try {
    return new Deno.Command("sudo", { args: ["-n", "true"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** What is missing: the packages the suite needs, and those it can do without. */
function missingPackages(): { missing: string[]; optional: string[] } {
  const missing = NEEDS.filter((need) => !need.optional && !onPath(need.program))
    .map((need) => need.package);
  const optional = NEEDS.filter((need) => need.optional && !onPath(need.program))
    .map((need) => need.package);
  if (!findBrowser()) {
    const named = Deno.env.get("WINTERM_CHROMIUM");
    if (named) {
      throw new Stop(
        `WINTERM_CHROMIUM names ${named}, which does not run (${named} --version failed). ` +
          `Point it at a Chromium or Chrome executable, or unset it to use ${DEFAULT_BROWSER} ` +
          `(apt-get install chromium).`,
      );
    }
    missing.push("chromium");
  }
  return { missing, optional };
}

class Stop extends Error {}

/** Installs what is missing where it can; throws {@link Stop} where it cannot. */
async function setUp(): Promise<void> {
  const { missing, optional } = missingPackages();
  if (missing.length === 0) {
    if (optional.length) {
      console.error(
        `(${optional.join(", ")} not installed: ${optional.length > 1 ? "their" : "its"} ` +
          `tests are skipped; apt-get install ${optional.join(" ")} to run them)`,
      );
    }
    return;
  }
  const apt = onPath("apt-get");
  const root = isRoot();
  const decided = plan(missing, { root, sudo: !root && hasSudo(), apt });
  if (decided.kind === "stop") throw new Stop(decided.message);
  if (decided.kind === "ready") return;
  console.error(`The tests need ${missing.join(", ")}: installing (apt-get).`);
  // Through `env`: sudo passes on no environment of its own.
  const aptGet = [...decided.prefix, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"];
  if (!await run([...aptGet, "update", "-qq"])) {
    throw new Stop(`apt-get update failed: install ${missing.join(" ")} by hand.`);
  }
  // Optional packages only where the distribution has them (a missing one fails the install).
  const available = [];
  for (const name of optional) {
    const { stdout } = await new Deno.Command("apt-cache", {
      args: ["policy", name],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => ({ stdout: new Uint8Array() }));
    if (/Candidate: (?!\(none\))/.test(new TextDecoder().decode(stdout))) available.push(name);
  }
  if (!await run([...aptGet, "install", "-y", "-qq", ...missing, ...available])) {
    throw new Stop(`apt-get install failed: install ${missing.join(" ")} by hand.`);
  }
  const still = missingPackages().missing;
  if (still.includes("chromium")) {
    throw new Stop(
      `chromium was installed but ${DEFAULT_BROWSER} does not run (on Ubuntu the package is a ` +
        `snap's stub): point WINTERM_CHROMIUM at a Chromium or Chrome executable.`,
    );
  }
  if (still.length) throw new Stop(`still not installed: ${still.join(" ")}.`);
}

if (import.meta.main) {
  if (Deno.build.os === "linux") {
    try {
      await setUp();
    } catch (error) {
      if (!(error instanceof Stop)) throw error;
      console.error(`\nThe tests cannot run yet: ${error.message}`);
      Deno.exit(1);
    }
  }
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ...Deno.args],
    env: pyenvBounded(),
  }).spawn().status;
  Deno.exit(code);
}

/**
 * pyenv's `init` in a ~/.bashrc rehashes at every interactive bash's start, under a lock file
 * (`$PYENV_ROOT/shims/.pyenv-shim`); a bash killed meanwhile (the suite ends terminals all the
 * time) leaves the lock, and every bash after it then waits 60 s for it (the bash tests failed
 * for "no prompt"). A lock a minute old that no rehash holds is removed, and the suite's shells
 * wait 5 s at most for one. Nothing changes where pyenv is not set up.
 */
function pyenvBounded(): Record<string, string> {
  const root = Deno.env.get("PYENV_ROOT") ?? `${Deno.env.get("HOME") ?? ""}/.pyenv`;
  const lock = `${root}/shims/.pyenv-shim`;
  try {
    const age = Date.now() - (Deno.statSync(lock).mtime?.getTime() ?? Date.now());
    const rehashing = new Deno.Command("pgrep", { args: ["-f", "pyenv-rehash"], stdout: "null" })
      .outputSync().success;
    if (age > 60_000 && !rehashing) {
      Deno.removeSync(lock);
      console.error(`removed a stale pyenv lock (${lock}), ${Math.round(age / 1000)} s old`);
    }
  } catch {
    // no pyenv, or no lock
  }
  return { PYENV_REHASH_TIMEOUT: Deno.env.get("PYENV_REHASH_TIMEOUT") ?? "5" };
}
