/**
 * @module
 * Content search: patterns with smart case, a streaming line scanner that runs in worker threads
 * (a catastrophic regex is stopped, not waited for), and the `search` source with offset and
 * cursor paging.
 */
export { type CaseMode, type CompiledPattern, compilePattern } from "../pattern/index.js";
export { DEFAULT_SEARCH_STALL_MS, type RunOptions, runScanJob } from "./pool.js";
export {
  BINARY_SNIFF_BYTES,
  MAX_SEARCH_LINE_BYTES,
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
  DEFAULT_MAX_CHARS_PER_MATCH,
  MAX_CONTEXT_LINES,
  SEARCH_TOOL,
  type SearchArgs,
  type SearchOptions,
  type SearchState,
} from "./search.js";
