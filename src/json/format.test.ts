import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compactJsonRange, compactJsonText } from "./compact.js";
import { detectFormat, validate } from "./query.js";
import { bufferReader } from "./reader.js";
import { enc, matches, tokenize } from "./test-support/helpers.js";

const reader = (s: string | Uint8Array) => bufferReader(typeof s === "string" ? enc.encode(s) : s);

describe("format detection", () => {
  test("RS at byte 0 is json-seq, before any other rule", async () => {
    expect(await detectFormat(reader('\u001e{"a":1}\n'), "x.jsonl")).toEqual({
      detected_format: "json-seq",
      basis: "rs_prefix",
      confidence: "high",
    });
  });

  test(".jsonl and .ndjson are jsonl", async () => {
    expect((await detectFormat(reader('{"a":1}'), "logs/events.JSONL")).detected_format).toBe(
      "jsonl",
    );
    expect((await detectFormat(reader('{"a":1}'), "x.ndjson")).basis).toBe("extension");
  });

  test("two leading lines that are each a complete value are jsonl", async () => {
    expect(await detectFormat(reader('{"a":1}\n{"a":2}\n'), "data.txt")).toEqual({
      detected_format: "jsonl",
      basis: "leading_lines",
      confidence: "high",
    });
    expect((await detectFormat(reader("1\r\n2"), "data")).detected_format).toBe("jsonl");
  });

  test("anything else is json", async () => {
    expect(await detectFormat(reader('{\n  "a": 1\n}\n'), "data.json")).toEqual({
      detected_format: "json",
      basis: "default",
      confidence: "medium",
    });
    expect((await detectFormat(reader('{"a":1}\n'), "one.json")).detected_format).toBe("json");
    expect((await detectFormat(reader("[1,\n2]"), "a.json")).detected_format).toBe("json");
    expect((await detectFormat(reader(""), "empty")).detected_format).toBe("json");
  });
});

describe("validation", () => {
  test("full validation streams everything and counts records", async () => {
    expect(await validate(reader('{"a":[1,2]}'), "json", "full")).toEqual({
      complete: true,
      bytes_examined: 11,
    });
    expect(await validate(reader("1\n2\n3\n"), "jsonl", "full")).toEqual({
      complete: true,
      bytes_examined: 6,
      records_examined: 3,
    });
    expect(await validate(reader("\u001e1\n\u001e[2]\n"), "json-seq", "full")).toMatchObject({
      records_examined: 2,
    });
  });

  test("probe validation checks a bounded prefix", async () => {
    const big = `[${Array.from({ length: 5000 }, () => '"xxxxxxxxxx"').join(",")}]`;
    expect(await validate(reader(big), "json", "probe", { probeBytes: 1000 })).toEqual({
      complete: false,
      bytes_examined: 1000,
    });
    expect(await validate(reader("[1]"), "json", "probe")).toEqual({
      complete: true,
      bytes_examined: 3,
    });
  });

  test("problems throw with their location", async () => {
    await expect(validate(reader('{"a":1}\n{"a":2,}\n'), "jsonl", "full")).rejects.toMatchObject({
      code: "SYNTAX_ERROR",
      details: { location: { line: 2, record_index: 1, path: "/1" } },
    });
  });
});

describe("format mismatches", () => {
  test("JSONL read as json", () => {
    const r = tokenize("json", '{"a":1}\n{"a":2}\n');
    expect(r.error).toMatchObject({
      code: "FORMAT_MISMATCH",
      details: { likely_formats: ["jsonl"], retry: { format: "jsonl" } },
    });
  });

  test("json read as JSONL", () => {
    const r = tokenize("jsonl", '{\n  "a": 1\n}\n');
    expect(r.error).toMatchObject({
      code: "FORMAT_MISMATCH",
      details: { likely_formats: ["json"], retry: { format: "json" } },
    });
  });

  test("JSON-seq read as json or jsonl, and the reverse", () => {
    expect(tokenize("json", "\u001e[1]\n").error?.details).toMatchObject({
      retry: { format: "json-seq" },
    });
    expect(tokenize("jsonl", "\u001e[1]\n").error?.details).toMatchObject({
      retry: { format: "json-seq" },
    });
    expect(tokenize("json-seq", "[1]\n").error).toMatchObject({
      code: "FORMAT_MISMATCH",
      details: { likely_formats: ["json"] },
    });
  });

  test("a query over a mismatched file fails rather than answering from the first value", async () => {
    await expect(matches('{"a":1}\n{"a":2}\n', "$.a")).rejects.toMatchObject({
      code: "FORMAT_MISMATCH",
    });
  });
});

