import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { PagewiseError } from "../core/index.js";
import { compileQuery } from "./query.js";
import { matches, runAll } from "./test-support/helpers.js";

/** The values (compact source text) a query selects. */
async function values(doc: unknown, query: string): Promise<string[]> {
  return (await runAll(JSON.stringify(doc, null, 2), query)).map((m) => m.text);
}

async function pointers(doc: unknown, query: string): Promise<string[]> {
  return (await runAll(JSON.stringify(doc), query)).map((m) => m.pointer);
}

function j(...vs: unknown[]): string[] {
  return vs.map((v) => JSON.stringify(v));
}

describe("RFC 9535 section 2 examples", () => {
  test("root identifier (2.2.3)", async () => {
    expect(await values({ k: "v" }, "$")).toEqual(j({ k: "v" }));
  });

  test("name selector (table 5)", async () => {
    const doc = { o: { "j j": { "k.k": 3 } }, "'": { "@": 2 } };
    expect(await values(doc, "$.o['j j']")).toEqual(j({ "k.k": 3 }));
    expect(await values(doc, "$.o['j j']['k.k']")).toEqual(j(3));
    expect(await values(doc, '$.o["j j"]["k.k"]')).toEqual(j(3));
    expect(await values(doc, `$["'"]["@"]`)).toEqual(j(2));
    expect(await pointers(doc, "$.o['j j']['k.k']")).toEqual(["/o/j j/k.k"]);
  });

  test("wildcard selector (table 6)", async () => {
    const doc = { o: { j: 1, k: 2 }, a: [5, 3] };
    expect(await values(doc, "$[*]")).toEqual(j({ j: 1, k: 2 }, [5, 3]));
    expect(await values(doc, "$.o[*]")).toEqual(j(1, 2));
    expect(await values(doc, "$.o[*, *]")).toEqual(j(1, 2, 1, 2));
    expect(await values(doc, "$.a[*]")).toEqual(j(5, 3));
  });

  test("index selector (table 7)", async () => {
    expect(await values(["a", "b"], "$[1]")).toEqual(j("b"));
    expect(await values(["a", "b"], "$[-2]")).toEqual(j("a"));
    expect(await values(["a", "b"], "$[2]")).toEqual([]);
    expect(await values(["a", "b"], "$[-3]")).toEqual([]);
  });

  test("array slice selector (table 8)", async () => {
    const doc = ["a", "b", "c", "d", "e", "f", "g"];
    expect(await values(doc, "$[1:3]")).toEqual(j("b", "c"));
    expect(await values(doc, "$[5:]")).toEqual(j("f", "g"));
    expect(await values(doc, "$[1:5:2]")).toEqual(j("b", "d"));
    expect(await values(doc, "$[5:1:-2]")).toEqual(j("f", "d"));
    expect(await values(doc, "$[::-1]")).toEqual(j("g", "f", "e", "d", "c", "b", "a"));
    expect(await values(doc, "$[-3:]")).toEqual(j("e", "f", "g"));
    expect(await values(doc, "$[:-5]")).toEqual(j("a", "b"));
    expect(await values(doc, "$[-4:-2]")).toEqual(j("d", "e"));
    expect(await values(doc, "$[::0]")).toEqual([]);
    expect(await values(doc, "$[10:0:-3]")).toEqual(j("g", "d", "a").slice(0, 2));
  });

  const filterDoc = {
    a: [3, 5, 1, 2, 4, 6, { b: "j" }, { b: "k" }, { b: {} }, { b: "kilo" }],
    o: { p: 1, q: 2, r: 3, s: 5, t: { u: 6 } },
    e: "f",
  };

  test("filter selector (table 12)", async () => {
    expect(await pointers(filterDoc, "$.a[?@.b == 'kilo']")).toEqual(["/a/9"]);
    expect(await pointers(filterDoc, "$.a[?(@.b == 'kilo')]")).toEqual(["/a/9"]);
    expect(await values(filterDoc, "$.a[?@>3.5]")).toEqual(j(5, 4, 6));
    expect(await values(filterDoc, "$.a[?@.b]")).toEqual(
      j({ b: "j" }, { b: "k" }, { b: {} }, { b: "kilo" }),
    );
    expect(await pointers(filterDoc, "$[?@.*]")).toEqual(["/a", "/o"]);
    expect(await pointers(filterDoc, "$[?@[?@.b]]")).toEqual(["/a"]);
    expect(await values(filterDoc, "$.o[?@<3, ?@<3]")).toEqual(j(1, 2, 1, 2));
    expect(await values(filterDoc, '$.a[?@<2 || @.b == "k"]')).toEqual(j(1, { b: "k" }));
    expect(await values(filterDoc, '$.a[?match(@.b, "[jk]")]')).toEqual(j({ b: "j" }, { b: "k" }));
    expect(await values(filterDoc, '$.a[?search(@.b, "[jk]")]')).toEqual(
      j({ b: "j" }, { b: "k" }, { b: "kilo" }),
    );
    expect(await values(filterDoc, "$.o[?@>1 && @<4]")).toEqual(j(2, 3));
    expect(await values(filterDoc, "$.o[?@.u || @.x]")).toEqual(j({ u: 6 }));
    expect(await values(filterDoc, "$.a[?@.b == $.x]")).toEqual(j(3, 5, 1, 2, 4, 6));
    expect((await values(filterDoc, "$.a[?@ == @]")).length).toBe(10);
  });

  test("comparisons (2.3.5.3)", async () => {
    const doc = { obj: { x: "y" }, arr: [2, 3] };
    const table: [string, boolean][] = [
      ["$.absent1 == $.absent2", true],
      ["$.absent1 <= $.absent2", true],
      ["$.absent == 'g'", false],
      ["$.absent1 != $.absent2", false],
      ["$.absent != 'g'", true],
      ["1 <= 2", true],
      ["1 > 2", false],
      ["13 == '13'", false],
      ["'a' <= 'b'", true],
      ["'a' > 'b'", false],
      ["$.obj == $.arr", false],
      ["$.obj != $.arr", true],
      ["$.obj == $.obj", true],
      ["$.obj != $.obj", false],
      ["$.arr == $.arr", true],
      ["$.arr != $.arr", false],
      ["$.obj == 17", false],
      ["$.obj != 17", true],
      ["$.obj <= $.arr", false],
      ["$.obj < $.arr", false],
      ["$.obj <= $.obj", true],
      ["$.arr <= $.arr", true],
      ["1 <= $.arr", false],
      ["1 >= $.arr", false],
      ["1 > $.arr", false],
      ["1 < $.arr", false],
      ["true <= true", true],
      ["true > true", false],
    ];
    for (const [expr, result] of table) {
      expect([expr, (await values(doc, `$.arr[?${expr}]`)).length]).toEqual([expr, result ? 2 : 0]);
    }
  });

  test("descendant segment (table 16)", async () => {
    const doc = { o: { j: 1, k: 2 }, a: [5, 3, [{ j: 4 }, { k: 6 }]] };
    expect(await pointers(doc, "$..j")).toEqual(["/o/j", "/a/2/0/j"]);
    expect(await values(doc, "$..[0]")).toEqual(j(5, { j: 4 }));
    const all = j(
      { j: 1, k: 2 },
      [5, 3, [{ j: 4 }, { k: 6 }]],
      1,
      2,
      5,
      3,
      [{ j: 4 }, { k: 6 }],
      { j: 4 },
      { k: 6 },
      4,
      6,
    );
    expect(await values(doc, "$..[*]")).toEqual(all);
    expect(await values(doc, "$..*")).toEqual(all);
    expect(await values(doc, "$..o")).toEqual(j({ j: 1, k: 2 }));
    expect(await values(doc, "$.o..[*, *]")).toEqual(j(1, 2, 1, 2));
    expect(await values(doc, "$.a..[0, 1]")).toEqual(j(5, 3, { j: 4 }, { k: 6 }));
  });

  test("null semantics (table 17)", async () => {
    const doc = { a: null, b: [null], c: [{}], null: 1 };
    expect(await values(doc, "$.a")).toEqual(j(null));
    expect(await values(doc, "$.a[0]")).toEqual([]);
    expect(await values(doc, "$.a.d")).toEqual([]);
    expect(await values(doc, "$.b[0]")).toEqual(j(null));
    expect(await values(doc, "$.b[*]")).toEqual(j(null));
    expect(await values(doc, "$.b[?@]")).toEqual(j(null));
    expect(await values(doc, "$.b[?@==null]")).toEqual(j(null));
    expect(await values(doc, "$.c[?@.d==null]")).toEqual([]);
    expect(await values(doc, "$.null")).toEqual(j(1));
  });

  test("functions", async () => {
    const doc = [
      { s: "abc", t: ["x"], tz: "Europe/Paris" },
      { s: "é😀", t: [], tz: "Asia/Tokyo" },
      { s: 1 },
    ];
    expect(await pointers(doc, "$[?length(@.s) == 3]")).toEqual(["/0"]);
    expect(await pointers(doc, "$[?length(@.s) == 2]")).toEqual(["/1"]);
    expect(await pointers(doc, "$[?count(@.t[*]) == 1]")).toEqual(["/0"]);
    expect(await pointers(doc, "$[?count(@.*) == 3]")).toEqual(["/0", "/1"]);
    expect(await pointers(doc, "$[?match(@.tz, 'Europe/.*')]")).toEqual(["/0"]);
    expect(await pointers(doc, "$[?search(@.tz, 'o')]")).toEqual(["/0", "/1"]);
    expect(await pointers(doc, "$[?match(@.tz, 'Europe')]")).toEqual([]);
    expect(await pointers(doc, "$[?value(@..x) == 'x']")).toEqual([]);
    expect(await pointers(doc, "$[?value(@.t[0]) == 'x']")).toEqual(["/0"]);
    expect(await pointers(doc, "$[?match(@.s, @.s)]")).toEqual(["/0", "/1"]);
    expect(await pointers(doc, "$[?match(@.tz, '[')]")).toEqual([]); // not an I-Regexp: false
  });
});

