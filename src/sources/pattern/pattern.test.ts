/**
 * Patterns: which engine runs what; re2js and V8 agree on every pattern sent to re2js (property
 * test on generated patterns and texts); the backtracking bound the `bounded` engine relies on
 * holds for a model backtracking matcher that counts its steps; the required literal is in every
 * match; hostile patterns run on a linear-time engine or are refused from the request thread; a
 * missing engine and deep nesting give structured errors.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { isPagewiseError } from "../../core/index.js";
import { countTurns } from "../../core/test-support/turns.js";
import { analyzePattern, type PatternNode, parsePattern } from "./analysis.js";
import { compileGlob } from "./glob.js";
import {
  compilePattern,
  lineMatcher,
  literalCounter,
  type Matcher,
  requiredLiteral,
} from "./index.js";
import { compileLinear, setLinearEngineLoader } from "./linear.js";
import { re2Weight, toRe2Source } from "./re2-source.js";
import { grepsInThread, recordFilter } from "./record-filter.js";

/** Every match of `m` in `text` as [index, length], the way the scanners iterate. */
function matches(m: Matcher, text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  m.reset(text);
  for (let from = 0; from <= text.length && m.find(from); ) {
    out.push([m.start, m.end - m.start]);
    const cp = text.codePointAt(m.end);
    from = m.end > m.start ? m.end : m.end + (cp !== undefined && cp > 0xffff ? 2 : 1);
  }
  return out;
}

