/**
 * @module
 * User-supplied patterns (search's `pattern`, tail's `grep`): a JavaScript regular expression or a
 * literal, with smart case, validated once in the calling thread (syntax errors are
 * INVALID_ARGUMENT before any work) and given to the engine that may run it, always with
 * JavaScript's meaning:
 *
 * - `bounded`: V8's own engine, for patterns whose backtracking is bounded by their syntax
 *   (analysis.ts: no unbounded repetition except as the last thing a match does, and few enough
 *   ways to match — literals, alternatives of words, counted classes). At most
 *   MAX_BOUNDED_STEPS_PER_CHAR steps per character: linear time, and the fastest engine there is
 *   in JavaScript. Safe on any thread.
 * - `linear`: re2js (linear.ts), for what RE2 can spell with the same meaning (re2-source.ts).
 *   Linear time, safe on any thread.
 * - `guarded`: V8's engine for what neither can run (lookaround or backreferences with unbounded
 *   repetition, `\p{…}` with unbounded repetition, patterns valid only without the `u` flag…). It
 *   may backtrack catastrophically, so callers run it in a worker under a stall guard.
 */
import { PagewiseError } from "../../core/index.js";
import { MAX_BOUNDED_STEPS_PER_CHAR, MAX_PATTERN_NESTING, MAX_PATTERN_PROGRAM } from "../limits.js";
import { checkCarriedLength } from "../shared/carried-argument.js";
import { analyzePattern, groupDepth, type PatternShape } from "./analysis.js";
import { compileLinear, type Re2js } from "./linear.js";
import { requiredLiteral } from "./literal.js";
import { re2Weight, toRe2Source } from "./re2-source.js";

export type CaseMode = "smart" | "sensitive" | "insensitive";
export type PatternEngine = "bounded" | "linear" | "guarded";

