/**
 * `json_open` / `json_read` / `json_close` end to end: the real server over stdio, driven by the SDK
 * client. Sizes are scaled down from the for CI time, and say so where they are: the
 * "100 MB single document" is a 24 MB one (200,000 orders), the "1 GB single string" a 64 MiB one
 * read with the string limit lowered to 4 MiB by a server option (the limit, not the size, is what
 * stops it; the default limit of 16 MiB stops a 1 GB string the same way), and the object one
 * member over the default limit of a million members one of 100,001 over a limit of 100,000 set
 * the same way (src/json/tokenizer.test.ts checks the default).
 */
import { closeSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEstimator } from "../dist/core/index.js";
import { runCli } from "./support/cli.js";
import {
  bytesRead,
  outOfRacyWindow,
  type ServerHandle,
  startServer,
  type ToolOutcome,
  tempDir,
} from "./support/server.js";

const KEY = "test-key-json-0123456789abcdef-0123";
const RECORDS = 100_000;
const ORDERS = 200_000;
/** The limited server's --json-max-object-members (the default is 1,000,000). */
const MEMBERS_LIMIT = 100_000;

let server: ServerHandle;
let limited: ServerHandle;
let dir: string;
let cleanup: () => void;
let estimator: { count(text: string): number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes a file in pieces (large files never sit whole in memory as one string). */
function writePieces(file: string, pieces: Iterable<string | Buffer>): void {
  const fd = openSync(file, "w");
  try {
    for (const p of pieces) writeSync(fd, typeof p === "string" ? Buffer.from(p) : p);
  } finally {
    closeSync(fd);
  }
}

function* jsonlRecords(): Generator<string> {
  let batch = "";
  for (let i = 0; i < RECORDS; i++) {
    batch += `{"id":${i},"name":"user ${i}","tags":["a","b"],"score":${i % 7}.5e1}\n`;
    if (batch.length > 1 << 20) {
      yield batch;
      batch = "";
    }
  }
  yield batch;
}

function* ordersDocument(): Generator<string> {
  yield '{"meta": {"count": 200000},\n "orders": [\n';
  let batch = "";
  for (let i = 0; i < ORDERS; i++) {
    batch += `  {"id": ${i}, "customer": "customer-${i % 997}", "items": [{"sku": "s${i % 13}", "qty": ${i % 5}}], "total": ${i}.25}${i < ORDERS - 1 ? "," : ""}\n`;
    if (batch.length > 1 << 20) {
      yield batch;
      batch = "";
    }
  }
  yield `${batch}]}\n`;
}

const THREE_MB_TEXT = 'abc \\"q\\" \\u00e9 é 🙂 \\n '.repeat(120_000);

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("pagewise-json-", { inMemory: true }));
  const f = (name: string) => path.join(dir, name);
  writePieces(f("records.jsonl"), jsonlRecords());
  writePieces(f("orders.json"), ordersDocument());
  writeFileSync(
    f("spelling.json"),
    '{"big": 12345678901234567890123, "huge": 1.0E+400, "neg": -0.0e-0,\n "esc": "a\\"b\\\\c\\/d\\u00e9\\uD83D\\uDE00\\n\\t", "raw": "é🙂", "arr": [ 1 , [ ] , { } ]}',
  );
  writeFileSync(f("big-string.json"), `{"before": 1, "s": "${THREE_MB_TEXT}", "after": 2}`);
  writeFileSync(f("dup.json"), '{"a": 1, "b": {"c": 2, "c": 3}}');
  writeFileSync(f("comment.json"), '{"a": 1, // a comment\n "b": 2}');
  writeFileSync(f("trailing.json"), '{"a": [1, 2, ], "b": 2}');
  writeFileSync(f("utf8.json"), Buffer.from([0x5b, 0x22, 0x61, 0xff, 0x22, 0x5d]));
  writeFileSync(f("unterminated.json"), '{"a": [1, 2, {"b": 3');
  writeFileSync(f("lines.txt"), '{"a": 1}\n{"a": 2}\n{"a": 3}\n');
  writeFileSync(f("pretty.jsonl"), '{\n  "a": 1,\n  "b": 2\n}\n');
  writeFileSync(f("seq.log"), '\x1e{"a": 1}\n\x1e{"a": 2}\n');
  writeFileSync(f("nested.json"), `${"[".repeat(100_000)}${"]".repeat(100_000)}`);
  writePieces(f("members.json"), membersObject(MEMBERS_LIMIT + 1));
  writePieces(f("huge-string.json"), hugeString(64 * 1024 * 1024));
  writeFileSync(
    f("regex.jsonl"),
    Array.from({ length: 200 }, (_, i) => `{"s": "${"a".repeat(5000)}${i}"}\n`).join(""),
  );
  writeFileSync(f("mutable.json"), '{"a": [1, 2, 3, 4, 5, 6]}');
  estimator = await createEstimator("default");
  [server, limited] = await Promise.all([
    startServer(["--root", dir], { PAGEWISE_CURSOR_KEY: KEY }),
    startServer(
      [
        "--root",
        dir,
        "--json-max-string-bytes",
        String(4 * 1024 * 1024),
        "--json-handle-ttl-ms",
        "300",
        "--json-max-object-members",
        String(MEMBERS_LIMIT),
      ],
      { PAGEWISE_CURSOR_KEY: KEY },
    ),
  ]);
  // The files' versions must be trusted by identity (see FileVersions), else every page would
  // re-hash them; what is left of the racy window once the servers have started.
  await outOfRacyWindow(readdirSync(dir).map(f));
}, 120_000);

