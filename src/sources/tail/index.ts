/**
 * @module
 * The tail source: newest-first budgeted record pages with append-tolerant cursors.
 */
export { createTailSource, type TailArgs } from "./tail.js";
export {
  TAIL_DEFAULT_LIMIT,
  TAIL_DEFAULT_MAX_CHARS_PER_ITEM,
  TAIL_MAX_LIMIT,
  type TailCursorKind,
} from "./tail-cursor.js";
