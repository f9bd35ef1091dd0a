/**
 * Counts the results in JUnit reports written by `deno test --junit-path` and prints the one
 * line CI reads: `N passed, N failed`. A report that is missing (its suite crashed before
 * writing it) counts as one failure. Extra `name=passed|failed` arguments count CI steps
 * that are not tests (formatting, lint, type-check).
 *
 * Usage: deno run --allow-read scripts/ci_summary.ts report.xml... [step=passed|failed...]
 *
 * @module
 */

let passed = 0, failed = 0;
for (const arg of Deno.args) {
  const step = arg.match(/^([\w:-]+)=(passed|failed)$/);
  if (step) {
    if (step[2] === "passed") passed++;
    else {
      failed++;
      console.error(`step failed: ${step[1]}`);
    }
    continue;
  }
  let xml: string;
  try {
    xml = Deno.readTextFileSync(arg);
  } catch {
    console.error(`no report at ${arg}: its suite did not run to the end`);
    failed++;
    continue;
  }
  for (const [, body] of xml.matchAll(/<testcase\b[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    if (/<failure|<error/.test(body ?? "")) failed++;
    else if (!/<skipped/.test(body ?? "")) passed++;
  }
}
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed > 0 ? 1 : 0);
