// Temporary stub (to be replaced by the default-estimator work): maps "default" to openviking.
export type { Estimator } from "./estimator.js";

import type { Estimator } from "./estimator.js";
import { openvikingEstimator } from "./openviking.js";

export { countOpenviking, openvikingEstimator } from "./openviking.js";
export const ESTIMATOR_NAMES = ["default", "openviking", "o200k", "cl100k"] as const;
export const defaultEstimator: Estimator = { ...openvikingEstimator, name: "default" };
export async function createEstimator(name: string): Promise<Estimator> {
  if (name === "default") return defaultEstimator;
  if (name === "openviking") return openvikingEstimator;
  throw new Error(`Unknown estimator "${name}"; valid: ${ESTIMATOR_NAMES.join(", ")}`);
}
