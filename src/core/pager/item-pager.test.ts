/**
 * Property tests of the library's pagers over random item lists, sizes and budgets: every page
 * fits, holds at least one item (or a fragment), is contiguous and in list order, sits on the
 * right side of `from`, and walking in either direction (clamped items continued with `pageText`)
 * gives back every item exactly once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPagewiseError } from "../errors.js";
import { defaultEstimator, openvikingEstimator } from "../estimate/index.js";
import { type ItemPageView, pageItems } from "./item-pager.js";
import { pageText } from "./text-pager.js";

interface Msg {
  id: number;
  author: string;
  meta: string;
  body: string;
}

const bodyArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ minLength: 100, maxLength: 3000 }),
  fc.constantFrom("", "🙂".repeat(50), '"\\\n'.repeat(30), "中文".repeat(200)),
);
const listArb = fc.array(
  fc.record({
    author: fc.string({ maxLength: 10 }),
    meta: fc.string({ maxLength: 200 }),
    body: bodyArb,
  }),
  { maxLength: 80 },
);

function renderPage(view: ItemPageView<Msg>, cursor: string): string {
  return JSON.stringify({
    items: view.items.map((p) => ({
      id: p.item.id,
      author: p.item.author,
      meta: p.item.meta,
      body: p.text,
      ...(p.truncated ? { body_cursor: `${p.item.id}:${p.text.length}` } : {}),
    })),
    has_more: view.hasBefore,
    cursor,
  });
}

/** The rest of a clamped body, paged with pageText. */
function restOf(body: string, offset: number, maxTokens: number): string {
  let out = "";
  let at = offset;
  for (let guard = 0; at < body.length; guard++) {
    const page = pageText({
      text: body,
      offset: at,
      maxTokens,
      estimator: defaultEstimator,
      render: (v) => JSON.stringify({ content: v.content, next: v.hasMore ? v.end : null }),
    });
    expect(page.tokens).toBeLessThanOrEqual(maxTokens);
    expect(page.end).toBeGreaterThan(at);
    out += page.content;
    at = page.end;
    if (!page.hasMore) break;
    if (guard > 100_000) throw new Error("pageText does not progress");
  }
  return out;
}

