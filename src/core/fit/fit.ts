/**
 * @module
 * Budget fitting: the largest page whose exact serialized text fits the token budget.
 *
 * Pages are measured whole — JSON escaping, field names, URI, version and cursor included — because
 * escaping changes real token counts far more than raw length suggests. The search is a binary
 * search over "how much content", each probe rendering and counting the real page, so the result is
 * exact for the estimator in use rather than a guess from a per-character average.
 */

import { PagewiseError } from "../errors.js";
import type { Estimator } from "../estimate/estimator.js";

export interface Fitted {
  /** How much content the page holds (code units for text, items for item pages). */
  readonly amount: number;
  /** The page text. */
  readonly text: string;
  /** Its estimated tokens, ≤ the budget. */
  readonly tokens: number;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves `units` down so that it does not split a surrogate pair of `text`. */
export function codePointFloor(text: string, units: number): number {
  if (
    units > 0 &&
    units < text.length &&
    isHigh(text.charCodeAt(units - 1)) &&
    isLow(text.charCodeAt(units))
  ) {
    return units - 1;
  }
  return units;
}

/** The smallest non-zero cut of `text` on a code-point boundary. */
function firstCodePoint(text: string): number {
  return text.length >= 2 && isHigh(text.charCodeAt(0)) && isLow(text.charCodeAt(1))
    ? 2
    : Math.min(1, text.length);
}

export function budgetTooSmall(maxTokens: number, minimum: number, what: string): PagewiseError {
  return new PagewiseError(
    "BUDGET_TOO_SMALL",
    `max_tokens ${maxTokens} cannot hold the page's metadata plus ${what}; the smallest budget that works here is ${minimum}.`,
    { minimum_max_tokens: minimum, retry: { max_tokens: minimum } },
  );
}

/**
 * Fits a prefix of `text` (cut on a code-point boundary) into `maxTokens`, where `render(units)` is
 * the page holding the first `units` code units. At least one code point is always included when
 * `text` is non-empty; if even that does not fit, BUDGET_TOO_SMALL names the budget that would.
 */
export function fitTextPrefix(
  text: string,
  maxTokens: number,
  estimator: Estimator,
  render: (units: number) => string,
): Fitted {
  const measure = (units: number): Fitted => {
    const page = render(units);
    return { amount: units, text: page, tokens: estimator.count(page) };
  };
  const whole = measure(text.length);
  if (whole.tokens <= maxTokens) return whole;
  const first = firstCodePoint(text);
  if (first === 0) throw budgetTooSmall(maxTokens, whole.tokens, "an empty page");
  let best = measure(first);
  if (best.tokens > maxTokens)
    throw budgetTooSmall(maxTokens, best.tokens, "one character of content");
  // Invariant: `best` (lo) fits, `hi` does not.
  let lo = first;
  let hi = text.length;
  while (hi - lo > 1) {
    let mid = codePointFloor(text, lo + Math.floor((hi - lo) / 2));
    if (mid <= lo) mid = lo + 2 <= hi - 1 ? lo + 2 : hi;
    if (mid >= hi) break;
    const probe = measure(mid);
    if (probe.tokens <= maxTokens) {
      best = probe;
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return best;
}

/**
 * Fits as many items as possible (up to `available`) into `maxTokens`, where `render(count)` is the
 * page holding the first `count` items. Returns `amount: 0` when not even one item fits (the caller
 * decides whether to clamp that item or fail), and the page rendered with no items.
 */
export function fitItemCount(
  available: number,
  maxTokens: number,
  estimator: Estimator,
  render: (count: number) => string,
): Fitted {
  const measure = (count: number): Fitted => {
    const page = render(count);
    return { amount: count, text: page, tokens: estimator.count(page) };
  };
  const all = measure(available);
  if (all.tokens <= maxTokens) return all;
  let best = measure(0);
  let lo = 0;
  let hi = available;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const probe = measure(mid);
    if (probe.tokens <= maxTokens) {
      best = probe;
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return best;
}