describe("well-typedness and syntax errors", () => {
  const valid = [
    "$[?length(@) < 3]",
    "$[?count(@.*) == 1]",
    "$[?match(@.timezone, 'Europe/.*')]",
    '$[?value(@..color) == "red"]',
    "$.a[?@.b == 'x' ]",
    "$ .a",
    "$['a' , 'b']",
    "$[?!@.a]",
    "$[?!(@.a == 1)]",
    "$[?@.a == -0]",
    "$[?@.a == 1.5e3]",
    "$.é",
    "$[?(@.a)]",
    "$[? @.a]",
    "$..['a']",
    "$[1:2:3]",
    "$[ : ]",
    // A value-returning function as another function's argument (RFC 9535 section 2.4.3).
    "$[?length(value(@.a))>0]",
    "$.values[?length(@.a)==length(value($..c))]",
    "$.values[?match(@.a, value($..['regex']))]",
    "$.values[?search(@, value($..['regex']))]",
    "$[?length(value(@.a)) == 2 && count(@.*) == 1]",
    "$[?match(@.a, 'x') || length(value(@.b)) > 0]",
    "$[?length(length(@.a)) == 1]",
  ];
  test.each(valid)("accepts %s", (q) => {
    expect(() => compileQuery("jsonpath", q)).not.toThrow();
  });

  const invalid = [
    "$[?length(@.*) < 3]",
    "$[?count(1) == 1]",
    "$[?count(foo(@.*)) == 1]",
    "$[?match(@.timezone, 'Europe/.*') == true]",
    "$[?value(@..color)]",
    "$[?bar(@.a)]",
    "$[?length(@)]",
    "$[?@.* == 1]",
    "$[?1]",
    "$[?true]",
    "$.",
    "$..",
    "$[",
    "$['a'",
    "$[01]",
    "$[-0]",
    "$[1 2]",
    "$ ",
    " $",
    "$.a b",
    "$[?@.a=1]",
    "$[?@.a==]",
    "$[9007199254740992]",
    '$["\\u00"]',
    "$[?(@.a]",
    "@.a",
    "$.1",
    "$[?!@.a == 1]",
    "$['\\a']",
    '$["\\\'"]',
    "$['\u0001']",
    "$..['a']['b'",
    "$[?@.a == 01]",
    "$[?@.a == 1.]",
    "$[?@ == True]",
    "$a",
    "$[?length(value(@.a))]",
    "$[?count(value(@.a)) > 0]",
    "$[?length(count(@.a) == 1) > 0]",
    "$[?match(@.a, count(@.b) > 0)]",
    "$[?match(@.a, 'x') == length(value(@.b))]",
  ];
  test.each(invalid)("rejects %s", (q) => {
    let error: unknown;
    try {
      compileQuery("jsonpath", q);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PagewiseError);
    expect((error as PagewiseError).code).toBe("QUERY_SYNTAX_ERROR");
    expect((error as PagewiseError).details.location).toMatchObject({
      position: expect.any(Number),
    });
  });

  test("locations point into the query", () => {
    try {
      compileQuery("jsonpath", "$.a[?@.b ==]");
    } catch (e) {
      expect((e as PagewiseError).details.location).toEqual({ position: 11, column: 12 });
    }
  });
});

