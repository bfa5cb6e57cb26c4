/**
 * @module
 * The `grep` filter of `tail`: a JavaScript regular expression with search's smart case, or a
 * plain substring with `grep_literal`. Compiled by the shared pattern module, so it runs in linear
 * time in the calling thread (V8 where the pattern's backtracking is bounded, re2js otherwise)
 * unless neither can — then each record is tested in a worker under the stall guard, never on the
 * request thread.
 */

import { GREP_REGEX_MAX_UNITS } from "../limits.js";
import { compilePattern, type RecordFilter, recordFilter } from "../pattern/index.js";

export type { RecordFilter };

export interface GrepOptions {
  readonly stallMs?: number;
  readonly signal?: AbortSignal;
  /** The caller's identity: worker threads are shared fairly between callers. */
  readonly owner?: string;
}

/** Compiles `grep` once per call (syntax errors are INVALID_ARGUMENT before any read). */
export function compileGrep(
  grep: string,
  literal: boolean,
  options: GrepOptions = {},
): RecordFilter {
  const compiled = compilePattern(grep, literal, "smart", {
    argument: "grep",
    literalArgument: "grep_literal",
  });
  const test = recordFilter(compiled, options);
  return (text) =>
    test(text.length > GREP_REGEX_MAX_UNITS ? text.slice(0, GREP_REGEX_MAX_UNITS) : text);
}
