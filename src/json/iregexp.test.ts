import fc from "fast-check";
import { describe, expect, test } from "vitest";
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
    expect(full("^a$")!.test("^a$")).toBe(true); // ^ and $ are ordinary characters
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
  ])("%j is not an I-Regexp", (p) => {
    expect(full(p)).toBeNull();
  });
});