describe("JSONL and JSON-seq as one array of records", () => {
  const jsonl = '{"id":1,"tags":["a"]}\n{"id":2,"tags":[]}\r\n{"id":3,"tags":["b","c"]}\n';
  test("records are /0, /1, …", async () => {
    expect(await matches(jsonl, "$[*].id", { format: "jsonl" })).toEqual([
      "/0/id=1",
      "/1/id=2",
      "/2/id=3",
    ]);
    expect(await matches(jsonl, "$[-1].tags[0]", { format: "jsonl" })).toEqual(['/2/tags/0="b"']);
    expect(await matches(jsonl, "$[?count(@.tags[*]) > 0].id", { format: "jsonl" })).toEqual([
      "/0/id=1",
      "/2/id=3",
    ]);
    expect(await matches(jsonl, "/1/id", { format: "jsonl", language: "pointer" })).toEqual([
      "/1/id=2",
    ]);
    const seq = '\u001e{"id":1}\n\u001e[2]\n\u001e"three"\n';
    expect(await matches(seq, "$[*]", { format: "json-seq" })).toEqual([
      '/0={"id":1}',
      "/1=[2]",
      '/2="three"',
    ]);
  });

  test("the whole file cannot be selected", async () => {
    await expect(matches(jsonl, "$", { format: "jsonl" })).rejects.toMatchObject({
      code: "UNSUPPORTED_QUERY_FEATURE",
    });
    await expect(
      matches(jsonl, "", { format: "jsonl", language: "pointer" }),
    ).rejects.toMatchObject({
      code: "UNSUPPORTED_QUERY_FEATURE",
    });
  });
});

