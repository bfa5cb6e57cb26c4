/**
 * The JSONPath Compliance Test Suite (RFC 9535), as vendored in the pinned `jsonpath-rfc9535` dev
 * dependency: every valid selector must give the expected nodes (values and paths, in order), every
 * invalid one must be refused with QUERY_SYNTAX_ERROR. A case the streaming engine declines with
 * UNSUPPORTED_QUERY_FEATURE is not a wrong answer, but each must be listed below.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { PagewiseError } from "../core/index.js";
import { compileQuery } from "./query.js";
import { runAll } from "./test-support/helpers.js";

interface CtsCase {
  name: string;
  selector: string;
  document?: unknown;
  result?: unknown[];
  result_paths?: string[];
  results?: unknown[][];
  results_paths?: string[][];
  invalid_selector?: boolean;
}

const require = createRequire(import.meta.url);
const CTS_FILE = path.join(
  path.dirname(require.resolve("jsonpath-rfc9535/package.json")),
  "src/__tests__/jsonpath-compliance-test-suite/cts.json",
);
const CASES: CtsCase[] = JSON.parse(readFileSync(CTS_FILE, "utf8")).tests;

/** Cases declined with UNSUPPORTED_QUERY_FEATURE (none today; any addition must be justified). */
const DECLINED: string[] = [];

/** A normalized path (`$['a'][0]`) as an RFC 6901 pointer (`/a/0`). */
function normalizedPathToPointer(p: string): string {
  let out = "";
  const re = /\[(?:'((?:[^'\\]|\\.)*)'|(\d+))\]/gy;
  re.lastIndex = 1;
  for (let m = re.exec(p); m; m = re.exec(p)) {
    // Normalized-path escapes are JSON's, plus \' for the quote; a raw " must be escaped for JSON.
    const token = m[2] ?? JSON.parse(`"${m[1].replace(/\\'/g, "'").replace(/"/g, '\\"')}"`);
    out += `/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`;
  }
  if (re.lastIndex !== 0 && re.lastIndex !== p.length) throw new Error(`bad path ${p}`);
  return out;
}

async function answer(c: CtsCase): Promise<{ values: unknown[]; pointers: string[] } | string> {
  try {
    const found = await runAll(JSON.stringify(c.document), c.selector);
    return { values: found.map((f) => JSON.parse(f.text)), pointers: found.map((f) => f.pointer) };
  } catch (e) {
    if (e instanceof PagewiseError) return e.code;
    throw e;
  }
}

describe("JSONPath Compliance Test Suite", () => {
  test("the suite is the expected one", () => {
    expect(CASES.length).toBe(687);
  });

  test("invalid selectors are refused with QUERY_SYNTAX_ERROR", () => {
    const wrong: string[] = [];
    for (const c of CASES.filter((x) => x.invalid_selector)) {
      try {
        compileQuery("jsonpath", c.selector);
        wrong.push(`${c.name}: ${c.selector} was accepted`);
      } catch (e) {
        if (!(e instanceof PagewiseError) || e.code !== "QUERY_SYNTAX_ERROR")
          wrong.push(`${c.name}: ${c.selector} gave ${String(e)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("valid selectors give the expected nodes, values and paths, in order", async () => {
    const wrong: string[] = [];
    const declined: string[] = [];
    for (const c of CASES.filter((x) => !x.invalid_selector)) {
      const got = await answer(c);
      if (got === "UNSUPPORTED_QUERY_FEATURE") {
        declined.push(c.name);
        continue;
      }
      if (typeof got === "string") {
        wrong.push(`${c.name}: ${c.selector} gave ${got}`);
        continue;
      }
      const expected = c.results ?? [c.result ?? []];
      const expectedPaths = c.results_paths ?? [c.result_paths ?? []];
      const k = expected.findIndex((r) => JSON.stringify(r) === JSON.stringify(got.values));
      if (k < 0) {
        wrong.push(`${c.name}: ${c.selector} gave ${JSON.stringify(got.values)}`);
        continue;
      }
      const pointers = expectedPaths[k].map(normalizedPathToPointer);
      if (JSON.stringify(pointers) !== JSON.stringify(got.pointers))
        wrong.push(`${c.name}: ${c.selector} at ${JSON.stringify(got.pointers)}`);
    }
    expect(wrong).toEqual([]);
    expect(declined).toEqual(DECLINED);
  });

  test("normalized paths convert to pointers", () => {
    expect(normalizedPathToPointer("$")).toBe("");
    expect(normalizedPathToPointer("$['a'][0]['b/~c']")).toBe("/a/0/b~1~0c");
    expect(normalizedPathToPointer("$['\\'']")).toBe("/'");
  });
});
