import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareCodePoints } from "./order.js";

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

describe("compareCodePoints", () => {
  it("agrees with the byte order of UTF-8 (code-point order)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        expect(sign(compareCodePoints(a, b))).toBe(
          sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("puts astral characters after U+E000–U+FFFF, unlike UTF-16 order", () => {
    expect("😀" < "\uff01").toBe(true);
    expect(compareCodePoints("😀", "\uff01")).toBeGreaterThan(0);
    expect(compareCodePoints("a-b", "a/c")).toBeLessThan(0);
    expect(compareCodePoints("a", "a")).toBe(0);
  });
});
