/**
 * @module
 * A walk goes on at the budget it started with (the contract's "budgets exact at every size").
 * Continuations carry their budget in the cursor, but the smallest page further on can cost a few
 * tokens more than the smallest page here: its cursors' position bytes and MACs are other
 * characters, its numbers longer. So a call that sets the budget counts a page that carries a
 * cursor a reserve dearer: such a page is fitted that much under the budget, the budget is refused
 * unless its smallest page leaves the reserve (the refusal names that exact threshold), and a page
 * that ends the result, carrying no cursor, is charged nothing.
 *
 * Done as an estimator, so that every fit (text, items, running counts) applies the same rule.
 */
import type { Estimator, RunningCount, RunningSnapshot } from "../estimate/estimator.js";

/** What the reserve is made of (see WALK_RESERVE_TOKENS in limits.ts). */
export interface WalkReserve {
  /** Tokens for a page that carries a continuation. */
  readonly page: number;
  /** Tokens more for each cursor the page holds (its continuations, line and value cursors). */
  readonly perCursor: number;
}

/**
 * What a page carrying a continuation holds: the one paging rule's field with a string value (a
 * page at the end has `"next_cursor":null`). Inside a JSON string value the quotes would be
 * escaped, so only the page's own field (or an object key in a JSON value shown raw) matches.
 */
const CONTINUES = '"next_cursor":"';
/** The end of every cursor field's name with the start of its value: `…_cursor":"`. */
const CURSOR = '_cursor":"';
/** The keys a snapshot of a reserving count keeps its state under. */
const SNAPSHOT_CONTINUES = "walkReserveContinues";
const SNAPSHOT_CURSORS = "walkReserveCursors";

/** Occurrences of `needle` in `text[from, to)`. */
function occurrences(text: string, needle: string, from: number, to: number): number {
  let n = 0;
  for (let at = text.indexOf(needle, from); at >= 0 && at + needle.length <= to; ) {
    n++;
    at = text.indexOf(needle, at + needle.length);
  }
  return n;
}

/** `estimator`, charging a page that carries a cursor the `reserve` more. */
export function reservingWalk(estimator: Estimator, reserve: WalkReserve): Estimator {
  const { running, resume, cheap } = estimator;
  const charge = (continues: boolean, cursors: number) =>
    continues ? reserve.page + reserve.perCursor * cursors : 0;
  return {
    name: estimator.name,
    maxUnitsPerToken: estimator.maxUnitsPerToken,
    count: (text) =>
      estimator.count(text) +
      charge(text.includes(CONTINUES), occurrences(text, CURSOR, 0, text.length)),
    ...(cheap && { cheap: reservingWalk(cheap, reserve) }),
    ...(running && { running: () => new ReservingCount(running(), charge, false, 0) }),
    ...(resume && {
      resume: (snapshot: RunningSnapshot) => {
        const { [SNAPSHOT_CONTINUES]: continues, [SNAPSHOT_CURSORS]: cursors, ...inner } = snapshot;
        return new ReservingCount(resume(inner), charge, continues === 1, cursors ?? 0);
      },
    }),
  };
}

class ReservingCount implements RunningCount {
  readonly #inner: RunningCount;
  readonly #charge: (continues: boolean, cursors: number) => number;
  #continues: boolean;
  #cursors: number;
  snapshot?: () => RunningSnapshot;

  constructor(
    inner: RunningCount,
    charge: (continues: boolean, cursors: number) => number,
    continues: boolean,
    cursors: number,
  ) {
    this.#inner = inner;
    this.#charge = charge;
    this.#continues = continues;
    this.#cursors = cursors;
    if (inner.snapshot) {
      this.snapshot = () => ({
        ...inner.snapshot!(),
        [SNAPSHOT_CONTINUES]: this.#continues ? 1 : 0,
        [SNAPSHOT_CURSORS]: this.#cursors,
      });
    }
  }

  add(text: string, from = 0, to = text.length): void {
    this.#inner.add(text, from, to);
    // Perf: only the piece added is searched (a long text added piece by piece stays linear).
    this.#cursors += occurrences(text, CURSOR, from, to);
    this.#continues ||= occurrences(text, CONTINUES, from, to) > 0;
  }

  tokens(): number {
    return this.#inner.tokens() + this.#charge(this.#continues, this.#cursors);
  }

  fork(): RunningCount {
    return new ReservingCount(this.#inner.fork(), this.#charge, this.#continues, this.#cursors);
  }
}
