/**
 * In-process tests of the tail source: newest page, walks in both directions reconstruct every
 * record exactly once (long records through their line cursors), appends keep cursors valid,
 * truncation/rotation/rewrites are CONTENT_CHANGED, grep, base64 records, budgets and progress.
 */
import { appendFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultEstimator, isPagewiseError } from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { tempSourceContext } from "../shared/test-support/context.js";
import { readPage, type TailRequest, tailPage } from "./test-support/call.js";

let dir: string;
let ctx: SourceContext;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, ctx, cleanup } = tempSourceContext("pagewise-tail-"));
});
afterAll(() => cleanup());

let fileCounter = 0;
function file(content: string | Buffer): string {
  const name = `f${fileCounter++}.log`;
  writeFileSync(path.join(dir, name), content);
  return name;
}

interface Item {
  position: number;
  text: string;
  truncated?: boolean;
  partial?: boolean;
  line_cursor?: string;
  encoding?: string;
}
interface Page {
  items: Item[];
  has_earlier: boolean;
  earlier_cursor: string | null;
  has_later: boolean;
  later_cursor: string;
  version: string;
}

async function tail(req: Partial<TailRequest>): Promise<{ page: Page; text: string }> {
  const text = await tailPage(ctx, {
    limit: 50,
    maxCharsPerItem: 2000,
    maxTokens: 8000,
    ...req,
  });
  return { page: JSON.parse(text), text };
}

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isPagewiseError(err)) return err.code;
    throw err;
  }
  return "no error";
}

/** The whole text of an item: its own text, or everything its line cursor reads. */
async function wholeText(item: Item, maxTokens = 800): Promise<string> {
  if (!item.truncated) return item.text;
  let out = "";
  let cursor: string | null = item.line_cursor!;
  let pages = 0;
  while (cursor) {
    const page = JSON.parse(await readPage(ctx, { cursor, maxTokens }));
    out += page.content;
    cursor = page.next_cursor;
    if (++pages > 100_000) throw new Error("line cursor does not end");
  }
  return out;
}

/** Records of `content` as tail should see them (text without terminators). */
function recordsOf(content: string): string[] {
  if (content === "") return [];
  const parts = content.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts.map((p, i) =>
    i < parts.length - 1 || content.endsWith("\n") ? p.replace(/\r$/, "") : p,
  );
}

/** Walks `before` from the newest page to the start; returns items in file order. */
async function walkBackward(req: Partial<TailRequest>): Promise<{ items: Item[]; pages: Page[] }> {
  const pages: Page[] = [];
  let { page, text } = await tail(req);
  for (;;) {
    expect(defaultEstimator.count(text)).toBeLessThanOrEqual(req.maxTokens ?? 8000);
    pages.push(page);
    if (!page.has_earlier) {
      expect(page.earlier_cursor).toBeNull();
      break;
    }
    expect(page.items.length + (req.grep ? 1 : 0)).toBeGreaterThan(0);
    if (pages.length > 100_000) throw new Error("no progress");
    const next = await tail({ ...req, path: undefined, before: page.earlier_cursor! });
    if (next.page.items.length > 0 && page.items.length > 0) {
      expect(next.page.items.at(-1)!.position).toBeLessThan(page.items[0]!.position);
    }
    ({ page, text } = next);
  }
  return { items: pages.reverse().flatMap((p) => p.items), pages };
}

async function walkForward(req: Partial<TailRequest>): Promise<Item[]> {
  const items: Item[] = [];
  let { page, text } = await tail({ ...req, fromStart: true });
  let pages = 0;
  for (;;) {
    expect(defaultEstimator.count(text)).toBeLessThanOrEqual(req.maxTokens ?? 8000);
    items.push(...page.items);
    if (!page.has_later) break;
    expect(page.items.length + (req.grep ? 1 : 0)).toBeGreaterThan(0);
    if (++pages > 100_000) throw new Error("no progress");
    ({ page, text } = await tail({ ...req, path: undefined, after: page.later_cursor }));
  }
  return items;
}

/** Both pages end at the same record and one's items are a suffix of the other's. */
function expectSameEnd(a: Item[], b: Item[]): void {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  expect(short.length).toBeGreaterThan(0);
  expect(long.slice(long.length - short.length)).toEqual(short);
}

