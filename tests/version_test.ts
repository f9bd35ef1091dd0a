import { deepStrictEqual as assertEquals } from "node:assert/strict";
import config from "../deno.json" with { type: "json" };
import { VERSION } from "../src/version.ts";

Deno.test("the server's version is deno.json's", () => {
  assertEquals(VERSION, config.version);
});
