/**
 * @module
 * Budget fitting: the largest page whose exact serialized text fits the token budget — the one
 * search every page of pagewise goes through (text pages, item pages, the library's pagers).
 *
 * Pages are measured whole — JSON escaping, field names, URI, version and cursor included — because
 * escaping changes real token counts far more than raw length suggests. Two ways keep that cheap:
 *
 * - With a page layout (head, content, tail) and an estimator that keeps a running count, the page
 *   is counted in one pass: its content is added to the count as the page shows it, and the page is
 *   closed with its real tail (`fitTextRunning`, `fitItemsRunning`). A running count equals a whole
 *   count, so this is exact.
 * - Otherwise each piece of content (a chunk of text, an item) is estimated once, a running sum of
 *   those estimates predicts the cut, and the rendered page is counted once to confirm it (a second
 *   time when the confirmed page left slack to fill). Only when the prediction misses does an
 *   interpolation search over real counts take over.
 *
 * Either way the result is exact for the estimator in use.
 */

import { PagewiseError } from "../errors.js";
import type { Estimator, RunningCount, RunningSnapshot } from "../estimate/estimator.js";

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

/** How the smallest page of a refusal is counted again (see `smallestPageRecount`). */
const smallestPageRecounts = new WeakMap<PagewiseError, () => number>();

/**
 * A refusal naming `minimum`, the count of the smallest page under the refused budget. `recount`
 * counts that page again as it would be rendered now: the caller (`runSource`) re-renders it with
 * its cursors carrying other budgets to name the exact smallest budget that works.
 */
export function budgetTooSmall(
  maxTokens: number,
  minimum: number,
  what: string,
  recount?: () => number,
): PagewiseError {
  const refusal = new PagewiseError(
    "BUDGET_TOO_SMALL",
    `max_tokens ${maxTokens} cannot hold the page's metadata plus ${what}; the smallest budget that works here is ${minimum}.`,
    { minimum_max_tokens: minimum, retry: { max_tokens: minimum } },
  );
  if (recount) smallestPageRecounts.set(refusal, recount);
  return refusal;
}

/** The recount `budgetTooSmall` was given for this refusal, if any. */
export function smallestPageRecount(refusal: PagewiseError): (() => number) | undefined {
  return smallestPageRecounts.get(refusal);
}

/** Typical code units per token of ordinary text: the first guess of a page's size. */
const FIRST_GUESS_UNITS_PER_TOKEN = 4;
/** Whole-page counts a prediction may take before the interpolation search takes over. */
const MAX_PREDICTED_PROBES = 4;
/**
 * A confirmed page this close to the budget is taken as it is: another count to add a few more
 * characters would cost as much as the page itself. 1/500 of the budget (at least one token).
 */
const FILL_TOLERANCE = 1 / 500;
/**
 * A confirmed page is also final when the next piece (an item) is predicted to need this many
 * tokens more than the room left: one piece's prediction is off by about a token (rounding, the
 * comma), so it would not fit, and counting the page with it would only prove so.
 */
const CLEAR_MISS_TOKENS = 2;

/**
 * A cheap, monotone estimate of the tokens that the content `[0, amount)` adds to a page. Built
 * from per-piece estimates counted once (`PieceCosts`, `TextCosts`); it need not be exact — the
 * page is always counted whole before it is returned.
 */
export interface Prediction {
  /** Estimated tokens of the content `[0, amount)`. */
  cost(amount: number): number;
  /** The largest amount in `[from, limit]` whose cost stays ≤ `tokens`. */
  largestWithin(tokens: number, from: number, limit: number): number;
}

export interface LargestFit {
  maxTokens: number;
  estimator: Estimator;
  /** A measured page that fits (usually the smallest non-empty one). */
  best: Fitted;
  /** A measured page that does not fit, if one is known. */
  miss?: Fitted;
  /** The largest amount there is. */
  limit: number;
  /** The page holding `amount`. */
  render: (amount: number) => string;
  /** Moves a candidate in (lo, ∞) to an allowed amount > lo (default: the candidate itself). */
  snap?: (amount: number, lo: number) => number;
  prediction?: Prediction;
  /** Real-count probes allowed after the predictions (default: unbounded). */
  maxProbes?: number;
  /**
   * Code units (or items) of rest up to which the page holding everything (`limit`) is counted
   * when the fit stopped short of it (default: none): see WHOLE_REST_UNITS.
   */
  wholeRest?: number;
}

/**
 * A page that ends the content carries no cursor, so it can cost less than a page that stops a
 * little before the end. A fit that stopped within this many code units of the end counts the page
 * holding everything too, and takes it if it fits: a budget that holds the whole rest returns it.
 * Past this the rest costs more than any cursor (a cursor is at most a few hundred tokens).
 */
