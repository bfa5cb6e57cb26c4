/**
 * @module
 * User-supplied patterns (search's `pattern`, tail's `grep`): a JavaScript regular expression or a
 * literal, with smart case, validated once in the calling thread (syntax errors are
 * INVALID_ARGUMENT before any work) and compiled for the engine that may run it:
 *
 * - `re2`: linear time (the `re2` package), used whenever the pattern has an RE2 spelling with the
 *   same meaning (see re2-source.ts). Safe on any thread.
 * - `js`: V8's backtracking engine, only for what RE2 cannot express (lookaround, backreferences,
 *   `\p{…}`…). It may take exponential time, so callers run it in a worker under a stall guard.
 */
import { createRequire } from "node:module";
import { PagewiseError } from "../../core/index.js";
import { MAX_PATTERN_CHARS } from "../limits.js";
import { requiredLiteral } from "./literal.js";
import { toRe2Source } from "./re2-source.js";

export type CaseMode = "smart" | "sensitive" | "insensitive";
export type PatternEngine = "re2" | "js";

/** The part of a regex object the scanners use: `exec` from `lastIndex`, global flag set. */
export interface LineMatcher {
  lastIndex: number;
  exec(text: string): RegExpExecArray | null;
  test(text: string): boolean;
}

export interface CompiledPattern {
  /** The JavaScript regex source (a literal is escaped). */
  readonly source: string;
  /** Flags for the JavaScript regex (always global; `u` when the pattern allows it; `i` when folding). */
  readonly flags: string;
  /** The RE2 spelling of the same pattern, when `engine` is `re2`. */
  readonly re2Source?: string;
  readonly engine: PatternEngine;
  readonly caseSensitive: boolean;
  /**
   * Whether a whole-chunk pre-scan may be used to skip lines: true when the pattern cannot match
   * a line differently once the line is seen inside its chunk (no anchors, no lookaround). A
   * pre-scan only finds candidate lines; each candidate is matched again on its own.
   */
  readonly prefilter: boolean;
  /**
   * A string every match contains (case-sensitive patterns only; "" when none is known): a line
   * without it cannot match, so a byte search for it skips most of the text.
   */
  readonly literal: string;
}

/** Upper-case letters outside escapes (`\W`, `\S`, `\D`, `\B`, `\P{…}` do not count). */
function hasUpperCase(pattern: string, literal: boolean): boolean {
  const text = literal ? pattern : pattern.replace(/\\[pPu]\{[^}]*\}|\\[a-zA-Z]/g, "");
  return /\p{Lu}/u.test(text);
}

const UNSAFE_FOR_PREFILTER = /\^|\$|\(\?<?[=!]/;

/** Names the argument in errors: `pattern` for search, `grep` for tail. */
export interface CompileOptions {
  readonly argument?: string;
  readonly literalArgument?: string;
}

export function compilePattern(
  pattern: string,
  literal: boolean,
  mode: CaseMode,
  options: CompileOptions = {},
): CompiledPattern {
  const argument = options.argument ?? "pattern";
  if (pattern.length === 0) {
    throw new PagewiseError("INVALID_ARGUMENT", `${argument} must not be empty.`);
  }
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `${argument} is ${pattern.length} characters long, more than the ${MAX_PATTERN_CHARS} a pattern may have.`,
      { limit: { name: "max_pattern_chars", limit: MAX_PATTERN_CHARS, value: pattern.length } },
    );
  }
  const caseSensitive = mode === "smart" ? hasUpperCase(pattern, literal) : mode === "sensitive";
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  const fold = caseSensitive ? "" : "i";
  const flags = jsFlags(source, fold, argument, options.literalArgument ?? "literal");
  // Only u-mode patterns are translated: without `u`, V8 reads escapes and case folding by the
  // older rules, which RE2 does not share.
  const re2Source = flags.includes("u") ? toRe2Source(source, !caseSensitive) : undefined;
  const usable = re2Source !== undefined && re2Compiles(re2Source, fold);
  if (re2Source !== undefined && !usable) {
    // RE2 reads it the same way but its program is over RE2's memory budget (`(?:a{1000}){1000}`):
    // V8 would compile it too, into code of a similar size, in the worker's heap.
    throw new PagewiseError(
      "RESOURCE_LIMIT_EXCEEDED",
      `${argument} compiles to a program larger than the matcher's memory budget (max_pattern_program: repetition counts multiply). Use smaller counts, or a literal.`,
    );
  }
  return {
    source,
    flags,
    ...(usable ? { re2Source } : {}),
    engine: usable ? "re2" : "js",
    caseSensitive,
    prefilter: literal || !UNSAFE_FOR_PREFILTER.test(source),
    literal: caseSensitive && flags.includes("u") ? requiredLiteral(source) : "",
  };
}

function jsFlags(source: string, fold: string, argument: string, literalArgument: string): string {
  try {
    new RegExp(source, `gu${fold}`);
    return `gu${fold}`;
  } catch {
    try {
      new RegExp(source, `g${fold}`);
      return `g${fold}`;
    } catch (err) {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        `${argument} is not a valid JavaScript regular expression: ${(err as Error).message}.`,
        {
          hint: `Fix the regular expression, or pass ${literalArgument}: true to match the text as is.`,
        },
      );
    }
  }
}

type Re2Constructor = new (source: string, flags: string) => LineMatcher;
let re2Class: Re2Constructor | undefined;

/** The `re2` package, loaded on first use (a native addon: only calls with a pattern pay for it). */
function re2(): Re2Constructor {
  re2Class ??= createRequire(import.meta.url)("re2") as Re2Constructor;
  return re2Class;
}

function re2Compiles(source: string, fold: string): boolean {
  try {
    new (re2())(source, `gu${fold}`);
    return true;
  } catch {
    // Programs too large for RE2's memory budget: the guarded JavaScript engine runs them.
    return false;
  }
}

/** A fresh global matcher for `p` (matchers carry `lastIndex`: one per scan). */
export function lineMatcher(p: CompiledPattern): LineMatcher {
  if (p.engine === "re2") return new (re2())(p.re2Source!, `gu${p.caseSensitive ? "" : "i"}`);
  return new RegExp(p.source, p.flags);
}

/** The JavaScript engine's pre-scan over a whole decoded chunk (multi-line). */
export function chunkMatcher(p: CompiledPattern): LineMatcher {
  return new RegExp(p.source, `${p.flags}m`);
}

/** RE2 run over raw UTF-8 bytes: `lastIndex` and `index` are byte offsets. */
export interface ByteMatcher {
  lastIndex: number;
  exec(bytes: Buffer): { readonly index: number } | null;
}

/**
 * The RE2 program over a chunk's bytes, for the line pre-scan. It finds a superset of where line
 * matches start: multi-line, so `^` matches at each line start, and `$` also before a `\r\n`
 * (a line's text excludes its terminator). Every match of a line alone is then a match on the
 * chunk starting at the same place, so the first chunk match never starts after the first line
 * that matches; lines before it cannot match. The translated source spells `$` only as the
 * assertion (a literal `$` is `\x{24}`), so the rewrite is textual.
 */
export function byteMatcher(p: CompiledPattern): ByteMatcher {
  if (p.engine !== "re2") throw new Error("byteMatcher needs an RE2 pattern");
  const source = `(?m)${p.re2Source!.replaceAll("$", () => "(?:\\x{D}?$)")}`;
  return new (re2())(source, `gu${p.caseSensitive ? "" : "i"}`) as unknown as ByteMatcher;
}
