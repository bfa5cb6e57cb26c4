import type { Estimator } from "./estimator.js";

/**
 * The `openviking` estimator, defined exactly by the contract: quarter-token units over code points;
 * a code point in the CJK set counts 6 units, any other astral code point 8, everything else
 * (lone surrogates too) 1; tokens = ceil(units / 4).
 *
 * It under-counts real tokenizers by up to 2.7x on some content (base64, hex, digit runs); it exists
 * for compatibility, not safety. See docs/tokens.md.
 */
export function countOpenviking(text: string): number {
  let units = 0;
  const length = text.length;
  // Perf: charCodeAt loop, no iterator; astral pairs are decoded by hand.
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x1100) {
      units += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        units += cp >= 0x20000 && cp <= 0x2ebef ? 6 : 8;
        i++;
      } else {
        units += 1;
      }
    } else if (
      c <= 0x11ff ||
      (c >= 0x3000 && c <= 0x30ff) ||
      (c >= 0x3130 && c <= 0x318f) ||
      (c >= 0x31f0 && c <= 0x31ff) ||
      (c >= 0x3400 && c <= 0x4dbf) ||
      (c >= 0x4e00 && c <= 0x9fff) ||
      (c >= 0xac00 && c <= 0xd7af) ||
      (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xff00 && c <= 0xffef)
    ) {
      units += 6;
    } else {
      units += 1;
    }
  }
  return Math.ceil(units / 4);
}

export const openvikingEstimator: Estimator = {
  name: "openviking",
  count: countOpenviking,
  // Four one-unit code points make one token.
  maxUnitsPerToken: 4,
};
