/**
 * @module
 * Budgeted pages over one long text (a message body, a document, a clamped item's remainder):
 * the longest piece from `offset` whose rendered page fits the budget, cut on a code-point
 * boundary, at least one code point per page. Pages from `offset: 0` following `end` concatenate
 * to the text exactly.
 */

import { PagewiseError } from "../errors.js";
import type { Estimator } from "../estimate/estimator.js";
import { codePointFloor, fitTextPrefix } from "../fit/fit.js";

export interface TextPageOptions {
  /** The whole text. */
  readonly text: string;
  /** Code unit where the page starts (default 0); a continuation passes the previous `end`. */
  readonly offset?: number;
  /** Token budget of the whole rendered page. */
  readonly maxTokens: number;
  readonly estimator: Estimator;
  /** Renders the page from its view. Must be deterministic; its output is what gets measured. */
  readonly render: (view: TextPageView) => string;
}

export interface TextPageView {
  /** The piece of text on this page: `text.slice(start, end)`. */
  readonly content: string;
  readonly start: number;
  /** Where the next page starts. */
  readonly end: number;
  /** True when text remains after `end`. */
  readonly hasMore: boolean;
}

export interface TextPage extends TextPageView {
  readonly text: string;
  readonly tokens: number;
}

/**
 * The page of `text` starting at `offset` that fits `maxTokens`. Throws BUDGET_TOO_SMALL when not
 * even one code point fits, and INVALID_ARGUMENT for an offset outside the text.
 */
export function pageText(options: TextPageOptions): TextPage {
  const { text, maxTokens, estimator, render } = options;
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `maxTokens must be a whole number ≥ 1 (got ${maxTokens}).`,
    );
  }
  const start = options.offset ?? 0;
  if (!Number.isSafeInteger(start) || start < 0 || start > text.length) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `offset must lie in 0..${text.length} (got ${start}).`,
    );
  }
  // A page can never hold more code units than the budget's tokens can cover.
  const cap = maxTokens * estimator.maxUnitsPerToken;
  const rest = text.length - start;
  const window =
    rest > cap
      ? text.slice(start, Math.max(codePointFloor(text, start + cap), start + Math.min(2, rest)))
      : text.slice(start);
  const reachesEnd = window.length === rest;
  const viewOf = (units: number): TextPageView => ({
    content: units === window.length ? window : window.slice(0, units),
    start,
    end: start + units,
    hasMore: !(reachesEnd && units === window.length),
  });
  const fitted = fitTextPrefix(window, maxTokens, estimator, (units) => render(viewOf(units)));
  return { ...viewOf(fitted.amount), text: fitted.text, tokens: fitted.tokens };
}