describe("ordering that needs buffering", () => {
  test("unions out of document order come back in selector order", async () => {
    expect(await values({ a: 1, b: 2 }, "$['b','a']")).toEqual(j(2, 1));
    expect(await values([0, 1, 2, 3], "$[3,0,-1,1:3]")).toEqual(j(3, 0, 3, 1, 2));
  });

  test("descendants are grouped by parent, parents before children", async () => {
    expect(await pointers({ x: { a: 1 }, a: 2 }, "$..a")).toEqual(["/a", "/x/a"]);
    expect(await pointers({ a: { x: { a: { b: 1 } }, b: 2 } }, "$..a.b")).toEqual([
      "/a/b",
      "/a/x/a/b",
    ]);
  });

  test("a buffer larger than max_buffered_matches is refused, not reordered", async () => {
    const doc = { items: Array.from({ length: 50 }, (_, i) => ({ name: i })), name: "last" };
    await expect(
      runAll(JSON.stringify(doc), "$..*", { limits: { maxBufferedMatches: 10 } }),
    ).rejects.toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_buffered_matches", limit: 10 } },
    });
    expect(
      (await runAll(JSON.stringify(doc), "$.items[*].name", { limits: { maxBufferedMatches: 2 } }))
        .length,
    ).toBe(50);
  });
});

