/**
 * @module
 * Protocol-free pagers for servers that want to bound their own results: `pageItems` over any
 * item list (either direction, at least one item, per-item clamp) and `pageText` over one long text.
 */
export {
  DEFAULT_PAGE_ITEMS,
  type ItemPage,
  type ItemPageOptions,
  type ItemPageView,
  type PageDirection,
  type PagedItem,
  pageItems,
} from "./item-pager.js";
export { pageText, type TextPage, type TextPageOptions, type TextPageView } from "./text-pager.js";