export const WHOLE_REST_UNITS = 4096;

/** `found`, or the page holding everything up to `limit` when that is near and fits too. */
function withWholeRest(
  found: Fitted,
  fit: Pick<LargestFit, "limit" | "wholeRest" | "render" | "estimator" | "maxTokens">,
): Fitted {
  const { limit, wholeRest = 0 } = fit;
  if (found.amount >= limit || limit - found.amount > wholeRest) return found;
  const text = fit.render(limit);
  const tokens = fit.estimator.count(text);
  return tokens <= fit.maxTokens ? { amount: limit, text, tokens } : found;
}

/**
 * The largest amount whose page fits, starting from a page known to fit. With a prediction the
 * cut is predicted and confirmed — usually one whole-page count: a confirmed page within
 * FILL_TOLERANCE of the budget is final; one with more room left is re-predicted from its real
 * count; one over the budget shrinks the prediction by the overshoot. Without a prediction, or when
 * predictions keep missing, an interpolation search over real counts finds the cut.
 */
export function fitLargest(fit: LargestFit): Fitted {
  return withWholeRest(fitLargestCut(fit), fit);
}

function fitLargestCut(fit: LargestFit): Fitted {
  const { maxTokens, estimator, render, limit } = fit;
  const snap = fit.snap ?? ((amount: number) => amount);
  const measure = (amount: number): Fitted => {
    const text = render(amount);
    return { amount, text, tokens: estimator.count(text) };
  };
  let best = fit.best;
  let miss = fit.miss;
  const prediction = fit.prediction;
  const tolerance = Math.max(1, Math.floor(maxTokens * FILL_TOLERANCE));
  if (prediction && !miss) {
    const origin = best;
    // The last page counted (fitting or not), and real tokens per predicted token since `origin`:
    // the next cut is predicted from there, so a prediction that is off in proportion to the
    // content (a bias per piece or per item) is corrected after one count, not only an offset.
    let anchor = best;
    let ratio = 1;
    for (let round = 0; round < MAX_PREDICTED_PROBES; round++) {
      if (best.amount >= limit || maxTokens - best.tokens <= tolerance) return best;
      const ceiling = miss ? miss.amount - 1 : limit;
      // Aimed half the tolerance under the budget: a prediction off by less than that either way
      // lands on a final page (over the budget, it would cost another count).
      const room =
        prediction.cost(anchor.amount) + (maxTokens - tolerance / 2 - anchor.tokens) / ratio;
      const target = prediction.largestWithin(room, best.amount, ceiling);
      const amount = snap(Math.min(ceiling, Math.max(target, best.amount + 1)), best.amount);
      if (amount <= best.amount || amount > ceiling) break;
      const probe = measure(amount);
      const predicted = prediction.cost(amount) - prediction.cost(origin.amount);
      if (predicted > 0 && probe.tokens > origin.tokens)
        ratio = (probe.tokens - origin.tokens) / predicted;
      anchor = probe;
      if (probe.tokens > maxTokens) {
        miss = probe;
        continue;
      }
      best = probe;
      const next = amount < limit ? prediction.cost(amount + 1) - prediction.cost(amount) : 0;
      if (next * ratio > maxTokens - probe.tokens + CLEAR_MISS_TOKENS) return best;
    }
  }
  // Predictions that missed on both sides may still have left a page close enough to the budget.
  if (prediction && maxTokens - best.tokens <= tolerance) return best;
  return searchLargest({
    best,
    ...(miss ? { miss } : {}),
    limit,
    maxTokens,
    // After predictions the page is as final within the tolerance as a predicted one would be.
    tolerance: prediction ? tolerance : 0,
    maxProbes: fit.maxProbes ?? Number.POSITIVE_INFINITY,
    measure,
    snap,
  });
}

interface LargestSearch {
  best: Fitted;
  miss?: Fitted;
  limit: number;
  maxTokens: number;
  /** A page this close to the budget ends the search. */
  tolerance: number;
  maxProbes: number;
  measure: (amount: number) => Fitted;
  snap: (amount: number, lo: number) => number;
}

/**
 * Interpolation between the last fit and the first miss: page size grows almost linearly with the
 * amount of content, so a guess from the measured slope usually lands within a few units. A step
 * that fails to halve the interval is followed by a bisection step, which keeps the worst case
 * logarithmic when pages are far from linear.
 */
