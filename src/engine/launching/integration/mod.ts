/**
 * Shell integration, injected without touching the user's files: how each shell is started so
 * that it reports its prompt, its commands' output, exit codes and working directory through
 * marks (see output/marks.ts), each mark signed with the terminal's nonce.
 *
 * | shell | how |
 * |---|---|
 * | bash | `--init-file` of a file of ours that reads the usual rc files first (bash.sh) |
 * | zsh | ZDOTDIR pointing at a directory of ours whose files read the user's (zshenv.zsh, zshrc.zsh) |
 * | sh (dash, ash, ksh) | ENV pointing at a file of ours that reads the user's ENV (env.sh) |
 * | fish | `--init-command` sourcing a file of ours, after the user's config (init.fish) |
 * | PowerShell | a prompt function wrapping the one in place (powershell.ts) |
 * | cmd | a prompt set at the start (cmd.ts) |
 *
 * The scripts are text imports: the bundle and `deno compile` carry them inside the
 * executable, nothing is read beside it. Each script's header says what it does and how far
 * its shell allows. The files live in one directory ({@link ShellScripts}): the state directory's
 * `shell-integration/` (files named by their content, written once, shared by servers), or a
 * private temporary directory removed at shutdown. The nonce reaches bash, zsh and sh through
 * WINTERM_SHELL_NONCE, which their first lines read and unset, so no program they start
 * inherits it.
 *
 * @example
 * ```ts
 * import { shellIntegration, ShellScripts } from "./mod.ts";
 * const scripts = new ShellScripts();
 * const bash = shellIntegration("bash", "0123abcd", {}, scripts)!;
 * bash.args; // ["--init-file", "/tmp/winterm-shell-…/bash-….sh"]
 * bash.env;  // { WINTERM_SHELL_NONCE: "0123abcd" }
 * scripts.remove();
 * ```
 * @module
 */
import { join } from "node:path";
import {
  makePrivateFolder,
  makeTemporaryFolder,
  writePrivateFile,
} from "../../../private_files.ts";
import BASH_INIT from "./bash.sh" with { type: "text" };
import SH_ENV from "./env.sh" with { type: "text" };
import FISH_INIT from "./init.fish" with { type: "text" };
import ZSH_ENV from "./zshenv.zsh" with { type: "text" };
import ZSH_RC from "./zshrc.zsh" with { type: "text" };
import { cmdPromptCommand, cmdRunWrapping, ESC_VARIABLE } from "./cmd.ts";
import { powershellIntegration } from "./powershell.ts";

/** The shells this knows how to integrate. */
export type IntegratedShell = "bash" | "zsh" | "fish" | "sh" | "powershell" | "cmd";

/** How to start a shell with its integration. */
export interface ShellIntegration {
  /** Arguments before the shell's own. */
  args?: string[];
  /** What the shell runs first: a PowerShell script, or a cmd command line. */
  startup?: string;
  /** Variables the shell needs. */
  env?: Record<string, string>;
  /** Variables taken out of the shell's environment (`env` hands them over another way). */
  unset?: string[];
  /**
   * What `terminal_run` types for a command: before it, on its line (cmd's, to learn where its
   * output starts; fish's, keys saying the line is a run's: see {@link dropsContinuedRun}); and
   * cmd's `exitQuery`, a line of its own typed once the command's prompt has shown, which
   * reports its exit code (see cmd.ts).
   */
  runWrapping?: { prefix: string; exitQuery?: string };
  /**
   * The shell marks where every command's output starts (`C`), from its first one on: bash
   * (PS0, 4.4 and later), zsh, fish.
   */
  marksOutputStart?: boolean;
  /**
   * Ctrl+C at the shell's line editor (at its prompt, or its continuation prompt) always brings
   * a new prompt, marks and all: bash, zsh, sh, fish.
   */
  promptOnInterrupt?: boolean;
  /**
   * A run's line that is not a whole command is dropped by the shell itself once it has sent
   * its continuation mark, and the shell draws its prompt again (fish, told by the run's
   * wrapping that the line is a run's): nothing is typed to drop it.
   */
  dropsContinuedRun?: boolean;
}

/**
 * Keys (no text) that start terminal_run's line in fish, bound by init.fish: ESC ^_ twice, which
 * no terminal sends for a key a person presses.
 */
const FISH_RUN_LINE_KEYS = "\x1b\x1f\x1b\x1f";

/** The variable the nonce travels in (bash, zsh, sh). */
const NONCE_VARIABLE = "WINTERM_SHELL_NONCE";

