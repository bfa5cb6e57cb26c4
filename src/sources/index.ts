/**
 * @module
 * Sources: each turns a source plus a position into the next page, streaming.
 */

export * from "./json-pages/index.js";
export * from "./limits.js";
export * from "./listing/index.js";
export * from "./search/index.js";
export type { SourceContext } from "./shared/context.js";
export * from "./tail/index.js";
export * from "./text/index.js";
export * from "./walk/index.js";
