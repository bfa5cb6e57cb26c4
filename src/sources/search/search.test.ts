/**
 * In-process tests of the search source: continuations never mix two versions of a file, and a
 * cursor carries its page parameters (budget, limit).
 */
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Roots } from "../../access/index.js";
import {
  CursorCodec,
  defaultEstimator,
  ephemeralCursorKey,
  FileVersions,
  isPagewiseError,
} from "../../core/index.js";
import type { SourceContext } from "../context.js";
import { type SearchRequest, searchPage } from "./search.js";

let dir: string;
let ctx: SourceContext;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-search-")));
  ctx = {
    caller: { identity: "test", roots: new Roots([dir]) },
    codec: new CursorCodec({ key: ephemeralCursorKey() }),
    estimator: defaultEstimator,
    versions: new FileVersions(),
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Page {
  items: Array<{ path: string; line: number; text: string }>;
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
  next_cursor: string | null;
}
async function search(req: Partial<SearchRequest>): Promise<Page> {
  return JSON.parse(await searchPage(ctx, { maxTokens: 8000, inProcess: true, ...req }));
}
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "none";
  } catch (err) {
    return isPagewiseError(err) ? err.code : `not a PagewiseError: ${err}`;
  }
}

/** Rewrites `file` with `content` of the same size and puts its mtime back. */
function rewriteKeepingMtime(file: string, content: string): void {
  const before = statSync(file);
  expect(Buffer.byteLength(content)).toBe(before.size);
  writeFileSync(file, content);
  utimesSync(file, before.atime, before.mtime);
}

describe("search continuations never mix versions", () => {
  it("a file rewritten at the same size with its mtime restored, inside which the page ended: CONTENT_CHANGED (every trial)", async () => {
    for (let trial = 0; trial < 20; trial++) {
      const base = path.join(dir, `mix${trial}`);
      mkdirSync(base);
      const v1 = Array.from({ length: 300 }, (_, i) => `old needle ${String(i).padStart(3, "0")}`);
      writeFileSync(path.join(base, "a.txt"), `${v1.join("\n")}\n`);
      const first = await search({ pattern: "needle", path: `mix${trial}`, limit: 40 });
      expect(first.pagination.has_more).toBe(true);
      const v2 = v1.map((l) => l.replace("old", "new"));
      rewriteKeepingMtime(path.join(base, "a.txt"), `${v2.join("\n")}\n`);
      expect(await codeOf(search({ cursor: first.next_cursor! }))).toBe("CONTENT_CHANGED");
    }
  });

  it("a file after the cursor that changed is served whole in its new version (re-based, not mixed)", async () => {
    const base = path.join(dir, "rebase");
    mkdirSync(base);
    writeFileSync(path.join(base, "a.txt"), "needle a1\nneedle a2\n");
    writeFileSync(path.join(base, "b.txt"), "needle b1\nneedle b2\n");
    const first = await search({ pattern: "needle", path: "rebase", limit: 2 });
    expect(first.items.map((i) => i.text)).toEqual(["needle a1", "needle a2"]);
    writeFileSync(path.join(base, "b.txt"), "needle B1\nneedle B2\n");
    const next = await search({ cursor: first.next_cursor! });
    expect(next.items.map((i) => i.text)).toEqual(["needle B1", "needle B2"]);
  });
});

describe("a search cursor carries its page parameters", () => {
  beforeAll(() => {
    const base = path.join(dir, "params");
    mkdirSync(base);
    for (let f = 0; f < 20; f++) {
      const lines = Array.from({ length: 60 }, (_, i) => `needle ${f}:${i} ${"x".repeat(40)}`);
      writeFileSync(path.join(base, `f${String(f).padStart(2, "0")}.txt`), `${lines.join("\n")}\n`);
    }
  });

  it("continuing with the cursor alone keeps max_tokens and limit; every page fits the first budget", async () => {
    let page = await search({
      pattern: "needle",
      path: "params",
      maxTokens: 1500,
      maxTokensGiven: true,
      limit: 500,
    });
    let pages = 1;
    let seen = page.items.length;
    while (page.next_cursor) {
      // What the tool passes when the caller gives only the cursor: the default budget, not given.
      const text = await searchPage(ctx, {
        cursor: page.next_cursor,
        maxTokens: 8000,
        inProcess: true,
      });
      expect(defaultEstimator.count(text)).toBeLessThanOrEqual(1500);
      page = JSON.parse(text);
      expect(page.pagination.limit).toBe(500);
      seen += page.items.length;
      pages++;
    }
    expect(seen).toBe(1200);
    expect(pages).toBeGreaterThan(5);
  });

  it("a parameter passed with the cursor overrides it for that page, still lowered to the cap", async () => {
    const first = await search({
      pattern: "needle",
      path: "params",
      maxTokens: 1500,
      maxTokensGiven: true,
      limit: 7,
    });
    expect(first.items.length).toBe(7);
    const bigger = await search({
      cursor: first.next_cursor!,
      limit: 50,
      maxTokens: 4000,
      maxTokensGiven: true,
    });
    expect(bigger.items.length).toBeGreaterThan(7);
    expect(bigger.pagination.limit).toBe(50);
    const same = await search({ cursor: first.next_cursor! });
    expect(same.items.length).toBe(7);
    // A cursor made under a larger cap is lowered to the current one, and the page says so.
    const wide = await search({
      pattern: "needle",
      path: "params",
      maxTokens: 20000,
      maxTokensGiven: true,
      limit: 1000,
    });
    const text = await searchPage(ctx, {
      cursor: wide.next_cursor!,
      maxTokens: 8000,
      maxTokensCap: 3000,
      inProcess: true,
    });
    expect(defaultEstimator.count(text)).toBeLessThanOrEqual(3000);
    expect(JSON.parse(text).max_tokens).toBe(3000);
  });
});
