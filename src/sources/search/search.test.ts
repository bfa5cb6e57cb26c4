/**
 * In-process tests of the search source: continuations never mix two versions of a file, a
 * cursor carries its page parameters, count modes, O(page) continuations in walk order, and
 * confinement per directory.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultEstimator, isPagewiseError, runSource } from "../../core/index.js";
import { compilePattern } from "../pattern/index.js";
import type { SourceContext } from "../shared/context.js";
import { tempSourceContext } from "../shared/test-support/context.js";
import { ConfinedOpener } from "./confine.js";
import { runScanJob } from "./pool.js";
import type { ScanJob, ScanResult } from "./scan.js";
import { createSearchSource, type SearchArgs } from "./search.js";

let dir: string;
let ctx: SourceContext;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, ctx, cleanup } = tempSourceContext("pagewise-search-"));
});
afterAll(() => cleanup());

interface Page {
  items: Array<{ path: string; line: number; text: string }>;
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
  next_cursor: string | null;
}
/** One call as the tool makes it: arguments, plus the page parameters the caller passed. */
interface SearchCall extends SearchArgs {
  readonly cursor?: string;
  readonly limit?: number;
  readonly maxTokens?: number;
  /** The server's cap on budgets (default 100,000). */
  readonly maxTokensCap?: number;
  readonly onProgress?: (filesRead: number) => void;
}
async function searchText(call: SearchCall): Promise<string> {
  const { cursor, limit, maxTokens, maxTokensCap, onProgress, ...args } = call;
  const source = createSearchSource({
    maxTokens: {
      name: "max_tokens",
      default: 8000,
      max: maxTokensCap ?? 100_000,
      maxReason: "the server's cap",
    },
    inProcess: true,
    ...(onProgress ? { onProgress } : {}),
  });
  const run = { codec: ctx.codec, identity: ctx.caller.identity, context: ctx };
  return runSource(source, run, args, cursor, { max_tokens: maxTokens, limit });
}
async function search(call: SearchCall): Promise<Page> {
  return JSON.parse(await searchText(call));
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
      limit: 500,
    });
    let pages = 1;
    let seen = page.items.length;
    while (page.next_cursor) {
      // What the tool passes when the caller gives only the cursor: the default budget, not given.
      const text = await searchText({ cursor: page.next_cursor });
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
      limit: 7,
    });
    expect(first.items.length).toBe(7);
    const bigger = await search({
      cursor: first.next_cursor!,
      limit: 50,
      maxTokens: 4000,
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
      limit: 1000,
    });
    const text = await searchText({ cursor: wide.next_cursor!, maxTokensCap: 3000 });
    expect(defaultEstimator.count(text)).toBeLessThanOrEqual(3000);
    expect(JSON.parse(text).max_tokens).toBe(3000);
  });
  it("an argument given with the cursor must agree with its query, named as the caller spells it", async () => {
    const first = await search({ pattern: "needle", path: "params", limit: 3 });
    const cursor = first.next_cursor!;
    const same = await search({ cursor, pattern: "needle" });
    expect(same.items.length).toBe(3);
    for (const [given, name] of [
      [{ pattern: "hay" }, "pattern"],
      [{ caseSensitive: true }, "case_sensitive"],
      [{ maxCharsPerMatch: 5 }, "max_chars_per_match"],
      [{ includeHidden: true }, "include_hidden"],
      [{ offset: 0 }, "offset"],
    ] as const) {
      const err = await search({ cursor, ...given }).catch((e: unknown) => e);
      expect(isPagewiseError(err) && err.code, name).toBe("INVALID_ARGUMENT");
      expect((err as Error).message).toContain(name);
    }
  });
});

