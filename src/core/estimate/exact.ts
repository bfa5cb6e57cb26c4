import { defaultEstimator } from "./default.js";
import type { Estimator } from "./estimator.js";

/**
 * @module
 * Exact token counts with the optional `gpt-tokenizer` package, loaded only when one of these
 * estimators is chosen. Special-token text such as `<|endoftext|>` is counted as plain text (a file
 * may contain it; it is never a control token here).
 */

export type ExactEstimatorName = "o200k" | "cl100k";

/**
 * The longest token of the o200k and cl100k vocabularies, in bytes (a run of 128 spaces; measured
 * from the vocabularies shipped with gpt-tokenizer 4.0.0). A token covers at most that many bytes,
 * and a UTF-16 unit takes at least one byte, so one token never covers more UTF-16 units.
 */
export const EXACT_MAX_UNITS_PER_TOKEN = 128;

const MODULES = {
  o200k: "gpt-tokenizer/encoding/o200k_base",
  cl100k: "gpt-tokenizer/encoding/cl100k_base",
} as const;

interface EncodingModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

/**
 * Loads the exact estimator for `name`. Throws a plain `Error` saying how to install the tokenizer
 * when the optional dependency is missing.
 */
export async function loadExactEstimator(name: ExactEstimatorName): Promise<Estimator> {
  const specifier = MODULES[name];
  if (specifier === undefined) {
    throw new Error(`Unknown exact estimator "${String(name)}"; use "o200k" or "cl100k".`);
  }
  let encoding: EncodingModule;
  try {
    encoding = (await import(specifier)) as EncodingModule;
  } catch (error) {
    throw new Error(
      `The "${name}" estimator needs the optional package gpt-tokenizer, which could not be loaded ` +
        `(${(error as Error).message}). Install it beside pagewise ("npm install gpt-tokenizer", ` +
        `with -g for a global install; for the Claude Desktop bundle, make it with ` +
        `"npm run bundle -- --exact-tokenizers"), or choose --estimator default.`,
      { cause: error },
    );
  }
  // Treat special-token text as ordinary text instead of throwing on it.
  const options = { disallowedSpecial: new Set<string>() };
  return {
    name,
    count: (text: string) => (text.length === 0 ? 0 : encoding.countTokens(text, options)),
    maxUnitsPerToken: EXACT_MAX_UNITS_PER_TOKEN,
    // The cheap estimator counts at least as much on the pages we measured: it picks the cut, the
    // exact count confirms it.
    cheap: defaultEstimator,
  };
}