export interface CompiledPattern {
  /** The JavaScript regex source (a literal is escaped). */
  readonly source: string;
  /** Flags for the JavaScript regex (always global; `u` when the pattern allows it; `i` when folding). */
  readonly flags: string;
  /** The RE2 spelling of the same pattern, when `engine` is `linear`. */
  readonly re2Source?: string;
  readonly engine: PatternEngine;
  readonly caseSensitive: boolean;
  /**
   * Steps one character of text can cost the engine: the backtracking bound (`bounded`), the
   * program's size (`linear`: its automaton can step through every instruction per character),
   * Infinity (`guarded`).
   */
  readonly weight: number;
  /**
   * Whether a whole-chunk pre-scan may be used to skip lines: true when a match on a line alone is
   * also a match on the chunk at the same place (no lookaround; anchors are read per line in the
   * chunk). A pre-scan only finds candidate lines; each candidate is matched again on its own.
   */
  readonly prefilter: boolean;
  /**
   * A string every match contains (case-sensitive patterns only; "" when none is known): a line
   * without it cannot match, so a byte search for it skips most of the text.
   */
  readonly literal: string;
  /**
   * Matches never touch a line break and never depend on where the line starts or ends (no
   * anchors, no lookaround, nothing that matches `\n` or `\r`, no empty match): the matches of a
   * run of whole lines are the matches of each line, so they can be counted in one pass.
   */
  readonly lineLocal: boolean;
  /** Can match the empty string (an iteration then advances one code point by itself). */
  readonly nullable: boolean;
  /**
   * Matches ASCII characters only, never the empty string: V8 may match UTF-8 bytes read as
   * Latin-1 (a copy, not a decoding) and find the same matches at the same byte offsets.
   */
  readonly asciiOnly: boolean;
  /**
   * The UTF-8 text every match is exactly (lower-cased when the pattern ignores case, then ASCII
   * only), "" when the pattern is not a plain literal: such matches are counted on the bytes.
   */
  readonly exactLiteral: string;
  /**
   * For `bounded` patterns without lookaround: how far past a match's start (UTF-16 units) the
   * engine can read, so that a long line can be matched a window at a time; 0 when unknown.
   */
  readonly reachUnits: number;
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
  const caseSensitive = mode === "smart" ? hasUpperCase(pattern, literal) : mode === "sensitive";
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  // Nesting first: a pattern too deep is named as such even when it is also too long.
  checkNesting(source, argument);
  checkCarriedLength(pattern, argument, "max_pattern_bytes");
  const fold = caseSensitive ? "" : "i";
  const flags = jsFlags(source, fold, argument, options.literalArgument ?? "literal");
  const unicode = flags.includes("u");
  const shape = unicode ? analyzePattern(source, flags) : undefined;
  const common = {
    source,
    flags,
    caseSensitive,
    prefilter: shape ? !shape.lookaround : !UNSAFE_FOR_PREFILTER.test(source),
    literal: caseSensitive && unicode ? requiredLiteral(source) : "",
    lineLocal:
      shape !== undefined &&
      !shape.anchors &&
      !shape.lookaround &&
      !shape.nullable &&
      !shape.matchesLineBreak,
    nullable: shape?.nullable ?? true,
    asciiOnly: shape?.asciiOnly === true && !shape.nullable,
    exactLiteral: exactLiteral(shape, caseSensitive),
  };
  if (shape && shape.stepsPerChar <= MAX_BOUNDED_STEPS_PER_CHAR) {
    return { ...common, engine: "bounded", weight: shape.stepsPerChar, reachUnits: reach(shape) };
  }
  // Only u-mode patterns are translated: without `u`, V8 reads escapes and case folding by the
  // older rules, which RE2 does not share.
  const re2Source = shape ? toRe2Source(source, !caseSensitive) : undefined;
  const weight = re2Source === undefined ? 0 : re2Weight(re2Source);
  if (weight > MAX_PATTERN_PROGRAM) {
    // Its program is very large (`(?:a{1000}){1000}`: counts multiply): whichever engine ran it,
    // RE2 or V8 in the guarded worker (counts RE2 refuses), would compile code of a similar size,
    // in the heap of each thread scanning.
    throw new PagewiseError(
      "RESOURCE_LIMIT_EXCEEDED",
      `${argument} compiles to a program of about ${weight} instructions, more than the ${MAX_PATTERN_PROGRAM} a pattern may compile to (repetition counts multiply). Use smaller counts, or a literal.`,
      { limit: { name: "max_pattern_program", limit: MAX_PATTERN_PROGRAM, value: weight } },
    );
  }
  if (re2Source !== undefined && shape?.re2Repeats) {
    return { ...common, engine: "linear", re2Source, weight, reachUnits: 0 };
  }
  return { ...common, engine: "guarded", weight: Number.POSITIVE_INFINITY, reachUnits: 0 };
}

function exactLiteral(shape: PatternShape | undefined, caseSensitive: boolean): string {
  const text = shape?.literalText;
  if (text === undefined) return "";
  if (caseSensitive) return text;
  return shape!.asciiOnly ? text.toLowerCase() : "";
}

/** One past the longest match (for `\b` and `$` at its end), when a window of a line is enough. */
function reach(shape: PatternShape): number {
  if (shape.lookaround || shape.backreference) return 0;
  return Number.isFinite(shape.maxMatchUnits) ? shape.maxMatchUnits + 1 : 0;
}

