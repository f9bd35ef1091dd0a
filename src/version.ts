/**
 * The version, from deno.json (a JSON import is embedded by `deno compile`, so nothing is
 * read from disk at run time).
 *
 * @module
 */
import config from "../deno.json" with { type: "json" };

/** This server's version. */
export const VERSION: string = config.version;
/** This server's name, as MCP clients see it. */
export const NAME = "winterm-mcp";
