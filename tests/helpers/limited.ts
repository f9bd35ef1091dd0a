/**
 * Tests with a time limit. Deno.test has none: a test that hangs holds the suite, and CI, until
 * something outside ends it (one Windows run under Wine hung for over 6 minutes, its stage
 * stopped with no test named). A limited test fails at its limit, naming itself; what it started
 * is left to its own cleanup (a server test's server is killed: see helpers/mcp.ts).
 *
 * @module
 */
import { within } from "./process.ts";

/** How long a limited test may take (as a server test: SERVER_TEST_LIMIT_MS). */
export const TEST_LIMIT_MS = 180_000;

/** Registers a Deno test that fails once it has run for `limitMs`. */
export function limitedTest(definition: Deno.TestDefinition & { limitMs?: number }): void {
  const { fn, limitMs = TEST_LIMIT_MS, ...rest } = definition;
  Deno.test({
    ...rest,
    fn: (t) =>
      within(
        Promise.resolve().then(() => fn(t)),
        limitMs,
        `not done within ${limitMs} ms (the test's limit)`,
      ),
  });
}
