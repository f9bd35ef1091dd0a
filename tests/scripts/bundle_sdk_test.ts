import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { BUNDLES, makeBundle, pureConstants } from "../../scripts/bundle_sdk.ts";
import { type jsonSchemaValidator, Server } from "../../src/mcp/sdk.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

for (const bundle of BUNDLES) {
  Deno.test(`${bundle.output} is the pinned package as scripts/bundle_sdk.ts makes it`, async () => {
    const current = Deno.readTextFileSync(`${ROOT}${bundle.output}`);
    ok(current === await makeBundle(bundle), "out of date: run `deno task bundle-sdk` and commit");
  });
}

Deno.test("the SDK's bundle leaves Ajv out, and says why if JSON Schema validation is asked for", () => {
  const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: {} });
  const { _jsonSchemaValidator: validator } = server as unknown as {
    _jsonSchemaValidator: jsonSchemaValidator;
  };
  throws(
    () => validator.getValidator({ type: "object" }),
    /not available: winterm-mcp sends no elicitation requests.*leaves Ajv out/,
  );
  const bundled = Deno.readTextFileSync(`${ROOT}src/generated/mcp_sdk.js`);
  ok(!bundled.includes("ajv implementation error"), "Ajv's code is in the bundle");
});

Deno.test("the SDK's bundle builds only the schemas the server uses", () => {
  const bundled = Deno.readTextFileSync(`${ROOT}src/generated/mcp_sdk.js`);
  // Requests a client sends to servers that offer resources: nothing here takes them.
  ok(!bundled.includes('"resources/subscribe"'), "unused schemas are still built at load");
  ok(bundled.includes('"tools/call"'), "the schemas the server uses are gone");
});

Deno.test("pureConstants: each top-level const of tsc's layout is wrapped, nothing else", () => {
  const module = [
    "import * as z from 'zod/v4';",
    "/** A comment. */",
    "export const A = z.string();",
    "const B = z",
    "    .object({",
    "    a: A,",
    "    b: [1, 2].map((n) => {",
    "        return n;",
    "    })",
    "})",
    "    .strict();",
    "export var E;",
    "(function (E) {",
    '    E[E["X"] = 1] = "X";',
    "})(E || (E = {}));",
    "export function f() {",
    "    const inner = 1;",
    "    return inner;",
    "}",
  ].join("\n");
  const made = pureConstants(module).split("\n");
  equal(made[2], "export const A = /* @__PURE__ */ (() => (z.string()))();");
  equal(made[3], "const B = /* @__PURE__ */ (() => (z");
  equal(made[10], "    .strict()))();");
  equal(made.slice(11).join("\n"), module.split("\n").slice(11).join("\n"));
  throws(() => pureConstants("const A = f(\n    1"), /no end to the statement at line 1/);
  throws(() => pureConstants("let a = 1;\n"), /no top-level const found/);
});

/** A top-level statement in tsc's layout that records its evaluation in `order`. */
const statement = fc.record({
  kind: fc.constantFrom("const", "export const", "function", "iife"),
  lines: fc.array(fc.constantFrom("object", "chain", "arrow", "array"), { maxLength: 4 }),
  text: fc.string({ maxLength: 8 }).map((text) => JSON.stringify(text)),
});

function statementText(
  { kind, lines, text }: typeof statement extends fc.Arbitrary<infer T> ? T : never,
  index: number,
): string {
  const name = `v${index}`;
  let value = `record(${index}, ${text})`;
  for (const shape of lines) {
    if (shape === "object") value = `{\n    key: ${value},\n    [${text}]: 1\n}`;
    else if (shape === "chain") value = `[${value}]\n    .map((x) => x)\n    .at(0)`;
    else if (shape === "arrow") value = `(() => {\n    const x = ${value};\n    return x;\n})()`;
    else value = `[\n    ${value},\n    ${text}\n]`;
  }
  if (kind === "function") return `export function ${name}() {\n    return ${value};\n}`;
  if (kind === "iife") return `(function () {\n    record(${index}, ${text});\n})();`;
  return `${kind} ${name} = ${value};`;
}

Deno.test("pureConstants: a module evaluates to the same values in the same order", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(statement, { minLength: 1, maxLength: 8 }), async (statements) => {
      if (!statements.some((s) => s.kind.endsWith("const"))) {
        statements.push({ ...statements[0], kind: "const" });
      }
      const body = statements.map(statementText).join("\n/** between */\n");
      const run = async (source: string) => {
        const order: unknown[] = [];
        (globalThis as Record<string, unknown>).__pureOrder = order;
        const code =
          `const record = (i, t) => (globalThis.__pureOrder.push([i, t]), t);\n${source}\n` +
          `export const all = [${
            statements.map((_, i) => `typeof v${i} === "undefined" ? null : v${i}`).join(", ")
          }];`;
        const module = await import(`data:text/javascript,${encodeURIComponent(code)}`);
        const values = (module.all as unknown[]).map((v) => typeof v === "function" ? v() : v);
        return { order, values };
      };
      deepEqual(await run(pureConstants(body)), await run(body));
    }),
    { numRuns: 200 },
  );
});
