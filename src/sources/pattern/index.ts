/**
 * @module
 * User-supplied patterns, shared by `search` and `tail`: smart case, a linear-time RE2 engine for
 * every pattern RE2 reads the same way, and the guarded worker for the rest.
 */

// search.ts sizes its slots from here.
export { compileGlob, type PathMatcher } from "./glob.js";
export { type GuardedRunOptions, GuardedWorkers, Slots, stalled } from "./guarded-worker.js";
export { requiredLiteral } from "./literal.js";
export {
  type ByteMatcher,
  byteMatcher,
  type CaseMode,
  type CompiledPattern,
  type CompileOptions,
  chunkMatcher,
  compilePattern,
  type LineMatcher,
  lineMatcher,
  type PatternEngine,
} from "./pattern.js";
export { toRe2Source } from "./re2-source.js";
export { type RecordFilter, type RecordFilterOptions, recordFilter } from "./record-filter.js";
