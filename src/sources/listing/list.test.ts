import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { Roots } from "../../access/index.js";
import { countDefault, countOpenviking } from "../../core/estimate/index.js";
import { countingDefault } from "../../core/estimate/test-support/counting.js";
import {
  CursorCodec,
  defaultEstimator,
  type Estimator,
  ephemeralCursorKey,
  FileVersions,
  type RunningCount,
  runSource,
} from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { startSwapRace } from "../walk/test-support/swap-race.js";
import { type ListJob, type ListResult, RACY_WINDOW_MS, runListJob } from "./collect.js";
import { createListSource } from "./list.js";

const base = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-list-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const ctx: SourceContext = {
  caller: { identity: "anonymous", roots: new Roots([base]) },
  codec: new CursorCodec({ key: ephemeralCursorKey() }),
  estimator: defaultEstimator,
  versions: new FileVersions(),
};
let counter = 0;

const MAX_TOKENS = { name: "max_tokens", default: 100_000, max: 100_000 };
const source = createListSource({ maxTokens: MAX_TOKENS });
/**
 * A source whose full walks are dated an hour ahead: no directory counts as changed since, so
 * every continuation takes the O(page) path (changes between pages are never seen as such).
 */
const quietResults: ListResult[] = [];
const quietSource = createListSource({
  maxTokens: MAX_TOKENS,
  now: () => Date.now() + 3_600_000,
  onResult: (r) => quietResults.push(r),
});
type Page = {
  items: Array<{ path: string; type: string; size: number; mtime: string }>;
  pagination: {
    total: number;
    limit: number;
    offset: number;
    has_more: boolean;
    next_offset: number | null;
  };
  next_cursor: string | null;
  version: string;
  filtered?: { ignored?: number; hidden?: number };
};
const pageOf =
  (src: typeof source) =>
  async (args: Record<string, unknown>): Promise<Page> => {
    const { cursor, limit, ...rest } = args as { cursor?: string; limit?: number };
    const run = { codec: ctx.codec, identity: ctx.caller.identity, context: ctx };
    return JSON.parse(await runSource(src, run, rest, cursor, { limit }));
  };
const page = pageOf(source);
const quietPage = pageOf(quietSource);

