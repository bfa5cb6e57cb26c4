import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countDefault, defaultEstimator } from "../estimate/default.js";
import type { Estimator } from "../estimate/estimator.js";
import { countOpenviking, openvikingEstimator } from "../estimate/openviking.js";
import { countingDefault } from "../estimate/test-support/counting.js";
import {
  codePointFloor,
  fitItemCount,
  fitTextPrefix,
  type GrowingText,
  type ItemCheckpoints,
  ItemPageCount,
  type ItemPageLayout,
  itemShare,
  resumeItemCheckpoints,
  type TextPageLayout,
  WHOLE_REST_UNITS,
} from "./fit.js";

const render = (text: string) => (units: number) =>
  JSON.stringify({
    uri: "file:///x",
    content: text.slice(0, units),
    has_more: units < text.length,
  });

/**
 * Checks a text fit: within budget, counted exactly (`count` of its text), on a code-point
 * boundary, non-empty when the text is, and maximal or within the fill tolerance of the budget
 * (one more code point does not fit). A BUDGET_TOO_SMALL must name a budget that works (`fitAt`).
 */
function checkTextFit(
  text: string,
  budget: number,
  fitAt: (budget: number) => ReturnType<typeof fitTextPrefix>,
  render: (units: number) => string,
  count: (page: string) => number,
): void {
  let fitted: ReturnType<typeof fitTextPrefix>;
  try {
    fitted = fitAt(budget);
  } catch (err) {
    expect((err as { code: string }).code).toBe("BUDGET_TOO_SMALL");
    const minimum = (err as { details: { minimum_max_tokens: number } }).details.minimum_max_tokens;
    expect(minimum).toBeGreaterThan(budget);
    expect(fitAt(minimum).tokens).toBeLessThanOrEqual(minimum);
    return;
  }
  expect(fitted.text).toBe(render(fitted.amount));
  expect(fitted.tokens).toBe(count(fitted.text));
  expect(fitted.tokens).toBeLessThanOrEqual(budget);
  expect(codePointFloor(text, fitted.amount)).toBe(fitted.amount);
  if (text.length > 0) expect(fitted.amount).toBeGreaterThan(0);
  const tolerance = Math.max(1, Math.floor(budget / 500));
  if (fitted.amount < text.length && fitted.tokens < budget - tolerance) {
    const next =
      fitted.amount + (codePointFloor(text, fitted.amount + 1) === fitted.amount ? 2 : 1);
    expect(count(render(next))).toBeGreaterThan(budget);
  }
}

describe("fitTextPrefix", () => {
  it("finds the largest fitting prefix on a code-point boundary", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom("a", "中", "🙂", '"', "\\", "\n", "\u0001", "𠀀"),
          maxLength: 300,
        }),
        fc.integer({ min: 1, max: 200 }),
        (text, budget) =>
          // openviking is monotone in the content: maximal means one more code point is over.
          checkTextFit(
            text,
            budget,
            (b) => fitTextPrefix(text, b, openvikingEstimator, render(text)),
            render(text),
            countOpenviking,
          ),
      ),
      { numRuns: 300 },
    );
  });
});

/** A page laid out like a `read` page: the content, then a tail whose cursor grows with it. */
function layoutOf(text: string): { layout: TextPageLayout; render: (units: number) => string } {
  const layout: TextPageLayout = {
    head: '{"uri":"file:///x","content":',
    tail: (units) =>
      units < text.length
        ? `,"position":${units},"has_more":true,"next_cursor":"pw1.${"q7".repeat(units % 23)}${units}"}`
        : ',"has_more":false,"next_cursor":null}',
  };
  return {
    layout,
    render: (units) => `${layout.head}${JSON.stringify(text.slice(0, units))}${layout.tail(units)}`,
  };
}

/** The default estimator, counting the characters its running counts are given. */
function countingRunning(): { estimator: Estimator; added: () => number } {
  return countingDefault({ wholeCounts: false });
}

