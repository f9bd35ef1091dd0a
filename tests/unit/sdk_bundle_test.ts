import { ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { BUNDLES, makeBundle } from "../../scripts/bundle_sdk.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

for (const bundle of BUNDLES) {
  Deno.test(`${bundle.output} is the pinned package as scripts/bundle_sdk.ts makes it`, async () => {
    const current = Deno.readTextFileSync(`${ROOT}${bundle.output}`);
    ok(current === await makeBundle(bundle), "out of date: run `deno task bundle-sdk` and commit");
  });
}
