/**
 * @module
 * Content search: patterns with smart case, a streaming line scanner that runs in worker threads
 * (a catastrophic regex is stopped, not waited for), and the `search` source with offset and
 * cursor paging.
 */
export { type CaseMode, type CompiledPattern, compilePattern } from "../pattern/index.js";
export { type RunOptions, runScanJob } from "./pool.js";
export {
  type MatchPosition,
  type RawMatch,
  runScan,
  type ScanJob,
  type ScanResult,
  type ScanWindow,
} from "./scan.js";
export {
  type CountMode,
  createSearchSource,
  SEARCH_TOOL,
  type SearchArgs,
  type SearchOptions,
  type SearchState,
} from "./search.js";
