import fc from "fast-check";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  countDefault,
  DEFAULT_ESTIMATOR_INTERNALS,
  defaultCountTokens,
  defaultEstimator,
  scanDefault,
  startDefaultCount,
} from "./default.js";
import { countDefaultReference } from "./test-support/default-reference.js";

const SPECIAL_AS_TEXT = { disallowedSpecial: new Set<string>() };

interface Kind {
  name: string;
  heldOut: boolean;
  generate(seed: number, approxChars: number): string;
}

// The benchmark's corpus and Claude counter (plain JavaScript, outside src/): imported by URL so
// that they stay untyped, and shared with `npm run bench:tokens` rather than written twice.
const corpus = (await import(new URL("../../../bench/tokens/corpus.js", import.meta.url).href)) as {
  KINDS: Kind[];
  COMMON_KINDS: string[];
};
const { countClaude } = (await import(
  new URL("../../../bench/tokens/claude.js", import.meta.url).href
)) as { countClaude: (text: string) => number };
// Runs of one character, of a pair and of JSON-shaped units, and natural text the Claude tokenizer
// splits finely with its stored counts (shared with the refit's constraints).
const { RUN_UNITS, runPages, CLAUDE_SAMPLES } = (await import(
  new URL("../../../bench/tokens/adversarial.js", import.meta.url).href
)) as {
  RUN_UNITS: string[];
  runPages: () => Array<{ name: string; text: string }>;
  CLAUDE_SAMPLES: ReadonlyArray<{ name: string; text: string; claude: number }>;
};

