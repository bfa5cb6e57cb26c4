/**
 * @module
 * The text source: `read` in line mode and page mode, and the read cursor that line cursors and
 * JSON value cursors reuse.
 */

export { findLineStart } from "./byte-source.js";
export { encodeReadCursor, READ_TOOL, type ReadCursorState, type ReadEnd } from "./read-cursor.js";
export {
  type ReadEncoding,
  type ReadLinesRequest,
  type ReadPageRequest,
  readLines,
  readPage,
} from "./read-text.js";
