/**
 * @module
 * Directory listings: the ordered, gitignore-aware, confined walker shared with `search`, and the `list`
 * source with offset and key-set cursor paging.
 */
export {
  type GitignoreSkip,
  MAX_GITIGNORE_BYTES,
  MAX_GITIGNORE_GLOBSTARS_PER_RULE,
  MAX_GITIGNORE_RULE_CHARS,
  MAX_GITIGNORE_RULES,
} from "./gitignore.js";

export {
  createListSource,
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_WALK_ENTRIES,
  LIST_TOOL,
  type ListArgs,
  type ListOptions,
  type ListQuery,
  type ListState,
  type ListType,
  MAX_LIST_LIMIT,
} from "./list.js";
export { compareCodePoints } from "./order.js";
export { type FilteredField, filteredField, skippedField, walkReportMembers } from "./report.js";
export {
  ancestorsWithin,
  type EntryType,
  type WalkEntry,
  type WalkFs,
  type WalkOptions,
  type WalkStats,
  walk,
  walkLimitExceeded,
} from "./walk.js";
