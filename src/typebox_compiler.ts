/**
 * TypeBox's compiled checker, loaded from one generated module (scripts/bundle_sdk.ts) apart
 * from the schema builders (typebox.ts): an idle server builds its tools' schemas but checks
 * nothing, and the checker's code held about 1 MiB of its memory. Types are TypeBox's
 * (typebox_compiler_npm.ts).
 *
 * @module
 */
// @ts-types="./typebox_compiler_npm.ts"
export * from "./generated/typebox_compiler.js";
