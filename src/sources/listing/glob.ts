/**
 * @module
 * Glob filters (picomatch syntax). A glob without `/` matches the entry's name at any depth
 * (`*.ts` finds `src/a.ts`, like ripgrep's `-g` and `.gitignore`); a glob with `/` matches the whole
 * path relative to the listed directory (`src/**\/*.ts`). Dot files match like any other name once
 * they are included (`include_hidden`). Syntax errors are INVALID_ARGUMENT.
 */
import picomatch from "picomatch";
import { PagewiseError } from "../../core/index.js";

export type PathMatcher = (relPath: string) => boolean;

export function compileGlob(glob: string | undefined): PathMatcher | undefined {
  if (glob === undefined) return undefined;
  if (glob.length === 0 || glob.includes("\0")) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      "glob must be a non-empty pattern such as **/*.ts.",
    );
  }
  try {
    return picomatch(glob, { dot: true, basename: !glob.includes("/"), strictBrackets: true });
  } catch (err) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `glob ${JSON.stringify(glob)} is not a valid glob: ${(err as Error).message}.`,
      { hint: 'Fix the glob (picomatch syntax, e.g. "**/*.ts" or "src/**"), or leave it out.' },
    );
  }
}
