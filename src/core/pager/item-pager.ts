/**
 * @module
 * Budgeted pages over an arbitrary item list, in either direction.
 *
 * The "thread read" case: a list of thousands of items (messages, events, log records), each with
 * hundreds of characters of metadata, where the caller wants the newest items that fit a token
 * budget — never an overflowing page, never an empty one. `pageItems` picks how many items fit by
 * rendering and measuring the exact page text (the caller's own JSON, cursors included), clamps an
 * item whose text is longer than a per-item limit, and, when not even one whole item fits, clamps
 * that one item to what the budget can hold so the page still advances. A clamped item keeps a
 * prefix of its text; `pageText` pages the rest from `text.length`.
 */

import { PagewiseError } from "../errors.js";
import type { Estimator } from "../estimate/estimator.js";
import {
  budgetTooSmall,
  codePointFloor,
  fitLargest,
  jsonEscaped,
  PieceCosts,
  TextCosts,
} from "../fit/fit.js";

/** Which way a page extends from its starting point. */
export type PageDirection = "forward" | "backward";

/** Default number of items on one page. */
export const DEFAULT_PAGE_ITEMS = 50;

export interface ItemPageOptions<T> {
  /** Number of items in the list. */
  readonly total: number;
  /** The item at `index` (0 ≤ index < total); called only for items near the page. */
  readonly at: (index: number) => T;
  /**
   * `"backward"`: the page ends just before `from` and holds the items nearest to it that fit
   * (newest first, when the list is oldest first). `"forward"`: the page starts at `from`.
   */
  readonly direction: PageDirection;
  /** Backward: exclusive end of the page (default `total`). Forward: first index (default 0). */
  readonly from?: number;
  /** Token budget of the whole rendered page. */
  readonly maxTokens: number;
  /** Counts the tokens of the rendered page. */
  readonly estimator: Estimator;
  /** Most items on one page (default 50). */
  readonly limit?: number;
  /**
   * The clampable text of an item. Without it items are never clamped, and a page that cannot hold
   * one whole item is BUDGET_TOO_SMALL.
   */
  readonly textOf?: (item: T) => string;
  /** Items whose text is longer than this many UTF-16 code units are clamped (default: no limit). */
  readonly maxUnitsPerItem?: number;
  /**
   * Moves a cut of `text` down to a valid boundary (default: a code-point boundary, so surrogate
   * pairs are never split). Must return a value ≤ `units`; return 0 when no smaller cut is valid.
   */
  readonly snap?: (text: string, units: number, item: T) => number;
  /** Renders the page from its view. Must be deterministic; its output is what gets measured. */
  readonly render: (view: ItemPageView<T>) => string;
}

/** One item as placed on a page. */
export interface PagedItem<T> {
  /** Index of the item in the list. */
  readonly index: number;
  readonly item: T;
  /** The item's text (from `textOf`), or a prefix of it when `truncated`; "" without `textOf`. */
  readonly text: string;
  /** True when `text` is a clamped prefix: the rest starts at code unit `text.length`. */
  readonly truncated: boolean;
  /** Length of the item's whole text in code units. */
  readonly fullUnits: number;
}

/** What a page holds; `render` turns it into text. */
export interface ItemPageView<T> {
  /** The page's items in list order (oldest first for a timeline), whatever the direction. */
  readonly items: readonly PagedItem<T>[];
  /** Index of the first item on the page (`end` when the page is empty). */
  readonly start: number;
  /** One past the last item on the page. */
  readonly end: number;
  /** Items exist before `start`. Continue backward with `from: start`. */
  readonly hasBefore: boolean;
  /** Items exist at or after `end`. Continue forward with `from: end`. */
  readonly hasAfter: boolean;
}

/** A fitted page: its view, its text and the text's tokens (≤ the budget). */
export interface ItemPage<T> extends ItemPageView<T> {
  readonly text: string;
  readonly tokens: number;
}

function defaultSnap(text: string, units: number): number {
  return codePointFloor(text, units);
}

/**
 * The page of items nearest to `from` in `direction` that fits `maxTokens`: as many whole items as
 * fit (up to `limit`), at least one. Throws BUDGET_TOO_SMALL (with the budget that would work) when
 * not even one item, or one code point of a clamped item, fits.
 */