function searchLargest(search: LargestSearch): Fitted {
  const { limit, maxTokens, measure, snap } = search;
  let best = search.best;
  let lo = best.amount;
  let loTokens = best.tokens;
  let hi = search.miss ? search.miss.amount : limit + 1; // smallest amount known not to fit
  let hiTokens = search.miss ? search.miss.tokens : Number.POSITIVE_INFINITY;
  const origin = best; // with a second fitting point, the slope leaves out the page's overhead
  let probes = 0;
  let bisectNext = false;
  while (
    hi - lo > 1 &&
    lo < limit &&
    probes < search.maxProbes &&
    // Without a tolerance the search is exact: a page at the budget may still take an item
    // that adds no token (`,""` can round to nothing).
    (search.tolerance === 0 || maxTokens - loTokens > search.tolerance)
  ) {
    let target: number;
    if (bisectNext) {
      target = lo + Math.floor((hi - lo) / 2);
    } else if (Number.isFinite(hiTokens) && hiTokens > loTokens) {
      target = lo + Math.floor(((maxTokens - loTokens) * (hi - lo)) / (hiTokens - loTokens));
    } else {
      // No miss yet: extrapolate from the fitting point, assuming a few units per token.
      const slope =
        lo > origin.amount && loTokens > origin.tokens
          ? (lo - origin.amount) / (loTokens - origin.tokens)
          : lo > 0 && loTokens > 0
            ? lo / loTokens
            : FIRST_GUESS_UNITS_PER_TOKEN;
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
 * Running sums of per-piece costs (items of a page), computed lazily: a piece is estimated the
 * first time a prediction reaches it, so collecting more candidates than fit costs nothing.
 */
export class PieceCosts implements Prediction {
  readonly #costOf: (index: number) => number;
  readonly #sums: number[] = [0];

  /** `costOf(i)`: estimated tokens that piece `i` adds to a page (its text plus its separator). */
  constructor(costOf: (index: number) => number) {
    this.#costOf = costOf;
  }

  cost(amount: number): number {
    while (this.#sums.length <= amount) {
      const i = this.#sums.length - 1;
      this.#sums.push(this.#sums[i]! + this.#costOf(i));
    }
    return this.#sums[amount]!;
  }

  largestWithin(tokens: number, from: number, limit: number): number {
    let amount = from;
    while (amount < limit && this.cost(amount + 1) <= tokens) amount++;
    return amount;
  }
}

/**
 * What a piece's own count adds on average over its share of the whole page's: each piece is
 * rounded up to a whole token (0.5 on average) and starts as if at the start of a text (a word
 * cut in two is charged twice; 0.7–0.9 together on code, JSON, logs and prose). Without it a
 * prediction falls short by ~0.6% of a page, so most pages needed a second whole-page count.
 */
const PIECE_ROUNDING_TOKENS = 0.75;

/** Code units estimated as one piece of a text page's content. */
export const TEXT_PIECE_UNITS = 256;

/**
 * Running sums over a text cut into pieces of TEXT_PIECE_UNITS code units, each estimated once as
 * it appears in the page (`asShown`, e.g. JSON string escaping). Inside a piece the cost is
 * interpolated linearly, so a prediction costs no counting beyond the pieces themselves.
 */
export class TextCosts implements Prediction {
  readonly #pieces: PieceCosts;

  constructor(text: string, estimator: Estimator, asShown: (text: string) => string = (t) => t) {
    this.#pieces = new PieceCosts(
      (i) =>
        estimator.count(asShown(text.slice(i * TEXT_PIECE_UNITS, (i + 1) * TEXT_PIECE_UNITS))) -
        PIECE_ROUNDING_TOKENS,
    );
  }

  cost(units: number): number {
    const whole = Math.floor(units / TEXT_PIECE_UNITS);
    const base = this.#pieces.cost(whole);
    const part = units - whole * TEXT_PIECE_UNITS;
    if (part === 0) return base;
    return base + ((this.#pieces.cost(whole + 1) - base) * part) / TEXT_PIECE_UNITS;
  }

  largestWithin(tokens: number, from: number, limit: number): number {
    const first = Math.floor(from / TEXT_PIECE_UNITS);
    const pieces = Math.ceil(limit / TEXT_PIECE_UNITS);
    const whole = this.#pieces.largestWithin(tokens, first, pieces);
    const start = whole * TEXT_PIECE_UNITS;
    if (start >= limit) return limit;
    const base = this.#pieces.cost(whole);
    const next = this.#pieces.cost(whole + 1);
    const part = next > base ? Math.floor(((tokens - base) * TEXT_PIECE_UNITS) / (next - base)) : 0;
    return Math.max(from, Math.min(limit, start + Math.max(0, part)));
  }
}

/** A JSON string's escaped form without its quotes: how text content appears inside a page. */
export function jsonEscaped(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.slice(1, quoted.length - 1);
}

export interface TextFitOptions {
  /** How the content appears in the page (default: as a JSON string's contents). */
  readonly asShown?: (text: string) => string;
  /**
   * The page around its content, when the content is one JSON string (the default `asShown`):
   * with an estimator that keeps a running count (`Estimator.running`) the page is then fitted in
   * one pass over its content. `render(units)` must equal
   * `head + JSON.stringify(text.slice(0, units)) + tail(units)`.
   */
  readonly layout?: TextPageLayout;
}

/** A text page as the content's JSON string between a fixed head and a tail that may vary. */
export interface TextPageLayout {
  /** Everything before the content's opening quote. */
  readonly head: string;
  /** Everything after the content's closing quote, on the page holding `units` units of it. */
  tail(units: number): string;
}

/**
 * Text that is produced as a fit asks for it (a source decodes only what a page takes): `text` so
 * far, which `more` appends to. Every `text` is a prefix of the next.
 */
export interface GrowingText {
  readonly text: string;
  /** Appends about `units` more code units (at least a code point); false when there are no more. */
  more(units: number): boolean;
}

/** Grows `source` until it holds `units` code units or has no more, asking for `ahead` at once. */
function growTo(source: GrowingText, units: number, ahead: number): void {
  while (source.text.length < units) {
    if (!source.more(Math.max(units, ahead) - source.text.length)) return;
  }
}

/**
 * Fits a prefix of `text` (cut on a code-point boundary) into `maxTokens`, where `render(units)` is
 * the page holding the first `units` code units. At least one code point is always included when
 * `text` is non-empty; if even that does not fit, BUDGET_TOO_SMALL names the budget that would.
 * Costs O(page) estimation plus one or two whole-page counts (one pass with a running count and
 * `options.layout`), whatever the length of `text`. A growing text is grown only as far as the
 * running fit reaches (the other fit needs all of it).
 */
export function fitTextPrefix(
  source: string | GrowingText,
  maxTokens: number,
  estimator: Estimator,
  render: (units: number) => string,
  options: TextFitOptions = {},
): Fitted {
  const measure = (units: number): Fitted => {
    const page = render(units);
    return { amount: units, text: page, tokens: estimator.count(page) };
  };
  const growing = typeof source === "string" ? { text: source, more: () => false } : source;
  if (options.layout && !options.asShown && estimator.running) {
    return fitTextRunning(growing, maxTokens, estimator.running, options.layout);
  }
  growTo(growing, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  const text = growing.text;
  const first = firstCodePoint(text);
  if (first === 0) {
    const empty = measure(0);
    if (empty.tokens > maxTokens) throw budgetTooSmall(maxTokens, empty.tokens, "an empty page");
    return empty;
  }
  // The cheapest page: one character and a cursor, or everything when little is left (no cursor).
  const cheapest = () => {
    const one = measure(first);
    if (text.length > WHOLE_REST_UNITS || one.tokens <= maxTokens) return one;
    const whole = measure(text.length);
    return whole.tokens <= one.tokens ? whole : one;
  };
  const best = cheapest();
  if (best.tokens > maxTokens) {
    throw budgetTooSmall(maxTokens, best.tokens, "one character of content", () => {
      return cheapest().tokens;
    });
  }
  if (best.amount === text.length) return best;
  return fitLargest({
    wholeRest: WHOLE_REST_UNITS,
    maxTokens,
    estimator,
    best,
    limit: text.length,
    render,
    snap: (units, lo) => {
      const floor = codePointFloor(text, units);
      return floor > lo ? floor : lo + 2;
    },
    prediction: new TextCosts(text, estimator, options.asShown ?? jsonEscaped),
  });
}

/**
 * Content added at once while a running count fits a page: at first (code units of text, items),
 * then sized to fill half the room left at the tokens per unit so far, at most the maximum.
 */
const RUNNING_STEP = {
  text: { first: TEXT_PIECE_UNITS, max: 16 * TEXT_PIECE_UNITS },
  items: { first: 16, max: 1024 },
} as const;
/** Times a page's tail is re-measured when it turned out cheaper than allowed for. */
const MAX_TAIL_ROUNDS = 4;

/** A point a running fit can go back to: the page's text up to `amount` counted. */
interface RunningPoint {
  /** Code units of text, or items. */
  readonly amount: number;
  readonly count: RunningCount;
  /** How many parts (escaped pieces, items) the content written so far is made of. */
  readonly parts: number;
}

/** The page ending at a point: its tokens, and its tail, to write the page once it is chosen. */
interface ClosedPage {
  readonly point: RunningPoint;
  readonly tail: string;
  readonly tokens: number;
}

/** What a running fit needs of one kind of page (text or items). */
interface RunningPage {
  /** The largest amount there is so far. */
  limit: number;
  /**
   * Makes `limit` at least `amount` if there is that much (a growing text), producing about
   * `ahead` at once: the fit's projection of where the page will end.
   */
  reach(amount: number, ahead: number): void;
  /** Counts the page that ends at `point` (its tail added to a fork of the count). */
  close(point: RunningPoint): ClosedPage;
  /** The point after `from` holding content up to `end` (a text cut moved to a code point). */
  extend(from: RunningPoint, end: number): RunningPoint;
  /** Content added at once: at first, and at most. */
  readonly step: { readonly first: number; readonly max: number };
}

/**
 * Adds content after the last point while the count stays within `tokens` (or the point is the
 * last one and its closed page fits), pushing each point reached. Perf: content goes in groups
 * (one count call and one fork each) sized to fill half the room left, down to one unit near the
 * cut: a page of a thousand small items costs a few calls, and little is counted past the cut.
 */
function advanceRunning(
  page: RunningPage,
  points: RunningPoint[],
  tokens: number,
  maxTokens: number,
): void {
  const base = points[0]!;
  let step = page.step.first;
  let ahead = 0;
  for (;;) {
    const from = points[points.length - 1]!;
    page.reach(from.amount + step, ahead);
    if (from.amount >= page.limit) return;
    const next = page.extend(from, Math.min(page.limit, from.amount + step));
    const fits =
      next.count.tokens() <= tokens ||
      // The last page's tail is the shortest (no cursor): it is closed rather than allowed for.
      // So is a single step the allowance refuses: the allowance is another page's tail, and
      // rounded twice, so it can refuse by a token a page that fits (a budget refused between
      // two that work).
      ((next.amount === page.limit || step === 1) && page.close(next).tokens <= maxTokens);
    if (!fits) {
      if (step === 1) return;
      step = Math.max(1, Math.floor(step / 4));
      continue;
    }
    points.push(next);
    const perUnit = Math.max(
      1 / 64,
      (next.count.tokens() - base.count.tokens()) / Math.max(1, next.amount - base.amount),
    );
    const room = tokens - next.count.tokens();
    ahead = next.amount + Math.ceil(room / perUnit);
    step = Math.max(1, Math.min(page.step.max, Math.floor(room / perUnit / 2)));
  }
}

/**
 * The rounds of a running fit, from a page known to fit: content is added while the count plus
 * what the page's tail adds (as on the last page closed) stays within the budget; the page is then
 * closed with its real tail. A tail that cost more backs off to the last point that fits; one that
 * cost less leaves room, which the next round fills.
 */
function fitRunning(
  page: RunningPage,
  points: RunningPoint[],
  first: ClosedPage,
  maxTokens: number,
): ClosedPage {
  const tolerance = Math.max(1, Math.floor(maxTokens * FILL_TOLERANCE));
  let closed = first;
  // What the tail adds to the page (its cursor, has_more…): as on the last page closed, or more
  // when a page further on turned out to need more.
  let allowance = first.tokens - first.point.count.tokens();
  for (let round = 0; round < MAX_TAIL_ROUNDS; round++) {
    const reached = points[points.length - 1]!;
    if (maxTokens - closed.tokens <= tolerance) break;
    page.reach(reached.amount + 1, 0);
    if (reached.amount >= page.limit) break;
    advanceRunning(page, points, maxTokens - allowance, maxTokens);
    const last = points[points.length - 1]!;
    if (last === reached) break;
    const tried = page.close(last);
    allowance = tried.tokens - last.count.tokens();
    if (tried.tokens <= maxTokens) {
      closed = tried;
      continue;
    }
    // Over the budget (the tail cost more than allowed for): back off to the last point whose
    // page fits, then bisect by whole counts between it and the nearest page known to be over.
    let over = last.amount;
    for (;;) {
      points.pop();
      closed = page.close(points[points.length - 1]!);
      if (closed.tokens <= maxTokens || points.length === 1) break;
      over = points[points.length - 1]!.amount;
    }
    return bisectRunning(page, points, closed, over, maxTokens);
  }
  return closed;
}

/**
 * The largest page between the last point (whose page, `closed`, fits) and the amount `over`
 * (whose page does not), each candidate closed and counted whole: a tail that grows with the
 * amount makes allowances from other pages wrong there, in either direction.
 */
function bisectRunning(
  page: RunningPage,
  points: RunningPoint[],
  closed: ClosedPage,
  over: number,
  maxTokens: number,
): ClosedPage {
  let best = closed;
  let hi = over;
  for (;;) {
    const lo = points[points.length - 1]!;
    if (hi - lo.amount <= 1) return best;
    const next = page.extend(lo, lo.amount + Math.floor((hi - lo.amount) / 2));
    if (next.amount >= hi) return best;
    const tried = page.close(next);
    if (tried.tokens > maxTokens) {
      hi = next.amount;
    } else {
      points.push(next);
      best = tried;
    }
  }
}

/**
 * What both kinds of running fit start from: the count after the page's head, the parts of content
 * written so far, how to close a page at a point (`tail(amount)` added to a fork of its count),
 * and how to write the chosen page (its parts joined by `separator` between head and tail).
 */
function runningPageOf(
  running: () => RunningCount,
  head: string,
  tail: (amount: number) => string,
  separator: string,
  partText: (part: string) => string = (part) => part,
) {
  const opened = running();
  opened.add(head);
  const parts: string[] = [];
  const close = (point: RunningPoint): ClosedPage => {
    const text = tail(point.amount);
    const count = point.count.fork();
    count.add(text);
    return { point, tail: text, tokens: count.tokens() };
  };
  const written = (closed: ClosedPage): Fitted => ({
    amount: closed.point.amount,
    text: `${head}${parts.slice(0, closed.point.parts).map(partText).join(separator)}${closed.tail}`,
    tokens: closed.tokens,
  });
  return { start: { amount: 0, count: opened, parts: 0 } as RunningPoint, parts, close, written };
}

/**
 * `fitTextPrefix` with a running count: the content is escaped and counted once, piece by piece
 * (see `advanceRunning`). The count of the returned page is exact: a running count equals a whole
 * count.
 */
function fitTextRunning(
  source: GrowingText,
  maxTokens: number,
  running: () => RunningCount,
  layout: TextPageLayout,
): Fitted {
  const {
    start,
    parts: pieces,
    close,
    written,
  } = runningPageOf(
    running,
    `${layout.head}"`,
    (units) => `"${layout.tail(units)}`,
    "",
    (quoted) => quoted.slice(1, quoted.length - 1),
  );
  const extend = (from: RunningPoint, end: number): RunningPoint => {
    const text = source.text;
    let units = codePointFloor(text, end);
    if (units <= from.amount) units = Math.min(text.length, from.amount + 2);
    // Perf: the piece is kept and counted as JSON.stringify gives it, quotes and all, and
    // counted between its quotes: a slice of it would be a sliced string, which the count reads
    // 1.7x slower than a flat one.
    const quoted = JSON.stringify(text.slice(from.amount, units));
    const count = from.count.fork();
    count.add(quoted, 1, quoted.length - 1);
    pieces.length = from.parts;
    pieces.push(quoted);
    return { amount: units, count, parts: from.parts + 1 };
  };
  growTo(source, 2, 0);
  const first = firstCodePoint(source.text);
  if (first === 0) {
    const page = close(start);
    if (page.tokens > maxTokens) throw budgetTooSmall(maxTokens, page.tokens, "an empty page");
    return written(page);
  }
  const points = [extend(start, first)];
  const smallest = close(points[0]!);
  if (smallest.tokens > maxTokens) {
    const whole = wholeRestPage(source, start, extend, close);
    if (whole !== undefined && whole.tokens <= maxTokens) return written(whole);
    const cheapest = () => Math.min(close(extend(start, first)).tokens, whole?.tokens ?? Infinity);
    throw budgetTooSmall(maxTokens, cheapest(), "one character of content", cheapest);
  }
  // Perf: `limit` is a plain property kept up to date, not a getter: an object literal with an
  // accessor made every page's fit objects survive into the old generation (a mark-compact
  // collection every few pages).
  const page: RunningPage = {
    limit: source.text.length,
    reach: (amount, ahead) => {
      growTo(source, amount, ahead);
      page.limit = source.text.length;
    },
    close,
    extend,
    step: RUNNING_STEP.text,
  };
  const chosen = fitRunning(page, points, smallest, maxTokens);
  const whole = wholeRestPage(source, chosen.point, extend, close);
  return written(whole !== undefined && whole.tokens <= maxTokens ? whole : chosen);
}

/**
 * The page holding all the rest of a growing text after `from`, when it ends within
 * WHOLE_REST_UNITS of it (see there); undefined otherwise.
 */
function wholeRestPage(
  source: GrowingText,
  from: RunningPoint,
  extend: (from: RunningPoint, end: number) => RunningPoint,
  close: (point: RunningPoint) => ClosedPage,
): ClosedPage | undefined {
  growTo(source, from.amount + WHOLE_REST_UNITS + 1, 0);
  const end = source.text.length;
  if (end <= from.amount || end - from.amount > WHOLE_REST_UNITS) return undefined;
  return close(extend(from, end));
}

/**
 * A page of items: `head`, the items joined by `separator`, then `tail(count)`. Items must be
 * whole JSON values (a running count may be resumed between any two of them).
 */
export interface ItemPageLayout {
  readonly head: string;
  /** Item `index` as the page shows it. */
  item(index: number): string;
  readonly separator: string;
  /** Everything after the last item, on the page holding `count` items. */
  tail(count: number): string;
}

/** The page `layout` describes, holding its first `count` items. */
export function itemPageText(layout: ItemPageLayout, count: number): string {
  let body = "";
  for (let i = 0; i < count; i++) body += (i > 0 ? layout.separator : "") + layout.item(i);
  return `${layout.head}${body}${layout.tail(count)}`;
}

/** Items between two checkpoints of an ItemPageCount. */
const ITEM_CHECKPOINT_EVERY = 16;

/** Counts of a page's head and its first items, taken while the items were collected. */
export interface ItemCheckpoints {
  /** The last checkpoint after `from` items and at most `end` items, if any. */
  checkpointWithin(from: number, end: number): { amount: number; count: RunningCount } | undefined;
}

/** Index of the last of `length` checkpoints after `from` items and at most `end`, or -1. */
function lastCheckpoint(from: number, end: number, length: number): number {
  const k = Math.min(Math.floor(end / ITEM_CHECKPOINT_EVERY), length - 1);
  return k * ITEM_CHECKPOINT_EVERY > from ? k : -1;
}

/**
 * The running count of an item page's head and items, kept while a source collects the items (to
 * know when the page is full), with a checkpoint every ITEM_CHECKPOINT_EVERY items. Given to
 * `fitItemCount`, it saves counting the items a second time: the fit starts each group of items
 * from the nearest checkpoint. The items added must be the layout's, in order. Collected in another
 * thread, its `snapshots` cross to the fitting one (`resumeItemCheckpoints`).
 */
export class ItemPageCount implements ItemCheckpoints {
  readonly #count: RunningCount;
  readonly #separator: string;
  #items = 0;
  /** `checkpoints[k]`: the count after the head and the first k × ITEM_CHECKPOINT_EVERY items. */
  readonly #checkpoints: RunningCount[];

  constructor(running: () => RunningCount, head: string, separator: string) {
    this.#count = running();
    this.#count.add(head);
    this.#separator = separator;
    this.#checkpoints = [this.#count.fork()];
  }

  add(item: string): void {
    if (this.#items > 0) this.#count.add(this.#separator);
    this.#count.add(item);
    this.#items++;
    if (this.#items % ITEM_CHECKPOINT_EVERY === 0) this.#checkpoints.push(this.#count.fork());
  }

  /** Tokens of the head and the items added so far. */
  tokens(): number {
    return this.#count.tokens();
  }

  checkpointWithin(from: number, end: number): { amount: number; count: RunningCount } | undefined {
    const k = lastCheckpoint(from, end, this.#checkpoints.length);
    return k < 0 ? undefined : { amount: k * ITEM_CHECKPOINT_EVERY, count: this.#checkpoints[k]! };
  }

  /** The checkpoints as plain data; undefined when the estimator's counts have no snapshots. */
  snapshots(): RunningSnapshot[] | undefined {
    const snapshots: RunningSnapshot[] = [];
    for (const checkpoint of this.#checkpoints) {
      const snapshot = checkpoint.snapshot?.();
      if (!snapshot) return undefined;
      snapshots.push(snapshot);
    }
    return snapshots;
  }
}

/** The checkpoints of an ItemPageCount from its `snapshots`, resumed with the same estimator. */
export function resumeItemCheckpoints(
  resume: (snapshot: RunningSnapshot) => RunningCount,
  snapshots: readonly RunningSnapshot[],
): ItemCheckpoints {
  return {
    checkpointWithin(from, end) {
      const k = lastCheckpoint(from, end, snapshots.length);
      return k < 0
        ? undefined
        : { amount: k * ITEM_CHECKPOINT_EVERY, count: resume(snapshots[k]!) };
    },
  };
}

/**
 * `fitItemCount` with a running count: each item is counted once, as the page shows it, or not at
 * all when `counted` already holds it.
 */
function fitItemsRunning(
  available: number,
  maxTokens: number,
  running: () => RunningCount,
  layout: ItemPageLayout,
  counted: ItemCheckpoints | undefined,
): Fitted {
  const {
    start,
    parts: items,
    close,
    written,
  } = runningPageOf(running, layout.head, layout.tail, layout.separator);
  const points: RunningPoint[] = [start];
  const none = close(points[0]!);
  if (none.tokens > maxTokens || available === 0) return written(none);
  const extend = (from: RunningPoint, end: number): RunningPoint => {
    // Items counted while they were collected are taken from there, up to the last checkpoint.
    const checkpoint = counted?.checkpointWithin(from.amount, end);
    // Perf: a long step ends at its last checkpoint, which costs no count at all; what lies past
    // it (up to 15 items counted a second time) is left to the shorter steps near the cut.
    const stop = checkpoint && end - from.amount >= ITEM_CHECKPOINT_EVERY ? checkpoint.amount : end;
    for (let i = from.amount; i < stop; i++) items[i] ??= layout.item(i);
    if (stop < end) return { amount: stop, count: checkpoint!.count.fork(), parts: stop };
    const base = checkpoint ?? from;
    let added = "";
    for (let i = base.amount; i < end; i++) added += (i > 0 ? layout.separator : "") + items[i];
    const count = base.count.fork();
    count.add(added);
    return { amount: end, count, parts: end };
  };
  const page = { limit: available, reach: () => {}, close, extend, step: RUNNING_STEP.items };
  return written(fitRunning(page, points, none, maxTokens));
}

/** What a JSON item's own count exceeds its share of a page by; see `itemShare`. */
const ITEM_COUNT_EXCESS = 1.25;

/**
 * The tokens an item whose JSON alone counts `tokens` adds to a page, with the comma before it:
 * its own count is rounded up (half a token too much on average) and the comma mostly merges with
 * its neighbours (about a quarter token instead of one); measured 1.25–1.35 under `tokens + 1` on
 * JSON items from numbers to whole records. Predictions only: pages are always counted whole.
 */
export function itemShare(tokens: number): number {
  return tokens + 1 - ITEM_COUNT_EXCESS;
}

/**
 * Fits as many items as possible (up to `available`) into `maxTokens`, where `render(count)` is the
 * page holding the first `count` items. Returns `amount: 0` when not even one item fits (the caller
 * decides whether to clamp that item or fail), and the page rendered with no items. With a
 * `layout` (the page as head, items and tail, the same text `render` gives) and an estimator that
 * keeps a running count, each item is counted once as the page shows it (not at all with
 * `counted`, the count a source took while it collected the items); else, with `itemCost(i)`
 * (the estimated tokens item `i` adds, e.g. its JSON plus a comma) the count is predicted and
 * confirmed; without it, it is searched.
 */
export function fitItemCount(
  available: number,
  maxTokens: number,
  estimator: Estimator,
  render: (count: number) => string,
  itemCost?: (index: number) => number,
  layout?: ItemPageLayout,
  counted?: ItemCheckpoints,
): Fitted {
  return withWholeRest(
    fitItemCut(available, maxTokens, estimator, render, itemCost, layout, counted),
    { limit: available, wholeRest: WHOLE_REST_ITEMS, render, estimator, maxTokens },
  );
}

/** Items of rest up to which an item fit counts the page holding them all (see WHOLE_REST_UNITS). */
export const WHOLE_REST_ITEMS = 64;

/**
 * The refusal of an item page (`render(count)`, `available` items) that holds not even one item:
 * it names the cheapest page, one item and a cursor or, when few are left, all of them.
 */
export function itemPageRefusal(
  maxTokens: number,
  estimator: Estimator,
  render: (count: number) => string,
  available: number,
  what: string,
): PagewiseError {
  const cheapest = () =>
    Math.min(
      estimator.count(render(1)),
      available <= WHOLE_REST_ITEMS ? estimator.count(render(available)) : Infinity,
    );
  return budgetTooSmall(maxTokens, cheapest(), what, cheapest);
}

function fitItemCut(
  available: number,
  maxTokens: number,
  estimator: Estimator,
  render: (count: number) => string,
  itemCost?: (index: number) => number,
  layout?: ItemPageLayout,
  counted?: ItemCheckpoints,
): Fitted {
  if (layout && estimator.running) {
    return fitItemsRunning(available, maxTokens, estimator.running, layout, counted);
  }
  const measure = (count: number): Fitted => {
    const page = render(count);
    return { amount: count, text: page, tokens: estimator.count(page) };
  };
  const none = measure(0);
  if (none.tokens > maxTokens || available === 0) return none;
  if (itemCost) {
    return fitLargest({
      maxTokens,
      estimator,
      best: none,
      limit: available,
      render,
      prediction: new PieceCosts(itemCost),
    });
  }
  const all = measure(available);
  if (all.tokens <= maxTokens) return all;
  return fitLargest({ maxTokens, estimator, best: none, miss: all, limit: available, render });
}
