import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { countTurns } from "../core/test-support/turns.js";
import { QueryEvaluator } from "./evaluator.js";
import {
  bufferReader,
  compactJsonText,
  compileQuery,
  decodeResume,
  encodeResume,
  fileHandleReader,
  runQuery,
  runQueryBatches,
} from "./index.js";
import { DEFAULT_JSON_LIMITS } from "./limits.js";
import { matches, runAll } from "./test-support/helpers.js";
import { Tokenizer, type TokenSink } from "./tokenizer.js";

/** A reader over `bytes` that counts the bytes read through it. */
function bytesCountingReader(bytes: Uint8Array) {
  const inner = bufferReader(bytes);
  const reader = {
    bytes: 0,
    size: inner.size,
    async read(position: number, length: number) {
      const out = await inner.read(position, length);
      reader.bytes += out.length;
      return out;
    },
  };
  return reader;
}

describe("runQuery over a file", () => {
  test("reads through a FileHandle in chunks and resumes from an encoded state", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pagewise-json-"));
    try {
      const path = join(dir, "events.jsonl");
      const lines = Array.from({ length: 5000 }, (_, i) =>
        JSON.stringify({ i, level: i % 10 === 0 ? "error" : "info", msg: `m${i}` }),
      );
      await writeFile(path, `${lines.join("\r\n")}\r\n`);
      const handle = await open(path, "r");
      try {
        const { size } = await handle.stat();
        const reader = fileHandleReader(handle, size);
        const q = compileQuery("jsonpath", "$[?@.level == 'error'].msg");
        const page: string[] = [];
        let cursor: Uint8Array | undefined;
        for await (const m of runQuery(reader, "jsonl", q)) {
          page.push(compactJsonText(await reader.read(m.start, m.end - m.start)));
          cursor = encodeResume(m.resume);
          if (page.length === 100) break;
        }
        expect(page[99]).toBe('"m990"');
        expect(cursor!.length).toBeLessThanOrEqual(10);
        const next: string[] = [];
        for await (const m of runQuery(reader, "jsonl", q, decodeResume(cursor!))) {
          next.push(compactJsonText(await reader.read(m.start, m.end - m.start)));
        }
        expect(next.length).toBe(400);
        expect(next[0]).toBe('"m1000"');
      } finally {
        await handle.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("errors met after a resume", () => {
  test("carry absolute lines and columns", async () => {
    const text = `[\n${Array.from({ length: 50 }, (_, i) => `  {"i": ${i}}`).join(",\n")},\n  {"i": 50,}\n]`;
    const first = await (async () => {
      for await (const m of runQuery(
        {
          size: text.length,
          read: async (p, l) => new TextEncoder().encode(text).subarray(p, p + l),
        },
        "json",
        compileQuery("jsonpath", "$[*].i"),
      )) {
        return m;
      }
    })();
    await expect(runAll(text, "$[*].i", { resume: first!.resume })).rejects.toMatchObject({
      code: "SYNTAX_ERROR",
      details: { location: { line: 52, column: 12, path: "/50" } },
    });
  });

  test("a cancelled scan stops with CANCELLED", async () => {
    const controller = new AbortController();
    controller.abort();
    const gen = runQuery(
      { size: 3, read: async () => new TextEncoder().encode("[1]") },
      "json",
      compileQuery("jsonpath", "$[*]"),
      undefined,
      undefined,
      controller.signal,
    );
    await expect(gen.next()).rejects.toMatchObject({ code: "CANCELLED" });
  });
});

describe("runQuery as an async iterator", () => {
  const doc = new TextEncoder().encode(
    `${Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: i })).join("\n")}\n`,
  );
  const countingReader = () => bytesCountingReader(doc);

  test("stopping early reads only as far as the matches handed out needed", async () => {
    const reader = countingReader();
    const it = runQuery(reader, "jsonl", compileQuery("jsonpath", "$[*].id"));
    const first = await it.next();
    expect(first.done).toBe(false);
    await it.return(undefined);
    expect(reader.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  test("next() calls made without waiting get every match once, in order", async () => {
    const q = compileQuery("jsonpath", "$[*].id");
    const sequential: string[] = [];
    for await (const m of runQuery(countingReader(), "jsonl", q)) sequential.push(m.pointer);
    const it = runQuery(countingReader(), "jsonl", q);
    const results = await Promise.all(
      Array.from({ length: sequential.length + 2 }, () => it.next()),
    );
    expect(results.filter((r) => !r.done).map((r) => r.value!.pointer)).toEqual(sequential);
    expect(results.slice(-2).every((r) => r.done)).toBe(true);
  });

  test("runQueryBatches hands out each slice's matches as soon as that slice is fed", async () => {
    const q = compileQuery("jsonpath", "$[*].id");
    const sequential: string[] = [];
    for await (const m of runQuery(countingReader(), "jsonl", q)) sequential.push(m.pointer);
    const batched: string[] = [];
    const sizes: number[] = [];
    for await (const batch of runQueryBatches(countingReader(), "jsonl", q)) {
      sizes.push(batch.length);
      for (const m of batch) batched.push(m.pointer);
    }
    expect(batched).toEqual(sequential);
    // Records of 10 to 14 bytes: a slice of 8 KiB holds at most 820 (a 64 KiB read, 4,600+).
    expect(Math.max(...sizes)).toBeLessThanOrEqual(820);
    // A consumer that stops after the first batch had the tokenizer go no further than one read.
    const reader = countingReader();
    const batches = runQueryBatches(reader, "jsonl", q);
    expect((await batches.next()).value?.length).toBeGreaterThan(0);
    await batches.return(undefined);
    expect(reader.bytes).toBeLessThanOrEqual(64 * 1024);
  });

  test("an error after some matches comes after them", async () => {
    const bad = new TextEncoder().encode('{"id":1}\n{"id":2}\n{"id":3,}\n');
    const it = runQuery(bufferReader(bad), "jsonl", compileQuery("jsonpath", "$[*].id"));
    expect((await it.next()).value?.pointer).toBe("/0/id");
    expect((await it.next()).value?.pointer).toBe("/1/id");
    expect((await it.next()).value?.pointer).toBe("/2/id"); // complete before the stray comma
    await expect(it.next()).rejects.toMatchObject({ code: "SYNTAX_ERROR" });
  });
});

describe("events a query no longer needs", () => {
  /** Runs `query` over `text` and counts the token events the evaluator received. */
  const eventsFor = (query: string, text: string, format: "json" | "jsonl" = "jsonl") => {
    const ev = new QueryEvaluator(
      compileQuery("jsonpath", query).segments,
      format !== "json",
      DEFAULT_JSON_LIMITS,
      { limits: DEFAULT_JSON_LIMITS },
    );
    let events = 0;
    const counting: TokenSink = {
      open(kind, start) {
        events++;
        ev.open(kind, start);
      },
      close(end) {
        events++;
        ev.close(end);
      },
      key(name, start) {
        events++;
        ev.key(name, start);
      },
      scalar(type, start, end) {
        events++;
        ev.scalar(type, start, end);
      },
    };
    const tok = new Tokenizer(format, DEFAULT_JSON_LIMITS, counting);
    ev.attach(tok);
    tok.start();
    tok.feed(new TextEncoder().encode(text));
    tok.end();
    return { events, pointers: ev.out.map((m) => m.pointer) };
  };
  const records = Array.from(
    { length: 100 },
    (_, i) => `{"id":${i},"tags":[${"1,".repeat(50)}2],"sub":{"a":{"b":[1,2]}},"note":"n${i}"}`,
  ).join("\n");

  test("the rest of a record whose names are all selected is checked but not evaluated", async () => {
    // Per record: its open, the name and value of "id", its close; the sequence's open and close.
    expect(eventsFor("$[*].id", records)).toEqual({
      events: 100 * 4 + 2,
      pointers: Array.from({ length: 100 }, (_, i) => `/${i}/id`),
    });
    // A name after the containers: their insides are skipped, the names around them are not.
    expect(eventsFor("$[*].note", records).events).toBe(100 * 12 + 2);
    // A query that can still select inside gets every event.
    expect(eventsFor("$[*]..b", records).events).toBeGreaterThan(100 * 60);
    // Errors inside the skipped part are still found.
    const bad = `${records}\n{"id":1,"tags":[1,,2]}\n`;
    expect(() => eventsFor("$[*].id", bad)).toThrow(/Unexpected ','/);
    const dup = `{"id":1,"sub":{"x":1,"x":2}}\n`;
    expect(() => eventsFor("$[*].id", dup)).toThrow(/Duplicate member name/);
  });

  test("a query that can select nothing more stops reading, quiet or not", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `{"id":${i},"a":[1,2]}`);
    const counted = (text: string) => bytesCountingReader(new TextEncoder().encode(text));
    const records = `${lines.join("\n")}\n`;
    const cases: [string, "json" | "jsonl", string, string[]][] = [
      [records, "jsonl", "$.id", []], // records are an array: no names at the top
      [`[${lines.join(",")}]`, "json", "$.id", []],
      [records, "jsonl", "$[0].id", ["/0/id"]],
      [`{"id":1,"rest":[${lines.join(",")}]}`, "json", "$.id", ["/id"]],
    ];
    for (const [text, format, query, expected] of cases) {
      const reader = counted(text);
      const found: string[] = [];
      for await (const m of runQuery(reader, format, compileQuery("jsonpath", query)))
        found.push(m.pointer);
      expect(found).toEqual(expected);
      expect(reader.bytes).toBeLessThanOrEqual(64 * 1024);
    }
  });

  test("the answers are the same with and without the skipped events", async () => {
    const doc = `{"a":{"x":[1,{"y":2}],"b":3},"b":{"b":[4]},"c":[{"b":5},{"d":6}]}`;
    for (const query of ["$.a.b", "$.b.b", "$.c[*].b", "$[*].b", "$.a.x[1].y", "$.c[0]"]) {
      const expected = await matches(doc, query);
      expect(eventsFor(query, doc, "json").pointers).toEqual(
        expected.map((line) => line.split("=")[0]),
      );
    }
  });
});

describe("runQueryBatches and the event loop", () => {
  /**
   * Runs `query` over 400 records read from memory (reads resolve as microtasks: without the
   * driver's own yields, no timer or I/O callback could run before the whole query is done) and
   * counts the event loop's turns meanwhile.
   */
  async function turnsDuring(query: string): Promise<{ found: number; turns: number }> {
    const records = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({ i, msg: "x".repeat(300) }),
    );
    const bytes = new TextEncoder().encode(`${records.join("\n")}\n`);
    const turns = countTurns();
    let found = 0;
    const compiled = compileQuery("jsonpath", query);
    for await (const batch of runQueryBatches(bufferReader(bytes), "jsonl", compiled)) {
      found += batch.length;
    }
    return { found, turns: turns.stop() };
  }

  test("gives the event loop turns while its match()/search() tests work", async () => {
    const { found, turns } = await turnsDuring("$[?search(@.msg, 'x{0,600}y')].i");
    expect(found).toBe(0);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  test("yields no turn of its own for a query without regular expressions", async () => {
    expect(await turnsDuring("$[?@.i > 390].i")).toEqual({ found: 9, turns: 0 });
  });
});