afterAll(async () => {
  await server?.close();
  await limited?.close();
  cleanup?.();
});

/**
 * An object of `n` members "kI": I, each after 100 bytes of whitespace: 11 MB for 100,001
 * members, so that a read that stops early is told from one that reads on.
 */
function* membersObject(n: number): Generator<string> {
  const space = " ".repeat(100);
  yield "{";
  let batch = "";
  for (let i = 0; i < n; i++) {
    batch += `${i ? "," : ""}${space}"k${i}":${i}`;
    if (batch.length > 1 << 20) {
      yield batch;
      batch = "";
    }
  }
  yield `${batch}}`;
}

function* hugeString(bytes: number): Generator<Buffer> {
  yield Buffer.from('{"s": "');
  const block = Buffer.alloc(1 << 20, "x");
  for (let done = 0; done < bytes; done += block.length) yield block;
  yield Buffer.from('"}');
}

function expectError(out: ToolOutcome, code: string): Record<string, any> {
  expect(out.isError, out.text.slice(0, 500)).toBe(true);
  expect(out.json.error.code, out.text.slice(0, 500)).toBe(code);
  return out.json.error;
}

function expectPage(out: ToolOutcome, maxTokens: number): Record<string, any> {
  expect(out.isError, out.text.slice(0, 500)).toBe(false);
  expect(out.blocks).toBe(1);
  expect(out.structured).toBeUndefined();
  expect(estimator.count(out.text)).toBeLessThanOrEqual(maxTokens);
  return out.json;
}

/** Pages a query to the end; returns every item and each page's stats and bytes read. */
async function pageAll(
  first: Record<string, unknown>,
  maxTokens: number,
  maxItems: number,
): Promise<{ items: any[]; bytes: number[]; skipped: number[]; pages: number }> {
  const items: any[] = [];
  const bytes: number[] = [];
  const skipped: number[] = [];
  let args: Record<string, unknown> = { ...first, max_tokens: maxTokens, max_items: maxItems };
  for (;;) {
    const before = bytesRead(server.pid!);
    const out = await server.call("json_read", args);
    bytes.push(bytesRead(server.pid!) - before);
    const page = expectPage(out, maxTokens);
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.stats.returned).toBe(page.items.length);
    skipped.push(page.stats.skipped);
    items.push(...page.items);
    if (page.complete) {
      expect(page.next_cursor).toBeNull();
      break;
    }
    expect(typeof page.next_cursor).toBe("string");
    args = { cursor: page.next_cursor, max_tokens: maxTokens };
  }
  return { items, bytes, skipped, pages: bytes.length };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/**
 * Page k reads about what page 2 reads (page 1 also hashes the whole file, once), and no
 * continuation reads more than a tenth of the file: the server's bytes read, counted.
 */
