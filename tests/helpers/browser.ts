/**
 * A real browser for tests and screenshots: Debian's chromium (installed by .ci/run), or the
 * one WINTERM_CHROMIUM names, driven by playwright-core. Never a downloaded browser.
 *
 * @module
 */
// Pinned here, not in deno.json's imports: `deno task` looks up the programs of every npm
// package there, and this one's (with wabt's) took 20 ms of each `deno task start`.
import { type Browser, chromium, type Page } from "npm:playwright-core@1.65.1";

export type { Page };

/** The browser's executable. */
export const CHROMIUM = Deno.env.get("WINTERM_CHROMIUM") || "/usr/bin/chromium";

/** Launches it headless, without its sandbox (root, containers) or background traffic. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-background-networking"],
  });
}
