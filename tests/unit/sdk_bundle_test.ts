import { ok, throws } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { BUNDLES, makeBundle } from "../../scripts/bundle_sdk.ts";
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
  const bundled = Deno.readTextFileSync(`${ROOT}src/mcp/sdk.generated.js`);
  ok(!bundled.includes("ajv implementation error"), "Ajv's code is in the bundle");
});
