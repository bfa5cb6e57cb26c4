/**
 * Patterns: which engine runs what, RE2 and JavaScript agree on every pattern sent to RE2
 * (property test on generated patterns and texts), the required literal is in every match, and
 * hostile patterns compile to the linear-time engine or are refused from the request thread.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPagewiseError } from "../../core/index.js";
import { countTurns } from "../../core/test-support/turns.js";
import { compilePattern, lineMatcher, requiredLiteral } from "./index.js";
import { re2Weight, toRe2Source } from "./re2-source.js";
import { grepsInThread, recordFilter } from "./record-filter.js";

/** Every match of `re` in `text` as [index, length], the way the scanners iterate. */
function matches(re: { lastIndex: number; exec(t: string): RegExpExecArray | null }, text: string) {
  const out: Array<[number, number]> = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push([m.index, m[0].length]);
    if (m[0].length === 0) {
      const cp = text.codePointAt(m.index);
      re.lastIndex = m.index + (cp !== undefined && cp > 0xffff ? 2 : 1);
    }
    if (re.lastIndex > text.length) break;
  }
  return out;
}

describe("compilePattern: engines", () => {
  it.each([
    ["(a+)+$", "re2"],
    ["(a*)*$", "js"], // a repeated sub-pattern that can match empty
    ["(?:a??)+", "js"],
    ["foo\\d+bar", "re2"],
    ["a.b|c[^x-z]*", "re2"],
    ["\\bfoo\\b", "js"], // smart case folds: JavaScript's \b then knows ſ and K
    ["\\bFoo\\b", "re2"],
    ["(?<=x)y", "js"],
    ["(a)\\1", "js"],
    ["\\p{L}+", "js"],
    ["[\\W]", "js"],
    ["x{1001}", "js"],
    ["(?<name>ab)c", "re2"],
    ["\\u{1F600}|\\uD83D\\uDE00", "re2"],
    ["[\\s\\d]+x", "re2"],
    ["a\\-b", "js"], // not valid with the u flag: V8's older rules apply
  ])("%s runs on %s", (pattern, engine) => {
    expect(compilePattern(pattern, false, "smart").engine).toBe(engine);
  });

  it("refuses invalid syntax as INVALID_ARGUMENT naming the argument", () => {
    for (const bad of ["(", "[", "a{2,1}"]) {
      try {
        compilePattern(bad, false, "smart", { argument: "grep", literalArgument: "grep_literal" });
        expect.unreachable(bad);
      } catch (err) {
        expect(isPagewiseError(err) && err.code).toBe("INVALID_ARGUMENT");
        expect((err as Error).message).toContain("grep");
      }
    }
  });

  it("hostile patterns that RE2 can spell run in linear time", () => {
    const text = `${"a".repeat(5000)}b`;
    const cases: Array<[string, Array<[number, number]>]> = [
      ["(a+)+$", []],
      ["(a|a)*$", [[5001, 0]]],
      ["(a|aa)+b$", [[0, 5001]]],
      ["(.*a){20}$", []],
      ["^(a|aa)+$", []],
    ];
    for (const [hostile, expected] of cases) {
      const p = compilePattern(hostile, false, "smart");
      expect(p.engine, hostile).toBe("re2");
      expect(matches(lineMatcher(p), text), hostile).toEqual(expected);
    }
  });
});

// A small alphabet with the characters where engines could disagree: case-folding pairs (K/k,
// ſ/s, ß/ẞ, Σ/σ/ς, İ/ı), line-ish separators, spaces JavaScript's \s knows, an astral code point.
const ALPHABET = [
  "a",
  "b",
  "A",
  "B",
  "k",
  "K",
  "\u212A",
  "s",
  "S",
  "\u017F",
  "ß",
  "ẞ",
  "σ",
  "Σ",
  "ς",
  "İ",
  "ı",
  "i",
  " ",
  "\u00A0",
  "\u2028",
  "\r",
  "\t",
  "0",
  "9",
  "_",
  "-",
  ".",
  "😀",
  "\u3000",
];

const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ALPHABET.map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"))),
  fc.constantFrom(
    ".",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "\\b",
    "\\B",
    "^",
    "$",
    "\\u212A",
    "\\x41",
    "\\u{1F600}",
  ),
  fc.constantFrom(
    "[a-z]",
    "[^a-z]",
    "[A-Z0-9]",
    "[\\s\\d]",
    "[^\\s]",
    "[k-s]",
    "[^ſ]",
    "[\\D]",
    "[^]",
    "[.-]",
  ),
);