describe("count modes and O(page) continuations", () => {
  const files = 400;
  beforeAll(() => {
    for (let f = 0; f < files; f++) {
      const sub = path.join(dir, "many", `d${f % 9}`, f % 2 ? "x" : "x-y");
      mkdirSync(sub, { recursive: true });
      writeFileSync(path.join(sub, `f${f}.txt`), `hay\nneedle ${f}\nhay needle\n`);
    }
  });

  /** Files read by one page (the scan reports its progress per file). */
  async function filesReadBy(req: SearchCall): Promise<{ page: Page; files: number }> {
    let files = 0;
    const page = await search({ ...req, onProgress: (n) => (files = Math.max(files, n)) });
    return { page, files };
  }

  it("at_least and none return the first page after reading only the files it needs", async () => {
    const exact = await filesReadBy({ pattern: "needle", path: "many", limit: 10 });
    expect(exact.files).toBe(files);
    expect(exact.page.pagination.total).toBe(2 * files);
    const atLeast = await filesReadBy({
      pattern: "needle",
      path: "many",
      limit: 10,
      count: "at_least",
    });
    expect(atLeast.files).toBeLessThanOrEqual(6);
    expect(atLeast.page.items).toEqual(exact.page.items);
    const p = atLeast.page.pagination as Page["pagination"] & { total_is_lower_bound?: boolean };
    expect(p.total_is_lower_bound).toBe(true);
    expect(p.total).toBeGreaterThanOrEqual(10);
    expect(p.total).toBeLessThanOrEqual(2 * files);
    const none = await filesReadBy({ pattern: "needle", path: "many", limit: 10, count: "none" });
    expect(none.files).toBeLessThanOrEqual(6);
    expect("total" in none.page.pagination).toBe(false);
  });

  it("a continuation reads O(page) files, wherever it is in the tree", async () => {
    let page = await search({ pattern: "needle", path: "many", limit: 10 });
    const reads: number[] = [];
    while (page.next_cursor && reads.length < 30) {
      const next = await filesReadBy({ cursor: page.next_cursor });
      reads.push(next.files);
      page = next.page;
    }
    expect(Math.max(...reads)).toBeLessThanOrEqual(7);
  });

  it("every count mode pages through the same matches as one exact page, in order", async () => {
    const all = await search({ pattern: "needle", path: "many", limit: 1000, maxTokens: 100_000 });
    const key = (i: Page["items"][number]) => `${i.path}:${i.line}:${i.text}`;
    for (const count of ["exact", "at_least", "none"] as const) {
      let page = await search({ pattern: "needle", path: "many", limit: 37, count });
      const got = page.items.map(key);
      while (page.next_cursor) {
        page = await search({ cursor: page.next_cursor });
        got.push(...page.items.map(key));
        if (count === "exact") expect(page.pagination.total).toBe(2 * files);
      }
      expect(got, count).toEqual(all.items.map(key));
    }
  });
});

