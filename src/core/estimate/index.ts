/**
 * @module
 * Token estimators: how pagewise counts the tokens of the text it returns.
 *
 * - `default` — cheap and conservative against the o200k, cl100k and public Claude tokenizers.
 * - `openviking` — compatibility with a widely used quarter-token estimator (under-counts).
 * - `o200k`, `cl100k` — exact, with the optional `gpt-tokenizer` package.
 *
 * ```ts
 * const estimator = await createEstimator("default");
 * estimator.count(JSON.stringify(page)); // tokens of the page, escaping included
 * ```
 */

import { defaultEstimator } from "./default.js";
import type { Estimator } from "./estimator.js";
import { loadExactEstimator } from "./exact.js";
import { openvikingEstimator } from "./openviking.js";

export { countDefault, defaultEstimator } from "./default.js";
export type { Estimator, RunningCount, RunningSnapshot } from "./estimator.js";
export { EXACT_MAX_UNITS_PER_TOKEN, type ExactEstimatorName, loadExactEstimator } from "./exact.js";
export { countOpenviking, openvikingEstimator } from "./openviking.js";

/** Every name accepted by `--estimator` and `createEstimator`. */
export const ESTIMATOR_NAMES = ["default", "openviking", "o200k", "cl100k"] as const;

export type EstimatorName = (typeof ESTIMATOR_NAMES)[number];

/**
 * The estimator called `name`. The exact ones load their tokenizer on first use; an unknown name
 * throws a plain `Error` that lists the valid names.
 */
export async function createEstimator(name: string): Promise<Estimator> {
  switch (name) {
    case "default":
      return defaultEstimator;
    case "openviking":
      return openvikingEstimator;
    case "o200k":
    case "cl100k":
      return loadExactEstimator(name);
    default:
      throw new Error(
        `Unknown estimator "${name}". Valid estimators: ${ESTIMATOR_NAMES.join(", ")}.`,
      );
  }
}
