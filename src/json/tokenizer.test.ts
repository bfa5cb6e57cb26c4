import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { DEFAULT_JSON_LIMITS } from "./limits.js";
import { enc, runAll, tokenize } from "./test-support/helpers.js";
import { type JsonFormat, NULL_SINK, Tokenizer } from "./tokenizer.js";

/** Text and raw bytes: numbers are bytes, strings are UTF-8. */
function bytes(...parts: (string | number)[]): Uint8Array {
  const out: number[] = [];
  for (const p of parts) {
    if (typeof p === "number") out.push(p);
    else for (const b of enc.encode(p)) out.push(b);
  }
  return Uint8Array.from(out);
}

// Accepted (JSONTestSuite y_ cases, written inline).
const ACCEPT: string[] = [
  "[[]   ]",
  '[""]',
  "[]",
  '["a"]',
  "[false]",
  '[null, 1, "1", {}]',
  "[null]",
  "[1\n]",
  " [1]",
  "[1,null,null,null,2]",
  "[2] ",
  "[123e65]",
  "[0e+1]",
  "[0e1]",
  "[ 4]",
  "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]\n",
  "[20e1]",
  "[-0]",
  "[-123]",
  "[1E22]",
  "[1E-2]",
  "[1E+2]",
  "[123.456e78]",
  "[1e-2]",
  "[123.456789]",
  "[12345678901234567890123]",
  "[1.0E+400]",
  '{"asd":"sdf", "dfg":"fgh"}',
  "{}",
  '{"":0}',
  '{"foo\\u0000bar": 42}',
  '{ "min": -1.0e+28, "max": 1.0e+28 }',
  '{"x":[{"id": "xxx"}], "id": "xxx"}',
  '{"a":[]}',
  '{"title":"\\u041f\\u043e\\u043b\\u0442\\u043e\\u0440\\u0430" }',
  '{\n"a": "b"\n}',
  '["\\u0060\\u012a\\u12AB"]',
  '["\\uD801\\udc37"]',
  '["\\ud83d\\ude39\\ud83d\\udc8d"]',
  '["\\"\\\\\\/\\b\\f\\n\\r\\t"]',
  '["\\\\u0000"]',
  '["a/*b*/c/*d//e"]',
  '["\\uFFFF"]',
  '["\\uDBFF\\uDFFF"]',
  '["new\\u00A0line"]',
  '["π"]',
  '["𛿿"]',
  '" "',
  '["\u2028"]',
  '["\u2029"]',
  '["€𝄞"]',
  '["\\uDBFF\\uDFFE"]',
  "false",
  "42",
  "-0.1",
  "null",
  '"asd"',
  "true",
  '""',
  '["a"]\n',
  " [] ",
  "\t\r\n[1]\t\r\n",
];

