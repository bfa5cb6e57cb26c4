import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  compactJsonText,
  compileQuery,
  decodeResume,
  encodeResume,
  fileHandleReader,
  runQuery,
} from "./index.js";
import { runAll } from "./test-support/helpers.js";

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
