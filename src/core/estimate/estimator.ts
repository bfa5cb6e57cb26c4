/**
 * @module
 * What an estimator is. Every budget in pagewise is checked by `count` on the exact text returned
 * to the model (the serialized JSON page, escaping included), never on raw content.
 */

export interface Estimator {
  /** The name used with `--estimator`. */
  readonly name: string;
  /** Estimated tokens of `text`; `count("") === 0`. Must be deterministic. */
  count(text: string): number;
  /**
   * An upper bound on the UTF-16 code units that one token of this estimator can cover in any text.
   * Used to bound how much of a source is read for one page: a page of `t` tokens never needs more
   * than `t * maxUnitsPerToken` code units.
   */
  readonly maxUnitsPerToken: number;
  /**
   * A much faster estimator that usually counts at least as much as this one (for exact
   * tokenizers: the `default` estimator). Budget fitting lets it pick the cut and confirms the
   * page with `count`, so an exact tokenizer runs a few times per page instead of once per probe.
   */
  readonly cheap?: Estimator;
  /**
   * Starts a count that text is added to piece by piece, so that a page can be fitted in one pass
   * over its content (see `fitTextPrefix`). Its `tokens` equal `count` of everything added, as long
   * as no piece ends inside a surrogate pair or right after a backslash (JSON-escaped content cut
   * between whole escapes never does). Estimators that cannot resume a count leave it out.
   */
  readonly running?: () => RunningCount;
  /**
   * Continues a count from a `RunningCount#snapshot`, possibly taken in another thread (a walk's
   * worker counts a page's items as it collects them, and the page is fitted from its counts).
   * Present exactly when the running counts have `snapshot`.
   */
  readonly resume?: (snapshot: RunningSnapshot) => RunningCount;
}

/** A running count's state as plain data: it survives a structured clone (`postMessage`). */
export type RunningSnapshot = Readonly<Record<string, number>>;

/** A count in progress (see `Estimator.running`). */
export interface RunningCount {
  /** Adds `text[from, to)` (default: all of it). */
  add(text: string, from?: number, to?: number): void;
  /** Tokens of everything added so far. */
  tokens(): number;
  /** An independent copy: what follows can be tried without losing this point. */
  fork(): RunningCount;
  /** The count's state as plain data, for `Estimator.resume`. */
  snapshot?(): RunningSnapshot;
}