describe.each([
  ["a continuation re-walks when a directory it reads changed", page],
  ["continuations read only their own part of the tree", quietPage],
])("list key-set continuation (%s)", (_, page) => {
  it("never duplicates or skips an entry that exists throughout (property)", async () => {
    const names = fc.uniqueArray(fc.stringMatching(/^[a-c][a-c\-.]{0,3}$/), {
      minLength: 1,
      maxLength: 30,
    });
    await fc.assert(
      fc.asyncProperty(
        names,
        names,
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (initial, added, limit, deletions) => {
          const dir = `k${counter++}`;
          const abs = path.join(base, dir);
          mkdirSync(abs);
          for (const n of initial) writeFileSync(path.join(abs, n), n);
          const alive = new Set(initial);
          const deleted = new Set<string>();
          const seen: string[] = [];
          let p = await page({ path: dir, limit });
          let step = 0;
          for (;;) {
            seen.push(...p.items.map((i: { path: string }) => i.path));
            if (!p.next_cursor) break;
            // Change the tree between pages: delete some entries, add others.
            const victim = [...alive][(deletions[step] ?? 0) % Math.max(1, alive.size)];
            if (victim !== undefined && step < deletions.length) {
              unlinkSync(path.join(abs, victim));
              alive.delete(victim);
              deleted.add(victim);
            }
            const add = added[step];
            if (add !== undefined && !alive.has(add) && !deleted.has(add)) {
              writeFileSync(path.join(abs, add), add);
              alive.add(add);
            }
            step++;
            p = await page({ cursor: p.next_cursor });
          }
          expect(new Set(seen).size).toBe(seen.length);
          const sorted = [...seen].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          expect(seen).toEqual(sorted);
          for (const n of initial) if (!deleted.has(n)) expect(seen).toContain(n);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("offset pages and cursor pages give the same sequence when nothing changes", async () => {
    const abs = path.join(base, "same");
    for (let i = 0; i < 57; i++) {
      mkdirSync(path.join(abs, `d${i % 5}`), { recursive: true });
      writeFileSync(path.join(abs, `d${i % 5}`, `f${i}`), "x");
    }
    const byOffset: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const p = await page({ path: "same", recursive: true, limit: 9, offset });
      byOffset.push(...p.items.map((i: { path: string }) => i.path));
      offset = p.pagination.next_offset;
    }
    const byCursor: string[] = [];
    let p = await page({ path: "same", recursive: true, limit: 9 });
    for (;;) {
      byCursor.push(...p.items.map((i: { path: string }) => i.path));
      if (!p.next_cursor) break;
      p = await page({ cursor: p.next_cursor });
      expect(p.pagination.limit).toBe(9);
    }
    expect(byCursor).toEqual(byOffset);
    expect(byOffset.length).toBe(62);
  });

  it("rejects a cursor given with other arguments or an offset", async () => {
    const p = await page({ path: "same", recursive: true, limit: 3 });
    await expect(page({ cursor: p.next_cursor, recursive: false })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(page({ cursor: p.next_cursor, offset: 3 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(page({ cursor: p.next_cursor, path: "same/d0" })).rejects.toMatchObject({
      code: "INVALID_CURSOR",
    });
    const ok = await page({ cursor: p.next_cursor, path: "same", recursive: true });
    expect(ok.pagination.offset).toBe(3);
  });
});

describe("list confines what it reads", () => {
  it("never shows an outside entry or its size while a subdirectory is swapped for a symlink (race)", async () => {
    const dir = path.join(base, "race");
    const out = path.join(base, "race-outside");
    // Same names inside and outside; inside files are 1 byte, outside ones 7.
    for (const [root, content] of [
      [dir, "i"],
      [out, "OUTSIDE"],
    ] as const) {
      const sub = root === dir ? path.join(root, "sub") : root;
      mkdirSync(path.join(sub, "deeper"), { recursive: true });
      for (const f of ["f1", "f2", "deeper/f3"]) writeFileSync(path.join(sub, f), content);
      if (root === out) writeFileSync(path.join(sub, "deeper/OUTSIDE-only"), content);
    }
    symlinkSync(out, path.join(dir, "link"));
    const race = startSwapRace(dir);
    let outsideSeen = 0;
    let insideSeen = 0;
    let pages = 0;
    try {
      while (pages < 8000 && (pages < 2000 || insideSeen < 50)) {
        pages++;
        const p = await page({ path: "race", recursive: true, type: "file" });
        for (const item of p.items as Array<{ path: string; size: number }>) {
          if (!item.path.startsWith("sub/")) continue;
          if (item.size === 7 || item.path.includes("OUTSIDE")) outsideSeen++;
          else insideSeen++;
        }
      }
    } finally {
      await race.stop();
    }
    expect(race.swaps()).toBeGreaterThan(0);
    expect(insideSeen).toBeGreaterThan(0);
    expect(outsideSeen).toBe(0);
  }, 60_000);
});

/** `dir/dAA/sB/fC` for A < tops, B < 4, C < 10: 40 files and 5 directories per top directory. */
function makeTree(dir: string, tops: number): void {
  for (let a = 0; a < tops; a++) {
    const top = `d${String(a).padStart(2, "0")}`;
    for (let b = 0; b < 4; b++) {
      mkdirSync(path.join(dir, top, `s${b}`), { recursive: true });
      for (let c = 0; c < 10; c++) writeFileSync(path.join(dir, top, `s${b}`, `f${c}`), "x");
    }
  }
}

const filesJob = (dir: string, window: ListJob["window"]): ListJob => ({
  dir,
  ancestors: [],
  query: {
    recursive: true,
    glob: undefined,
    type: "file",
    includeHidden: false,
    respectGitignore: true,
  },
  maxWalkEntries: 1_000_000,
  window,
  maxPageChars: 1_000_000,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const paths = (r: ListResult) => r.items.map((i) => i.path);

describe("list continuations cost O(page)", () => {
  it("read the same directories and stat the same entries whatever the size of the tree", async () => {
    const work: Record<string, { first: ListResult["work"]; next: ListResult["work"] }> = {};
    for (const tops of [4, 16]) {
      const dir = path.join(base, `cost-${tops}`);
      makeTree(dir, tops);
      const first = await runListJob(filesJob(dir, { kind: "offset", offset: 0, limit: 5 }));
      expect(first.listing?.total).toBe(tops * 40);
      const next = await runListJob(
        filesJob(dir, {
          kind: "after",
          after: "d01/s2/f3",
          limit: 25,
          since: Date.now() + 3_600_000,
        }),
      );
      expect(next.listing).toBeUndefined();
      expect(next.more).toBe(true);
      expect(paths(next)).toEqual([
        ...[4, 5, 6, 7, 8, 9].map((c) => `d01/s2/f${c}`),
        ...Array.from({ length: 10 }, (_, c) => `d01/s3/f${c}`),
        ...Array.from({ length: 9 }, (_, c) => `d02/s0/f${c}`),
      ]);
      work[tops] = { first: first.work, next: next.work };
    }
    // The first page reads every directory (1 + 5 per top directory) and stats its 5 entries.
    expect(work[4]!.first).toEqual({ directoriesRead: 21, entriesStatted: 5 });
    expect(work[16]!.first).toEqual({ directoriesRead: 81, entriesStatted: 5 });
    // A continuation: the cursor's path ("", d1, d01/s2), then d01/s3, d2, d02/s0; its 25 entries.
    expect(work[4]!.next).toEqual({ directoriesRead: 6, entriesStatted: 25 });
    expect(work[16]!.next).toEqual(work[4]!.next);
  });

  it("stat only the entries the budget can show when the limit is larger", async () => {
    const dir = path.join(base, "cost-16");
    const window = { kind: "after", after: "d00", limit: 1000, since: Date.now() + 3_600_000 };
    const head = '{"uri":"file:///x","items":[';
    const next = await runListJob({
      ...filesJob(dir, window as ListJob["window"]),
      itemTokens: { estimator: "default", maxTokens: 1000, head },
    });
    const page = (count: number) =>
      head +
      next.items
        .slice(0, count)
        .map((item) => item.json)
        .join(",");
    // Counted in context after the head: collecting stops at the first entry over the budget.
    expect(countDefault(page(next.items.length))).toBeGreaterThan(1000);
    expect(countDefault(page(next.items.length - 1))).toBeLessThanOrEqual(1000);
    expect(next.work.entriesStatted).toBe(next.items.length);
    expect(next.more).toBe(true);
    // The count's checkpoints come back for the page's fit: after the head, then every 16 items.
    expect(next.checkpoints).toHaveLength(Math.floor(next.items.length / 16) + 1);
    const resumed = defaultEstimator.resume!(next.checkpoints![1]!);
    expect(resumed.tokens()).toBe(countDefault(page(16)));
  });

  it("stat only what runs of counted entries can show with an estimator that keeps no count", async () => {
    const dir = path.join(base, "cost-16");
    const window = { kind: "after", after: "d00", limit: 1000, since: Date.now() + 3_600_000 };
    const next = await runListJob({
      ...filesJob(dir, window as ListJob["window"]),
      itemTokens: { estimator: "openviking", maxTokens: 1000, head: "" },
    });
    const tokens = next.items.reduce((sum, item) => sum + item.tokens!, 0);
    const perItem = tokens / next.items.length;
    // Items are counted in runs of 16: collecting stops within one run past what 1000 tokens hold.
    expect(tokens).toBeGreaterThan(1000);
    expect(next.items.length).toBeLessThanOrEqual(Math.ceil(1000 / perItem) + 16);
    expect(next.work.entriesStatted).toBe(next.items.length);
    expect(next.checkpoints).toBeUndefined();
    expect(next.more).toBe(true);
  });
});

describe("list page fitting", () => {
  it("counts each entry once, in the walk: the fit counts again only tails and a group's rest", async () => {
    const dir = path.join(base, "fit-once");
    makeTree(dir, 8);
    // The server's estimator, counting what its running counts are given here.
    const { estimator, added } = countingDefault();
    const run = { codec: ctx.codec, identity: ctx.caller.identity, context: { ...ctx, estimator } };
    const call = async (maxTokens: number) => {
      const before = added();
      const text = await runSource(
        source,
        run,
        { path: path.relative(base, dir), recursive: true, type: "file" },
        undefined,
        { limit: 1000, max_tokens: maxTokens },
      );
      return { text, items: (JSON.parse(text) as Page).items.length, counted: added() - before };
    };
    for (const maxTokens of [8000, 12_000]) {
      const { text, items, counted } = await call(maxTokens);
      expect(countDefault(text)).toBeLessThanOrEqual(maxTokens);
      expect(items).toBeGreaterThan(100);
      expect(items).toBeLessThan(320);
      // Tails of a few hundred characters, closed a few times, and the items past a checkpoint
      // (fewer than 16) in each group tried: a fraction of the page, which the walk counted.
      expect(counted).toBeLessThan(Math.min(text.length / 3, 6000));
    }
  });

  it("fits with the page's own estimator when it only borrows the name of the worker's", async () => {
    const dir = path.join(base, "fit-once");
    // Named "default", counting as openviking does, with running counts of its own kind.
    const running = (units = 0): RunningCount => ({
      add(text, from = 0, to = text.length) {
        units += countOpenviking(text.slice(from, to)) * 4;
      },
      tokens: () => Math.ceil(units / 4),
      fork: () => running(units),
      snapshot: () => ({ units }),
    });
    const borrowed: Estimator = {
      name: "default",
      count: countOpenviking,
      maxUnitsPerToken: 4,
      running: () => running(),
      resume: (snapshot) => running(snapshot.units),
    };
    const run = {
      codec: ctx.codec,
      identity: ctx.caller.identity,
      context: { ...ctx, estimator: borrowed },
    };
    const text = await runSource(
      source,
      run,
      { path: path.relative(base, dir), recursive: true, type: "file" },
      undefined,
      { limit: 1000, max_tokens: 3000 },
    );
    const page = JSON.parse(text) as Page;
    expect(page.items.length).toBeGreaterThan(10);
    expect(countOpenviking(text)).toBeLessThanOrEqual(3000);
    expect(countOpenviking(text)).toBeGreaterThan(2800);
  });
});

describe("list continuations and changes", () => {
  it("walk the whole listing again when a directory they read changed since the last full walk, and only then", async () => {
    const dir = path.join(base, "changes");
    makeTree(dir, 3);
    await sleep(50);
    // The last full walk "began" now: a directory whose ctime is later counts as changed.
    const since = Date.now() + RACY_WINDOW_MS;
    await sleep(50);
    const next = () =>
      runListJob(filesJob(dir, { kind: "after", after: "d01/s2/f3", limit: 5, since }));

    // A change in a directory before the cursor's path: not read, not seen.
    unlinkSync(path.join(dir, "d00/s0/f0"));
    const unseen = await next();
    expect(unseen.listing).toBeUndefined();
    expect(paths(unseen)).toEqual([
      "d01/s2/f4",
      "d01/s2/f5",
      "d01/s2/f6",
      "d01/s2/f7",
      "d01/s2/f8",
    ]);
    expect(unseen.work.directoriesRead).toBe(3);

    // A change in a directory the page reads: the listing is walked again, total and position exact.
    writeFileSync(path.join(dir, "d01/s2/f3a"), "new");
    const seen = await next();
    expect(seen.listing).toMatchObject({ total: 120, start: 40 + 20 + 3 });
    expect(paths(seen)).toEqual(["d01/s2/f3a", "d01/s2/f4", "d01/s2/f5", "d01/s2/f6", "d01/s2/f7"]);
    expect(seen.work.directoriesRead).toBe(3 + 16);
  });

  it("report the total, version and filtered counts of the last full walk, at the next offset", async () => {
    const dir = path.join(base, "carried");
    makeTree(dir, 2);
    writeFileSync(path.join(dir, ".gitignore"), "f9\n");
    writeFileSync(path.join(dir, "d01/.hidden"), "x");
    const first = await quietPage({ path: "carried", recursive: true, type: "file", limit: 7 });
    expect(first.pagination).toMatchObject({ total: 72, offset: 0, next_offset: 7 });
    expect(first.filtered).toMatchObject({ ignored: 8, hidden: 2 });
    // Changes before the cursor, in directories the continuation does not read.
    unlinkSync(path.join(dir, "d00/s0/f0"));
    writeFileSync(path.join(dir, "d00/s0/f00"), "x");
    writeFileSync(path.join(dir, "d00/s0/f01"), "x");
    quietResults.length = 0;
    const next = await quietPage({ cursor: first.next_cursor });
    expect(quietResults[0]!.listing).toBeUndefined();
    expect(next.items.map((i) => i.path)).toEqual([
      "d00/s0/f7",
      "d00/s0/f8",
      "d00/s1/f0",
      "d00/s1/f1",
      "d00/s1/f2",
      "d00/s1/f3",
      "d00/s1/f4",
    ]);
    expect(next.pagination).toMatchObject({ total: 72, offset: 7, next_offset: 14 });
    expect(next.version).toBe(first.version);
    expect(next.filtered).toEqual(first.filtered);
    // A page without a cursor walks the tree again: the current total and a new version.
    const again = await quietPage({ path: "carried", recursive: true, type: "file", limit: 7 });
    expect(again.pagination.total).toBe(73);
    expect(again.version).not.toBe(first.version);
  });
});