describe("descendant names on large objects", () => {
  test("a member an ancestor may still have is looked up ahead instead of buffering everything", async () => {
    const items = Array.from({ length: 30000 }, (_, i) => ({ id: i, name: `n${i}` }));
    const text = JSON.stringify({ items, meta: { name: "meta" }, name: "root" });
    const limits = { maxBufferedMatches: 1000 };
    const found = await runAll(text, "$..name", { limits });
    expect(found.length).toBe(30002);
    expect(found.slice(0, 3).map((f) => f.pointer)).toEqual([
      "/name",
      "/items/0/name",
      "/items/1/name",
    ]);
    expect(found[30001].pointer).toBe("/meta/name");
    // Pages resume where they ended (the root's "name" is remembered as already found).
    const mid = found[20000].resume;
    expect(mid.skip).toBe(0);
    expect(mid.offset).toBeGreaterThan(text.length / 2);
    const rest = await runAll(text, "$..name", { resume: mid, limits });
    expect(rest.map((f) => f.pointer)).toEqual(found.slice(20001).map((f) => f.pointer));
  });
});

describe("hostile queries", () => {
  test("catastrophic regular expressions give the right answers (their cost: iregexp.test.ts)", async () => {
    const doc = JSON.stringify([`${"a".repeat(5000)}!`, "aaa"]);
    expect(await pointers(JSON.parse(doc), "$[?match(@, '(a|a)*b')]")).toEqual([]);
    expect(await pointers(JSON.parse(doc), "$[?match(@, '(a+)+')]")).toEqual(["/1"]);
    expect(await pointers(JSON.parse(doc), "$[?search(@, '(a*)*b')]")).toEqual([]);
    expect(await pointers(JSON.parse(doc), "$[?match(@, '(.*a){20}')]")).toEqual(["/1"].slice(1));
  });

  test("queries over 1000 nested levels run without deep recursion", async () => {
    const deep = `${"[".repeat(1000)}${"]".repeat(1000)}`;
    const all = await runAll(deep, "$..*");
    expect(all.length).toBe(999);
    expect(all[998].pointer).toBe("/0".repeat(999));
    const objects = `${'{"a":'.repeat(1000)}1${"}".repeat(1000)}`;
    expect((await runAll(objects, "$..a")).length).toBe(1000);
    expect((await runAll(objects, "$..[?@.a == 1]")).map((m) => m.pointer)).toEqual([
      "/a".repeat(999),
    ]);
    await expect(runAll(`[${deep}]`, "$[0]")).rejects.toMatchObject({
      details: { limit: { name: "max_depth" } },
    });
  });

  test("deeply nested filters, parentheses and calls are bounded by max_query_nesting", async () => {
    const hostile = [
      `$${"[?@".repeat(1000)}${"]".repeat(1000)}`,
      `$[?${"(".repeat(100_000)}@.a${")".repeat(100_000)}]`,
      `$[?${"!(".repeat(10_000)}@.a${")".repeat(10_000)}]`,
      `$[?${"length(value(".repeat(10_000)}@${"))".repeat(10_000)} > 0]`,
      `$[?${"count(@[?".repeat(10_000)}@${"])".repeat(10_000)} > 0]`,
      `$[?${"(".repeat(100_000)}`, // unterminated: the limit is met before the end
    ];
    for (const q of hostile) {
      let error: unknown;
      try {
        compileQuery("jsonpath", q);
      } catch (e) {
        error = e;
      }
      expect(error, q.slice(0, 30)).toBeInstanceOf(PagewiseError);
      expect(error).toMatchObject({
        code: "RESOURCE_LIMIT_EXCEEDED",
        details: { limit: { name: "max_query_nesting", limit: 64, value: 65 } },
      });
    }
    // At the limit the query compiles and runs.
    const nested = `$${"[?@".repeat(64)}${"]".repeat(64)}`;
    const doc = JSON.stringify({ a: { b: { c: 1 } } });
    expect(await runAll(doc, nested)).toEqual([]);
    expect((await runAll(doc, "$[?@[?@[?@ == 1]]]")).map((m) => m.pointer)).toEqual(["/a"]);
    await expect(
      runAll(doc, "$[?@[?@.c]]", { limits: { maxQueryNesting: 1 } }),
    ).rejects.toMatchObject({ details: { limit: { name: "max_query_nesting", limit: 1 } } });
  });

  test("random query text is compiled or refused with a query error, and never fails otherwise", async () => {
    const tokens = [
      "$",
      "@",
      ".",
      "..",
      "[",
      "]",
      "?",
      "(",
      ")",
      "!",
      "==",
      "<",
      ">=",
      "&&",
      "||",
      ",",
      ":",
      "*",
      "'a'",
      '"b"',
      "-1",
      "0",
      "2",
      "1.5e1",
      "a",
      "b",
      "true",
      "null",
      " ",
      "length(",
      "count(",
      "match(",
      "search(",
      "value(",
      "'^a.*$'",
      "'(a|b'",
    ];
    const doc = JSON.stringify({ a: [1, "ab", { a: "a", b: null }], b: { a: "^a" }, c: [[2]] });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...tokens), { maxLength: 14 }).map((t) => `$${t.join("")}`),
        async (q) => {
          let compiled: ReturnType<typeof compileQuery>;
          try {
            compiled = compileQuery("jsonpath", q);
          } catch (e) {
            expect(e).toBeInstanceOf(PagewiseError);
            expect(["QUERY_SYNTAX_ERROR", "RESOURCE_LIMIT_EXCEEDED"]).toContain(
              (e as PagewiseError).code,
            );
            return;
          }
          try {
            await runAll(doc, compiled);
          } catch (e) {
            expect(e).toBeInstanceOf(PagewiseError);
            expect((e as PagewiseError).code).not.toBe("INTERNAL_ERROR");
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("filters over values nested deeper than the stack allows recursion still answer", async () => {
    const depth = 20_000;
    const deep = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const limits = { maxDepth: 100_000, maxFilterValueBytes: 1 << 24 };
    const run = async (doc: string, q: string) =>
      (await runAll(doc, q, { limits })).map((m) => m.pointer);
    expect(await run(`[${deep}]`, "$[?count(@..*) > 0]")).toEqual(["/0"]);
    expect(await run(`[${deep}]`, "$[?count(@..a) == 20000]")).toEqual(["/0"]);
    expect(await run(`[[${deep},${deep}]]`, "$[?@[0] == @[1]]")).toEqual(["/0"]);
    expect(await run(`[${deep},${deep}]`, "$[?@ == $[0]]")).toEqual(["/0", "/1"]);
    expect(await run(`[${deep},${deep.replace("1}", "2}")}]`, "$[?@ == $[0]]")).toEqual(["/0"]);
  });

  test("a value-returning function as an argument is evaluated (RFC 9535 section 2.4.3)", async () => {
    expect(
      await pointers([{ a: "ab" }, { c: "d" }, { a: null }], "$[?length(value(@.a))>0]"),
    ).toEqual(["/0"]);
    const doc = { regex: "b.?b", values: ["abc", "bcd", "bab", "bba", "bbab", "b", true, [], {}] };
    expect(await pointers(doc, "$.values[?search(@, value($..['regex']))]")).toEqual([
      "/values/2",
      "/values/3",
      "/values/4",
    ]);
    expect(await pointers(doc, "$.values[?match(@, value($.regex))]")).toEqual(["/values/2"]);
    expect(await pointers(["ab", "abc"], "$[?length(value(@)) == 3]")).toEqual(["/1"]);
  });

  test("oversized patterns and inputs are RESOURCE_LIMIT_EXCEEDED", async () => {
    expect(() => compileQuery("jsonpath", "$[?match(@, '(a{1000}){1000}')]")).toThrow(
      /max_regex_states/,
    );
    const long = JSON.stringify(["x".repeat(2000)]);
    await expect(
      runAll(long, "$[?match(@, 'x*')]", { limits: { maxRegexInputChars: 1000 } }),
    ).rejects.toMatchObject({
      details: { limit: { name: "max_regex_input_chars" } },
    });
  });

  test("a filter value larger than max_filter_value_bytes is refused", async () => {
    const doc = JSON.stringify([{ big: "y".repeat(5000), n: 1 }]);
    await expect(
      runAll(doc, "$[?@.big == 'x']", { limits: { maxFilterValueBytes: 1000 } }),
    ).rejects.toMatchObject({
      details: { limit: { name: "max_filter_value_bytes" } },
    });
    // Only what the filter reads is materialized: @.n is small.
    expect(
      (await runAll(doc, "$[?@.n == 1]", { limits: { maxFilterValueBytes: 1000 } })).length,
    ).toBe(1);
  });
});
