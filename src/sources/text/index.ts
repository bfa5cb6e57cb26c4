/**
 * @module
 * The text source: `read` in line mode and page mode.
 */
export {
  createReadSource,
  type ReadArgs,
  type ReadEncoding,
  type ReadLinesRequest,
  readLines,
} from "./read-text.js";