const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string }>((tie) => ({
  re: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atom,
    fc.tuple(tie("re"), tie("re")).map(([a, b]) => a + b),
    fc.tuple(tie("re"), tie("re")).map(([a, b]) => `(?:${a}|${b})`),
    fc
      .tuple(tie("re"), fc.constantFrom("*", "+", "?", "{2}", "{1,3}", "*?", "+?", "??"))
      .map(([a, q]) => `(?:${a})${q}`),
    tie("re").map((a) => `(${a})`),
  ),
})).re;

describe("RE2 and JavaScript agree on what is sent to RE2", () => {
  it("same matches (index and length) on generated patterns and texts, both case modes", () => {
    fc.assert(
      fc.property(
        pattern,
        fc.array(fc.constantFrom(...ALPHABET), { maxLength: 24 }).map((a) => a.join("")),
        fc.constantFrom("sensitive", "insensitive") as fc.Arbitrary<"sensitive" | "insensitive">,
        (source, text, mode) => {
          const p = compilePattern(source, false, mode);
          if (p.engine !== "re2") return;
          const js = new RegExp(p.source, p.flags);
          expect(matches(lineMatcher(p), text)).toEqual(matches(js, text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("literals (escaped, any text) always go to RE2 and match like indexOf", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 6 }),
        fc.string({ maxLength: 40 }),
        (lit, text) => {
          const p = compilePattern(lit, true, "sensitive");
          if (/[\uD800-\uDFFF]/.test(lit)) return; // lone surrogates never occur in decoded text
          expect(p.engine).toBe("re2");
          expect(matches(lineMatcher(p), text)).toEqual(
            matches(new RegExp(p.source, p.flags), text),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("requiredLiteral", () => {
  it.each([
    ["foo\\d+barbaz", "barbaz"],
    ["level=error seq=9999[0-9]", "level=error seq=9999"],
    ["a|b", ""],
    ["(ab)+cd?e", "c"],
    ["x+yz", "yz"],
    ["\\x41bc", "bc"],
    ["\\.ts$", ".ts"],
  ])("%s needs %j", (source, literal) => {
    expect(requiredLiteral(source)).toBe(literal);
  });

  it("every match of a generated case-sensitive pattern contains the literal", () => {
    fc.assert(
      fc.property(
        pattern,
        fc.array(fc.constantFrom(...ALPHABET), { maxLength: 24 }).map((a) => a.join("")),
        (source, text) => {
          const p = compilePattern(source, false, "sensitive");
          const re = new RegExp(p.source, p.flags);
          for (const [i, n] of matches(re, text)) expect(text.slice(i, i + n)).toContain(p.literal);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("grep on the thread that serves requests", () => {
  const weightOf = (pattern: string) => re2Weight(toRe2Source(pattern, false)!);

  it("weighs an RE2 program by what counted repetitions copy", () => {
    expect(weightOf("error")).toBe(5);
    expect(weightOf("(a|aa){0,500}z")).toBeGreaterThan(1500);
    // Nested counts multiply.
    expect(weightOf("((a{1,100}){1,100})")).toBeGreaterThan(10_000);
    expect(weightOf("time(out)?\\s+\\d{3,}")).toBeLessThan(30);
  });

  it("runs a test there only when its work is small: long records and heavy programs go to the worker", () => {
    expect(grepsInThread(weightOf("error"), 100_000)).toBe(true);
    expect(grepsInThread(weightOf("(a|aa){0,500}z"), 100)).toBe(true);
    expect(grepsInThread(weightOf("(a|aa){0,500}z"), 300_000)).toBe(false);
    expect(grepsInThread(weightOf("error"), 1 << 20)).toBe(false);
  });

  it("gives the event loop turns between tests that together are long", async () => {
    const filter = recordFilter(compilePattern("(a|aa){0,300}z", false, "sensitive"), {
      inProcess: true,
    });
    const turns = countTurns();
    let hits = 0;
    for (let i = 0; i < 200; i++) if (await filter(`${"a".repeat(100)}${i % 2 ? "z" : ""}`)) hits++;
    expect(hits).toBe(100);
    // 200 tests of weight ~1,500 over 100 characters: about 30 million steps, a turn every 2 million.
    expect(turns.stop()).toBeGreaterThanOrEqual(10);
  });
});