// Rejected (JSONTestSuite n_ cases), with the expected code.
const REJECT: [string | Uint8Array, string][] = [
  ["[1 true]", "SYNTAX_ERROR"],
  ['["": 1]', "SYNTAX_ERROR"],
  ['[""],', "SYNTAX_ERROR"],
  ["[,1]", "SYNTAX_ERROR"],
  ["[1,,2]", "SYNTAX_ERROR"],
  ['["x",,]', "SYNTAX_ERROR"],
  ['["x"]]', "SYNTAX_ERROR"],
  ['["",]', "SYNTAX_ERROR"],
  ['["x"', "SYNTAX_ERROR"],
  ["[x", "SYNTAX_ERROR"],
  ["[3[4]]", "SYNTAX_ERROR"],
  ["[1:2]", "SYNTAX_ERROR"],
  ["[,]", "SYNTAX_ERROR"],
  ["[-]", "SYNTAX_ERROR"],
  ['[   , ""]', "SYNTAX_ERROR"],
  ["[1,]", "SYNTAX_ERROR"],
  ["[*]", "SYNTAX_ERROR"],
  ["[1,", "SYNTAX_ERROR"],
  ["[{}", "SYNTAX_ERROR"],
  ["[fals]", "SYNTAX_ERROR"],
  ["[nul]", "SYNTAX_ERROR"],
  ["[tru]", "SYNTAX_ERROR"],
  ["[True]", "SYNTAX_ERROR"],
  ["[++1234]", "SYNTAX_ERROR"],
  ["[+1]", "SYNTAX_ERROR"],
  ["[-01]", "SYNTAX_ERROR"],
  ["[-1.0.]", "SYNTAX_ERROR"],
  ["[-2.]", "SYNTAX_ERROR"],
  ["[-NaN]", "SYNTAX_ERROR"],
  ["[.-1]", "SYNTAX_ERROR"],
  ["[.2e-3]", "SYNTAX_ERROR"],
  ["[0.1.2]", "SYNTAX_ERROR"],
  ["[0.3e+]", "SYNTAX_ERROR"],
  ["[0.3e]", "SYNTAX_ERROR"],
  ["[0.e1]", "SYNTAX_ERROR"],
  ["[0E+]", "SYNTAX_ERROR"],
  ["[1.0e-]", "SYNTAX_ERROR"],
  ["[1 000.0]", "SYNTAX_ERROR"],
  ["[1eE2]", "SYNTAX_ERROR"],
  ["[2.e3]", "SYNTAX_ERROR"],
  ["[Inf]", "SYNTAX_ERROR"],
  ["[NaN]", "SYNTAX_ERROR"],
  ["[-Infinity]", "SYNTAX_ERROR"],
  ["[0x42]", "SYNTAX_ERROR"],
  ["[1+2]", "SYNTAX_ERROR"],
  ["[- 1]", "SYNTAX_ERROR"],
  ["[012]", "SYNTAX_ERROR"],
  ["[1.]", "SYNTAX_ERROR"],
  ["[1ea]", "SYNTAX_ERROR"],
  ["[０]", "SYNTAX_ERROR"],
  ['{"x", null}', "SYNTAX_ERROR"],
  ['{"x"::"b"}', "SYNTAX_ERROR"],
  ['{[: "x"}', "SYNTAX_ERROR"],
  ['{"a":"a" 123}', "SYNTAX_ERROR"],
  ["{key: 'value'}", "SYNTAX_ERROR"],
  ['{"a" b}', "SYNTAX_ERROR"],
  ['{:"b"}', "SYNTAX_ERROR"],
  ['{"a":', "SYNTAX_ERROR"],
  ["{1:1}", "SYNTAX_ERROR"],
  ["{null:null,null:null}", "SYNTAX_ERROR"],
  ['{"id":0,,,,,}', "SYNTAX_ERROR"],
  ["{'a':0}", "SYNTAX_ERROR"],
  ['{"id":0,}', "SYNTAX_ERROR"],
  ['{"a":"b",,"c":"d"}', "SYNTAX_ERROR"],
  ['{ "foo" : "bar", "a" }', "SYNTAX_ERROR"],
  ['{"a":"b"}#', "SYNTAX_ERROR"],
  ['{"a" : "b",}', "SYNTAX_ERROR"],
  ['{"a":"b"}}', "SYNTAX_ERROR"],
  ['{"a":1,"a":2}', "SYNTAX_ERROR"],
  ['{"a":1,"\\u0061":2}', "SYNTAX_ERROR"],
  ['{"a":"b"}/**/', "UNSUPPORTED_SYNTAX"],
  ['{"a":"b"}//', "UNSUPPORTED_SYNTAX"],
  ['{"a":/*comment*/"b"}', "UNSUPPORTED_SYNTAX"],
  ["[1, // one\n2]", "UNSUPPORTED_SYNTAX"],
  // Only `//` and `/*` begin a comment; any other '/' is a plain syntax error.
  ['{"value":/}', "SYNTAX_ERROR"],
  ['{"a":"b"}/', "SYNTAX_ERROR"],
  ['{"a":"b"}/x', "SYNTAX_ERROR"],
  ["[1/2]", "SYNTAX_ERROR"],
  ["[1,/]", "SYNTAX_ERROR"],
  ["{/}", "SYNTAX_ERROR"],
  ['{"a"/:1}', "SYNTAX_ERROR"],
  ['{"a":1/ }', "SYNTAX_ERROR"],
  ["/", "SYNTAX_ERROR"],
  ["[1]/*", "UNSUPPORTED_SYNTAX"],
  ["{/**/}", "UNSUPPORTED_SYNTAX"],
  ['["\\uD800\\"]', "SYNTAX_ERROR"],
  ['["\\uD800\\u"]', "SYNTAX_ERROR"],
  ['["\\uD800\\u1"]', "SYNTAX_ERROR"],
  ['["\\uD800\\u1x"]', "SYNTAX_ERROR"],
  ["[é]", "SYNTAX_ERROR"],
  ['["\\\\\\"]', "SYNTAX_ERROR"],
  ['["\\\t"]', "SYNTAX_ERROR"],
  ['["\\🌀"]', "SYNTAX_ERROR"],
  ['["\\"]', "SYNTAX_ERROR"],
  ['["\\u00A"]', "SYNTAX_ERROR"],
  ['["\\uD834\\uDd"]', "SYNTAX_ERROR"],
  ['["\\a"]', "SYNTAX_ERROR"],
  ['["\\uqqqq"]', "SYNTAX_ERROR"],
  ['["new\nline"]', "SYNTAX_ERROR"],
  ['["\t"]', "SYNTAX_ERROR"],
  ['"\\UA66D"', "SYNTAX_ERROR"],
  ['""x', "SYNTAX_ERROR"],
  ["[\u2060]", "SYNTAX_ERROR"],
  ['["\\uDFAA"]', "SYNTAX_ERROR"],
  ['["\\uD888\\u1234"]', "SYNTAX_ERROR"],
  ['["\\ud800"]', "SYNTAX_ERROR"],
  ['["\\ud800abc"]', "SYNTAX_ERROR"],
  ['["\\uDd1ea"]', "SYNTAX_ERROR"],
  ["<.>", "SYNTAX_ERROR"],
  ["[1]x", "SYNTAX_ERROR"],
  ["1]", "SYNTAX_ERROR"],
  ['{"x": true,', "SYNTAX_ERROR"],
  ["[][]", "SYNTAX_ERROR"],
  ["]", "SYNTAX_ERROR"],
  ['{"a": 1} 2', "SYNTAX_ERROR"],
  ["", "SYNTAX_ERROR"],
  [" ", "SYNTAX_ERROR"],
  ["[", "SYNTAX_ERROR"],
  ["{", "SYNTAX_ERROR"],
  ['["a"\f]', "SYNTAX_ERROR"],
  ["['single quote']", "SYNTAX_ERROR"],
  ["abc", "SYNTAX_ERROR"],
  ["[\u0000]", "SYNTAX_ERROR"],
  [bytes('["', 0xed, 0xa0, 0x80, '"]'), "SYNTAX_ERROR"], // an encoded surrogate
  [bytes('["', 0xc0, 0xaf, '"]'), "SYNTAX_ERROR"], // overlong 2 bytes
  [bytes('["', 0xe0, 0x80, 0xaf, '"]'), "SYNTAX_ERROR"], // overlong 3 bytes
  [bytes('["', 0xf0, 0x80, 0x80, 0xaf, '"]'), "SYNTAX_ERROR"], // overlong 4 bytes
  [bytes('["', 0xf4, 0x90, 0x80, 0x80, '"]'), "SYNTAX_ERROR"], // above U+10FFFF
  [bytes('["', 0x80, '"]'), "SYNTAX_ERROR"], // lone continuation byte
  [bytes('["', 0xe9, '"]'), "SYNTAX_ERROR"], // truncated sequence
  [bytes('["', 0xff, '"]'), "SYNTAX_ERROR"],
  [bytes('["', 0xf8, 0x88, 0x80, 0x80, 0x80, '"]'), "SYNTAX_ERROR"], // 5-byte form
  [bytes("[", 0xff, "]"), "SYNTAX_ERROR"],
  [bytes(0xef, 0xbb), "SYNTAX_ERROR"], // a partial BOM
];

