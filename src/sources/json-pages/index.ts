/**
 * @module
 * The JSON tools' pages over the streaming engine of `src/json`: `json_open` handles,
 * `json_read` pages and cursors, `json_close`.
 */

export {
  DEFAULT_JSON_MAX_ITEMS,
  JSON_CURSOR,
  JSON_READ_TOOL,
  type JsonCursorState,
  MAX_JSON_MAX_ITEMS,
} from "./cursor.js";
export {
  DEFAULT_JSON_HANDLE_TTL_MS,
  DEFAULT_MAX_JSON_HANDLES,
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
