/**
 * @module
 * Search patterns: a JavaScript regular expression or a literal, with smart case, compiled once
 * and validated in the calling thread so that syntax errors are INVALID_ARGUMENT before any scan.
 */
import { PagewiseError } from "../../core/index.js";

export interface CompiledPattern {
  /** The regex source applied to each line. */
  readonly source: string;
  /** Flags for the per-line regex (always global; `u` when the pattern allows it; `i` when folding). */
  readonly flags: string;
  readonly caseSensitive: boolean;
  /**
   * Whether a whole-chunk pre-scan may be used to skip lines: true when the pattern cannot match
   * a line differently once the line is seen inside its chunk (no anchors, no lookaround). A
   * pre-scan only finds candidate lines; each candidate is matched again on its own.
   */
  readonly prefilter: boolean;
}

export type CaseMode = "smart" | "sensitive" | "insensitive";

/** Upper-case letters outside escapes (`\W`, `\S`, `\D`, `\B`, `\P{…}` do not count). */
function hasUpperCase(pattern: string, literal: boolean): boolean {
  const text = literal ? pattern : pattern.replace(/\\[pPu]\{[^}]*\}|\\[a-zA-Z]/g, "");
  return /\p{Lu}/u.test(text);
}

const UNSAFE_FOR_PREFILTER = /\^|\$|\(\?<?[=!]/;

export function compilePattern(pattern: string, literal: boolean, mode: CaseMode): CompiledPattern {
  if (pattern.length === 0) {
    throw new PagewiseError("INVALID_ARGUMENT", "pattern must not be empty.");
  }
  const caseSensitive = mode === "smart" ? hasUpperCase(pattern, literal) : mode === "sensitive";
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  const fold = caseSensitive ? "" : "i";
  for (const flags of [`gu${fold}`, `g${fold}`]) {
    try {
      new RegExp(source, flags);
      return {
        source,
        flags,
        caseSensitive,
        prefilter: literal || !UNSAFE_FOR_PREFILTER.test(source),
      };
    } catch (err) {
      if (flags.includes("u")) continue;
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        `pattern is not a valid JavaScript regular expression: ${(err as Error).message}.`,
        { hint: "Fix the regular expression, or pass literal: true to search for the text as is." },
      );
    }
  }
  throw new PagewiseError("INTERNAL_ERROR", "unreachable");
}