export function pageItems<T>(options: ItemPageOptions<T>): ItemPage<T> {
  const { total, at, direction, maxTokens, estimator, render, textOf } = options;
  if (!Number.isSafeInteger(total) || total < 0) {
    throw new PagewiseError("INVALID_ARGUMENT", `total must be a whole number ≥ 0 (got ${total}).`);
  }
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `maxTokens must be a whole number ≥ 1 (got ${maxTokens}).`,
    );
  }
  const backward = direction === "backward";
  const from = options.from ?? (backward ? total : 0);
  if (!Number.isSafeInteger(from) || from < 0 || from > total) {
    throw new PagewiseError("INVALID_ARGUMENT", `from must lie in 0..${total} (got ${from}).`);
  }
  const limit = Math.max(1, Math.floor(options.limit ?? DEFAULT_PAGE_ITEMS));
  const maxUnits = options.maxUnitsPerItem ?? Number.POSITIVE_INFINITY;
  const snap = options.snap ?? defaultSnap;
  const available = Math.min(limit, backward ? from : total - from);

  // Items are placed lazily, nearest first, and kept (each clamped at most once).
  const placed: PagedItem<T>[] = [];
  const place = (n: number): PagedItem<T> => {
    const index = backward ? from - 1 - n : from + n;
    const item = at(index);
    const full = textOf ? textOf(item) : "";
    if (full.length > maxUnits) {
      const cut = snap(full, maxUnits, item);
      return { index, item, text: full.slice(0, cut), truncated: true, fullUnits: full.length };
    }
    return { index, item, text: full, truncated: false, fullUnits: full.length };
  };
  const nearest = (count: number): PagedItem<T>[] => {
    while (placed.length < count) placed.push(place(placed.length));
    return placed.slice(0, count);
  };
  const viewOf = (items: PagedItem<T>[]): ItemPageView<T> => {
    const inOrder = backward ? items.slice().reverse() : items;
    const start = backward ? from - items.length : from;
    const end = backward ? from : from + items.length;
    return { items: inOrder, start, end, hasBefore: start > 0, hasAfter: end < total };
  };
  const measure = (items: PagedItem<T>[]): ItemPage<T> => {
    const view = viewOf(items);
    const text = render(view);
    return { ...view, text, tokens: estimator.count(text) };
  };

  if (available === 0) {
    const empty = measure([]);
    if (empty.tokens > maxTokens) throw budgetTooSmall(maxTokens, empty.tokens, "an empty page");
    return empty;
  }

  const one = measure(nearest(1));
  if (one.tokens > maxTokens) return clampFirst(placed[0]!, options, snap, measure, one.tokens);
  if (available === 1) return one;
  // Perf: each further item is estimated once (its text as it appears in a JSON page, plus the
  // metadata a second item added around its text), the running sum predicts the count, and one
  // or two rendered pages confirm it — instead of rendering a page per probe of a search.
  const two = measure(nearest(2));
  if (two.tokens > maxTokens) return one;
  const textCost = (i: number) => estimator.count(jsonEscaped(nearest(i + 1)[i]!.text));
  const perItem = Math.max(0, two.tokens - one.tokens - textCost(1));
  const fitted = fitLargest({
    maxTokens,
    estimator,
    best: { amount: 2, text: two.text, tokens: two.tokens },
    limit: available,
    render: (count) => render(viewOf(nearest(count))),
    prediction: new PieceCosts((i) => perItem + textCost(i)),
  });
  return { ...viewOf(nearest(fitted.amount)), text: fitted.text, tokens: fitted.tokens };
}

/**
 * The nearest item alone does not fit: clamp its text to the longest prefix that does. A refusal
 * names the cheaper of the item whole (`wholeTokens`) and clamped to one character: a clamped item
 * carries a cursor to its rest, so a short item costs less whole.
 */
function clampFirst<T>(
  first: PagedItem<T>,
  options: ItemPageOptions<T>,
  snap: (text: string, units: number, item: T) => number,
  measure: (items: PagedItem<T>[]) => ItemPage<T>,
  wholeTokens: number,
): ItemPage<T> {
  const { maxTokens, textOf } = options;
  const full = textOf ? textOf(first.item) : "";
  const withUnits = (units: number) =>
    measure([{ ...first, text: full.slice(0, units), truncated: true }]);
  // The smallest valid non-empty cut.
  let smallest = 0;
  for (let u = 1; u <= Math.min(full.length, 8) && smallest === 0; u++) {
    if (snap(full, u, first.item) === u) smallest = u;
  }
  if (!textOf || first.text.length === 0 || smallest === 0) {
    const alone = measure([first]);
    throw budgetTooSmall(maxTokens, alone.tokens, "one item", () => measure([first]).tokens);
  }
  const best = withUnits(smallest);
  if (best.tokens > maxTokens) {
    const cheapest = () => Math.min(measure([first]).tokens, withUnits(smallest).tokens);
    throw budgetTooSmall(
      maxTokens,
      Math.min(wholeTokens, best.tokens),
      "one character of one item",
      cheapest,
    );
  }
  // The item's shown text did not fit whole: the longest prefix (on a valid cut) that does.
  const fitted = fitLargest({
    maxTokens,
    estimator: options.estimator,
    best: { amount: smallest, text: best.text, tokens: best.tokens },
    limit: first.text.length - 1,
    render: (units) => withUnits(units).text,
    snap: (units, lo) => {
      const cut = snap(full, units, first.item);
      if (cut > lo) return cut;
      for (let u = lo + 1; u < first.text.length; u++)
        if (snap(full, u, first.item) === u) return u;
      return first.text.length;
    },
    prediction: new TextCosts(full.slice(0, first.text.length), options.estimator, jsonEscaped),
  });
  return withUnits(fitted.amount);
}