function expectFlat(bytes: number[], file: string): void {
  expect(bytes.length).toBeGreaterThan(20);
  const continuations = bytes.slice(1);
  expect(median(bytes.slice(-11, -1))).toBeLessThanOrEqual(median(bytes.slice(1, 11)) * 2);
  expect(Math.max(...continuations)).toBeLessThan(statSync(path.join(dir, file)).size / 10);
}

describe("paging every match", () => {
  it("pages $[*].id over a 100,000-record JSONL: each match once, in order, within budget, flat", async () => {
    const run = await pageAll(
      { path: "records.jsonl", language: "jsonpath", query: "$[*].id" },
      20_000,
      1000,
    );
    expect(run.items.length).toBe(RECORDS);
    for (let i = 0; i < RECORDS; i++) {
      const item = run.items[i];
      if (item.path !== `/${i}/id` || item.value !== i)
        expect(item).toEqual({ path: `/${i}/id`, value: i });
    }
    // Every page resumed exactly where the previous one ended (no match re-derived and skipped).
    expect(run.skipped.every((s) => s === 0)).toBe(true);
    expectFlat(run.bytes, "records.jsonl");
  });

  it("pages $.orders[*].id over a 24 MB single document (scaled from 100 MB) the same way", async () => {
    const run = await pageAll(
      { path: "orders.json", language: "jsonpath", query: "$.orders[*].id" },
      30_000,
      1000,
    );
    expect(run.items.length).toBe(ORDERS);
    for (let i = 0; i < ORDERS; i++) {
      const item = run.items[i];
      if (item.path !== `/orders/${i}/id` || item.value !== i)
        expect(item).toEqual({ path: `/orders/${i}/id`, value: i });
    }
    expect(run.skipped.every((s) => s === 0)).toBe(true);
    expectFlat(run.bytes, "orders.json");
  });

  it("fills pages by budget when max_items is not the limit, and reports a lowered max_items", async () => {
    const out = await server.call("json_read", {
      path: "records.jsonl",
      language: "jsonpath",
      query: "$[*]",
      max_items: 5000,
      max_tokens: 3000,
    });
    const page = expectPage(out, 3000);
    expect(page.max_items).toBe(1000);
    expect(page.note).toMatch(/lowered/);
    expect(page.items.length).toBeGreaterThan(10);
    expect(page.items.length).toBeLessThan(1000);
    expect(page.complete).toBe(false);
    // The next page starts right after the last item.
    const next = expectPage(
      await server.call("json_read", { cursor: page.next_cursor, max_tokens: 3000 }),
      3000,
    );
    expect(next.items[0].path).toBe(`/${page.items.length}`);
  });
});