/** Patterns nested deeper than MAX_PATTERN_NESTING groups are refused before anything reads them. */
function checkNesting(source: string, argument: string): void {
  const depth = groupDepth(source);
  if (depth <= MAX_PATTERN_NESTING) return;
  throw new PagewiseError(
    "INVALID_ARGUMENT",
    `${argument} nests groups ${depth} deep, more than the ${MAX_PATTERN_NESTING} a pattern may.`,
    {
      hint: "Flatten the pattern (fewer nested parentheses).",
      limit: { name: "max_pattern_nesting", limit: MAX_PATTERN_NESTING, value: depth },
    },
  );
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

/**
 * Matches of one pattern in one text at a time, the way the scanners iterate (from a position,
 * leftmost first, an empty match advancing one code point). `reset` gives the text; `find` the
 * first match starting at or after `from` (its bounds in `start`/`end`).
 */
export interface Matcher {
  start: number;
  end: number;
  reset(text: string): void;
  find(from: number): boolean;
  /** Whether `text` has a match (the cheapest question each engine answers). */
  test(text: string): boolean;
  /** Every match of `text`, counted without building one object per match. */
  count(text: string): number;
}

/** V8's engine: `bounded` and `guarded` patterns. */
class V8Matcher implements Matcher {
  start = 0;
  end = 0;
  private text = "";
  constructor(
    private readonly re: RegExp,
    private readonly nullable: boolean,
  ) {}

  reset(text: string): void {
    this.text = text;
  }

  find(from: number): boolean {
    const re = this.re;
    re.lastIndex = from;
    const m = re.exec(this.text);
    if (m === null) return false;
    this.start = m.index;
    this.end = m.index + m[0]!.length;
    return true;
  }

  test(text: string): boolean {
    this.re.lastIndex = 0;
    return this.re.test(text);
  }

  count(text: string): number {
    const re = this.re;
    re.lastIndex = 0;
    let n = 0;
    if (!this.nullable) {
      // Perf: `test` moves lastIndex past each match without building a match array.
      while (re.test(text)) n++;
      return n;
    }
    this.reset(text);
    for (let from = 0; from <= text.length && this.find(from); n++) {
      from = this.end > this.start ? this.end : this.end + codeUnitsAt(text, this.end);
    }
    return n;
  }
}

/** re2js: `linear` patterns. */
class LinearMatcher implements Matcher {
  start = 0;
  end = 0;
  private readonly matcher: ReturnType<Re2js["matcher"]>;
  private length = 0;
  constructor(private readonly re: Re2js) {
    this.matcher = re.matcher("");
  }

  reset(text: string): void {
    this.matcher.resetMatcherInput(text);
    this.length = text.length;
  }

  find(from: number): boolean {
    if (from > this.length || !this.matcher.find(from)) return false;
    this.start = this.matcher.start();
    this.end = this.matcher.end();
    return true;
  }

  test(text: string): boolean {
    return this.re.test(text);
  }

  count(text: string): number {
    if (!this.re.test(text)) return 0;
    this.reset(text);
    let n = 0;
    for (let from = 0; this.find(from); n++) {
      from = this.end > this.start ? this.end : this.end + codeUnitsAt(text, this.end);
    }
    return n;
  }
}

/** UTF-16 units of the code point at `i` (1 past the end). */
function codeUnitsAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

/** A fresh matcher for `p` (matchers carry state: one per scan). */
export function lineMatcher(p: CompiledPattern): Matcher {
  if (p.engine === "linear")
    return new LinearMatcher(compileLinear(p.re2Source!, !p.caseSensitive));
  return new V8Matcher(new RegExp(p.source, p.flags), p.nullable);
}

/** V8's pre-scan over a whole decoded chunk (multi-line; see `prefilter`). */
export function chunkMatcher(p: CompiledPattern): RegExp {
  return new RegExp(p.source, `${p.flags}m`);
}

/** The linear engine over raw UTF-8 bytes (offsets are byte offsets). */
export interface ByteMatcher {
  /**
   * False when no line of `lines` (whole lines, terminators included) can match: the pattern is
   * asked multi-line, so that `^` and `$` hold at each line's start and end (before `\r\n` too),
   * and every match of a line alone is a match here.
   */
  mayMatch(lines: Uint8Array): boolean;
  /** Whether one line (without its terminator) has a match. */
  test(line: Uint8Array): boolean;
  /** Every match of one line (without its terminator). */
  count(line: Uint8Array): number;
}

export function byteMatcher(p: CompiledPattern): ByteMatcher {
  if (p.engine !== "linear") throw new Error("byteMatcher needs a linear-engine pattern");
  const fold = !p.caseSensitive;
  const line = compileLinear(p.re2Source!, fold);
  // The translated source spells `$` only as the assertion (a literal `$` is `\x{24}`).
  const lines = compileLinear(`(?m)${p.re2Source!.replaceAll("$", () => "(?:\\x{D}?$)")}`, fold);
  const matcher = line.matcher(new Uint8Array(0));
  return {
    mayMatch: (bytes) => lines.test(bytes),
    test: (bytes) => line.test(bytes),
    count(bytes) {
      if (!line.test(bytes)) return 0;
      matcher.resetMatcherInput(bytes);
      let n = 0;
      for (let from = 0; from <= bytes.length && matcher.find(from); n++) {
        const start = matcher.start();
        const end = matcher.end();
        from = end > start ? end : end + utf8Length(bytes[end]);
      }
      return n;
    },
  };
}

/** Bytes of the UTF-8 sequence whose first byte is `lead` (1 past the end). */
function utf8Length(lead: number | undefined): number {
  if (lead === undefined || lead < 0xc0) return 1;
  return lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/**
 * Counts the matches of an `exactLiteral` pattern in `bytes[from, to)`, leftmost and without
 * overlap like an iteration: on the raw bytes, with nothing decoded or built. Perf: a dense
 * one-letter search counts millions of matches; UTF-8 never matches a character's bytes inside
 * another's, so byte occurrences are character occurrences.
 */
export function literalCounter(
  p: CompiledPattern,
): ((bytes: Buffer, from: number, to: number) => number) | undefined {
  if (p.exactLiteral === "") return undefined;
  const needle = Buffer.from(p.exactLiteral, "utf8");
  if (p.caseSensitive) {
    return (bytes, from, to) => {
      let n = 0;
      for (let i = bytes.indexOf(needle, from); i >= 0 && i + needle.length <= to; n++) {
        i = bytes.indexOf(needle, i + needle.length);
      }
      return n;
    };
  }
  // ASCII only, lower-cased: a letter matches either case (bit 0x20), anything else exactly.
  const fold = Uint8Array.from(needle, (b) => (b >= 0x61 && b <= 0x7a ? 0x20 : 0));
  const first = needle[0]!;
  const firstFold = fold[0]!;
  const length = needle.length;
  if (length === 1) return (bytes, from, to) => countByte(bytes, from, to, first, firstFold);
  return (bytes, from, to) => {
    let n = 0;
    const last = to - length;
    for (let i = from; i <= last; i++) {
      if ((bytes[i]! | firstFold) !== first) continue;
      let j = 1;
      while (j < length && (bytes[i + j]! | fold[j]!) === needle[j]) j++;
      if (j === length) {
        n++;
        i += length - 1;
      }
    }
    return n;
  };
}

/**
 * Bytes of `bytes[from, to)` equal to `byte` once `fold` (0 or 0x20) is set in them. Perf: four
 * bytes at a time (a zero-byte test on 32-bit words), three times a byte loop's speed: a dense
 * one-letter count reads every byte of the tree.
 */
function countByte(bytes: Buffer, from: number, to: number, byte: number, fold: number): number {
  let n = 0;
  let i = from;
  const offset = bytes.byteOffset;
  for (; i < to && ((offset + i) & 3) !== 0; i++) if ((bytes[i]! | fold) === byte) n++;
  const aligned = ((offset + i) & 3) === 0;
  const words = new Uint32Array(
    bytes.buffer,
    aligned ? offset + i : 0,
    aligned ? (to - i) >> 2 : 0,
  );
  const foldWord = fold * 0x01010101;
  const byteWord = byte * 0x01010101;
  for (let w = 0; w < words.length; w++) {
    const x = (words[w]! | foldWord) ^ byteWord; // a zero byte where a byte matches
    const nonZero = (((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x) & 0x80808080;
    n += 4 - popCount(nonZero);
  }
  for (i += words.length * 4; i < to; i++) if ((bytes[i]! | fold) === byte) n++;
  return n;
}

function popCount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
