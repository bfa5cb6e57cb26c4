/**
 * @module
 * The tail source: newest-first budgeted record pages with append-tolerant cursors.
 */
export { createTailSource, type TailArgs } from "./tail.js";
export type { TailCursorKind } from "./tail-cursor.js";