describe("values exactly as spelled", () => {
  it("keeps numbers, escapes and \\u escapes byte for byte (only insignificant whitespace dropped)", async () => {
    const out = await server.call("json_read", {
      path: "spelling.json",
      language: "jsonpath",
      query: "$.*",
    });
    const page = expectPage(out, 8000);
    expect(page.items.map((i: any) => i.path)).toEqual([
      "/big",
      "/huge",
      "/neg",
      "/esc",
      "/raw",
      "/arr",
    ]);
    expect(out.text).toContain('{"path":"/big","value":12345678901234567890123}');
    expect(out.text).toContain('{"path":"/huge","value":1.0E+400}');
    expect(out.text).toContain('{"path":"/neg","value":-0.0e-0}');
    expect(out.text).toContain(
      '{"path":"/esc","value":"a\\"b\\\\c\\/d\\u00e9\\uD83D\\uDE00\\n\\t"}',
    );
    expect(out.text).toContain('{"path":"/raw","value":"é🙂"}');
    expect(out.text).toContain('{"path":"/arr","value":[1,[],{}]}');
  });

  it("reads one value by pointer (plain and # fragment); a missing target is NOT_FOUND", async () => {
    const out1 = await server.call("json_read", {
      path: "spelling.json",
      language: "pointer",
      query: "/big",
    });
    const a = expectPage(out1, 8000);
    expect(a.items).toHaveLength(1);
    expect(out1.text).toContain('"items":[{"path":"/big","value":12345678901234567890123}]');
    expect(a.complete).toBe(true);
    const b = await server.call("json_read", {
      path: "spelling.json",
      language: "pointer",
      query: "#/arr/0",
    });
    expect(expectPage(b, 8000).items[0]).toEqual({ path: "/arr/0", value: 1 });
    expectError(
      await server.call("json_read", {
        path: "spelling.json",
        language: "pointer",
        query: "/nope",
      }),
      "NOT_FOUND",
    );
    // JSONPath with no match: an empty, complete page.
    const c = expectPage(
      await server.call("json_read", {
        path: "spelling.json",
        language: "jsonpath",
        query: "$.nope",
      }),
      8000,
    );
    expect(c).toMatchObject({ items: [], complete: true, next_cursor: null });
  });

  it("returns a 3 MB string at max_tokens 2000 as value_truncated + a value_cursor that read reconstructs", async () => {
    const out = await server.call("json_read", {
      path: "big-string.json",
      language: "jsonpath",
      query: "$.*",
      max_tokens: 2000,
    });
    const page = expectPage(out, 2000);
    expect(page.items[0]).toEqual({ path: "/before", value: 1 });
    const big = page.items[1];
    expect(big.path).toBe("/s");
    expect(big.value_truncated).toBe(true);
    expect(big.value).toBeUndefined();
    expect(big.value_bytes).toBe(Buffer.byteLength(THREE_MB_TEXT) + 2);
    expect(page.items[2]).toEqual({ path: "/after", value: 2 });
    let text = "";
    let args: Record<string, unknown> = { cursor: big.value_cursor, max_tokens: 50_000 };
    for (let n = 0; n < 10_000; n++) {
      const r = await server.call("read", args);
      expect(r.isError, r.text.slice(0, 300)).toBe(false);
      text += r.json.content;
      if (!r.json.has_more) break;
      args = { cursor: r.json.next_cursor, max_tokens: 50_000 };
    }
    expect(text).toBe(`"${THREE_MB_TEXT}"`);
  });
});

