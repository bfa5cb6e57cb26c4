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
import {
  CursorCodec,
  defaultEstimator,
  ephemeralCursorKey,
  FileVersions,
  runSource,
} from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { startSwapRace } from "../walk/test-support/swap-race.js";
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

const source = createListSource({
  maxTokens: { name: "max_tokens", default: 100_000, max: 100_000 },
});
const page = async (args: Record<string, unknown>) => {
  const { cursor, limit, ...rest } = args as { cursor?: string; limit?: number };
  const run = { codec: ctx.codec, identity: ctx.caller.identity, context: ctx };
  return JSON.parse(await runSource(source, run, rest, cursor, { limit }));
};

describe("list key-set continuation", () => {
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