describe("fitTextPrefix with a running count", () => {
  it("returns the page render gives, counted exactly, within budget and as full as allowed", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            "a",
            "b",
            "中",
            "🙂",
            '"',
            "\\",
            "\n",
            "\u0001",
            "𠀀",
            " ",
            "7",
            "ł",
          ),
          maxLength: 400,
        }),
        fc.integer({ min: 1, max: 250 }),
        (text, budget) => {
          const { layout, render } = layoutOf(text);
          checkTextFit(
            text,
            budget,
            (b) => fitTextPrefix(text, b, defaultEstimator, render, { layout }),
            render,
            countDefault,
          );
        },
      ),
      // Counterexamples found before: a tail that grows with the amount made allowances from other
      // pages wrong, and a back-off lost a whole group.
      { numRuns: 400, examples: [['a🙂𠀀\u0001𠀀a"', 47]] },
    );
  });

  it("counts the content once, and no whole page, whatever the budget", () => {
    const words = 'The quick brown fox jumps over the lazy dog; 1234 "quoted" naïve 中文\n';
    const text = words.repeat(4000);
    const { layout, render } = layoutOf(text);
    for (const budget of [2000, 8000, 25_000]) {
      const { estimator, added } = countingRunning();
      const fitted = fitTextPrefix(text, budget, estimator, render, { layout });
      expect(fitted.tokens).toBe(countDefault(render(fitted.amount)));
      expect(fitted.tokens).toBeLessThanOrEqual(budget);
      expect(fitted.tokens).toBeGreaterThanOrEqual(budget * 0.99);
      // One pass over the page, plus the pieces tried past the cut and a few tails.
      expect(added()).toBeLessThanOrEqual(fitted.text.length * 1.1 + 2000);
    }
  });
});

/** `text` handed out a piece at a time (pieces never split a surrogate pair), counting what was asked. */
function growingOf(text: string, smallest: number) {
  let asked = 0;
  const source = {
    text: "",
    more(units: number): boolean {
      if (source.text.length >= text.length) return false;
      asked++;
      let end = Math.min(text.length, source.text.length + Math.max(smallest, units));
      if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end++;
      source.text = text.slice(0, end);
      return true;
    },
  };
  return { source, asked: () => asked };
}

