/**
 * TypeBox's schema builders, loaded from one generated module: the pinned TypeBox's own code
 * bundled (scripts/bundle_sdk.ts). From npm it is some 200 modules, which held 4-5 MiB more of
 * the idle server's memory. The compiled checker is typebox_compiler.ts. Types are TypeBox's
 * (typebox_npm.ts).
 *
 * @module
 */
// @ts-types="./typebox_npm.ts"
export * from "./generated/typebox.js";
