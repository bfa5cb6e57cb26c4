/**
 * Property tests of `read` through the MCP server (in process, over the SDK's in-memory transport:
 * thousands of calls; the stdio transport has its own end-to-end tests): for random text and random
 * budgets, pages concatenate to the file exactly, every page fits and starts at the line and byte
 * where the one before ended, every page advances, a repeated cursor gives the same page, and the
 * last page says so; and a walk whose file is rewritten between two pages (same size, mtime put
 * back) gives the old version's text up to the rewrite and CONTENT_CHANGED right after it.
 */
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEstimator } from "../src/core/index.js";
import { type InMemoryServer, startInMemory } from "./support/in-memory.js";
import { tempDir } from "./support/server.js";

const PIECES = [
  "中",
  "文",
  "한",
  "🙂",
  "👩‍💻",
  "𠀀",
  '"',
  "\\",
  "\r\n",
  "\r",
  "\n",
  "\0",
  "\u0001",
  "\u001f",
  "\uFEFF",
  "\t",
  " ",
  "é",
  "/",
  "<",
  "\u2028",
];

const textArb = fc
  .array(
    fc.oneof(
      fc.constantFrom(...PIECES),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: "grapheme", maxLength: 6 }),
    ),
    {
      minLength: 20,
      maxLength: 1500,
      size: "max",
    },
  )
  .map((parts) => parts.join(""));

for (const estimatorName of ["default", "openviking"]) {
  describe(`read pages (${estimatorName} estimator)`, () => {
    let server: InMemoryServer;
    let dir: string;
    let cleanup: () => void;
    let count: (text: string) => number;

    beforeAll(async () => {
      ({ dir, cleanup } = tempDir());
      server = await startInMemory([dir], { estimator: estimatorName });
      const estimator = await createEstimator(estimatorName);
      count = (t) => estimator.count(t);
    });
    afterAll(async () => {
      await server?.close();
      cleanup?.();
    });

    it("are lossless, within budget, advancing and repeatable", async () => {
      let n = 0;
      let totalPages = 0;
      await fc.assert(
        fc.asyncProperty(textArb, fc.integer({ min: 70, max: 700 }), async (text, requested) => {
          let budget = requested;
          const name = `p${n++}.txt`;
          writeFileSync(path.join(dir, name), text);
          const expected = readFileSync(path.join(dir, name), "utf8");
          const contents: string[] = [];
          // A budget too small for the metadata plus one character (which depends on the page:
          // an escaped control character or a longer cursor costs more) must name one that works.
          const call = async (args: Record<string, unknown>) => {
            let page = await server.call("read", { ...args, max_tokens: budget });
            if (page.isError && page.json.error.code === "BUDGET_TOO_SMALL") {
              const minimum = page.json.error.minimum_max_tokens;
              expect(minimum).toBeGreaterThan(budget);
              budget = minimum;
              page = await server.call("read", { ...args, max_tokens: budget });
            }
            return page;
          };
          let page = await call({ path: name });
          for (let guard = 0; ; guard++) {
            expect(page.isError, page.text).toBe(false);
            expect(count(page.text)).toBeLessThanOrEqual(budget);
            // Where the page starts: the line and byte after everything before it.
            const before = contents.join("");
            expect(page.json.position).toMatchObject({
              line: before.split("\n").length,
              byte: Buffer.byteLength(before, "utf8"),
            });
            contents.push(page.json.content);
            if (!page.json.has_more) {
              expect(page.json.next_cursor).toBeNull();
              break;
            }
            expect(page.json.content.length).toBeGreaterThan(0);
            expect(guard).toBeLessThan(10_000);
            const cursor = page.json.next_cursor;
            page = await call({ cursor });
            if (guard === 0) {
              const again = await server.call("read", { cursor, max_tokens: budget });
              expect(again.text).toBe(page.text);
            }
          }
          expect(contents.join("")).toBe(expected);
          totalPages += contents.length;
        }),
        { numRuns: 60 },
      );
      // The generated texts must exercise multi-page reads, not just single pages.
      expect(totalPages).toBeGreaterThan(120);
    }, 180_000);
  });
}

describe("read pages of sparse text", () => {
  it("fill the budget where text takes more units per token than the first window assumes", async () => {
    const { dir, cleanup } = tempDir();
    const server = await startInMemory([dir]);
    try {
      // Deep indentation: runs of spaces cost the default estimator 1/8 token a unit.
      const text = `${" ".repeat(120)}x\n`.repeat(3000);
      writeFileSync(path.join(dir, "sparse.txt"), text);
      const budget = 2000;
      const contents: string[] = [];
      let page = await server.call("read", { path: "sparse.txt", max_tokens: budget });
      for (;;) {
        expect(page.isError, page.text).toBe(false);
        const tokens = server.estimator.count(page.text);
        expect(tokens).toBeLessThanOrEqual(budget);
        contents.push(page.json.content);
        if (!page.json.has_more) break;
        expect(tokens).toBeGreaterThanOrEqual(budget * 0.98);
        page = await server.call("read", { cursor: page.json.next_cursor });
      }
      expect(contents.join("")).toBe(text);
      expect(contents[0]!.length).toBeGreaterThan(budget * 6);
    } finally {
      await server.close();
      cleanup();
    }
  });
});

describe("read walks over a file rewritten between two pages", () => {
  it("give the old text up to the rewrite and CONTENT_CHANGED after it, fresh or settled", async () => {
    const { dir, cleanup } = tempDir();
    const server = await startInMemory([dir]);
    let n = 0;
    let rewrites = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          textArb,
          fc.integer({ min: 0, max: 6 }),
          fc.boolean(),
          async (text, rewriteAfter, settled) => {
            // The other version: the same bytes in another order (same size, valid UTF-8).
            const points = [...text];
            const half = Math.floor(points.length / 2);
            const other = [...points.slice(half), ...points.slice(0, half)].join("");
            const name = `w${n++}.txt`;
            const file = path.join(dir, name);
            writeFileSync(file, text);
            // A file written a moment ago is snapshotted; one left alone past its racy window
            // is versioned by its state.
            if (settled) await new Promise((resolve) => setTimeout(resolve, 80));
            let page = await server.call("read", { path: name, max_tokens: 300 });
            const contents: string[] = [];
            for (let k = 0; ; k++) {
              expect(page.isError, page.text).toBe(false);
              contents.push(page.json.content);
              if (!page.json.has_more) break;
              if (k === rewriteAfter && other !== text) {
                const before = statSync(file);
                writeFileSync(file, other);
                utimesSync(file, before.atime, before.mtime);
                const after = await server.call("read", { cursor: page.json.next_cursor });
                expect(after.json?.error?.code, after.text.slice(0, 200)).toBe("CONTENT_CHANGED");
                rewrites++;
                break;
              }
              page = await server.call("read", { cursor: page.json.next_cursor });
            }
            expect(text.startsWith(contents.join(""))).toBe(true);
          },
        ),
        { numRuns: 60 },
      );
      expect(rewrites).toBeGreaterThan(20);
    } finally {
      await server.close();
      cleanup();
    }
  }, 180_000);
});
