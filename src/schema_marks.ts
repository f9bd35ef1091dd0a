/**
 * Marks on the front ends' schemas that say how MCP's `tools/list` sends them
 * (mcp/wire_schema.ts), apart from schema.ts so that the server can list tools without loading
 * TypeBox's builders first. Each mark returns a marked copy; the schema validates as before.
 *
 * @module
 */

const UNADVERTISED = Symbol("unadvertised");
const SIZE_SHOWN = Symbol("size shown");

/** The pattern of a string without NUL (a C string's text). */
export const NUL_FREE = "^[^\\u0000]*$";

/**
 * `schema`, accepted but not advertised: `tools/list` leaves it out. For what only ACP clients
 * send, which a model never needs to: their `sessionId`, `_meta`, the `null` of a field they
 * leave out, their list form of `env`.
 */
export function unadvertised<T extends object>(schema: T): T {
  return { ...schema, [UNADVERTISED]: true };
}

/** Whether `schema` was marked {@link unadvertised}. */
export function isUnadvertised(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && UNADVERTISED in schema;
}

/**
 * `schema`, whose size bounds (`maxLength`, `maxItems`, ...) `tools/list` sends. Others' are
 * enforced and not sent: they bound hostile input, far past what a caller needs. This is for a
 * bound a caller can reach (run_command's `command`, at most 1,000 characters).
 */
export function sizeShown<T extends object>(schema: T): T {
  return { ...schema, [SIZE_SHOWN]: true };
}

/** Whether `schema` was marked {@link sizeShown}. */
export function isSizeShown(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && SIZE_SHOWN in schema;
}