describe("fitTextPrefix with a growing text", () => {
  it("gives the page the whole text gives, however the text grows", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", " ", "中", "🙂", '"', "\n", "7"), maxLength: 300 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 64 }),
        (text, budget, smallest) => {
          const { layout, render } = layoutOf(text);
          const pageOf = (source: string | GrowingText) => {
            try {
              return fitTextPrefix(source, budget, defaultEstimator, render, { layout });
            } catch (e) {
              return (e as Error).message;
            }
          };
          expect(pageOf(growingOf(text, smallest).source)).toEqual(pageOf(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("grows the text about as far as the page reaches, not to its end", () => {
    const text = 'log line 42 "quoted" naïve 中文 ok\n'.repeat(100_000);
    const { layout, render } = layoutOf(text);
    for (const budget of [2000, 25_000]) {
      const { source, asked } = growingOf(text, 1024);
      const fitted = fitTextPrefix(source, budget, defaultEstimator, render, { layout });
      expect(fitted.text).toBe(render(fitted.amount));
      // Past the page: a quarter, a chunk, and the look for an end within WHOLE_REST_UNITS.
      expect(source.text.length).toBeLessThanOrEqual(
        fitted.amount * 1.25 + 1024 + WHOLE_REST_UNITS + 1,
      );
      expect(asked()).toBeLessThanOrEqual(8);
    }
  });
});

describe("fitItemCount with a running count", () => {
  const itemArb = fc.oneof(
    fc.integer().map(String),
    fc.string({ maxLength: 40 }).map((t) => JSON.stringify(t)),
    fc
      .record({ path: fc.string({ maxLength: 30 }), size: fc.nat(), tags: fc.array(fc.string()) })
      .map((r) => JSON.stringify(r)),
  );
  const layoutOfItems = (items: string[]) => {
    const layout: ItemPageLayout = {
      head: '{"uri":"file:///d","items":[',
      item: (i) => items[i]!,
      separator: ",",
      tail: (count) =>
        `],"pagination":{"offset":0,"has_more":${count < items.length}},"next_cursor":${count < items.length ? `"pw1.${"z9".repeat(count % 17)}${count}"` : "null"}}`,
    };
    const render = (count: number) =>
      `${layout.head}${items.slice(0, count).join(",")}${layout.tail(count)}`;
    return { layout, render };
  };
  /** The page of `items` fitted into `budget` (with `counted`, if given), and how to render one. */
  const fitItems = (
    items: string[],
    budget: number,
    estimator: Estimator = defaultEstimator,
    counted?: ItemCheckpoints,
  ) => {
    const { layout, render } = layoutOfItems(items);
    const fitted = fitItemCount(
      items.length,
      budget,
      estimator,
      render,
      undefined,
      layout,
      counted,
    );
    return { fitted, render, layout };
  };

  it("returns the page render gives, counted exactly, within budget and as full as allowed", () => {
    fc.assert(
      fc.property(
        fc.array(itemArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 400 }),
        (items, budget) => {
          const { fitted, render } = fitItems(items, budget);
          expect(fitted.text).toBe(render(fitted.amount));
          expect(fitted.tokens).toBe(countDefault(fitted.text));
          if (fitted.amount > 0) expect(fitted.tokens).toBeLessThanOrEqual(budget);
          // The page holding every item carries no cursor: it may fit where none other does.
          const whole = countDefault(render(items.length));
          if (whole <= budget) expect(fitted.amount).toBe(items.length);
          else if (countDefault(render(0)) > budget) expect(fitted.amount).toBe(0);
          const tolerance = Math.max(1, Math.floor(budget / 500));
          if (fitted.amount < items.length && fitted.tokens < budget - tolerance) {
            expect(countDefault(render(fitted.amount + 1))).toBeGreaterThan(budget);
          }
        },
      ),
      {
        numRuns: 400,
        examples: [
          [
            ['""', "0", "0", '{"path":"","size":0,"tags":[]}', '{"path":"","size":0,"tags":[]}'],
            58,
          ],
        ],
      },
    );
  });

  it("counts each item once and no whole page", () => {
    const items = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({
        path: `src/module${i}/file${i}.ts`,
        type: "file",
        size: i * 37,
        mtime: "2026-12-03T10:00:00.000Z",
      }),
    );
    const { layout, render } = layoutOfItems(items);
    for (const budget of [2000, 8000, 25_000]) {
      const { estimator, added } = countingRunning();
      const fitted = fitItemCount(items.length, budget, estimator, render, undefined, layout);
      expect(fitted.tokens).toBe(countDefault(render(fitted.amount)));
      expect(fitted.tokens).toBeLessThanOrEqual(budget);
      // As full as it can be: one more item does not fit.
      expect(countDefault(render(fitted.amount + 1))).toBeGreaterThan(budget);
      // Once each, plus the groups of items tried past the cut (16 at a time, then one by one).
      const group = 17 * (items[0]!.length + 1);
      expect(added()).toBeLessThanOrEqual(fitted.text.length + 2 * group + 1000);
    }
  });

  it("gives the same page from a count taken while the items were collected", () => {
    fc.assert(
      fc.property(
        fc.array(itemArb, { maxLength: 80 }),
        fc.integer({ min: 1, max: 400 }),
        fc.nat({ max: 80 }),
        (items, budget, collected) => {
          const { layout } = layoutOfItems(items);
          const counted = new ItemPageCount(defaultEstimator.running!, layout.head, ",");
          for (const item of items.slice(0, collected)) counted.add(item);
          const withCount = fitItems(items, budget, defaultEstimator, counted).fitted;
          expect(withCount).toEqual(fitItems(items, budget).fitted);
          // The same count taken in another thread: its snapshots survive a structured clone.
          const resumed = resumeItemCheckpoints(
            defaultEstimator.resume!,
            structuredClone(counted.snapshots()!),
          );
          expect(fitItems(items, budget, defaultEstimator, resumed).fitted).toEqual(withCount);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("counts no item again that was counted while collected", () => {
    const items = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ path: `a/f${i}.ts` }));
    const { layout } = layoutOfItems(items);
    for (const budget of [2000, 25_000]) {
      for (const where of ["here", "in another thread"]) {
        const { estimator, added } = countingRunning();
        const count = new ItemPageCount(estimator.running!, layout.head, ",");
        for (const item of items) count.add(item);
        const counted =
          where === "here"
            ? count
            : resumeItemCheckpoints(estimator.resume!, structuredClone(count.snapshots()!));
        const collected = added();
        const { fitted, render } = fitItems(items, budget, estimator, counted);
        expect(fitted.text).toBe(render(fitted.amount));
        expect(fitted.tokens).toBe(countDefault(fitted.text));
        expect(fitted.amount).toBeGreaterThan(budget / 20);
        // Only what lies between checkpoints (16 items) and the tails closed are counted again.
        expect(added() - collected).toBeLessThanOrEqual(40 * (items[0]!.length + 1) + 2000);
      }
    }
  });
});

describe("fitting cost", () => {
  it("counts a large page about three times, whatever the length of the text", () => {
    // A counting estimator: whole-page counts and characters counted are the fitter's work.
    let pageCounts = 0;
    let counted = 0;
    const estimator = {
      ...defaultEstimator,
      count(t: string) {
        counted += t.length;
        if (t.startsWith('{"uri"')) pageCounts++;
        return defaultEstimator.count(t);
      },
    };
    const words = 'The quick brown fox jumps over the lazy dog; 1234 "quoted" naïve 中文\n';
    const text = words.repeat(4000);
    for (const budget of [2000, 8000, 25_000]) {
      pageCounts = 0;
      counted = 0;
      const fitted = fitTextPrefix(text, budget, estimator, render(text));
      expect(fitted.tokens).toBeLessThanOrEqual(budget);
      expect(fitted.tokens).toBeGreaterThanOrEqual(budget * 0.99);
      expect(pageCounts).toBeLessThanOrEqual(4);
      expect(counted).toBeLessThanOrEqual(4 * fitted.text.length);
    }
  });
});

describe("fitting cost over many pages", () => {
  it("usually confirms a predicted page with one whole-page count after the smallest page", () => {
    let pageCounts = 0;
    const estimator = {
      ...defaultEstimator,
      count(t: string) {
        if (t.startsWith('{"uri"')) pageCounts++;
        return defaultEstimator.count(t);
      },
    };
    const line = (i: number) =>
      `2026-12-03T10:${String(i % 60).padStart(2, "0")}:00Z INFO request id=${(i * 7919) % 100_003} path=/api/v1/items/${i} status=200 took=${i % 97}ms\n`;
    const text = Array.from({ length: 20_000 }, (_, i) => line(i)).join("");
    for (const budget of [8000, 25_000]) {
      const counts: number[] = [];
      let at = 0;
      while (at < text.length && counts.length < 40) {
        pageCounts = 0;
        const rest = text.slice(at, at + budget * 8);
        const fitted = fitTextPrefix(rest, budget, estimator, render(rest));
        counts.push(pageCounts);
        at += fitted.amount;
      }
      counts.sort((a, b) => a - b);
      // The smallest page, then the predicted cut confirmed within the fill tolerance.
      expect(counts[Math.floor(counts.length / 2)], `budget ${budget}`).toBe(2);
    }
  });
});

describe("item predictions", () => {
  it("fill a page of small JSON items with a few whole-page counts, however many items fit", () => {
    let pageCounts = 0;
    const estimator = {
      ...defaultEstimator,
      count(t: string) {
        if (t.startsWith('{"items"')) pageCounts++;
        return defaultEstimator.count(t);
      },
    };
    const items = Array.from(
      { length: 2000 },
      (_, i) => `{"path":"/${i + 100_000}/id","value":${(i * 7919) % 1_000_003}}`,
    );
    const tokens = items.map((j) => defaultEstimator.count(j));
    const page = (count: number) => `{"items":[${items.slice(0, count).join(",")}]}`;
    for (const budget of [2000, 8000, 25_000]) {
      pageCounts = 0;
      const fitted = fitItemCount(items.length, budget, estimator, page, (i) =>
        itemShare(tokens[i]!),
      );
      expect(fitted.tokens).toBeLessThanOrEqual(budget);
      // Maximal, or within the fill tolerance (1/500) of the budget.
      if (fitted.tokens < budget - Math.floor(budget / 500))
        expect(defaultEstimator.count(page(fitted.amount + 1))).toBeGreaterThan(budget);
      // The empty page, then the predicted count and at most two corrections, however many items.
      expect(pageCounts, `budget ${budget}`).toBeLessThanOrEqual(4);
    }
  });
});

describe("fitItemCount", () => {
  it("takes the most items that fit, possibly none", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 50 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 300 }),
        (items, budget) => {
          const page = (n: number) => JSON.stringify({ items: items.slice(0, n) });
          const fitted = fitItemCount(items.length, budget, openvikingEstimator, page);
          if (fitted.amount > 0 || countOpenviking(page(0)) <= budget)
            expect(fitted.tokens).toBeLessThanOrEqual(budget);
          if (fitted.amount < items.length)
            expect(countOpenviking(page(fitted.amount + 1))).toBeGreaterThan(budget);
        },
      ),
    );
  });
});
