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
  const measure = (units: number): Fitted => {
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
    if (best.tokens > maxTokens) {
      throw budgetTooSmall(maxTokens, best.tokens, "one character of content");
    }
  }
  return searchLargest({
    best,
    limit: text.length,
    maxTokens,
    maxProbes,
    measure,
    snap: (units, lo) => {
      const floor = codePointFloor(text, units);
      return floor > lo ? floor : lo + 2;
    },
  });
}

interface LargestSearch {
  /** A measured amount that fits. */
  best: Fitted;
  /** A measured amount that does not fit, if one is known. */
  miss?: Fitted;
  /** The largest amount there is. */
  limit: number;
  maxTokens: number;
  maxProbes: number;
  measure: (amount: number) => Fitted;
  /** Moves a candidate in (lo, ∞) to an allowed amount > lo. */
  snap: (amount: number, lo: number) => number;
}

/**
 * The largest amount whose page fits, by interpolation between the last fit and the first miss:
 * page size grows almost linearly with the amount of content, so a guess from the measured slope
 * usually lands within a few units, and 3–5 probes do what bisection needs 15–20 for. A step that
 * fails to halve the interval is followed by a bisection step, which keeps the worst case
 * logarithmic when pages are far from linear.
 */
function searchLargest(search: LargestSearch): Fitted {
  const { limit, maxTokens, measure, snap } = search;
  let best = search.best;
  let lo = best.amount;
  let loTokens = best.tokens;
  let hi = search.miss ? search.miss.amount : limit + 1; // smallest amount known not to fit
  let hiTokens = search.miss ? search.miss.tokens : Number.POSITIVE_INFINITY;
  let probes = 0;
  let bisectNext = false;
  while (hi - lo > 1 && lo < limit && probes < search.maxProbes) {
    let target: number;
    if (bisectNext) {
      target = lo + Math.floor((hi - lo) / 2);
    } else if (Number.isFinite(hiTokens) && hiTokens > loTokens) {
      target = lo + Math.floor(((maxTokens - loTokens) * (hi - lo)) / (hiTokens - loTokens));
    } else {
      // No miss yet: extrapolate from the fitting point, assuming a few units per token.
      const slope = lo > 0 && loTokens > 0 ? lo / loTokens : FIRST_GUESS_UNITS_PER_TOKEN;
      target = lo + Math.max(1, Math.floor((maxTokens - loTokens) * Math.max(slope, 1)));
    }
    let amount = Math.min(limit, snap(Math.max(target, lo + 1), lo));
    if (amount >= hi) amount = snap(lo + Math.floor((hi - lo) / 2), lo);
    if (amount >= hi || amount <= lo) break;
    const width = hi - lo;
    const probe = measure(amount);
    probes++;
    if (probe.tokens <= maxTokens) {
      best = probe;
      lo = amount;
      loTokens = probe.tokens;
    } else {
      hi = amount;
      hiTokens = probe.tokens;
    }
    bisectNext = !bisectNext && Number.isFinite(hiTokens) && hi - lo > width / 2;
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
  if (all.tokens <= maxTokens || available === 0) return all;
  const none = measure(0);
  if (none.tokens > maxTokens) return none;
  return searchLargest({
    best: none,
    miss: all,
    limit: available,
    maxTokens,
    maxProbes: Number.POSITIVE_INFINITY,
    measure,
    snap: (count, lo) => Math.max(count, lo + 1),
  });
}