/** The same with a JavaScript RegExp (global), as the reference. */
function jsMatches(re: RegExp, text: string): Array<[number, number]> {
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

/** re2js run on the RE2 spelling of `p`, as a Matcher. */
function linearOf(re2Source: string, fold: boolean): Matcher {
  return lineMatcher({
    ...compilePattern("x", false, "sensitive"),
    engine: "linear",
    re2Source,
    caseSensitive: !fold,
  });
}

describe("compilePattern: engines", () => {
  it.each([
    ["(a+)+$", "linear"],
    ["(a*)*$", "guarded"], // a repeated sub-pattern that can match empty
    ["(?:a??)+", "guarded"],
    ["foo\\d+bar", "linear"],
    ["a.b|c[^x-z]*", "bounded"], // the repetition is the last thing a match does
    ["TODO.*", "bounded"],
    ["\\bfoo\\b", "bounded"],
    ["(?<=x)y", "bounded"], // lookaround with a bounded body
    ["(?<!\\w)id(?!\\w)", "bounded"],
    ["(a)\\1", "guarded"],
    ["\\p{L}+", "bounded"],
    ["\\p{L}+x", "guarded"], // RE2's Unicode tables differ
    ["[\\W]", "bounded"],
    ["x{1001}", "guarded"], // beyond the bound and RE2's counts
    ["(?<name>ab)c", "bounded"],
    ["\\u{1F600}|\\uD83D\\uDE00", "bounded"],
    ["[\\s\\d]+x", "linear"],
    ["\\w+\\s+\\w+", "linear"],
    ["(?:a|b){1,300}", "linear"], // bounded, but far more than MAX_BOUNDED_STEPS_PER_CHAR
    ["new (Timeout|Retry)Error\\(", "bounded"],
    ["\\d{4}-\\d{2}-\\d{2}", "bounded"],
    ["a\\-b", "guarded"], // not valid with the u flag: V8's older rules apply
    ["(?=a)(a+)+$", "guarded"],
  ])("%s runs on %s", (pattern, engine) => {
    expect(compilePattern(pattern, false, "smart").engine).toBe(engine);
  });

  it("a literal runs on V8 up to the bound and on re2js beyond it", () => {
    expect(compilePattern("a.b(c)", true, "smart").engine).toBe("bounded");
    expect(compilePattern("x".repeat(300), true, "smart").engine).toBe("linear");
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

  it("refuses a program over max_pattern_program on every engine, the guarded one included", () => {
    // The first RE2 would run (a count of 1000 over 201 atoms); the second only V8 could (RE2
    // refuses a product of counts over 1000).
    for (const big of [`(?:${"ab".repeat(100)}\\d){1000}`, "(?:a{1000}){1000}"]) {
      try {
        compilePattern(big, false, "smart");
        expect.unreachable(big);
      } catch (err) {
        expect(isPagewiseError(err) && err.code).toBe("RESOURCE_LIMIT_EXCEEDED");
        expect(isPagewiseError(err) && err.details.limit).toMatchObject({
          name: "max_pattern_program",
        });
      }
    }
  });

  it("hostile patterns run in linear time on re2js or V8 (bounded), with JavaScript's answers", () => {
    const text = `${"a".repeat(5000)}b`;
    const cases: Array<[string, string]> = [
      ["(a+)+$", "linear"],
      ["(a|a)*$", "linear"],
      ["(a|aa)+b$", "linear"],
      ["(.*a){20}$", "linear"],
      ["^(a|aa)+$", "linear"],
      ["a+b", "linear"],
      ["(?:a|aa){1,12}c", "linear"],
      ["\\s+$", "linear"],
    ];
    for (const [hostile, engine] of cases) {
      const p = compilePattern(hostile, false, "smart");
      expect(p.engine, hostile).toBe(engine);
      const short = text.slice(-16); // V8 itself backtracks exponentially on these
      expect(matches(lineMatcher(p), short), hostile).toEqual(
        jsMatches(new RegExp(p.source, p.flags), short),
      );
      lineMatcher(p).count(text); // linear: returns
    }
  });
});

describe("deep nesting", () => {
  it("a pattern or grep nested 3,001 groups deep is INVALID_ARGUMENT naming max_pattern_nesting", () => {
    for (const open of ["(", "(?:", "(?=", "(?<n>"]) {
      const deep = `${open.repeat(3001).replace(/<n>/g, () => "")}a${")".repeat(3001)}`;
      for (const argument of ["pattern", "grep"]) {
        try {
          compilePattern(deep, false, "smart", { argument });
          expect.unreachable(open);
        } catch (err) {
          expect(isPagewiseError(err) && err.code, open).toBe("INVALID_ARGUMENT");
          expect(isPagewiseError(err) && err.details.limit).toEqual({
            name: "max_pattern_nesting",
            limit: 250,
            value: 3001,
          });
          expect((err as Error).message).toContain(argument);
        }
      }
    }
  });

  it("nesting at the limit compiles and runs on every engine", () => {
    for (const [inner, engine] of [
      ["a", "bounded"],
      ["a+b", "linear"],
      ["(?=a)a+b", "guarded"],
    ] as const) {
      const p = compilePattern(`${"(?:".repeat(249)}${inner}${")".repeat(249)}`, false, "smart");
      expect(p.engine, inner).toBe(engine);
      expect(lineMatcher(p).test("xaab"), inner).toBe(true);
    }
  });

  it("a glob that nests too deep is INVALID_ARGUMENT naming the limit", () => {
    try {
      compileGlob(`${"@(".repeat(300)}a${")".repeat(300)}`);
      expect.unreachable();
    } catch (err) {
      expect(isPagewiseError(err) && err.code).toBe("INVALID_ARGUMENT");
      expect(isPagewiseError(err) && err.details.limit?.name).toBe("max_pattern_nesting");
    }
  });
});

describe("a missing linear-time engine", () => {
  afterEach(() => setLinearEngineLoader());

  it("is an error naming the package and what to do, never a resource limit; V8 patterns still run", async () => {
    setLinearEngineLoader(() => {
      throw new Error("Cannot find module 're2js'\nRequire stack: …");
    });
    const p = compilePattern("\\w+x", false, "smart");
    expect(p.engine).toBe("linear");
    for (const use of [() => lineMatcher(p), () => recordFilter(p, { inProcess: true })("ax")]) {
      try {
        await use();
        expect.unreachable();
      } catch (err) {
        expect(isPagewiseError(err) && err.code).toBe("INTERNAL_ERROR");
        expect((err as Error).message).toContain('"re2js"');
        expect((err as Error).message).toContain("Cannot find module 're2js'");
        expect(isPagewiseError(err) && err.details.hint).toMatch(/Reinstall/);
      }
    }
    expect(lineMatcher(compilePattern("error", false, "smart")).test("an ERROR")).toBe(true);
  });
});

describe("the bound the bounded engine relies on", () => {
  /**
   * A model backtracking matcher (what V8's engine does, step for step at most): every atom,
   * assertion or lookaround tried, every alternation entered and every optional iteration offered
   * is a step. Runs a global iteration over `text` and returns the steps it took.
   */
  function stepsOf(node: PatternNode, text: string): number {
    let steps = 0;
    const atoms = new Map<string, RegExp>();
    type K = (i: number) => number; // continuation: match end, or -1
    const run = (n: PatternNode, i: number, k: K): number => {
      switch (n.type) {
        case "atom": {
          steps++;
          const re = atoms.get(n.source) ?? new RegExp(`^(?:${n.source})$`, "su");
          atoms.set(n.source, re);
          const cp = text.codePointAt(i);
          if (cp === undefined) return -1;
          const ch = String.fromCodePoint(cp);
          return re.test(ch) ? k(i + ch.length) : -1;
        }
        case "assertion":
        case "backreference":
          steps++;
          return k(i); // assumed to hold: the most paths
        case "look":
          steps++;
          run(n.body, i, () => i);
          return k(i);
        case "group":
          return run(n.body, i, k);
        case "sequence": {
          const go = (j: number, at: number): number =>
            j === n.items.length ? k(at) : run(n.items[j]!, at, (e) => go(j + 1, e));
          return go(0, i);
        }
        case "alternation":
          steps++;
          for (const item of n.items) {
            const r = run(item, i, k);
            if (r >= 0) return r;
          }
          return -1;
        case "repeat": {
          const loop = (count: number, at: number): number => {
            const more = (): number =>
              count < n.max ? run(n.body, at, (e) => (e === at ? -1 : loop(count + 1, e))) : -1;
            if (count < n.min) return more();
            steps++; // a choice: one more iteration, or the rest
            if (n.lazy) {
              const r = k(at);
              return r >= 0 ? r : more();
            }
            const r = more();
            return r >= 0 ? r : k(at);
          };
          return loop(0, i);
        }
      }
    };
    for (let from = 0; from <= text.length; ) {
      let end = -1;
      let start = from;
      for (; start <= text.length; start++) {
        end = run(node, start, (e) => e);
        if (end >= 0) break;
      }
      if (end < 0) break;
      from = end > start ? end : start + 1;
    }
    return steps;
  }

  const boundedAtom = fc.constantFrom("a", "b", "[ab]", "\\w", ".", "[^a]", "\\b", "^", "$");
  const boundedPattern: fc.Arbitrary<string> = fc.letrec<{ re: string }>((tie) => ({
    re: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      boundedAtom,
      fc.tuple(tie("re"), tie("re")).map(([a, b]) => a + b),
      fc.tuple(tie("re"), tie("re")).map(([a, b]) => `(?:${a}|${b})`),
      fc
        .tuple(
          tie("re"),
          fc.constantFrom("?", "{2}", "{0,3}", "{1,2}", "??", "{0,2}?", "*", "+", "*?"),
        )
        .map(([a, q]) => `(?:${a})${q}`),
    ),
  })).re;

  it("property: a model backtracker never takes more than stepsPerChar × (length + 1) steps", () => {
    let checked = 0;
    fc.assert(
      fc.property(
        boundedPattern,
        fc.array(fc.constantFrom("a", "b", " ", "ab"), { maxLength: 30 }).map((a) => a.join("")),
        (source, text) => {
          const shape = analyzePattern(source, "gu");
          if (!Number.isFinite(shape.stepsPerChar)) return;
          checked++;
          const node = parsePattern(source)!;
          expect(stepsOf(node, text), source).toBeLessThanOrEqual(
            shape.stepsPerChar * (text.length + 1),
          );
        },
      ),
      { numRuns: 3000 },
    );
    expect(checked).toBeGreaterThan(1000);
  });

  it("counts the classic quadratic and exponential shapes as unbounded", () => {
    for (const source of [
      "a+b",
      "\\s+$",
      "(a|aa)+$",
      "(?:a*)*b",
      "a*a*a*$",
      "(a+)+$",
      "(x+x+)+y",
    ]) {
      expect(analyzePattern(source, "gu").stepsPerChar, source).toBe(Number.POSITIVE_INFINITY);
    }
    expect(analyzePattern("abc", "gu").stepsPerChar).toBeLessThanOrEqual(10);
    expect(analyzePattern("x.*", "gu").stepsPerChar).toBeLessThanOrEqual(10);
    // Reaching a final repetition is success: it never backtracks.
    expect(analyzePattern("(a|aa)+", "gu").stepsPerChar).toBeLessThanOrEqual(20);
  });

  it("work counted on a hostile text is linear for the shapes it accepts", () => {
    for (const source of ["(?:a|ab){1,3}c", "a{0,5}b", "a.*", "(?:ab|a)(?:bc|b)c?d", "\\w{1,8}x"]) {
      const shape = analyzePattern(source, "gu");
      expect(Number.isFinite(shape.stepsPerChar), source).toBe(true);
      const node = parsePattern(source)!;
      const small = stepsOf(node, "ab".repeat(50));
      const large = stepsOf(node, "ab".repeat(500));
      expect(large, source).toBeLessThanOrEqual(shape.stepsPerChar * 1001);
      expect(large / small, source).toBeLessThan(11); // linear: 10× the text, ~10× the steps
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

describe("re2js and V8 agree on what is sent to re2js", () => {
  it("same matches (index and length) on generated patterns and texts, both case modes", () => {
    let checked = 0;
    fc.assert(
      fc.property(
        pattern,
        fc.array(fc.constantFrom(...ALPHABET), { maxLength: 24 }).map((a) => a.join("")),
        fc.constantFrom("sensitive", "insensitive") as fc.Arbitrary<"sensitive" | "insensitive">,
        (source, text, mode) => {
          const p = compilePattern(source, false, mode);
          // Every pattern with an RE2 spelling, whichever engine compilePattern chose for it.
          const re2Source = p.flags.includes("u")
            ? toRe2Source(p.source, !p.caseSensitive)
            : undefined;
          if (re2Source === undefined || !analyzePattern(p.source, p.flags).re2Repeats) return;
          checked++;
          const js = new RegExp(p.source, p.flags);
          const linear = linearOf(re2Source, !p.caseSensitive);
          expect(matches(linear, text), `${source} /${mode}`).toEqual(jsMatches(js, text));
          expect(matches(lineMatcher(p), text)).toEqual(jsMatches(js, text));
          expect(lineMatcher(p).count(text)).toBe(jsMatches(js, text).length);
        },
      ),
      { numRuns: 3000 },
    );
    expect(checked).toBeGreaterThan(1500);
  });

  it("literals (escaped, any text) match like indexOf on every engine", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 6 }),
        fc.string({ maxLength: 40 }),
        (lit, text) => {
          const p = compilePattern(lit, true, "sensitive");
          if (/[\uD800-\uDFFF]/.test(lit)) return; // lone surrogates never occur in decoded text
          expect(p.engine).toBe("bounded");
          const expected = jsMatches(new RegExp(p.source, p.flags), text);
          expect(matches(lineMatcher(p), text)).toEqual(expected);
          expect(matches(linearOf(toRe2Source(p.source, false)!, false), text)).toEqual(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("re2js reads a match's start in context (\\b, ^) like V8 with lastIndex", () => {
    const m = linearOf(toRe2Source("\\bfoo|^bar", false)!, false);
    m.reset("afoo foo bar");
    expect(m.find(1)).toBe(true);
    expect([m.start, m.end]).toEqual([5, 8]);
    expect(m.find(8)).toBe(false);
    expect(compileLinear("\\x{41}", true).test("a")).toBe(true);
  });
});

describe("counting a plain literal on the raw bytes", () => {
  it("property: the count equals V8's over the decoded text, from any offset, either case mode", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("e", "E", "x", "ab", "aBa", "a.b", "é", "ee", "KS"),
        fc.array(
          fc.constantFrom("e", "E", "a", "b", "B", ".", "é", "x", "X", "k", "K", "\u212A", "ee"),
          {
            maxLength: 80,
          },
        ),
        fc.nat(7),
        fc.constantFrom("smart", "sensitive", "insensitive") as fc.Arbitrary<
          "smart" | "sensitive" | "insensitive"
        >,
        (literal, pieces, pad, mode) => {
          const p = compilePattern(literal, true, mode);
          const count = literalCounter(p);
          const text = pieces.join("");
          const expected = jsMatches(new RegExp(p.source, p.flags), text).length;
          if (count === undefined) {
            // Only a case-insensitive literal that is not ASCII-only (k, s fold beyond ASCII).
            expect(p.caseSensitive || /[^\x00-\x7f]|[ks]/i.test(literal)).toBe(true);
            return;
          }
          // At an odd offset inside a larger buffer, as a chunk's region is.
          const bytes = Buffer.concat([Buffer.alloc(pad, 0x2e), Buffer.from(text)]);
          expect(count(bytes, pad, bytes.length), `${literal} /${mode} in ${text}`).toBe(expected);
        },
      ),
      { numRuns: 2000 },
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
          for (const [i, n] of jsMatches(re, text))
            expect(text.slice(i, i + n)).toContain(p.literal);
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

  it("a compiled pattern's weight is its steps per character on its engine", () => {
    expect(compilePattern("error", false, "smart").weight).toBeLessThanOrEqual(10);
    expect(compilePattern("(a|aa){0,500}z", false, "smart")).toMatchObject({
      engine: "linear",
      weight: weightOf("(a|aa){0,500}z"),
    });
    expect(compilePattern("(?=a)(a+)+$", false, "smart").weight).toBe(Number.POSITIVE_INFINITY);
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
