/**
 * @module
 * The directory walk shared by `list` and `search`: code-point order, hidden files and nested
 * `.gitignore` files like git (read through confinement, capped), directories read through
 * confined descriptors, counts of what the rules left out.
 */
// list.ts and search.ts take the walk's default from here.
export type { GitignoreSkip } from "./gitignore.js";
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
