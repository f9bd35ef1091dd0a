/**
 * A real browser for tests and screenshots: Debian's chromium (installed by .ci/run), or the
 * one WINTERM_CHROMIUM names, driven by playwright-core. Never a downloaded browser.
 *
 * @module
 */
// Pinned here, beside its one user, not in deno.json's imports (which the server's modules use).
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