describe("framing", () => {
  test("JSONL: LF or CRLF, optional final newline, no blank lines", () => {
    expect(tokenize("jsonl", "1\n2").error).toBeUndefined();
    expect(tokenize("jsonl", "1\r\n2\r\n").error).toBeUndefined();
    expect(tokenize("jsonl", "").error).toBeUndefined();
    expect(tokenize("jsonl", "  1  \n").error).toBeUndefined();
    expect(tokenize("jsonl", "1\n\n2\n").error).toMatchObject({
      code: "SYNTAX_ERROR",
      details: { location: { line: 2 } },
    });
    expect(tokenize("jsonl", "1\n2\n\n").error?.code).toBe("SYNTAX_ERROR");
    expect(tokenize("jsonl", "\n1\n").error?.code).toBe("SYNTAX_ERROR");
    expect(tokenize("jsonl", "1 2\n").error?.code).toBe("SYNTAX_ERROR");
    expect(tokenize("jsonl", "1\n  ").error?.code).toBe("SYNTAX_ERROR");
  });

  test("JSON-seq: RS before each record, LF after", () => {
    expect(tokenize("json-seq", "\u001e1\n\u001e{\n}\n").error).toBeUndefined();
    expect(tokenize("json-seq", "").error).toBeUndefined();
    expect(tokenize("json-seq", "\u001e1\n\u001e2").error?.message).toMatch(/LF/);
    expect(tokenize("json-seq", "\u001e1\u001e2\n").error?.message).toMatch(/LF/);
    expect(tokenize("json-seq", "\u001e\u001e1\n").error?.message).toMatch(/Empty/);
    expect(tokenize("json-seq", "\u001e1 2\n").error?.code).toBe("SYNTAX_ERROR");
  });

  test("JSON: whitespace around one value", () => {
    expect(tokenize("json", "\n\t [1] \r\n").error).toBeUndefined();
    expect(tokenize("json", "[1] [2]").error?.code).toBe("SYNTAX_ERROR");
  });
});

describe("compactJsonText", () => {
  test("drops whitespace outside strings only, keeping every other byte", () => {
    const text = '{ "a b" : [ 1.0E+400 ,\n\t"x \\" y" , "\\u00e9 é" ] }';
    expect(compactJsonText(enc.encode(text))).toBe('{"a b":[1.0E+400,"x \\" y","\\u00e9 é"]}');
    expect(compactJsonText(enc.encode('"\\\\" '))).toBe('"\\\\"');
  });

  test("compactJsonRange gives the same text for any range of bytes, read in place", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.json({ maxDepth: 3 }), fc.json({ maxDepth: 2, stringUnit: "binary" })),
        fc.nat(4),
        fc.constantFrom("", " ", "\n\t"),
        (value, margin, ws) => {
          const text = JSON.stringify(JSON.parse(value), null, ws);
          const bytes = enc.encode(`${"x".repeat(margin)}${text}${"y".repeat(margin)}`);
          const start = margin;
          const end = bytes.length - margin;
          expect(compactJsonRange(bytes, start, end)).toBe(
            compactJsonText(bytes.slice(start, end)),
          );
          expect(compactJsonRange(bytes, start, end)).toBe(JSON.stringify(JSON.parse(text)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