function fingerprint(r: ReturnType<typeof tokenize>): string {
  return JSON.stringify({
    events: r.events,
    error: r.error ? { code: r.error.code, location: r.error.details.location } : null,
  });
}

describe("RFC 8259 conformance", () => {
  test.each(ACCEPT)("accepts %j", (text) => {
    const r = tokenize("json", text);
    expect(r.error).toBeUndefined();
    expect(JSON.parse(text)).toBeDefined();
  });

  test.each(
    REJECT.map(([input, code]) => [
      typeof input === "string" ? input : Buffer.from(input).toString("hex"),
      input,
      code,
    ]),
  )("rejects %j", (_label, input, code) => {
    const r = tokenize("json", input as string | Uint8Array);
    expect(r.error?.code).toBe(code);
    expect(r.error?.details.location).toMatchObject({
      byte_offset: expect.any(Number),
      line: expect.any(Number),
    });
  });

  test("a UTF-8 byte order mark at the start is skipped", () => {
    expect(tokenize("json", bytes(0xef, 0xbb, 0xbf, "[1]")).error).toBeUndefined();
    expect(tokenize("json", bytes("[1]", 0xef, 0xbb, 0xbf)).error?.code).toBe("SYNTAX_ERROR");
  });

  test("errors carry line, column (bytes), path and a hint", () => {
    const r = tokenize("json", '{\n  "a": [1, 2,],\n  "b": 1\n}');
    expect(r.error).toMatchObject({
      code: "SYNTAX_ERROR",
      message: "Trailing comma before ']'",
      details: { location: { byte_offset: 15, line: 2, column: 14, path: "/a" } },
    });
    const dup = tokenize("json", '{"x": {"k": 1, "k": 2}}');
    expect(dup.error?.details.location).toMatchObject({ path: "/x/k", byte_offset: 15 });
    const str = tokenize("json", '{"x": ["ok", "bad\\q"]}');
    expect(str.error?.details.location).toMatchObject({ path: "/x/1" });
    const comment = tokenize("json", "[1, /* x */ 2]");
    expect(comment.error).toMatchObject({ code: "UNSUPPORTED_SYNTAX" });
    expect(String(comment.error?.details.hint)).toMatch(/JSONC/);
  });

  test("numbers and strings keep their exact spelling", async () => {
    const text = '[12345678901234567890123, 1.0E+400, "\\u00e9\\ud83d\\ude00", -0, 0.10]';
    const found = await runAll(text, "$[*]");
    expect(found.map((f) => f.text)).toEqual([
      "12345678901234567890123",
      "1.0E+400",
      '"\\u00e9\\ud83d\\ude00"',
      "-0",
      "0.10",
    ]);
    const events = tokenize("json", text).events;
    expect(events).toContain('scalar "é😀"@36-56');
  });
});

