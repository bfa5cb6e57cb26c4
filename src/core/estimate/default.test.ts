import fc from "fast-check";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countDefault, DEFAULT_ESTIMATOR_INTERNALS, defaultEstimator } from "./default.js";

const SPECIAL_AS_TEXT = { disallowedSpecial: new Set<string>() };

interface Kind {
  name: string;
  heldOut: boolean;
  generate(seed: number, approxChars: number): string;
}

async function loadKinds(): Promise<Kind[]> {
  // The benchmark corpus (plain JavaScript, outside src/): imported by URL so that it stays untyped.
  const url = new URL("../../../bench/tokens/corpus.js", import.meta.url).href;
  const corpus = (await import(url)) as { KINDS: Kind[] };
  return corpus.KINDS;
}

/** Characters that exercise every path of the estimator: escapes, surrogates, scripts, digits. */
const TRICKY = [
  "a",
  "z",
  "A",
  "Q",
  "0",
  "9",
  " ",
  "  ",
  "\\",
  "\\n",
  '\\"',
  "\\u00e9",
  '"',
  "{",
  "}",
  ":",
  ",",
  "-",
  "\n",
  "\t",
  "\u0000",
  "\u007f",
  "é",
  "ß",
  "\u0301",
  "ж",
  "α",
  "א",
  "ع",
  "ა",
  "क",
  "ก",
  "한",
  "あ",
  "中",
  "\u3400",
  "。",
  "—",
  "→",
  "\ufe0f",
  "😀",
  "👍🏽",
  String.fromCodePoint(0x20000),
  "\ud800",
  "\udc00",
  "\ud83d",
  "\u200d",
  "\uffff",
  "\u0600",
];
const trickyString = fc.array(fc.constantFrom(...TRICKY), { maxLength: 60 }).map((a) => a.join(""));
const anyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: "grapheme-ascii", maxLength: 200 }),
  trickyString,
);

const RUN_UNITS = [
  "a",
  "g",
  "l",
  "Q",
  "D",
  "0",
  "7",
  "&",
  "-",
  "=",
  "*",
  ".",
  "~",
  "!",
  "?",
  "'",
  '"',
  "\\",
  "\n",
  "\t",
  " ",
  "é",
  "ж",
  "α",
  "中",
  "한",
  "あ",
  "😀",
  "ab",
  "ha",
  "xo",
  "01",
  "-=",
  "a1",
  "A ",
  "a.",
];

describe("default estimator: properties", () => {
  it("is named default and counts the empty string as 0", () => {
    expect(defaultEstimator.name).toBe("default");
    expect(countDefault("")).toBe(0);
    expect(defaultEstimator.count("")).toBe(0);
  });

  it("counts any non-empty text as at least one token", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        expect(countDefault(s) >= 1).toBe(s.length > 0);
      }),
    );
  });

  it("is deterministic", () => {
    fc.assert(fc.property(anyString, (s) => countDefault(s) === countDefault(`${s}`)));
  });

  it("is prefix-monotone: count(a) <= count(a + b)", () => {
    fc.assert(
      fc.property(anyString, anyString, (a, b) => countDefault(a) <= countDefault(a + b)),
      { numRuns: 2000 },
    );
    // every split point of some tricky strings, including inside escapes and surrogate pairs
    for (const s of ['x\\"y\\\\n\\u00e9😀', "ab12345😀\ud800中\\", '{\\"k\\":\\"\\n\\t\\\\\\"}']) {
      for (let i = 0; i <= s.length; i++) {
        expect(countDefault(s.slice(0, i))).toBeLessThanOrEqual(countDefault(s));
        for (let j = i; j <= s.length; j++) {
          expect(countDefault(s.slice(0, i))).toBeLessThanOrEqual(countDefault(s.slice(0, j)));
        }
      }
    }
  });

  it("never lets one token cover more than maxUnitsPerToken UTF-16 units", () => {
    const bound = defaultEstimator.maxUnitsPerToken;
    expect(bound).toBe(8);
    expect(Math.min(...DEFAULT_ESTIMATOR_INTERNALS.charCosts)).toBeGreaterThanOrEqual(
      DEFAULT_ESTIMATOR_INTERNALS.MIN_UNIT_COST,
    );
    fc.assert(fc.property(anyString, (s) => countDefault(s) * bound >= s.length));
    for (const unit of [
      " ",
      "a",
      "Q",
      "0",
      "-",
      "\\n",
      "\\\\",
      '\\"',
      "\t",
      "中",
      "😀",
      "\ud800",
    ]) {
      const s = unit.repeat(100_000);
      expect(countDefault(s) * bound, JSON.stringify(unit)).toBeGreaterThanOrEqual(s.length);
    }
  });

  it("charges long runs of one character at least what the real tokenizers charge", () => {
    const bad: string[] = [];
    for (const unit of RUN_UNITS) {
      for (const n of [5, 13, 50, 500]) {
        const page = JSON.stringify({ content: unit.repeat(n) });
        const real = Math.max(
          countO200k(page, SPECIAL_AS_TEXT),
          countCl100k(page, SPECIAL_AS_TEXT),
        );
        if (countDefault(page) < real)
          bad.push(`${JSON.stringify(unit)} x ${n}: ${countDefault(page)} < ${real}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

describe("default estimator: conservative against o200k and cl100k", () => {
  it("never under-counts a JSON page of any corpus kind (seed unused in tuning)", async () => {
    const kinds = await loadKinds();
    expect(kinds.length).toBeGreaterThanOrEqual(25);
    const failures: string[] = [];
    const wastes: number[] = [];
    const seed = 31337;
    for (const kind of kinds) {
      const text = kind.generate(seed, 24_000);
      // pages of several sizes, cut at code-point boundaries, as a server would serve them
      let start = 0;
      for (const size of [300, 1500, 6000, 12_000]) {
        let end = Math.min(text.length, start + size);
        if (end < text.length && /[\udc00-\udfff]/.test(text[end])) end++;
        const page = JSON.stringify({
          uri: `file:///tmp/pagewise-test/${kind.name}.txt`,
          content: text.slice(start, end),
          version: "3f2a9c0d41b7e8a6",
          has_more: end < text.length,
          next_cursor:
            end < text.length ? "eyJ2IjoxLCJwIjoiYS50eHQiLCJvIjoxMjM0NX0.kR3x9_Qm-2Lw" : null,
        });
        start = end;
        const estimate = countDefault(page);
        const o200k = countO200k(page, SPECIAL_AS_TEXT);
        const cl100k = countCl100k(page, SPECIAL_AS_TEXT);
        if (o200k > estimate || cl100k > estimate) {
          failures.push(
            `${kind.name}@${size}: estimate ${estimate}, o200k ${o200k}, cl100k ${cl100k}`,
          );
        }
        wastes.push(estimate / o200k);
      }
    }
    expect(failures).toEqual([]);
    wastes.sort((a, b) => a - b);
    expect(wastes[wastes.length >> 1]).toBeLessThanOrEqual(1.3);
  });
});
