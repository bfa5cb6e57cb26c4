/**
 * Property tests of the refusal's named budget (the contract's "budgets exact at every size"), in
 * process over the SDK's in-memory transport: for random files and random budgets, a refusal names
 * a budget above the refused one that returns a page, and no budget between the two does; a page
 * that ends the result needs no room for a cursor, so a file whose whole answer fits is answered
 * whole. Every paging tool is checked on first pages and on continuations, over random files,
 * trees (deep ones included), logs and JSON.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEstimator, type Estimator } from "../src/core/index.js";
import { MAX_CARRIED_ARGUMENT_BYTES } from "../src/sources/limits.js";
import { type InMemoryServer, startInMemory } from "./support/in-memory.js";
import { tempDir } from "./support/server.js";

const textArb = fc
  .array(
    fc.oneof(
      fc.constantFrom("中", "🙂", '"', "\\", "\n", "\r\n", "\t", " ", "\u0001", "é"),
      fc.string({ maxLength: 10 }),
    ),
    { minLength: 1, maxLength: 200 },
  )
  .map((parts) => parts.join(""));

/**
 * Waits until a file just written is settled (its version then stays one kind): a page's cursor
 * carries the kind of its version, so a page of a file written a moment ago can cost a token more
 * than the same page a moment later.
 */
const settled = () => new Promise((resolve) => setTimeout(resolve, 60));

type Call = (args: Record<string, unknown>) => ReturnType<InMemoryServer["call"]>;

/** Checks the refusal at `budget` (if it is one) against the budgets up to the one it names. */
async function checkThreshold(call: Call, args: Record<string, unknown>, budget: number) {
  const page = await call({ ...args, max_tokens: budget });
  if (!page.isError) return page;
  expect(page.json.error.code, page.text).toBe("BUDGET_TOO_SMALL");
  const named = page.json.error.minimum_max_tokens;
  expect(named).toBeGreaterThan(budget);
  expect(page.json.error.retry).toEqual({ max_tokens: named });
  for (let below = Math.max(budget + 1, named - 6); below < named; below++) {
    const refused = await call({ ...args, max_tokens: below });
    expect(refused.isError, `max_tokens ${below} below the named ${named}`).toBe(true);
    expect(refused.json.error.minimum_max_tokens, `${JSON.stringify(args)} at ${below}`).toBe(
      named,
    );
  }
  const works = await call({ ...args, max_tokens: named });
  expect(works.isError, works.text).toBe(false);
  return works;
}

