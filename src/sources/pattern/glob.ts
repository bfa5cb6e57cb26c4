/**
 * @module
 * Glob filters (picomatch syntax), matched in linear time. A glob without `/` matches the entry's
 * name at any depth (`*.ts` finds `src/a.ts`, like ripgrep's `-g` and `.gitignore`); a glob with
 * `/` matches the whole path relative to the listed directory (`src/**\/*.ts`). Dot files match like
 * any other name once they are included (`include_hidden`). Syntax errors are INVALID_ARGUMENT.
 *
 * picomatch compiles a glob to a JavaScript regular expression whose lazy wildcards backtrack
 * polynomially in their number: `*a*a*a…*b` against a long name can hold a thread for minutes. The
 * same expression runs on the pattern module's linear-time engines (pattern.ts: V8 where the
 * backtracking is provably bounded, re2js otherwise) once the lookaheads picomatch adds only to
 * refuse `.` and `..` segments and empty names are dropped — a directory walk never yields either.
 * A glob neither can run (a negated extglob needs a lookahead) keeps picomatch, and then only with
 * a few wildcards, where backtracking stays bounded.
 */
import picomatch from "picomatch";
import { isPagewiseError, PagewiseError } from "../../core/index.js";
import { MAX_BACKTRACKING_GLOB_WILDCARDS, MAX_GLOB_CHARS } from "../limits.js";
import { type CompiledPattern, compilePattern, lineMatcher } from "./pattern.js";

export type PathMatcher = (relPath: string) => boolean;

/** The lookaheads picomatch emits to refuse `.`/`..` segments and empty names. */
const SEGMENT_GUARDS = ["(?!(?:^|\\/)\\.{1,2}(?:\\/|$))", "(?!\\.{1,2}(?:\\/|$))", "(?=.)"];

function invalidGlob(glob: string, why: string, limit?: PagewiseError["details"]["limit"]) {
  return new PagewiseError(
    "INVALID_ARGUMENT",
    `glob ${JSON.stringify(glob.slice(0, 200))} ${why}`,
    {
      hint: 'Fix the glob (picomatch syntax, e.g. "**/*.ts" or "src/**"), or leave it out.',
      ...(limit ? { limit } : {}),
    },
  );
}

export function compileGlob(glob: string | undefined): PathMatcher | undefined {
  if (glob === undefined) return undefined;
  if (glob.length === 0 || glob.includes("\0")) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      "glob must be a non-empty pattern such as **/*.ts.",
    );
  }
  if (glob.length > MAX_GLOB_CHARS) {
    throw invalidGlob(glob, `is longer than ${MAX_GLOB_CHARS} characters.`, {
      name: "max_glob_chars",
      limit: MAX_GLOB_CHARS,
      value: glob.length,
    });
  }
  const basename = !glob.includes("/");
  const options = { dot: true, basename, strictBrackets: true };
  let regex: RegExp;
  try {
    regex = picomatch.makeRe(glob, options);
  } catch (err) {
    throw invalidGlob(glob, `is not a valid glob: ${(err as Error).message}.`);
  }
  let source = regex.source;
  for (const guard of SEGMENT_GUARDS) source = source.split(guard).join("");
  let compiled: CompiledPattern;
  try {
    compiled = compilePattern(
      source,
      false,
      regex.flags.includes("i") ? "insensitive" : "sensitive",
      {
        argument: "glob",
      },
    );
  } catch (err) {
    if (!isPagewiseError(err)) throw err;
    throw invalidGlob(glob, `cannot be matched: ${err.message}`, err.details.limit);
  }
  if (compiled.engine !== "guarded") {
    const matcher = lineMatcher(compiled);
    return basename
      ? (relPath) => matcher.test(relPath.slice(relPath.lastIndexOf("/") + 1))
      : (relPath) => matcher.test(relPath);
  }
  const wildcards = glob.split("*").length - 1;
  if (wildcards > MAX_BACKTRACKING_GLOB_WILDCARDS) {
    throw invalidGlob(
      glob,
      `needs the backtracking matcher (a negated pattern) and has ${wildcards} wildcards, more than ${MAX_BACKTRACKING_GLOB_WILDCARDS}.`,
      {
        name: "max_backtracking_glob_wildcards",
        limit: MAX_BACKTRACKING_GLOB_WILDCARDS,
        value: wildcards,
      },
    );
  }
  return picomatch(glob, options);
}
