/**
 * A real browser for tests and screenshots: Debian's chromium (installed by .ci/run), or the
 * one WINTERM_CHROMIUM names, driven by playwright-core. Never a downloaded browser.
 *
 * @module
 */
import { type Browser, chromium } from "playwright-core";

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