describe("json_open, handles and json_close", () => {
  it("opens with the contract's fields, reads by file_id, closes twice", async () => {
    const out = await server.call("json_open", { path: "records.jsonl" });
    expect(out.isError, out.text).toBe(false);
    const o = out.json;
    expect(Object.keys(o)).toEqual([
      "file_id",
      "uri",
      "requested_format",
      "detected_format",
      "detection",
      "validation",
      "source",
      "version",
    ]);
    expect(o).toMatchObject({
      requested_format: "auto",
      detected_format: "jsonl",
      detection: { basis: "extension", confidence: "high" },
      validation: { mode: "probe", complete: false, bytes_examined: 4 * 1024 * 1024 },
    });
    expect(o.validation.records_examined).toBeGreaterThan(1000);
    expect(o.uri).toBe(`file://${path.join(dir, "records.jsonl")}`);
    expect(typeof o.source.size).toBe("number");
    expect(Number.isNaN(Date.parse(o.source.modified_time))).toBe(false);
    const r = expectPage(
      await server.call("json_read", {
        file_id: o.file_id,
        language: "jsonpath",
        query: "$[-1].id",
      }),
      8000,
    );
    expect(r.file_id).toBe(o.file_id);
    expect(r.items).toEqual([{ path: `/${RECORDS - 1}/id`, value: RECORDS - 1 }]);
    expect((await server.call("json_close", { file_id: o.file_id })).json).toEqual({
      file_id: o.file_id,
      closed: true,
    });
    expect((await server.call("json_close", { file_id: o.file_id })).json).toEqual({
      file_id: o.file_id,
      closed: false,
    });
    const gone = expectError(
      await server.call("json_read", { file_id: o.file_id, language: "jsonpath", query: "$[0]" }),
      "HANDLE_EXPIRED",
    );
    expect(gone.hint).toMatch(/json_open|path/);
  });

  it("validates fully, detects JSON-seq, and expires idle handles (TTL option)", async () => {
    const full = await server.call("json_open", { path: "orders.json", validation: "full" });
    expect(full.json).toMatchObject({
      detected_format: "json",
      validation: { mode: "full", complete: true },
    });
    expect(full.json.validation.records_examined).toBeUndefined();
    const seq = await server.call("json_open", { path: "seq.log" });
    expect(seq.json).toMatchObject({
      detected_format: "json-seq",
      detection: { basis: "rs_prefix" },
    });
    const records = expectPage(
      await server.call("json_read", {
        file_id: seq.json.file_id,
        language: "jsonpath",
        query: "$[*].a",
      }),
      8000,
    );
    expect(records.items).toEqual([
      { path: "/0/a", value: 1 },
      { path: "/1/a", value: 2 },
    ]);
    const short = await limited.call("json_open", { path: "lines.txt" });
    expect(short.json).toMatchObject({
      detected_format: "jsonl",
      detection: { basis: "leading_lines" },
    });
    await sleep(600);
    expectError(
      await limited.call("json_read", {
        file_id: short.json.file_id,
        language: "jsonpath",
        query: "$[0]",
      }),
      "HANDLE_EXPIRED",
    );
  });

  it("refuses ambiguous argument sets with INVALID_ARGUMENT", async () => {
    const o = (await server.call("json_open", { path: "spelling.json" })).json;
    expectError(
      await server.call("json_read", {
        file_id: o.file_id,
        path: "spelling.json",
        language: "jsonpath",
        query: "$",
      }),
      "INVALID_ARGUMENT",
    );
    expectError(
      await server.call("json_read", { language: "jsonpath", query: "$" }),
      "INVALID_ARGUMENT",
    );
    expectError(
      await server.call("json_read", { path: "spelling.json", query: "$" }),
      "INVALID_ARGUMENT",
    );
    expectError(
      await server.call("json_read", { path: "spelling.json", language: "jsonpath", query: "$[" }),
      "QUERY_SYNTAX_ERROR",
    );
    expectError(
      await server.call("json_read", { path: "records.jsonl", language: "jsonpath", query: "$" }),
      "UNSUPPORTED_QUERY_FEATURE",
    );
    expectError(
      await server.call("json_read", { path: "records.jsonl", language: "pointer", query: "" }),
      "UNSUPPORTED_QUERY_FEATURE",
    );
  });
});

describe("strict JSON errors", () => {
  const cases: [string, string, RegExp | null][] = [
    ["dup.json", "SYNTAX_ERROR", /Duplicate/],
    ["comment.json", "UNSUPPORTED_SYNTAX", null],
    ["trailing.json", "SYNTAX_ERROR", null],
    ["utf8.json", "SYNTAX_ERROR", /UTF-8/],
    ["unterminated.json", "SYNTAX_ERROR", null],
  ];
  for (const [file, code, message] of cases) {
    it(`${file}: ${code} with a location, from json_open and json_read`, async () => {
      for (const out of [
        await server.call("json_open", { path: file }),
        await server.call("json_read", { path: file, language: "jsonpath", query: "$..*" }),
      ]) {
        const e = expectError(out, code);
        expect(typeof e.location.byte_offset).toBe("number");
        expect(e.location.line).toBeGreaterThanOrEqual(1);
        expect(e.location.column).toBeGreaterThanOrEqual(1);
        if (message) expect(e.message).toMatch(message);
        if (code === "UNSUPPORTED_SYNTAX") expect(e.hint).toMatch(/JSONC/);
      }
    });
  }

  it("a JSONL file opened as json (and the reverse) is FORMAT_MISMATCH with a retry", async () => {
    const a = expectError(
      await server.call("json_open", { path: "lines.txt", format: "json" }),
      "FORMAT_MISMATCH",
    );
    expect(a.retry).toEqual({ format: "jsonl" });
    expect(a.likely_formats).toContain("jsonl");
    expect(a.location.line).toBe(2);
    const b = expectError(
      await server.call("json_open", { path: "pretty.jsonl" }),
      "FORMAT_MISMATCH",
    );
    expect(b.retry).toEqual({ format: "json" });
    const c = expectError(
      await server.call("json_read", {
        path: "lines.txt",
        format: "json",
        language: "jsonpath",
        query: "$..a",
      }),
      "FORMAT_MISMATCH",
    );
    expect(c.retry).toEqual({ format: "jsonl" });
    // Applying the retry works.
    expect((await server.call("json_open", { path: "lines.txt", format: "jsonl" })).isError).toBe(
      false,
    );
  });

  it("a page full before an error is returned; the error comes with the next page, never with items", async () => {
    writeFileSync(
      path.join(dir, "late-error.jsonl"),
      '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4}\n{"b":5,"b":6}\n',
    );
    const p1 = expectPage(
      await server.call("json_read", {
        path: "late-error.jsonl",
        language: "jsonpath",
        query: "$[*].a",
        max_items: 2,
      }),
      8000,
    );
    expect(p1.items.map((i: any) => i.value)).toEqual([1, 2]);
    // Page 2 is full (max_items 2) before the scan reaches the duplicate in record 4: it stands.
    const p2 = expectPage(await server.call("json_read", { cursor: p1.next_cursor }), 8000);
    expect(p2.items.map((i: any) => i.value)).toEqual([3, 4]);
    expect(p2.complete).toBe(false);
    const e = expectError(
      await server.call("json_read", { cursor: p2.next_cursor }),
      "SYNTAX_ERROR",
    );
    expect(e.location).toMatchObject({ line: 5, record_index: 4 });
    expectError(
      await server.call("json_read", {
        path: "late-error.jsonl",
        language: "jsonpath",
        query: "$[*].a",
      }),
      "SYNTAX_ERROR",
    );
  });
});

