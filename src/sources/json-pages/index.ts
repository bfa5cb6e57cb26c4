/**
 * @module
 * The JSON tools' pages over the streaming engine of `src/json`: `json_open` handles,
 * `json_read` pages and cursors, `json_close`.
 */

export { JSON_CURSOR, JSON_READ_TOOL, type JsonCursorState } from "./cursor.js";
export {
  handleExpired,
  handlesFor,
  type JsonHandle,
  JsonHandles,
} from "./handles.js";
export { type JsonOpenRequest, jsonClose, jsonOpen } from "./open.js";
export {
  createJsonReadSource,
  type JsonReadArgs,
  type JsonReadOptions,
  type RequestedFormat,
} from "./read.js";
export { type ChunkSink, type JsonStreamArgs, streamJsonValues } from "./stream.js";