describe("tail: newest page", () => {
  it("returns the newest records, oldest first, ending with the last line", async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i} ${"x".repeat(i % 37)}`);
    const name = file(`${lines.join("\n")}\n`);
    const { page } = await tail({ path: name });
    expect(page.items.length).toBe(50);
    expect(page.items.map((i) => i.text)).toEqual(lines.slice(-50));
    expect(page.has_earlier).toBe(true);
    expect(page.has_later).toBe(false);
    expect(typeof page.later_cursor).toBe("string");
    expect(page.earlier_cursor!.length).toBeLessThanOrEqual(100);
  });

  it("marks a last record without terminator as partial, handles CRLF and empty lines", async () => {
    const name = file("a\r\n\r\nb\n\nlast bit");
    const { page } = await tail({ path: name });
    expect(page.items).toEqual([
      { position: 0, text: "a" },
      { position: 3, text: "" },
      { position: 5, text: "b" },
      { position: 7, text: "" },
      { position: 8, text: "last bit", partial: true },
    ]);
    expect(page.has_earlier).toBe(false);
    expect(page.earlier_cursor).toBeNull();
  });

  it("gives an empty page for an empty file, with a later cursor", async () => {
    const name = file("");
    const { page } = await tail({ path: name });
    expect(page.items).toEqual([]);
    expect(page.has_earlier).toBe(false);
    appendFileSync(path.join(dir, name), "first\n");
    const next = await tail({ after: page.later_cursor });
    expect(next.page.items.map((i) => i.text)).toEqual(["first"]);
  });

  it("does not split a partial character being written", async () => {
    const name = file(Buffer.concat([Buffer.from("ok\nhalf é"), Buffer.from([0xe2, 0x82])]));
    const { page } = await tail({ path: name });
    expect(page.items.at(-1)).toEqual({ position: 3, text: "half é", partial: true });
    appendFileSync(path.join(dir, name), Buffer.from([0xac, 0x0a]));
    const next = await tail({ after: page.later_cursor });
    expect(next.page.items).toEqual([{ position: 3, text: "half é€" }]);
  });

  it("clamps a long invalid UTF-8 record as base64; its line cursor reads its bytes", async () => {
    const bytes = Buffer.alloc(30_000);
    for (let i = 0; i < bytes.length; i++)
      bytes[i] = (i * 7919) % 256 === 10 ? 11 : (i * 7919) % 256;
    const name = file(Buffer.concat([Buffer.from("head\n"), bytes, Buffer.from("\ntail\n")]));
    const { items } = await walkBackward({ path: name, maxTokens: 600, maxCharsPerItem: 1000 });
    const item = items[1]!;
    expect(item).toMatchObject({ encoding: "base64", truncated: true });
    expect(item.text.length % 4).toBe(0);
    const parts: Buffer[] = [];
    let cursor: string | null = item.line_cursor!;
    while (cursor) {
      const page = JSON.parse(await readPage(ctx, { cursor, maxTokens: 2000 }));
      expect(page.encoding).toBe("base64");
      parts.push(Buffer.from(page.content, "base64"));
      cursor = page.next_cursor;
    }
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
    expect(bytes.subarray(0, (item.text.length / 4) * 3).toString("base64")).toBe(item.text);
  });

  it("shows invalid UTF-8 records as base64", async () => {
    const name = file(
      Buffer.concat([Buffer.from("fine\n"), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from("\n")]),
    );
    const { page } = await tail({ path: name });
    expect(page.items[1]).toEqual({
      position: 5,
      text: Buffer.from([0xff, 0xfe, 0x41]).toString("base64"),
      encoding: "base64",
    });
  });
});

describe("tail: walks", () => {
  it("walking before reconstructs every record once, in order (long lines via line cursors)", async () => {
    const lines = Array.from({ length: 300 }, (_, i) =>
      i % 41 === 7 ? `long ${i} ${"é🙂abc".repeat(900)}` : `r${i}${i % 3 === 0 ? "\r" : ""}`,
    );
    const content = `${lines.join("\n")}\n`;
    const name = file(content);
    for (const [maxTokens, maxChars, limit] of [
      [8000, 2000, 50],
      [500, 100, 1000],
      [400, 2000, 7],
    ] as const) {
      const { items } = await walkBackward({
        path: name,
        maxTokens,
        maxCharsPerItem: maxChars,
        limit,
      });
      const texts = await Promise.all(items.map((i) => wholeText(i)));
      expect(texts).toEqual(recordsOf(content));
      expect(new Set(items.map((i) => i.position)).size).toBe(items.length);
      const forward = await walkForward({
        path: name,
        maxTokens,
        maxCharsPerItem: maxChars,
        limit,
      });
      expect(await Promise.all(forward.map((i) => wholeText(i)))).toEqual(recordsOf(content));
    }
  });

  it("property: any content, any budget — walks are lossless, in budget and always progress", async () => {
    const piece = fc.oneof(
      fc.constantFrom("\n", "\r\n", "\n\n", "é", "🙂", '"', "\\", "\t", "\r"),
      fc.string({ maxLength: 30 }),
      fc.string({ minLength: 200, maxLength: 900 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 60 }).map((p) => p.join("")),
        fc.integer({ min: 400, max: 1200 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 30 }),
        async (content, maxTokens, maxChars, limit) => {
          const name = file(content);
          const req = { path: name, maxTokens, maxCharsPerItem: maxChars, limit };
          const back = await walkBackward(req);
          expect(await Promise.all(back.items.map((i) => wholeText(i, 400)))).toEqual(
            recordsOf(content),
          );
          const fwd = await walkForward(req);
          expect(await Promise.all(fwd.map((i) => wholeText(i, 400)))).toEqual(recordsOf(content));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("grep filters while scanning, within budget, and the cursor keeps the filter", async () => {
    const lines = Array.from({ length: 2000 }, (_, i) =>
      i % 10 === 3 ? `ERROR ${i}` : `info ${i}`,
    );
    const content = `${lines.join("\n")}\n`;
    const name = file(content);
    const { items } = await walkBackward({ path: name, grep: "ERROR", maxTokens: 500 });
    expect(items.map((i) => i.text)).toEqual(lines.filter((l) => l.startsWith("ERROR")));
    const re = await walkBackward({ path: name, grep: "^error 1\\d3$", maxTokens: 500 });
    expect(re.items.map((i) => i.text)).toEqual(lines.filter((l) => /^ERROR 1\d3$/.test(l)));
    expect(await errorOf(tail({ path: name, grep: "([" }))).toBe("INVALID_ARGUMENT");
    const first = await tail({ path: name, grep: "ERROR", maxTokens: 500 });
    expect(await errorOf(tail({ before: first.page.earlier_cursor!, grep: "info" }))).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

describe("tail: filtered scans stop and resume", () => {
  it("a scan limit ends a page early; its cursors move past what was scanned, matches or not", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => (i === 1234 ? "needle here" : `hay ${i}`));
    const name = file(`${lines.join("\n")}\n`);
    const req = { grep: "needle", scanMaxBytes: 2000, maxTokens: 500 };
    const back = await walkBackward({ path: name, ...req });
    expect(back.items.map((i) => i.text)).toEqual(["needle here"]);
    expect(back.pages.length).toBeGreaterThan(10);
    const fwd = await walkForward({ path: name, ...req });
    expect(fwd.map((i) => i.text)).toEqual(["needle here"]);
  });
});

describe("tail: appends and changes", () => {
  it("after returns exactly the appended records; old cursors keep working", async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `old ${i}`);
    const name = file(`${lines.join("\n")}\n`);
    const full = path.join(dir, name);
    const first = await tail({ path: name, maxTokens: 400 });
    const second = await tail({ before: first.page.earlier_cursor!, maxTokens: 400 });
    appendFileSync(full, "new 1\nnew 2\n");
    const again = await tail({ before: first.page.earlier_cursor!, maxTokens: 400 });
    // The same records before the cursor (the count may differ by the new cursors' lengths).
    expectSameEnd(again.page.items, second.page.items);
    const caught = await tail({ after: first.page.later_cursor, maxTokens: 400 });
    expect(caught.page.items.map((i) => i.text)).toEqual(["new 1", "new 2"]);
    expect(caught.page.has_later).toBe(false);
    appendFileSync(full, "new 3\npart");
    const more = await tail({ after: caught.page.later_cursor, maxTokens: 400 });
    expect(more.page.items).toMatchObject([{ text: "new 3" }, { text: "part", partial: true }]);
    appendFileSync(full, "ial\n");
    const done = await tail({ after: more.page.later_cursor, maxTokens: 400 });
    expect(done.page.items).toEqual([{ position: more.page.items[1]!.position, text: "partial" }]);
    // Earlier cursors from the first page still walk to the start.
    const rest = await tail({ before: second.page.earlier_cursor!, maxTokens: 400 });
    expect(rest.page.items.length).toBeGreaterThan(0);
  });

  it("repeating a cursor on unchanged content gives the same page", async () => {
    const name = file(Array.from({ length: 300 }, (_, i) => `x${i}\n`).join(""));
    const first = await tail({ path: name, maxTokens: 500 });
    const a = await tail({ before: first.page.earlier_cursor!, maxTokens: 500 });
    const b = await tail({ before: first.page.earlier_cursor!, maxTokens: 500 });
    expect(a.text).toBe(b.text);
  });

  it("truncation, rotation and same-size rewrites are CONTENT_CHANGED", async () => {
    const content = Array.from({ length: 3000 }, (_, i) => `entry ${i}\n`).join("");
    const make = async () => {
      const name = file(content);
      const first = await tail({ path: name, maxTokens: 600, maxCharsPerItem: 3 });
      return { name, full: path.join(dir, name), first };
    };
    const check = async (first: { page: Page }, expected: string) => {
      expect(await errorOf(tail({ before: first.page.earlier_cursor!, maxTokens: 600 }))).toBe(
        expected,
      );
      expect(await errorOf(tail({ after: first.page.later_cursor, maxTokens: 600 }))).toBe(
        expected,
      );
      expect(await errorOf(wholeText(first.page.items.at(-1)!))).toBe(expected);
    };
    // Truncation (even regrown past the old size).
    let t = await make();
    truncateSync(t.full, 100);
    await check(t.first, "CONTENT_CHANGED");
    appendFileSync(t.full, content);
    await check(t.first, "CONTENT_CHANGED");
    // Rotation: rename, then a new file with the same content.
    t = await make();
    renameSync(t.full, `${t.full}.1`);
    writeFileSync(t.full, content);
    await check(t.first, "CONTENT_CHANGED");
    // Same-size rewrite of the first line only.
    t = await make();
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(t.full, content.replace("entry 0", "entry X"));
    expect(await errorOf(tail({ before: t.first.page.earlier_cursor!, maxTokens: 600 }))).toBe(
      "CONTENT_CHANGED",
    );
    // A rewrite of the anchored end plus an append.
    t = await make();
    writeFileSync(t.full, `${content.slice(0, -8)}changed\nappended\n`);
    expect(await errorOf(tail({ after: t.first.page.later_cursor, maxTokens: 600 }))).toBe(
      "CONTENT_CHANGED",
    );
    // The line cursor survives appends.
    t = await make();
    appendFileSync(t.full, "more\n");
    expect(await wholeText(t.first.page.items.at(-1)!)).toBe("entry 2999");
  });
});

describe("tail: budgets and arguments", () => {
  it("clamps a record larger than the budget and still advances", async () => {
    const big = "y".repeat(50_000);
    const name = file(`a\n${big}\nb\n`);
    const { items, pages } = await walkBackward({
      path: name,
      maxTokens: 400,
      maxCharsPerItem: 100_000,
    });
    expect(await Promise.all(items.map((i) => wholeText(i)))).toEqual(["a", big, "b"]);
    expect(pages.every((p) => p.items.length >= 1)).toBe(true);
  });

  it("BUDGET_TOO_SMALL when not even one character fits; cursor kind and argument errors", async () => {
    const name = file("hello\nworld\n");
    expect(await errorOf(tail({ path: name, maxTokens: 20 }))).toBe("BUDGET_TOO_SMALL");
    const { page } = await tail({ path: name, maxTokens: 500, limit: 1 });
    expect(await errorOf(tail({ after: page.earlier_cursor! }))).toBe("INVALID_ARGUMENT");
    expect(await errorOf(tail({ before: page.later_cursor }))).toBe("INVALID_ARGUMENT");
    expect(await errorOf(tail({ before: page.earlier_cursor!, after: page.later_cursor }))).toBe(
      "INVALID_ARGUMENT",
    );
    expect(await errorOf(tail({ before: `${page.earlier_cursor!.slice(0, -2)}AA` }))).toBe(
      "INVALID_CURSOR",
    );
    expect(await errorOf(tail({ path: file("other\n"), before: page.earlier_cursor! }))).toBe(
      "INVALID_CURSOR",
    );
  });
});
