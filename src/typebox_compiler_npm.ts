/**
 * TypeBox's compiled checker as it comes from npm: the entry of the bundle that
 * typebox_compiler.ts serves (scripts/bundle_sdk.ts), and its types.
 *
 * @module
 */
export { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
export type { ValueError } from "@sinclair/typebox/errors";
