/**
 * src/flags.ts reads a command line exactly as node:util's parseArgs (strict, no positional
 * arguments), which it replaces at start-up: same values, same errors, same messages.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parseArgs } from "node:util";
import { type FlagSpec, parseFlags } from "../src/flags.ts";
import { fc } from "./helpers/arbitraries.ts";

const OPTIONS: Record<string, FlagSpec> = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  "log-level": { type: "string" },
  tools: { type: "string" },
  http: { type: "boolean" },
  port: { type: "string" },
  // A value flag with a short form, which the server has none of: the rules for -fVALUE.
  file: { type: "string", short: "f" },
};

function outcome(read: () => unknown): unknown {
  try {
    return { values: { ...read() as object } };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function same(args: string[]): void {
  const ours = outcome(() => parseFlags(args, OPTIONS));
  const node = outcome(() =>
    parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values
  );
  assertEquals(ours, node, JSON.stringify(args));
}

const WORDS = [
  "--tools",
  "winterm",
  "--tools=",
  "--tools=-x",
  "--tools==",
  "--http",
  "--http=1",
  "--http=",
  "-h",
  "-v",
  "-hv",
  "-vh",
  "-hx",
  "-x",
  "-xy",
  "-f",
  "-fFILE",
  "-hfFILE",
  "-hf",
  "-f-",
  "--file",
  "--",
  "-",
  "---x",
  "--=x",
  "--=",
  "--port",
  "3",
  "-1",
  "--log-level",
  "--bogus",
  "--bogus=1",
  "x",
  "--__proto__",
  "--toString",
  "--constructor=1",
  "-é",
  "--help",
  "--version",
];

Deno.test("flags: the command lines of the usage and its mistakes read as parseArgs reads them", () => {
  for (const word of WORDS) same([word]);
  for (const first of WORDS) for (const second of WORDS) same([first, second]);
  same([]);
  same(["--tools", "winterm", "--tools", "terminals"]);
  same(["--log-level", "debug", "--http", "--port", "8080", "--", "x"]);
});

Deno.test("flags: any command line reads as parseArgs reads it (property)", () => {
  const word = fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 6 }));
  fc.assert(
    fc.property(fc.array(word, { maxLength: 6 }), (args) => same(args)),
    { numRuns: 2000 },
  );
});
