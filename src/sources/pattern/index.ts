/**
 * @module
 * User-supplied patterns, shared by `search` and `tail`: smart case, JavaScript's meaning on three
 * engines — V8 where the backtracking is provably bounded, re2js (linear time) for what RE2 can
 * spell, and the guarded worker for the rest.
 */

// search.ts sizes its slots from here.
export { compileGlob, type PathMatcher } from "./glob.js";
export { type GuardedRunOptions, GuardedWorkers, stalled } from "./guarded-worker.js";
export { engineUnavailable, setLinearEngineLoader } from "./linear.js";
export { requiredLiteral } from "./literal.js";
export {
  type ByteMatcher,
  byteMatcher,
  type CaseMode,
  type CompiledPattern,
  type CompileOptions,
  chunkMatcher,
  compilePattern,
  lineMatcher,
  literalCounter,
  type Matcher,
  type PatternEngine,
} from "./pattern.js";
export { toRe2Source } from "./re2-source.js";
export { type RecordFilter, type RecordFilterOptions, recordFilter } from "./record-filter.js";
export { Slots } from "./slots.js";
