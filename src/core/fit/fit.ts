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

/** Typical code units per token of ordinary text: the first guess of a page's size. */
const FIRST_GUESS_UNITS_PER_TOKEN = 4;
/** Exact-count probes allowed to grow a page past the cheap estimator's cut. */
const MAX_EXACT_PROBES = 8;

/**
 * Fits a prefix of `text` (cut on a code-point boundary) into `maxTokens`, where `render(units)` is
 * the page holding the first `units` code units. At least one code point is always included when
 * `text` is non-empty; if even that does not fit, BUDGET_TOO_SMALL names the budget that would.
 *
 * The search gallops up from a guess of the page's size and then bisects, so it costs
 * O(page × log page) whatever the length of `text` (which may be much larger than one page).
 * With an estimator that has a `cheap` companion, the cheap one picks the cut and the exact one
 * confirms it and grows the page with a bounded number of probes.
 */
export function fitTextPrefix(
  text: string,
  maxTokens: number,
  estimator: Estimator,
  render: (units: number) => string,
): Fitted {
  const cheap = estimator.cheap;
  if (cheap) {
    let base: Fitted | undefined;
    try {
      base = searchPrefix(text, maxTokens, cheap, render, undefined, Number.POSITIVE_INFINITY);
    } catch {
      base = undefined;
    }
    if (base) {
      const exact = { ...base, tokens: estimator.count(base.text) };
      if (exact.tokens <= maxTokens) {
        if (base.amount === text.length) return exact;
        return searchPrefix(text, maxTokens, estimator, render, exact, MAX_EXACT_PROBES);
      }
      // The cheap estimator under-counted here: search below its cut with exact counts.
      return searchPrefix(
        text.slice(0, base.amount),
        maxTokens,
        estimator,
        render,
        undefined,
        Number.POSITIVE_INFINITY,
      );
    }
  }
  return searchPrefix(text, maxTokens, estimator, render, undefined, Number.POSITIVE_INFINITY);
}

function searchPrefix(
  text: string,
  maxTokens: number,
  estimator: Estimator,
  render: (units: number) => string,
  known: Fitted | undefined,
  maxProbes: number,
): Fitted {
  let probes = 0;
  const measure = (units: number): Fitted => {
    probes++;
    const page = render(units);
    return { amount: units, text: page, tokens: estimator.count(page) };
  };
  let best: Fitted;
  if (known) {
    best = known;
  } else {
    const first = firstCodePoint(text);
    if (first === 0) {
      const empty = measure(0);
      if (empty.tokens > maxTokens) throw budgetTooSmall(maxTokens, empty.tokens, "an empty page");
      return empty;
    }
    best = measure(first);
    if (best.tokens > maxTokens)
      throw budgetTooSmall(maxTokens, best.tokens, "one character of content");
  }
  // Invariant: `best` (lo) fits; `hi` is the smallest amount known not to fit (or length + 1).
  let lo = best.amount;
  let hi = text.length + 1;
  // Gallop: grow by a step sized from the room left, doubling, until a probe does not fit.
  let step = Math.max(1, (maxTokens - best.tokens) * FIRST_GUESS_UNITS_PER_TOKEN);
  while (lo < text.length && probes < maxProbes) {
    const target = Math.min(text.length, lo + step);
    const mid =
      codePointFloor(text, target) > lo
        ? codePointFloor(text, target)
        : Math.min(text.length, lo + 2);
    const probe = measure(mid);
    if (probe.tokens <= maxTokens) {
      best = probe;
      lo = mid;
      step *= 2;
    } else {
      hi = mid;
      break;
    }
  }
  // Bisect between the last fit and the first miss.
  while (hi - lo > 1 && lo < text.length && probes < maxProbes) {
    let mid = codePointFloor(text, lo + Math.floor((hi - lo) / 2));
    if (mid <= lo) mid = lo + 2;
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
