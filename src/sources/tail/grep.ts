/**
 * @module
 * The `grep` filter of `tail`: a substring, or a JavaScript regular expression written `/…/flags`.
 */
import { PagewiseError } from "../../core/index.js";

/** Records are matched on at most this many leading bytes (a guard against enormous records). */
export const GREP_MAX_RECORD_BYTES = 1 << 20;
/** A regular expression sees at most this many leading code units of a record (backtracking guard). */
export const GREP_REGEX_MAX_UNITS = 64 * 1024;

export type RecordFilter = (text: string) => boolean;

/** Compiles `grep` once per call: `/source/flags` is a regex, anything else a case-sensitive substring. */
export function compileGrep(grep: string): RecordFilter {
  const m = /^\/(.+)\/([a-z]*)$/s.exec(grep);
  if (!m) return (text) => text.includes(grep);
  const flags = m[2]!;
  if (/[gy]/.test(flags)) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `grep: the regex flags g and y are not allowed (got "${flags}").`,
      {
        hint: "Leave out g and y; each record is tested on its own.",
      },
    );
  }
  let re: RegExp;
  try {
    re = new RegExp(m[1]!, flags);
  } catch (err) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `grep: not a valid regular expression: ${(err as Error).message}`,
      {
        hint: "Fix the pattern, or pass plain text (without surrounding slashes) to match a substring.",
      },
    );
  }
  return (text) =>
    re.test(text.length > GREP_REGEX_MAX_UNITS ? text.slice(0, GREP_REGEX_MAX_UNITS) : text);
}
