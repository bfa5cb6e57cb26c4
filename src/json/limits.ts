/**
 * @module
 * Limits of the JSON engine, with their defaults. Exceeding one is `RESOURCE_LIMIT_EXCEEDED` with
 * `limit: {name, limit, value}` where `name` is the snake_case name given on each field below. Every
 * limit is a server option except the two nesting limits, which keep the parsers' recursion far from
 * the end of the stack and so are not meant to be raised.
 */

export interface JsonLimits {
  /** `max_depth`: nesting of objects and arrays (the JSONL/JSON-seq record array does not count). Default 1000. */
  maxDepth: number;
  /** `max_string_bytes`: encoded bytes of one string or member name, quotes included. Default 16 MiB. */
  maxStringBytes: number;
  /** `max_number_bytes`: bytes of one number as spelled. Default 1024. */
  maxNumberBytes: number;
  /** `max_record_bytes`: bytes of one JSONL line or JSON-seq record. Default 64 MiB. */
  maxRecordBytes: number;
  /** `max_object_members`: members of one object (duplicate detection keeps their names). Default 1,000,000. */
  maxObjectMembers: number;
  /**
   * `max_buffered_matches`: matches held back to put results in RFC 9535 order (descendant segments,
   * unions out of document order, negative indexes, filters over containers). Default 100,000.
   */
  maxBufferedMatches: number;
  /** `max_filter_value_bytes`: source bytes of one value materialized to evaluate a filter. Default 4 MiB. */
  maxFilterValueBytes: number;
  /** `max_query_threads`: partial matches alive at once (descendant segments multiply them). Default 100,000. */
  maxQueryThreads: number;
  /** `max_regex_states`: size of a compiled I-Regexp (after expanding `{n,m}`). Default 10,000. */
  maxRegexStates: number;
  /** `max_regex_input_chars`: code points of one string tested by `match()`/`search()`. Default 100,000. */
  maxRegexInputChars: number;
  /**
   * `max_regex_steps`: work of one `match()`/`search()` test, bounded before it runs by the
   * automaton's states times the string's length (plus one). Default 2,000,000: a few tens of
   * milliseconds, however hostile the pattern and the string.
   */
  maxRegexSteps: number;
  /**
   * `max_query_nesting`: filters, parentheses and function calls nested inside one another in a
   * JSONPath query (`$[?@[?@…]]`, `((…))`, `length(value(…))`). Default 64.
   */
  maxQueryNesting: number;
  /** `max_regex_nesting`: groups nested inside one another in an I-Regexp (`((…))`). Default 64. */
  maxRegexNesting: number;
  /** `probe_bytes`: bytes validated by `validation: "probe"`. Default 4 MiB. */
  probeBytes: number;
}

export const DEFAULT_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxDepth: 1000,
  maxStringBytes: 16 * 1024 * 1024,
  maxNumberBytes: 1024,
  maxRecordBytes: 64 * 1024 * 1024,
  maxObjectMembers: 1_000_000,
  maxBufferedMatches: 100_000,
  maxFilterValueBytes: 4 * 1024 * 1024,
  maxQueryThreads: 100_000,
  maxRegexStates: 10_000,
  maxRegexInputChars: 100_000,
  maxRegexSteps: 2_000_000,
  maxQueryNesting: 64,
  maxRegexNesting: 64,
  probeBytes: 4 * 1024 * 1024,
});

/** Bytes read per positional read of a file. */
export const READ_CHUNK_BYTES = 64 * 1024;
/**
 * Bytes fed to the tokenizer at once by a query that calls `match()` or `search()`: between two
 * slices the driver can give the event loop a turn, and one slice holds few strings to test.
 */
export const REGEX_FEED_SLICE_BYTES = 256;
/** Steps of `match()`/`search()` tests after which a query gives the event loop a turn. */
export const REGEX_YIELD_STEPS = 1_000_000;

/** The defaults overridden by `partial`; every value must be a positive integer. */
export function resolveLimits(partial?: Partial<JsonLimits>): JsonLimits {
  const limits: JsonLimits = { ...DEFAULT_JSON_LIMITS, ...(partial ?? {}) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`JSON limit ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}
