/**
 * @module
 * The `list` source: one directory, optionally recursive, with offset and key-set cursor paging
 * over the shared walk (sources/walk).
 */
export {
  createListSource,
  LIST_TOOL,
  type ListArgs,
  type ListOptions,
  type ListQuery,
  type ListState,
  type ListType,
} from "./list.js";
