/**
 * The version, as deno.json's `version` says (tests/version_test.ts keeps the two the
 * same). A constant, not a JSON import: importing JSON takes about 1 MiB more of an idle
 * server's memory (the runtime's JSON module code, measured here), for one string.
 *
 * @module
 */

/** This server's version. */
export const VERSION = "0.1.0";
/** This server's name, as MCP clients see it. */
export const NAME = "winterm-mcp";
