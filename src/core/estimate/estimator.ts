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
}