describe("pageItems", () => {
  for (const estimator of [defaultEstimator, openvikingEstimator]) {
    it(`property (${estimator.name}): fits, progresses, lossless, ordered, at least one item`, () => {
      fc.assert(
        fc.property(
          listArb,
          fc.integer({ min: 60, max: 3000 }),
          fc.integer({ min: 1, max: 100 }),
          fc.option(fc.integer({ min: 1, max: 2000 })),
          fc.constantFrom("forward" as const, "backward" as const),
          (raw, maxTokens, limit, maxUnits, direction) => {
            const msgs: Msg[] = raw.map((m, id) => ({ id, ...m }));
            const seen: { id: number; body: string }[] = [];
            let from = direction === "backward" ? msgs.length : 0;
            for (let pages = 0; ; pages++) {
              let page: ReturnType<typeof pageItems<Msg>>;
              try {
                page = pageItems({
                  total: msgs.length,
                  at: (i) => msgs[i]!,
                  direction,
                  from,
                  maxTokens,
                  estimator,
                  limit,
                  textOf: (m) => m.body,
                  ...(maxUnits !== null ? { maxUnitsPerItem: maxUnits } : {}),
                  render: (v) => renderPage(v, "c".repeat(40)),
                });
              } catch (err) {
                // Only a budget too small for the metadata of one item may fail.
                expect(isPagewiseError(err) && err.code === "BUDGET_TOO_SMALL").toBe(true);
                return;
              }
              expect(page.tokens).toBeLessThanOrEqual(maxTokens);
              expect(estimator.count(page.text)).toBe(page.tokens);
              expect(page.items.length).toBeLessThanOrEqual(limit);
              const remaining = direction === "backward" ? from : msgs.length - from;
              if (remaining > 0) expect(page.items.length).toBeGreaterThanOrEqual(1);
              page.items.forEach((p, k) => {
                expect(p.index).toBe(page.start + k);
                expect(p.item).toBe(msgs[p.index]);
                expect(p.item.body.startsWith(p.text)).toBe(true);
                expect(p.truncated).toBe(p.text.length < p.item.body.length);
              });
              if (direction === "backward") expect(page.end).toBe(from);
              else expect(page.start).toBe(from);
              const got = page.items.map((p) => ({
                id: p.item.id,
                body: p.truncated ? p.text + restOf(p.item.body, p.text.length, 300) : p.text,
              }));
              if (direction === "backward") seen.unshift(...got);
              else seen.push(...got);
              const more = direction === "backward" ? page.hasBefore : page.hasAfter;
              if (!more) break;
              from = direction === "backward" ? page.start : page.end;
              expect(pages).toBeLessThan(10_000);
            }
            expect(seen).toEqual(msgs.map((m) => ({ id: m.id, body: m.body })));
          },
        ),
        { numRuns: 150 },
      );
    });
  }

  it("takes the newest items that fit, at least one, for the thread-read case", () => {
    const msgs = Array.from({ length: 3589 }, (_, i) => ({
      id: i,
      meta: "m".repeat(600),
      body: `message ${i}`,
    }));
    const calls: number[] = [];
    const page = pageItems({
      total: msgs.length,
      at: (i) => {
        calls.push(i);
        return msgs[i]!;
      },
      direction: "backward",
      maxTokens: 8000,
      estimator: defaultEstimator,
      limit: 100,
      textOf: (m) => m.body,
      render: (v) => JSON.stringify(v.items.map((p) => ({ ...p.item, body: p.text }))),
    });
    expect(page.end).toBe(3589);
    expect(page.items.at(-1)!.item.id).toBe(3588);
    expect(page.items.length).toBeGreaterThan(5);
    expect(page.tokens).toBeLessThanOrEqual(8000);
    // Only items near the page are touched.
    expect(Math.min(...calls)).toBeGreaterThan(3589 - 100);
  });

  it("an item that alone exceeds the budget is clamped; no text means BUDGET_TOO_SMALL", () => {
    const items = ["x".repeat(10_000)];
    const page = pageItems({
      total: 1,
      at: (i) => items[i]!,
      direction: "backward",
      maxTokens: 100,
      estimator: defaultEstimator,
      textOf: (s) => s,
      render: (v) => JSON.stringify(v.items.map((p) => p.text)),
    });
    expect(page.items[0]!.truncated).toBe(true);
    expect(page.items[0]!.text.length).toBeGreaterThan(0);
    expect(page.tokens).toBeLessThanOrEqual(100);
    expect(() =>
      pageItems({
        total: 1,
        at: (i) => items[i]!,
        direction: "forward",
        maxTokens: 100,
        estimator: defaultEstimator,
        render: (v) => JSON.stringify(v.items.map((p) => p.item)),
      }),
    ).toThrow(/smallest budget/);
  });

  it("rejects a from outside the list, and gives an empty page when nothing is left", () => {
    const base = {
      total: 3,
      at: (i: number) => i,
      maxTokens: 100,
      estimator: defaultEstimator,
      render: (v: ItemPageView<number>) => JSON.stringify(v.items.map((p) => p.item)),
    };
    expect(() => pageItems({ ...base, direction: "forward", from: 4 })).toThrow(/from must lie/);
    const empty = pageItems({ ...base, direction: "backward", from: 0 });
    expect(empty.items).toEqual([]);
    expect(empty.hasBefore).toBe(false);
    expect(empty.hasAfter).toBe(true);
  });
});

describe("pageText", () => {
  it("property: pages concatenate to the text, each within budget and advancing", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 3000 }),
        fc.integer({ min: 20, max: 500 }),
        (text, maxTokens) => {
          let out = "";
          let offset = 0;
          for (;;) {
            const page = pageText({
              text,
              offset,
              maxTokens,
              estimator: defaultEstimator,
              render: (v) => JSON.stringify({ content: v.content, next: v.hasMore ? v.end : null }),
            });
            expect(page.tokens).toBeLessThanOrEqual(maxTokens);
            out += page.content;
            if (!page.hasMore) break;
            expect(page.end).toBeGreaterThan(offset);
            offset = page.end;
          }
          expect(out).toBe(text);
        },
      ),
      { numRuns: 200 },
    );
  });
});