describe("cursors", () => {
  it("a change between pages is CONTENT_CHANGED; a forged or foreign cursor is INVALID_CURSOR", async () => {
    const opened = (await server.call("json_open", { path: "mutable.json" })).json;
    const p1 = expectPage(
      await server.call("json_read", {
        path: "mutable.json",
        language: "jsonpath",
        query: "$.a[*]",
        max_items: 2,
      }),
      8000,
    );
    expect(p1.next_cursor.length).toBeLessThan(110);
    // Same cursor, same page.
    const again = await server.call("json_read", { cursor: p1.next_cursor });
    expect((await server.call("json_read", { cursor: p1.next_cursor })).text).toBe(again.text);
    // Wrong path (INVALID_CURSOR) or a query other than the cursor's (INVALID_ARGUMENT).
    expectError(
      await server.call("json_read", { cursor: p1.next_cursor, path: "spelling.json" }),
      "INVALID_CURSOR",
    );
    expectError(
      await server.call("json_read", { cursor: p1.next_cursor, query: "$.b" }),
      "INVALID_ARGUMENT",
    );
    expect(
      (await server.call("json_read", { cursor: p1.next_cursor, path: "mutable.json" })).isError,
    ).toBe(false);
    // Forged: one character changed.
    const c = p1.next_cursor as string;
    const forged = c.slice(0, 20) + (c[20] === "A" ? "B" : "A") + c.slice(21);
    expectError(await server.call("json_read", { cursor: forged }), "INVALID_CURSOR");
    // A read cursor is not a json_read cursor.
    const r = await server.call("read", { path: "mutable.json", max_tokens: 30 });
    if (r.json?.next_cursor)
      expectError(await server.call("json_read", { cursor: r.json.next_cursor }), "INVALID_CURSOR");
    // Same size, different bytes.
    writeFileSync(path.join(dir, "mutable.json"), '{"a": [1, 2, 3, 4, 5, 7]}');
    const e = expectError(
      await server.call("json_read", { cursor: p1.next_cursor }),
      "CONTENT_CHANGED",
    );
    expect(e.message).toMatch(/without a cursor/);
    // A handle is a view of the version json_open saw.
    const h = expectError(
      await server.call("json_read", {
        file_id: opened.file_id,
        language: "pointer",
        query: "/a/0",
      }),
      "CONTENT_CHANGED",
    );
    expect(h.message).toMatch(/json_open/);
  });
});

