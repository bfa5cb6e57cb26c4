/**
 * @module
 * The directory walk shared by `list` and `search`: code-point order, hidden files and nested
 * `.gitignore` files like git (read through confinement, capped), directories read through
 * confined descriptors, counts of what the rules left out.
 */
export {
  type GitignoreSkip,
  MAX_GITIGNORE_BYTES,
  MAX_GITIGNORE_GLOBSTARS_PER_RULE,
  MAX_GITIGNORE_RULE_CHARS,
  MAX_GITIGNORE_RULES,
} from "./gitignore.js";
export { compareCodePoints } from "./order.js";
export { type FilteredField, filteredField, skippedField, walkReportMembers } from "./report.js";
export {
  ancestorsWithin,
  DEFAULT_MAX_WALK_ENTRIES,
  type EntryType,
  type WalkEntry,
  type WalkFs,
  type WalkOptions,
  type WalkStats,
  walk,
  walkLimitExceeded,
} from "./walk.js";