describe("chunking", () => {
  const inputs: (string | Uint8Array)[] = [...ACCEPT, ...REJECT.map(([i]) => i)];

  test("every input gives the same events and errors whole, in random pieces and byte by byte", () => {
    for (const input of inputs) {
      const whole = fingerprint(tokenize("json", input));
      expect(fingerprint(tokenize("json", input, [1]))).toBe(whole);
      expect(fingerprint(tokenize("json", input, [2, 3, 1]))).toBe(whole);
    }
    fc.assert(
      fc.property(
        fc.constantFrom(...inputs),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        (input, pieces) => {
          expect(fingerprint(tokenize("json", input, pieces))).toBe(
            fingerprint(tokenize("json", input)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  test("random JSON texts: whole = random chunks = one byte at a time", () => {
    fc.assert(
      fc.property(
        fc.json({ maxDepth: 4 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom("json", "jsonl", "json-seq") as fc.Arbitrary<"json" | "jsonl" | "json-seq">,
        (text, pieces, format) => {
          const input =
            format === "json"
              ? text
              : format === "jsonl"
                ? `${text}\n${text}\n`
                : `\u001e${text}\n\u001e${text}\n`;
          const whole = fingerprint(tokenize(format, input));
          expect(JSON.parse(whole).error).toBeNull();
          expect(fingerprint(tokenize(format, input, pieces))).toBe(whole);
          expect(fingerprint(tokenize(format, input, [1]))).toBe(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("random corruptions fail the same way in any chunking", () => {
    fc.assert(
      fc.property(
        fc.json({ maxDepth: 3 }),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }),
        (text, at, byte, pieces) => {
          const b = enc.encode(text);
          b[at % b.length] = byte;
          expect(fingerprint(tokenize("json", b, pieces))).toBe(fingerprint(tokenize("json", b)));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("limits and hostile inputs", () => {
  test("100,000 nested arrays fail on max_depth without overflowing the stack", () => {
    const input = "[".repeat(100_000) + "]".repeat(100_000);
    const r = tokenize("json", input);
    expect(r.error).toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_depth", limit: 1000, value: 1001 } },
    });
    expect(tokenize("json", "[".repeat(1000) + "]".repeat(1000)).error).toBeUndefined();
  });

  test("a huge string fails on max_string_bytes before it ends", () => {
    const tok = new Tokenizer(
      "json",
      { ...DEFAULT_JSON_LIMITS, maxStringBytes: 1 << 20 },
      NULL_SINK,
    );
    tok.start();
    const piece = new Uint8Array(64 * 1024).fill(0x61);
    let fed = 0;
    let error: unknown;
    try {
      tok.feed(enc.encode('["'));
      for (let i = 0; i < 1000; i++) {
        tok.feed(piece);
        fed += piece.length;
      }
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_string_bytes" } },
    });
    expect(fed).toBeLessThanOrEqual(2 << 20);
  });

  test("a long number fails on max_number_bytes", () => {
    expect(tokenize("json", `[${"1".repeat(2000)}]`).error?.details.limit).toMatchObject({
      name: "max_number_bytes",
      limit: 1024,
    });
  });

  test("a million-member object fails on max_object_members with bounded memory", () => {
    // The object is generated piece by piece as it is fed: nothing holds all of it.
    const tok = new Tokenizer(
      "json",
      { ...DEFAULT_JSON_LIMITS, maxObjectMembers: 100_000 },
      NULL_SINK,
    );
    tok.start();
    let fed = 0;
    let error: unknown;
    try {
      tok.feed(enc.encode("{"));
      for (let i = 0; i < 1_000_000; i += 10_000) {
        const parts: string[] = [];
        for (let k = i; k < i + 10_000; k++) parts.push(`"member-${k}":${k}`);
        const piece = enc.encode(`${i === 0 ? "" : ","}${parts.join(",")}`);
        tok.feed(piece);
        fed += piece.length;
      }
      tok.feed(enc.encode("}"));
      tok.end();
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      details: { limit: { name: "max_object_members", limit: 100_000, value: 100_001 } },
    });
    expect(fed).toBeLessThan(3_000_000);
    expect(DEFAULT_JSON_LIMITS.maxObjectMembers).toBe(1_000_000);
    expect(
      tokenize("json", '{"a":1,"b":2,"c":3}', [], { maxObjectMembers: 2 }).error?.details.limit,
    ).toMatchObject({ value: 3 });
  });

  test("a JSONL record longer than max_record_bytes fails", () => {
    const r = tokenize("jsonl", `[1]\n["${"x".repeat(200)}"]\n`, [16], { maxRecordBytes: 100 });
    expect(r.error).toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_record_bytes" } },
    });
    expect(r.error?.details.location).toMatchObject({ record_index: 1 });
  });
});

describe("hostile input: stray '/', duplicate members, long member names", () => {
  test("a lone '/' is a SYNTAX_ERROR without a JSONC hint, in every format and at every chunk boundary", () => {
    const cases: [JsonFormat, string][] = [
      ["json", '{"value":/}'],
      ["json", '{"a":"b"}/'],
      ["jsonl", '{"a":1}/\n'],
      ["jsonl", '{"a":1}\n/\n'],
      ["json-seq", '\x1e{"a":1}/\n'],
      ["json-seq", '\x1e{"a":1}\n/'],
    ];
    for (const [format, text] of cases) {
      for (const pieces of [[], [1], [2, 1], [text.length - 1]]) {
        const r = tokenize(format, text, pieces);
        expect(r.error?.code, `${format} ${JSON.stringify(text)} ${pieces}`).toBe("SYNTAX_ERROR");
        expect(String(r.error?.details.hint ?? "")).not.toMatch(/JSONC/);
      }
    }
    const comment = tokenize("jsonl", '{"a":1}// c\n', [8]);
    expect(comment.error?.code).toBe("UNSUPPORTED_SYNTAX");
    expect(String(comment.error?.details.hint)).toMatch(/JSONC/);
  });

  test("a duplicate member's location names the member", () => {
    expect(tokenize("json", '{"a":1,"a":2}').error?.details.location).toMatchObject({
      path: "/a",
      byte_offset: 7,
    });
    expect(
      tokenize("json", '{"x":{"y":[{"a":1,"b":{},"a":2}]}}').error?.details.location,
    ).toMatchObject({ path: "/x/y/0/a" });
    expect(tokenize("json", '{"a/b~":1,"a/b~":2}').error?.details.location).toMatchObject({
      path: "/a~1b~0",
    });
    const many = `{${Array.from({ length: 40 }, (_, i) => `"k${i}":0`).join(",")},"k7":1}`;
    expect(tokenize("json", many).error?.details.location).toMatchObject({ path: "/k7" });
  });

  test("long member names are kept as digests: retained memory does not grow with their length", () => {
    const names = Array.from({ length: 200 }, (_, i) => `${"n".repeat(10_000)}${i}`);
    const text = `{${names.map((n) => `"${n}":0`).join(",")}`; // left open: the set is live
    const tok = new Tokenizer("json", DEFAULT_JSON_LIMITS, NULL_SINK);
    tok.feed(enc.encode(text));
    expect(tok.depth).toBe(1);
    expect(tok.retainedNameChars).toBeLessThanOrEqual(200 * 33);
    // Short names are kept as they are.
    const short = new Tokenizer("json", DEFAULT_JSON_LIMITS, NULL_SINK);
    short.feed(enc.encode('{"ab":1,"cd":2,'));
    expect(short.retainedNameChars).toBe(4);
  });

  test("duplicates are found among long names however they are spelled, and only then", () => {
    const long = "x".repeat(5_000);
    expect(tokenize("json", `{"${long}":1,"${long}":2}`).error?.code).toBe("SYNTAX_ERROR");
    // "\u0078" is "x": same decoded name, different spelling.
    const escaped = `\\u0078${long.slice(1)}`;
    expect(tokenize("json", `{"${long}":1,"${escaped}":2}`).error?.details.location).toMatchObject({
      path: `/${long}`,
    });
    expect(tokenize("json", `{"${long}":1,"${long}y":2}`).error).toBeUndefined();
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 3 }),
            fc.string({ minLength: 30, maxLength: 40 }),
            fc.constantFrom("a".repeat(33), `${"a".repeat(32)}\u0000`, "a".repeat(32)),
          ),
          { maxLength: 40 },
        ),
        (names) => {
          const text = `{${names.map((n, i) => `${JSON.stringify(n)}:${i}`).join(",")}}`;
          const r = tokenize("json", text);
          const hasDuplicate = new Set(names).size !== names.length;
          expect(r.error?.code === "SYNTAX_ERROR").toBe(hasDuplicate);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("records that repeat their names (the per-level shape of names)", () => {
  const jsonl = (records: string[][]) =>
    `${records.map((names) => `{${names.map((n, i) => `${n}:${i}`).join(",")}}`).join("\n")}\n`;

  test("a duplicate is found wherever a record leaves the previous record's names", () => {
    const dup = (records: string[][]) => tokenize("jsonl", jsonl(records)).error;
    expect(
      dup([
        ['"a"', '"b"'],
        ['"a"', '"a"'],
      ])?.details.location,
    ).toMatchObject({
      path: "/1/a",
      record_index: 1,
    });
    expect(
      dup([
        ['"a"', '"b"'],
        ['"b"', '"a"', '"b"'],
      ])?.details.location,
    ).toMatchObject({
      path: "/1/b",
    });
    // The same name spelled another way leaves the shape and is still a duplicate.
    expect(
      dup([
        ['"a"', '"b"'],
        ['"a"', '"\\u0061"'],
      ])?.code,
    ).toBe("SYNTAX_ERROR");
    // Past the small name set (16) and past the shape's 64 names.
    for (const count of [20, 70]) {
      const names = Array.from({ length: count }, (_, i) => `"k${i}"`);
      expect(dup([names, names, [...names, '"k3"']])?.details.location).toMatchObject({
        path: "/2/k3",
      });
      expect(dup([names, [...names.slice(0, count - 1), '"k5"']])?.details.location).toMatchObject({
        path: "/1/k5",
      });
      expect(dup([names, names, names])).toBeUndefined();
    }
  });

  test("names and duplicates are the same as without a shape, however the input is cut", () => {
    const name = fc.constantFrom('"a"', '"b"', '"c"', '"\\u0061"', '"é"', `"${"n".repeat(40)}"`);
    fc.assert(
      fc.property(
        fc.array(fc.array(name, { maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 4 }),
        (records, pieces) => {
          const text = jsonl(records);
          const whole = tokenize("jsonl", text);
          const firstDuplicate = records.findIndex(
            (names) => new Set(names.map((n) => JSON.parse(n))).size !== names.length,
          );
          if (firstDuplicate < 0) expect(whole.error).toBeUndefined();
          else
            expect(whole.error?.details.location).toMatchObject({ record_index: firstDuplicate });
          const keys = whole.events.filter((e) => e.startsWith("key ")).map((e) => e.split("@")[0]);
          // Names up to the first repeated one (its event is not sent: the error comes first).
          const expected: string[] = [];
          for (const names of records) {
            const seen = new Set<string>();
            for (const n of names) {
              const decoded = JSON.parse(n) as string;
              if (seen.has(decoded)) break;
              seen.add(decoded);
              expected.push(`key ${JSON.stringify(decoded)}`);
            }
            if (seen.size !== names.length) break;
          }
          expect(keys).toEqual(expected);
          expect(tokenize("jsonl", text, pieces)).toEqual(whole);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("hostile input: random bytes", () => {
  test("any byte soup ends in events or a structured error, the same however it is chunked", () => {
    const alphabet = [...'{}[]",:/*\\0123456789-+.eEtrufalsn \t\r\n\x1e', "\u00e9", "\uffff"];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((a) => a.join("")),
        fc.constantFrom<JsonFormat>("json", "jsonl", "json-seq"),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
        (text, format, pieces) => {
          // tokenize() rethrows anything that is not a PagewiseError.
          const whole = tokenize(format, text);
          expect(fingerprint(tokenize(format, text, pieces))).toBe(fingerprint(whole));
          if (whole.error) expect(whole.error.code).not.toBe("INTERNAL_ERROR");
        },
      ),
      { numRuns: 3000 },
    );
  });
});