// A server that took unbounded time on these fails by the test timeout; what a call costs is
// counted as the bytes the server read, never timed.
describe("hostile inputs: clean limit errors in bounded time", () => {
  it("100,000 nested arrays", async () => {
    const e = expectError(
      await server.call("json_open", { path: "nested.json" }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    expect(e.limit).toMatchObject({ name: "max_depth", limit: 1000 });
    expectError(
      await server.call("json_read", { path: "nested.json", language: "jsonpath", query: "$..*" }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
  });

  it("a 64 MiB string (scaled from 1 GB) over a 4 MiB --json-max-string-bytes", async () => {
    const before = bytesRead(limited.pid!);
    const e = expectError(
      await limited.call("json_read", {
        path: "huge-string.json",
        language: "pointer",
        query: "/s",
      }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    expect(e.limit).toMatchObject({ name: "max_string_bytes", limit: 4 * 1024 * 1024 });
    expectError(
      await limited.call("json_open", { path: "huge-string.json", validation: "full" }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    // The file is hashed once (its version); then each call stops reading near the 4 MiB limit,
    // well before the end of the 64 MiB string.
    const size = statSync(path.join(dir, "huge-string.json")).size;
    expect(bytesRead(limited.pid!) - before).toBeLessThan(size + 2 * (size / 4));
  });

  it("an object of 100,001 members (scaled from a million and one) over a limit of 100,000", async () => {
    // The last member is the 100,001st: the scan reaches the limit before it.
    const e = expectError(
      await limited.call("json_read", {
        path: "members.json",
        language: "jsonpath",
        query: `$.k${MEMBERS_LIMIT}`,
      }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    expect(e.limit).toMatchObject({ name: "max_object_members", limit: MEMBERS_LIMIT });
    expectError(
      await limited.call("json_open", { path: "members.json", validation: "full" }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    // A query answered before the limit is reached stops there (a pointer read does not scan the rest).
    const before = bytesRead(limited.pid!);
    const early = expectPage(
      await limited.call("json_read", { path: "members.json", language: "pointer", query: "/k5" }),
      8000,
    );
    expect(early.items).toEqual([{ path: "/k5", value: 5 }]);
    // It reads a bounded window past /k5, not the 11 MB after it.
    const size = statSync(path.join(dir, "members.json")).size;
    expect(bytesRead(limited.pid!) - before).toBeLessThan(size / 2);
  });

  it("catastrophic match() patterns run in linear time or hit the regex size limit", async () => {
    const none = expectPage(
      await server.call("json_read", {
        path: "regex.jsonl",
        language: "jsonpath",
        query: "$[?match(@.s, '(a|a)*(a*)*b')]",
      }),
      8000,
    );
    expect(none).toMatchObject({ items: [], complete: true });
    const e = expectError(
      await server.call("json_read", {
        path: "regex.jsonl",
        language: "jsonpath",
        query: "$[?match(@.s, '((a{1,100}){1,100}){1,100}')]",
      }),
      "RESOURCE_LIMIT_EXCEEDED",
    );
    expect(e.limit.name).toBe("max_regex_states");
  });
});

describe("CLI", () => {
  it("pagewise json FILE QUERY [--pointer] prints the same pages", async () => {
    const run = async (...args: string[]) => {
      const out = await runCli(["json", ...args, "--root", dir, "--json"], {
        cwd: dir,
        env: { PAGEWISE_CURSOR_KEY: KEY },
      });
      expect(out.status, out.stderr).toBe(0);
      return out.stdout;
    };
    const a = JSON.parse(await run("spelling.json", "$.big"));
    expect(a).toMatchObject({
      language: "jsonpath",
    });
    expect(JSON.stringify(a.items)).not.toContain("12345678901234567890123"); // parsed by JSON.parse
    expect(await run("spelling.json", "$.big")).toContain('"value":12345678901234567890123}');
    const b = JSON.parse(await run("spelling.json", "/arr/0", "--pointer"));
    expect(b).toMatchObject({ language: "pointer", items: [{ path: "/arr/0", value: 1 }] });
    const c = JSON.parse(await run("records.jsonl", "$[*].id", "--max-items", "3"));
    expect(c.items.map((i: any) => i.value)).toEqual([0, 1, 2]);
    const d = JSON.parse(await run("--cursor", c.next_cursor));
    expect(d.items.map((i: any) => i.value)).toEqual([3, 4, 5]);
  });
});