describe("continuations resume in walk order on any tree", () => {
  const NAMES = ["a", "a-b", "a.b", "a b", "b", "\u00e4", "z"];
  const tree = fc.uniqueArray(
    fc.tuple(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }), fc.nat(3)),
    { minLength: 1, maxLength: 25, selector: ([p]) => p.join("/") },
  );
  let run = 0;

  it("property: cursor pages (any limit, any count mode) = one exact page, with .gitignore and hidden rules", async () => {
    await fc.assert(
      fc.asyncProperty(
        tree,
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("exact", "at_least", "none"),
        async (entries, limit, count) => {
          const base = `prop${run++}`;
          const made = new Set<string>();
          for (const [parts, n] of entries) {
            const rel = `${parts.join("/")}.txt`;
            // A file and a directory cannot share a name: skip paths that collide.
            if ([...made].some((m) => m.startsWith(`${rel}/`) || rel.startsWith(`${m}/`))) continue;
            const file = path.join(dir, base, rel);
            mkdirSync(path.dirname(file), { recursive: true });
            writeFileSync(file, "needle\n".repeat(n));
            made.add(rel);
          }
          writeFileSync(path.join(dir, base, ".gitignore"), "a.b.txt\n");
          const all = await search({
            pattern: "needle",
            path: base,
            limit: 1000,
            maxTokens: 100_000,
          });
          const key = (i: Page["items"][number]) => `${i.path}:${i.line}`;
          let page = await search({ pattern: "needle", path: base, limit, count });
          const got = page.items.map(key);
          while (page.next_cursor) {
            page = await search({ cursor: page.next_cursor });
            got.push(...page.items.map(key));
          }
          expect(got).toEqual(all.items.map(key));
          expect(all.items.some((i) => i.path.endsWith("a.b.txt"))).toBe(false);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("confinement per directory", () => {
  it("opens a directory once for all its files, and nothing through a directory that leads outside", () => {
    const inside = path.join(dir, "conf");
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-outside-")));
    mkdirSync(path.join(inside, "d"), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(path.join(inside, "d", `f${i}`), "x");
    writeFileSync(path.join(outside, "secret"), "needle");
    symlinkSync(outside, path.join(inside, "link"));
    const opener = new ConfinedOpener(inside);
    try {
      for (let i = 0; i < 5; i++) closeSync(opener.open(path.join(inside, "d", `f${i}`)));
      expect(opener.dirsOpened).toBe(1);
      // The walk never follows links; were a path through one handed over, it is refused.
      expect(() => opener.open(path.join(inside, "link", "secret"))).toThrow();
      // A directory that resolves outside (say a parent swapped meanwhile) opens nothing.
      expect(opener.open(path.join(outside, "secret"))).toBe(-1);
    } finally {
      opener.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe("a full scan split across threads", () => {
  it("property: any shard count gives the window, total and skips of one scan", async () => {
    const base = path.join(dir, "shards");
    for (let f = 0; f < 60; f++) {
      mkdirSync(path.join(base, `d${f % 4}`), { recursive: true });
      const body = f % 13 === 5 ? "needle\0binary" : "needle x\n".repeat(f % 5);
      writeFileSync(path.join(base, `d${f % 4}`, `f${f}.txt`), body);
    }
    const job = (offset: number, limit: number): ScanJob => ({
      dir: base,
      ancestors: [],
      includeHidden: false,
      respectGitignore: true,
      maxWalkEntries: 10_000,
      pattern: compilePattern("needle", false, "smart"),
      context: 0,
      maxChars: 400,
      window: { kind: "offset", offset, limit },
      stopEarly: false,
    });
    const strip = (r: ScanResult) => ({
      counted: r.counted,
      offset: r.offset,
      more: r.more,
      skipped: r.skipped,
      items: r.items.map((m) => `${m.path}:${m.line}:${m.ordinal}`),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.nat(120),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 2, max: 4 }),
        async (offset, limit, shards) => {
          const one = await runScanJob(job(offset, limit), { inProcess: true, shards: 1 });
          const split = await runScanJob(job(offset, limit), { inProcess: true, shards });
          expect(strip(split)).toEqual(strip(one));
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("hostile patterns", () => {
  it("what the linear-time engines can run is answered exactly on the request's own thread, whatever its backtracking cost", async () => {
    const base = path.join(dir, "hostile");
    mkdirSync(base);
    const lines = [`${"a".repeat(5000)}b`, "a".repeat(3000), `x${"a".repeat(40)}!`];
    writeFileSync(path.join(base, "evil.txt"), `${lines.join("\n")}\n`);
    const cases: Array<[string, number]> = [
      ["(a+)+$", 1],
      ["(a|aa)+b", 1],
      ["(a|a)*!", 1],
      ["(.*a){30}!", 1],
    ];
    for (const [pattern, total] of cases) {
      const page = await search({ pattern, path: "hostile" });
      expect(page.pagination.total, pattern).toBe(total);
    }
  });
});

describe("anchored patterns over the byte pre-scan", () => {
  it("^ and $ match at every line's start and end, LF and CRLF alike, as matching each line alone", async () => {
    const base = path.join(dir, "anchors");
    mkdirSync(base);
    const lines = [
      "needle",
      "a needle",
      "needle b",
      " needle ",
      "needle\tneedle",
      "x",
      "needle$",
      "",
    ];
    writeFileSync(path.join(base, "lf.txt"), `${lines.join("\n")}\n`);
    writeFileSync(path.join(base, "crlf.txt"), `${lines.join("\r\n")}\r\n`);
    writeFileSync(path.join(base, "mixed.txt"), `needle\r\n\rneedle\r\r\nneedle`);
    for (const pattern of [
      "^needle",
      "needle$",
      "^needle$",
      "^\\s*needle\\s*$",
      "e$|^x",
      "\\$$",
      "^$",
    ]) {
      const re = new RegExp(pattern, "gu");
      const expected = [lines, lines, ["needle", "\rneedle\r", "needle"]]
        .flat()
        .reduce((n, l) => n + [...l.matchAll(re)].length, 0);
      const page = await search({ pattern, path: "anchors", limit: 1000 });
      expect(page.pagination.total, pattern).toBe(expected);
    }
  });
});

describe("search reports the .gitignore files it could not use, as list does", () => {
  interface Skipped {
    skipped?: {
      gitignore_files?: number;
      first_gitignore?: { path: string; reason: string; limit?: { name: string } };
    };
  }
  const hostile = (name: string, make: (gitignore: string) => void): string => {
    const base = path.join(dir, "hostile-ignore", name);
    mkdirSync(base, { recursive: true });
    writeFileSync(path.join(base, "keep.txt"), "needle keep\n");
    writeFileSync(path.join(base, "secret.txt"), "needle secret\n");
    make(path.join(base, ".gitignore"));
    return `hostile-ignore/${name}`;
  };
  let cases: Array<[string, RegExp]> = [];
  beforeAll(() => {
    cases = [
      [hostile("fifo", (g) => execFileSync("mkfifo", [g])), /not a regular file/],
      [hostile("zero", (g) => symlinkSync("/dev/zero", g)), /symbolic link/],
      [
        hostile("huge", (g) => {
          writeFileSync(g, "secret.txt\n");
          truncateSync(g, 43 << 20);
        }),
        /max_gitignore_bytes/,
      ],
    ];
  });

  it("says which .gitignore was skipped and why (skipped.gitignore_files, first_gitignore)", async () => {
    for (const [where, reason] of cases) {
      const page = (await search({ pattern: "needle", path: where })) as Page & Skipped;
      // Its rules are not applied (secret.txt is searched), and the page says so.
      expect(page.items.map((i) => i.path).sort()).toEqual(["keep.txt", "secret.txt"]);
      expect(page.skipped?.gitignore_files, where).toBe(1);
      expect(page.skipped?.first_gitignore?.path, where).toBe(".gitignore");
      expect(page.skipped?.first_gitignore?.reason, where).toMatch(reason);
    }
    const parent = (await search({ pattern: "needle", path: "hostile-ignore" })) as Page & Skipped;
    expect(parent.skipped?.gitignore_files).toBe(cases.length);
    expect(parent.skipped?.first_gitignore?.path).toBe("fifo/.gitignore");
  });

  it("says so on a page that stopped early and on its continuation too", async () => {
    const where = cases[0]![0];
    const first = (await search({ pattern: "needle", path: where, limit: 1 })) as Page & Skipped;
    expect(first.items).toHaveLength(1);
    expect(first.next_cursor).not.toBeNull();
    expect(first.skipped?.gitignore_files).toBe(1);
    const next = (await search({ cursor: first.next_cursor! })) as Page & Skipped;
    expect(next.items).toHaveLength(1);
    expect(next.skipped?.gitignore_files).toBe(1);
    expect(next.skipped?.first_gitignore?.reason).toMatch(/not a regular file/);
  });

  it("says nothing when every .gitignore was applied", async () => {
    const where = hostile("fine", (g) => writeFileSync(g, "secret.txt\n"));
    const page = (await search({ pattern: "needle", path: where })) as Page & Skipped;
    expect(page.items.map((i) => i.path)).toEqual(["keep.txt"]);
    expect(page.skipped).toBeUndefined();
  });
});
