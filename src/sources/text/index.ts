/**
 * @module
 * The text source: `read` in line mode and page mode, and the read cursor that line cursors and
 * JSON value cursors reuse.
 */

export { type ByteSource, fileByteSource, findLineStart } from "./byte-source.js";
export {
  APPEND_FINGERPRINT_BYTES,
  appendFingerprint,
  checkAppendOnly,
  fileRewritten,
  onlyAppendedBetween,
  RANGE_ANCHOR_FULL_BYTES,
  rangeDigest,
  sameBytes,
} from "./range-anchor.js";
export { encodeReadCursor, READ_TOOL, type ReadCursorState, type ReadEnd } from "./read-cursor.js";
export {
  type ReadEncoding,
  type ReadLinesRequest,
  type ReadPageRequest,
  readLines,
  readPage,
} from "./read-text.js";
