import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countOpenviking, openvikingEstimator } from "../estimate/openviking.js";
import { codePointFloor, fitItemCount, fitTextPrefix } from "./fit.js";

const render = (text: string) => (units: number) =>
  JSON.stringify({
    uri: "file:///x",
    content: text.slice(0, units),
    has_more: units < text.length,
  });

describe("fitTextPrefix", () => {
  it("finds the largest fitting prefix on a code-point boundary", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom("a", "中", "🙂", '"', "\\", "\n", "\u0001", "𠀀"),
          maxLength: 300,
        }),
        fc.integer({ min: 1, max: 200 }),
        (text, budget) => {
          let fitted: ReturnType<typeof fitTextPrefix>;
          try {
            fitted = fitTextPrefix(text, budget, openvikingEstimator, render(text));
          } catch (err) {
            expect((err as { code: string }).code).toBe("BUDGET_TOO_SMALL");
            const minimum = (err as { details: { minimum_max_tokens: number } }).details
              .minimum_max_tokens;
            expect(minimum).toBeGreaterThan(budget);
            // The named minimum really works.
            expect(
              fitTextPrefix(text, minimum, openvikingEstimator, render(text)).tokens,
            ).toBeLessThanOrEqual(minimum);
            return;
          }
          expect(fitted.tokens).toBeLessThanOrEqual(budget);
          expect(fitted.tokens).toBe(countOpenviking(fitted.text));
          expect(codePointFloor(text, fitted.amount)).toBe(fitted.amount);
          if (text.length > 0) expect(fitted.amount).toBeGreaterThan(0);
          // Maximal: one more code point does not fit (openviking is monotone in the content).
          if (fitted.amount < text.length) {
            const next =
              fitted.amount + (codePointFloor(text, fitted.amount + 1) === fitted.amount ? 2 : 1);
            expect(countOpenviking(render(text)(next))).toBeGreaterThan(budget);
          }
        },
      ),
      { numRuns: 300 },
    );
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
