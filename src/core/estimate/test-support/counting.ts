import { defaultEstimator } from "../default.js";
import type { Estimator, RunningCount } from "../estimator.js";

/**
 * The default estimator, counting the characters its running counts are given (`added`), so that
 * a test can tell how much of a page a fit counted. With `wholeCounts: false`, `count` throws (a
 * running fit counts no whole page).
 */
export function countingDefault(options: { wholeCounts?: boolean } = {}): {
  estimator: Estimator;
  added: () => number;
} {
  let added = 0;
  const wrap = (inner: RunningCount): RunningCount => ({
    add(text, from = 0, to = text.length) {
      added += to - from;
      inner.add(text, from, to);
    },
    tokens: () => inner.tokens(),
    fork: () => wrap(inner.fork()),
    snapshot: () => inner.snapshot!(),
  });
  const estimator: Estimator = {
    ...defaultEstimator,
    running: () => wrap(defaultEstimator.running!()),
    resume: (snapshot) => wrap(defaultEstimator.resume!(snapshot)),
  };
  if (options.wholeCounts === false) {
    estimator.count = () => {
      throw new Error("a running fit counts no whole page");
    };
  }
  return { estimator, added: () => added };
}