async function loadKinds(): Promise<Kind[]> {
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

/** Code, JSON, logs and English prose: the kinds most pages are made of. */
const COMMON_KINDS = new Set(corpus.COMMON_KINDS);

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

  it("counts a text scanned in chunks exactly as the whole text", () => {
    // Cuts anywhere but inside a surrogate pair or after a backslash (which reads the character
    // after it): how pages feed JSON-escaped content, piece by piece, and then what follows it.
    const cutAllowed = (s: string, k: number) =>
      s.charCodeAt(k - 1) !== 0x5c &&
      !(/[\ud800-\udbff]/.test(s[k - 1] ?? "") && /[\udc00-\udfff]/.test(s[k] ?? ""));
    const chunked = (s: string, cuts: number[]) => {
      const state = startDefaultCount();
      let at = 0;
      for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
        if (cut <= at || cut >= s.length || !cutAllowed(s, cut)) continue;
        scanDefault(state, s, at, cut);
        at = cut;
      }
      scanDefault(state, s, at, s.length);
      return state;
    };
    const runs = fc
      .array(fc.tuple(fc.constantFrom(...RUN_UNITS, "é", "ł", "ż", "ệ", "Ab"), fc.nat(40)), {
        maxLength: 8,
      })
      .map((parts) => parts.map(([unit, n]) => unit.repeat(n)).join(""));
    fc.assert(
      fc.property(
        fc.oneof(anyString, runs),
        fc.array(fc.nat(400), { maxLength: 12 }),
        (s, cuts) => {
          const state = chunked(s, cuts);
          expect(state.cost).toBe(chunked(s, []).cost);
          expect(defaultCountTokens(state)).toBe(countDefault(s));
          expect(state.units).toBe(s.length);
        },
      ),
      { numRuns: 3000 },
    );
    // Every single cut of texts whose runs cross it: lower-case runs with rare bigrams, extended
    // Latin before a run, digits, spaces, scripts, escapes.
    for (const s of [
      "xqzjvkwqxzjq przełożyłemtoniezwyklelongwordhere Ưệứabcdefghijklmnopqrstuvwxyz",
      "  indented    1234567890123 ЖЖЖжжж中文中文 \\n\\u00e9 aaaaaaaaaaaaaaaa ABCdefGHI",
      // a run longer than EXTENDED_LATIN_REACH right after an extended-Latin letter
      `ż${"abcdefghijklmnopqrstuvwxyz".repeat(4)}`,
    ]) {
      for (let k = 1; k < s.length; k++) {
        if (!cutAllowed(s, k)) continue;
        expect(chunked(s, [k]).cost, `cut at ${k}`).toBe(chunked(s, []).cost);
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

  it("has no negative cost in any table (what prefix-monotonicity rests on)", () => {
    const { PIECE_COST_TABLE, LETTER_ESCAPE_START, PUNCT_ESCAPE_START, ESCAPE_START } =
      DEFAULT_ESTIMATOR_INTERNALS;
    for (const table of [PIECE_COST_TABLE, LETTER_ESCAPE_START, PUNCT_ESCAPE_START, ESCAPE_START]) {
      expect(Math.min(...table)).toBeGreaterThanOrEqual(0);
    }
    // a letter escape (`\n`) costs at least a token after any piece, as in every tokenizer
    const { CHAR_COST, SUB, classes } = DEFAULT_ESTIMATOR_INTERNALS;
    const escapeChars = CHAR_COST[classes.BACKSLASH] + CHAR_COST[classes.ESCL];
    expect(Math.min(...LETTER_ESCAPE_START) + escapeChars).toBeGreaterThanOrEqual(SUB);
  });

  it("charges long runs of one character at least what the real tokenizers charge", () => {
    const bad: string[] = [];
    for (const { name, text: page } of runPages()) {
      const real = Math.max(
        countO200k(page, SPECIAL_AS_TEXT),
        countCl100k(page, SPECIAL_AS_TEXT),
        countClaude(page),
      );
      if (countDefault(page) < real) bad.push(`${name}: ${countDefault(page)} < ${real}`);
    }
    expect(bad).toEqual([]);
  });
});

/** Pieces that drive each of the optimized loop's paths: words, rare-letter runs, scripts, escapes. */
const PATH_PIECES = [
  ...TRICKY.filter((t): t is string => typeof t === "string"),
  "house",
  "kxqzvbjw",
  "aaaa",
  "abab",
  "Ab",
  "aB",
  "ł",
  "ść",
  "ạ",
  "ė",
  "éa",
  "ЖЖж",
  "ّ",
  "\\n\\t",
  "12345",
  "ab".repeat(10),
];
const pathString = fc
  .array(fc.constantFrom(...PATH_PIECES), { maxLength: 80 })
  .map((a) => a.join(""));

describe("default estimator: the optimized loop", () => {
  it("counts exactly as the plain reference on every corpus kind", async () => {
    const differences: string[] = [];
    for (const kind of await loadKinds()) {
      for (const seed of [7, 31337]) {
        const text = kind.generate(seed, 20_000);
        const page = JSON.stringify({ uri: "file:///x", content: text, has_more: false });
        for (const sample of [text, page, page.slice(0, 777), text.slice(1234, 5678)]) {
          const fast = countDefault(sample);
          const plain = countDefaultReference(sample);
          if (fast !== plain) differences.push(`${kind.name}/${seed}: ${fast} != ${plain}`);
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it("counts exactly as the plain reference on random strings", () => {
    fc.assert(
      fc.property(fc.oneof(anyString, pathString), (s) => {
        expect(countDefault(s)).toBe(countDefaultReference(s));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("default estimator: conservative against o200k, cl100k and the Claude tokenizer", () => {
  it("never under-counts a JSON page of any corpus kind (seed unused in tuning)", async () => {
    const kinds = await loadKinds();
    expect(kinds.length).toBeGreaterThanOrEqual(25);
    const failures: string[] = [];
    const wastes: number[] = [];
    const commonWastes: number[] = [];
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
        const claude = countClaude(page);
        if (o200k > estimate || cl100k > estimate || claude > estimate) {
          failures.push(
            `${kind.name}@${size}: estimate ${estimate}, o200k ${o200k}, cl100k ${cl100k}, Claude ${claude}`,
          );
        }
        wastes.push(estimate / o200k);
        if (COMMON_KINDS.has(kind.name)) commonWastes.push(estimate / o200k);
      }
    }
    expect(failures).toEqual([]);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
    // Non-Latin scripts are charged for the Claude tokenizer, which spends far more on them than
    // o200k does; the kinds most pages are made of must stay cheap.
    expect(median(commonWastes)).toBeLessThanOrEqual(1.3);
    expect(median(wastes)).toBeLessThanOrEqual(1.45);
  });

  it("counts each stored sample at least as much as the Claude tokenizer did", () => {
    const under = CLAUDE_SAMPLES.filter(
      (sample) => countDefault(JSON.stringify({ content: sample.text })) < sample.claude,
    ).map(
      (sample) =>
        `${sample.name}: ${countDefault(JSON.stringify({ content: sample.text }))} < ${sample.claude}`,
    );
    expect(under).toEqual([]);
  });

  it("stores the Claude tokenizer's real counts of the samples", () => {
    for (const sample of CLAUDE_SAMPLES) {
      expect(countClaude(JSON.stringify({ content: sample.text })), sample.name).toBe(
        sample.claude,
      );
    }
  });
});
