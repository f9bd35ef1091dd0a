import { ok } from "node:assert/strict";
import { makeSdkBundle, SDK_BUNDLE } from "../../scripts/bundle_sdk.ts";

Deno.test("src/mcp/sdk.generated.js is the pinned SDK as scripts/bundle_sdk.ts makes it", async () => {
  const current = Deno.readTextFileSync(SDK_BUNDLE);
  ok(current === await makeSdkBundle(), "out of date: run `deno task bundle-sdk` and commit");
});
