import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { PagewiseError } from "../core/index.js";
import { compileIRegexp } from "./iregexp.js";
import { DEFAULT_JSON_LIMITS } from "./limits.js";

const full = (p: string) => compileIRegexp(p, true, DEFAULT_JSON_LIMITS);
const search = (p: string) => compileIRegexp(p, false, DEFAULT_JSON_LIMITS);

/** RFC 9485 section 5.3: the ECMAScript form of an I-Regexp (dot excludes LF and CR). */
function jsRegExp(p: string, whole: boolean): RegExp {
  let out = "";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      out += c + p[++i];
      continue;
    }
    if (c === "[") inClass = true;
    if (c === "]") inClass = false;
    out += c === "." && !inClass ? "[^\\n\\r]" : c;
  }
  return new RegExp(whole ? `^(?:${out})$` : out, "u");
}

const PATTERNS = [
  "a*b",
  "(ab|a)*",
  "[a-c]+",
  "[^a]?b{1,3}",
  "a.c",
  "(a|b){2}c?",
  "\\.[ab]",
  "\\p{L}+",
  "\\P{Lu}*",
  "[\\p{Nd}x-z]",
  "a{0,}",
  "(a*)*b",
  "",
  "^ab",
  "b$",
  "^(a|b)*$",
  "a|^b",
  "(^a|b)c",
  "a$|b",
  "[$^a]",
  "[^^]",
];

describe("I-Regexp", () => {
  test("agrees with the RFC's ECMAScript mapping on safe patterns", () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), fc.stringMatching(/^[abcxA1.\n]{0,8}$/), (p, s) => {
        expect(full(p)!.test(s)).toBe(jsRegExp(p, true).test(s));
        expect(search(p)!.test(s)).toBe(jsRegExp(p, false).test(s));
      }),
      { numRuns: 2000 },
    );
  });

  test("dot matches anything but LF and CR, including astral characters", () => {
    expect(full("a.b")!.test("a😀b")).toBe(true);
    expect(full("a.b")!.test("a\nb")).toBe(false);
    expect(full("a.b")!.test("a\rb")).toBe(false);
  });

  test("^ and $ outside a class anchor at the start and end of the string", () => {
    const caret = full("^ab.*")!;
    expect(["abc", "axc", "ab", "xab"].filter((s) => caret.test(s))).toEqual(["abc", "ab"]);
    const dollar = full(".*bc$")!;
    expect(["abc", "axc", "ab", "abcx"].filter((s) => dollar.test(s))).toEqual(["abc"]);
    expect(search("^ab")!.test("xab")).toBe(false);
    expect(search("^ab")!.test("abx")).toBe(true);
    expect(search("b$")!.test("ab")).toBe(true);
    expect(search("b$")!.test("ba")).toBe(false);
    expect(search("a^b")!.test("a^b")).toBe(false);
    expect(full("^")!.test("")).toBe(true);
    expect(full("[$^]+")!.test("$^")).toBe(true); // inside a class they are characters
    expect(full("[^^]")!.test("^")).toBe(false);
    expect(full("\\^")!.test("^")).toBe(true);
  });

  test("catastrophic patterns cost at most (input + 1) × states steps", () => {
    const input = `${"a".repeat(5000)}!`;
    for (const [p, whole] of [
      ["(a|a)*b", true],
      ["(a+)+", true],
      ["(a*)*b", false],
      ["(.*a){20}", true],
      ["(a|aa)+$", false],
    ] as const) {
      const re = compileIRegexp(p, whole, DEFAULT_JSON_LIMITS)!;
      expect(re.test(input)).toBe(false);
      expect(re.steps).toBeGreaterThan(0);
      expect(re.steps).toBeLessThanOrEqual((input.length + 1) * re.states);
    }
  });

  test("nesting of groups is bounded by max_regex_nesting, never by the stack", () => {
    const nested = (n: number) => `${"(".repeat(n)}a${")".repeat(n)}`;
    expect(full(nested(64))!.test("a")).toBe(true);
    for (const n of [65, 100_000]) {
      let err: unknown;
      try {
        full(nested(n));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(PagewiseError);
      expect(err).toMatchObject({
        code: "RESOURCE_LIMIT_EXCEEDED",
        details: { limit: { name: "max_regex_nesting", limit: 64, value: 65 } },
      });
    }
    // Many groups side by side are not nested.
    expect(full("(a)".repeat(1000))).not.toBeNull();
  });

  test.each([
    "(",
    "a**",
    "a{2,1}",
    "[",
    "[]",
    "\\d",
    "\\w",
    "(?:a)",
    "a*?",
    "\\p{Xx}",
    "[b-a]",
    "a{,2}",
    "^*",
    "a$+",
    "$*",
  ])("%j is not an I-Regexp", (p) => {
    expect(full(p)).toBeNull();
  });
});

describe("I-Regexp work bound", () => {
  test("refuses a test whose states times length exceed max_regex_steps, before running it", () => {
    const limits = { ...DEFAULT_JSON_LIMITS, maxRegexSteps: 100_000 };
    const re = compileIRegexp("a{0,400}b", false, limits)!;
    expect(re.states).toBeGreaterThan(400);
    // Within the bound: run, and counted.
    expect(re.test("a".repeat(100))).toBe(false);
    expect(re.steps).toBeGreaterThan(0);
    // Run, this test would take over a million steps.
    const long = "a".repeat(2000);
    let thrown: unknown;
    try {
      re.test(long);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PagewiseError);
    expect((thrown as PagewiseError).code).toBe("RESOURCE_LIMIT_EXCEEDED");
    expect((thrown as PagewiseError).details.limit).toMatchObject({
      name: "max_regex_steps",
      limit: 100_000,
    });
    // Refused before it ran: no step of it was taken (the count is still the last test's).
    expect(re.steps).toBeLessThan(100_000);
  });
});