describe("a refusal names the smallest budget above it that returns a page", () => {
  let server: InMemoryServer;
  let dir: string;
  let cleanup: () => void;
  let n = 0;
  let estimator: Estimator;
  beforeAll(async () => {
    estimator = await createEstimator("default");
    ({ dir, cleanup } = tempDir());
    server = await startInMemory([dir]);
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
  });

  it("read: first pages and continuations", async () => {
    const call: Call = (args) => server.call("read", args);
    await fc.assert(
      fc.asyncProperty(textArb, fc.integer({ min: 1, max: 260 }), async (text, budget) => {
        const name = `r${n++}.txt`;
        writeFileSync(path.join(dir, name), text);
        await settled();
        const first = await checkThreshold(call, { path: name }, budget);
        if (first.json.has_more) {
          await checkThreshold(call, { cursor: first.json.next_cursor }, budget);
        }
      }),
      { numRuns: 80 },
    );
  });

  it("search: first pages and continuations", async () => {
    const call: Call = (args) => server.call("search", args);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.stringMatching(/^[a-z ]{0,30}$/), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 200 }),
        async (lines, budget) => {
          const name = `s${n++}.txt`;
          writeFileSync(path.join(dir, name), `${lines.map((l) => `a${l}`).join("\n")}\n`);
          await settled();
          const first = await checkThreshold(call, { pattern: "a", path: name }, budget);
          if (first.json.has_more) {
            await checkThreshold(call, { cursor: first.json.next_cursor }, budget);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("list, tail and json_read: first pages and continuations", async () => {
    const nameArb = fc
      .stringMatching(/^[a-z0-9é中 ._-]{1,16}$/)
      .filter((n) => n !== "." && n !== "..");
    const treeArb = fc.array(fc.array(nameArb, { minLength: 1, maxLength: 12 }), {
      minLength: 1,
      maxLength: 12,
    });
    await fc.assert(
      fc.asyncProperty(
        treeArb,
        fc.array(textArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 400 }),
        async (paths, records, budget) => {
          const base = `t${n++}`;
          for (const parts of paths) {
            const file = path.join(dir, base, ...parts);
            mkdirSync(path.dirname(file), { recursive: true });
            try {
              writeFileSync(path.join(file, "..", `${parts.at(-1)}.txt`), "x");
            } catch {
              // A name that is a directory already.
            }
          }
          writeFileSync(
            path.join(dir, `${base}.log`),
            records.map((r) => r.replace(/\n/g, " ")).join("\n"),
          );
          writeFileSync(path.join(dir, `${base}.json`), JSON.stringify(records));
          await settled();
          const calls: Array<[string, Record<string, unknown>]> = [
            ["list", { path: base, recursive: true }],
            ["tail", { path: `${base}.log` }],
            ["json_read", { path: `${base}.json`, language: "jsonpath", query: "$[*]" }],
          ];
          for (const [tool, args] of calls) {
            const call: Call = (a) => server.call(tool, a);
            const check = async () => {
              const first = await checkThreshold(call, args, budget);
              if (first.json.next_cursor) {
                await checkThreshold(call, { cursor: first.json.next_cursor }, budget);
              }
            };
            // A list cursor carries the second its walk began (to tell directories changed
            // since), so its cost, and the threshold, can move by a token from one second to the
            // next: a check that spanned two seconds is run again once.
            const second = Math.floor(Date.now() / 1000);
            try {
              await check();
            } catch (error) {
              if (tool !== "list" || Math.floor(Date.now() / 1000) === second) throw error;
              await check();
            }
          }
        },
      ),
      { numRuns: 40, endOnFailure: true },
    );
  }, 180_000);

  it("read: a file whose whole answer fits a budget is answered whole at it", async () => {
    await fc.assert(
      fc.asyncProperty(textArb, async (text) => {
        const name = `w${n++}.txt`;
        writeFileSync(path.join(dir, name), text);
        await settled();
        const whole = await server.call("read", { path: name, max_tokens: 25_000 });
        expect(whole.json.has_more).toBe(false);
        const cost = estimator.count(whole.text);
        const exact = await server.call("read", { path: name, max_tokens: cost });
        expect(exact.isError, exact.text).toBe(false);
        expect(exact.json.content).toBe(whole.json.content);
      }),
      { numRuns: 40 },
    );
  });

  it("read: a walk started at the smallest budget that works finishes at it, deep paths included", async () => {
    const dirsArb = fc.array(fc.stringMatching(/^[a-z0-9é中]{1,12}$/), { maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(
        dirsArb,
        fc.array(textArb, { minLength: 1, maxLength: 8 }).map((parts) => parts.join("")),
        async (dirs, text) => {
          const name = path.join(...dirs, `walk${n++}.txt`);
          mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
          writeFileSync(path.join(dir, name), text);
          await settled();
          const refused = await server.call("read", { path: name, max_tokens: 1 });
          const named = refused.json.error.minimum_max_tokens;
          let page = await server.call("read", { path: name, max_tokens: named });
          let content = "";
          for (let pages = 1; ; pages++) {
            expect(page.isError, `page ${pages} at ${named}: ${page.text}`).toBe(false);
            expect(estimator.count(page.text)).toBeLessThanOrEqual(named);
            content += page.json.content;
            if (page.json.next_cursor === null) break;
            page = await server.call("read", { cursor: page.json.next_cursor });
          }
          expect(content).toBe(text);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("search: the longest pattern accepted has pages within the cap, one byte more is refused naming the limit", async () => {
    const name = `cap${n++}.txt`;
    writeFileSync(path.join(dir, name), "ERROR a\n".repeat(300));
    await settled();
    // Random letters are the costliest shape for the cursor that carries the pattern.
    const pattern = `ERROR|${randomLetters(MAX_CARRIED_ARGUMENT_BYTES - 6)}`;
    expect(Buffer.byteLength(pattern)).toBe(MAX_CARRIED_ARGUMENT_BYTES);
    const refused = await server.call("search", { pattern, path: name, max_tokens: 1 });
    expect(refused.json.error.code).toBe("BUDGET_TOO_SMALL");
    const retry = refused.json.error.retry.max_tokens;
    expect(retry).toBeLessThanOrEqual(25_000);
    const page = await server.call("search", { pattern, path: name, max_tokens: retry });
    expect(page.isError, page.text).toBe(false);
    expect(page.json.next_cursor).toEqual(expect.any(String));
    const next = await server.call("search", { cursor: page.json.next_cursor });
    expect(next.isError, next.text).toBe(false);
    expect(next.json.items[0].text).toBe("ERROR a");

    // Multi-byte characters count in UTF-8 bytes, as the cursor carries them.
    const over = [
      ["search", { pattern: `${pattern}x`, path: name }, "max_pattern_bytes"],
      [
        "search",
        { pattern: "é".repeat(MAX_CARRIED_ARGUMENT_BYTES / 2 + 1), path: name },
        "max_pattern_bytes",
      ],
      ["tail", { path: name, grep: `${pattern}x` }, "max_pattern_bytes"],
      [
        "json_read",
        { path: name, language: "jsonpath", query: `$${"[0]".repeat(3000)}` },
        "max_query_bytes",
      ],
    ] as const;
    for (const [tool, args, limit] of over) {
      const answer = await server.call(tool, args);
      expect(answer.json.error.code, `${tool}: ${answer.text.slice(0, 200)}`).toBe(
        "INVALID_ARGUMENT",
      );
      expect(answer.json.error.limit).toMatchObject({
        name: limit,
        limit: MAX_CARRIED_ARGUMENT_BYTES,
      });
    }
  });

  it("search: under a lower cap, a page whose cursor cannot fit it is a limit, with no retry the server would refuse", async () => {
    const low = await startInMemory([dir], { settings: { maxTokensCap: 2000 } });
    try {
      const name = `cap${n++}.txt`;
      writeFileSync(path.join(dir, name), "ERROR a\n".repeat(300));
      await settled();
      const pattern = `ERROR|${randomLetters(4000)}`;
      const page = await low.call("search", { pattern, path: name, max_tokens: 2000 });
      expect(page.json.error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
      expect(page.json.error.limit).toMatchObject({ name: "max_tokens_cap", limit: 2000 });
      expect(page.json.error.limit.value).toBeGreaterThan(2000);
      expect(page.json.error.retry).toBeUndefined();
    } finally {
      await low.close();
    }
  });
});

/** `length` letters from a fixed pseudo-random sequence (the same on every run). */
function randomLetters(length: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let x = 12345;
  let out = "";
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += letters[x % letters.length];
  }
  return out;
}