/** A small stable hash of a text, for file names that change when the content does. */
function contentName(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** The directory of the integration files (see the module documentation). */
export class ShellScripts {
  readonly #dir: string | undefined;
  #temporary: string | undefined;
  #written = new Set<string>();

  /** `dir`: a directory to keep the files in (created if missing); none: a private temporary one. */
  constructor(dir?: string) {
    this.#dir = dir;
  }

  /** The path of a file with this content (written on first use), under `name-<hash><suffix>`. */
  file(name: string, content: string, suffix = ""): string {
    return this.#inDirectory((dir) => {
      const path = join(dir, `${name}-${contentName(content)}${suffix}`);
      this.#write(path, content);
      return path;
    });
  }

  /** A directory holding these files (written on first use), named by their content. */
  directory(name: string, files: Record<string, string>): string {
    const all = Object.entries(files).map(([file, text]) => file + "\0" + text).join("\0");
    return this.#inDirectory((dir) => {
      const path = join(dir, `${name}-${contentName(all)}`);
      if (!this.#written.has(path)) {
        makePrivateFolder(path);
        for (const [file, text] of Object.entries(files)) this.#write(join(path, file), text);
        this.#written.add(path);
      }
      return path;
    });
  }

  /** The directory its files are in, once one was written (a sandbox lets it be read). */
  location(): string[] {
    const dir = this.#temporary ?? (this.#written.size ? this.#dir : undefined);
    return dir === undefined ? [] : [dir];
  }

  /** Removes the temporary directory, if one was made. */
  remove(): void {
    if (this.#temporary === undefined) return;
    try {
      Deno.removeSync(this.#temporary, { recursive: true });
    } catch {
      // already gone
    }
    this.#temporary = undefined;
    this.#written.clear();
  }

  /** Runs `write` in the state directory, or (none, or it cannot be written) a temporary one. */
  #inDirectory<T>(write: (dir: string) => T): T {
    if (this.#dir !== undefined && this.#temporary === undefined) {
      try {
        makePrivateFolder(this.#dir);
        return write(this.#dir);
      } catch {
        // A state directory that cannot be written: a temporary one serves.
      }
    }
    this.#temporary ??= makeTemporaryFolder({ prefix: "winterm-shell-" });
    return write(this.#temporary);
  }

  /** Writes a file once per server: whole or not at all (a temporary name, then a rename). */
  #write(path: string, content: string): void {
    if (this.#written.has(path)) return;
    const draft = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    writePrivateFile(draft, content);
    Deno.renameSync(draft, path);
    this.#written.add(path);
  }
}

/**
 * How to start `shell` with its integration for a terminal with `nonce`, given the child's
 * environment (for the user's own ZDOTDIR, ENV and PROMPT). Undefined for shells without one.
 */
export function shellIntegration(
  shell: string,
  nonce: string,
  env: Record<string, string>,
  scripts: ShellScripts,
): ShellIntegration | undefined {
  const signed = { [NONCE_VARIABLE]: nonce };
  switch (shell) {
    case "bash":
      return {
        args: ["--init-file", scripts.file("bash", BASH_INIT, ".sh")],
        env: signed,
        marksOutputStart: true,
        promptOnInterrupt: true,
      };
    case "zsh":
      return {
        marksOutputStart: true,
        promptOnInterrupt: true,
        env: {
          ...signed,
          ZDOTDIR: scripts.directory("zsh", { ".zshenv": ZSH_ENV, ".zshrc": ZSH_RC }),
          ...(env.ZDOTDIR === undefined ? {} : { WINTERM_USER_ZDOTDIR: env.ZDOTDIR }),
        },
      };
    case "sh":
      // PS1 and PS2 hold the nonce once wrapped, and dash cannot stop exporting a variable it
      // got exported: the prompts come in other variables, so that no child inherits the nonce.
      return {
        env: {
          ...signed,
          ENV: scripts.file("sh", SH_ENV, ".sh"),
          ...(env.ENV === undefined ? {} : { WINTERM_USER_ENV: env.ENV }),
          ...(env.PS1 === undefined ? {} : { WINTERM_USER_PS1: env.PS1 }),
          ...(env.PS2 === undefined ? {} : { WINTERM_USER_PS2: env.PS2 }),
        },
        unset: ["PS1", "PS2"],
        promptOnInterrupt: true,
      };
    case "fish": {
      const file = scripts.file("fish", FISH_INIT, ".fish").replaceAll("\\", "\\\\")
        .replaceAll("'", "\\'");
      // The nonce inline: an environment variable would reach what the user's config starts.
      return {
        args: ["--init-command", `set -g __winterm_nonce ${nonce}; source '${file}'`],
        marksOutputStart: true,
        promptOnInterrupt: true,
        runWrapping: { prefix: FISH_RUN_LINE_KEYS },
        dropsContinuedRun: true,
      };
    }
    case "powershell":
      return { startup: powershellIntegration(nonce) };
    case "cmd":
      return {
        startup: cmdPromptCommand(nonce, promptOf(env)),
        env: { [ESC_VARIABLE]: "\x1b" },
        runWrapping: cmdRunWrapping(nonce),
      };
    default:
      return undefined;
  }
}

/** The PROMPT the child would have (Windows names are case-insensitive). */
function promptOf(env: Record<string, string>): string | undefined {
  const name = Object.keys(env).find((key) => key.toUpperCase() === "PROMPT");
  return name === undefined ? undefined : env[name];
}
