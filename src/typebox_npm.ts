/**
 * The TypeBox pieces this project uses, as they come from npm: the entry of the bundle that
 * typebox.ts serves (scripts/bundle_sdk.ts), and its types.
 *
 * @module
 */
export {
  type SchemaOptions,
  type Static,
  type TLiteral,
  type TObject,
  type TSchema,
  type TUnion,
  Type,
} from "@sinclair/typebox";
