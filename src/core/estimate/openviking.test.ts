import { describe, expect, it } from "vitest";
import { countOpenviking, openvikingEstimator } from "./openviking.js";

/** Units of one character, read back exactly: four copies make `units` tokens (ceil(4u / 4) = u). */
function unitsOf(char: string): number {
  return countOpenviking(char.repeat(4));
}

describe("openviking estimator", () => {
  it("counts the empty string as 0", () => {
    expect(countOpenviking("")).toBe(0);
  });

  it("rounds quarter-token units up", () => {
    expect(countOpenviking("a")).toBe(1);
    expect(countOpenviking("abcd")).toBe(1);
    expect(countOpenviking("abcde")).toBe(2);
    expect(countOpenviking("x".repeat(400))).toBe(100);
    expect(countOpenviking("中")).toBe(2); // 6 units
    expect(countOpenviking("中a")).toBe(2); // 7 units
    expect(countOpenviking("中ab")).toBe(2); // 8 units
    expect(countOpenviking("中abc")).toBe(3); // 9 units
  });

  it("charges 6 units for every code point of the CJK set, at both ends of each range", () => {
    const ranges: Array<[number, number]> = [
      [0x1100, 0x11ff],
      [0x3000, 0x30ff],
      [0x3130, 0x318f],
      [0x31f0, 0x31ff],
      [0x3400, 0x4dbf],
      [0x4e00, 0x9fff],
      [0xac00, 0xd7af],
      [0xf900, 0xfaff],
      [0xff00, 0xffef],
      [0x20000, 0x2ebef],
    ];
    for (const [lo, hi] of ranges) {
      expect(unitsOf(String.fromCodePoint(lo)), lo.toString(16)).toBe(6);
      expect(unitsOf(String.fromCodePoint(hi)), hi.toString(16)).toBe(6);
      expect(unitsOf(String.fromCodePoint((lo + hi) >> 1)), ((lo + hi) >> 1).toString(16)).toBe(6);
    }
  });

  it("charges 1 unit just outside the BMP ranges", () => {
    for (const cp of [0x10ff, 0x1200, 0x3100, 0x312f, 0x3190, 0x31ef, 0x3200, 0x4dc0, 0x4dff]) {
      expect(unitsOf(String.fromCodePoint(cp)), cp.toString(16)).toBe(1);
    }
    for (const cp of [0xa000, 0xabff, 0xd7b0, 0xf8ff, 0xfb00, 0xfeff, 0xfff0, 0xfffd]) {
      expect(unitsOf(String.fromCodePoint(cp)), cp.toString(16)).toBe(1);
    }
  });

  it("charges 8 units for astral code points outside CJK Extension B–F, 6 inside", () => {
    expect(unitsOf("😀")).toBe(8); // U+1F600
    expect(unitsOf(String.fromCodePoint(0x10000))).toBe(8);
    expect(unitsOf(String.fromCodePoint(0x1ffff))).toBe(8);
    expect(unitsOf(String.fromCodePoint(0x20000))).toBe(6);
    expect(unitsOf(String.fromCodePoint(0x2a6df))).toBe(6);
    expect(unitsOf(String.fromCodePoint(0x2ebef))).toBe(6);
    expect(unitsOf(String.fromCodePoint(0x2ebf0))).toBe(8);
    expect(unitsOf(String.fromCodePoint(0x30000))).toBe(8);
    expect(unitsOf(String.fromCodePoint(0x10ffff))).toBe(8);
  });

  it("charges 1 unit for a lone surrogate, high or low", () => {
    expect(unitsOf("\ud800")).toBe(1);
    expect(unitsOf("\udbff")).toBe(1);
    expect(unitsOf("\udc00")).toBe(1);
    expect(unitsOf("\udfff")).toBe(1);
    expect(countOpenviking("\ud800")).toBe(1);
    // a high surrogate followed by a non-surrogate, and a low surrogate before a high one
    expect(countOpenviking("\ud800abc")).toBe(1);
    expect(countOpenviking("\udc00\ud800\udc00")).toBe(3); // 1 + 8 units
  });

  it("counts code points, not UTF-16 units", () => {
    expect(countOpenviking("😀😀")).toBe(4); // 16 units
    expect(countOpenviking(String.fromCodePoint(0x20000).repeat(2))).toBe(3); // 12 units
  });

  it("has the contract's name and a true bound on units per token", () => {
    expect(openvikingEstimator.name).toBe("openviking");
    expect(openvikingEstimator.maxUnitsPerToken).toBe(4);
    for (const s of ["", "a", "abcdefgh", "中".repeat(9), "😀x", "\ud800".repeat(5)]) {
      expect(openvikingEstimator.count(s) * 4).toBeGreaterThanOrEqual(s.length);
    }
  });
});
