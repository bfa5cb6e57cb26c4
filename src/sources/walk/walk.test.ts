import * as nodeFs from "node:fs";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { compareCodePoints } from "./order.js";
import { startSwapRace } from "./test-support/swap-race.js";
import { type WalkEntry, type WalkOptions, walk } from "./walk.js";

const base = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-walk-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let counter = 0;

const OPTIONS: WalkOptions = {
  recursive: true,
  includeHidden: true,
  respectGitignore: false,
  maxEntries: 1_000_000,
};

async function collect(dir: string, options: WalkOptions = OPTIONS): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  await walk(dir, options, (e) => out.push(e));
  return out;
}

/** Every path under `dir`, from Node's own recursive readdir, sorted by UTF-8 bytes. */
function oracle(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((p) => p.split(path.sep).join("/"))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

const nameArb = fc
  .array(fc.constantFrom("a", "b", "-", ".", "é", "😀", "\uff01", "0", " "), {
    minLength: 1,
    maxLength: 4,
  })
  .map((cs) => cs.join(""))
  .filter((n) => n !== "." && n !== ".." && n !== ".git");

type Tree = { [name: string]: Tree | null };
const treeArb: fc.Arbitrary<Tree> = fc.letrec((tie) => ({
  tree: fc.dictionary(nameArb, fc.oneof({ depthSize: "small" }, fc.constant(null), tie("tree")), {
    maxKeys: 5,
  }),
})).tree as fc.Arbitrary<Tree>;

function materialize(dir: string, tree: Tree): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, sub] of Object.entries(tree)) {
    if (sub === null) writeFileSync(path.join(dir, name), name);
    else materialize(path.join(dir, name), sub);
  }
}

describe("walk", () => {
  it("emits every path exactly once, in code-point order (property)", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, async (tree) => {
        const dir = path.join(base, `p${counter++}`);
        materialize(dir, tree);
        const got = (await collect(dir)).map((e) => e.path);
        expect(got).toEqual(oracle(dir));
        for (let i = 1; i < got.length; i++) {
          expect(compareCodePoints(got[i - 1]!, got[i]!)).toBeLessThan(0);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("starts right after a given path, present or not: the full walk's suffix (property)", async () => {
    const pathPart = fc
      .array(fc.constantFrom("a", "b", "-", "é", "😀", "0", " "), { minLength: 1, maxLength: 3 })
      .map((cs) => cs.join(""));
    await fc.assert(
      fc.asyncProperty(
        treeArb,
        fc.nat(),
        fc.array(pathPart, { minLength: 1, maxLength: 3 }),
        async (tree, pick, invented) => {
          const dir = path.join(base, `after${counter++}`);
          materialize(dir, tree);
          const full = (await collect(dir)).map((e) => e.path);
          // A path of the walk, or one that does not exist (deleted since it was returned).
          const after =
            full.length > 0 && pick % 3 !== 0 ? full[pick % full.length]! : invented.join("/");
          const got = (await collect(dir, { ...OPTIONS, after })).map((e) => e.path);
          expect(got).toEqual(full.filter((p) => compareCodePoints(p, after) > 0));
        },
      ),
      { numRuns: 80 },
    );
  });

  it("reads only the directories on the path it starts after, then the ones it walks", async () => {
    const dir = path.join(base, "after-cost");
    const tree: Tree = {};
    for (let a = 0; a < 8; a++) {
      const sub: Tree = {};
      for (let b = 0; b < 8; b++) sub[`s${b}`] = { f0: null, f1: null };
      tree[`d${a}`] = sub;
    }
    materialize(dir, tree);
    const read: string[] = [];
    const visited: string[] = [];
    await walk(
      dir,
      { ...OPTIONS, after: "d3/s5/f0", onDirectoryRead: (rel) => read.push(rel) },
      (e) => {
        visited.push(e.path);
        return visited.length < 4;
      },
    );
    expect(visited).toEqual(["d3/s5/f1", "d3/s6", "d3/s6/f0", "d3/s6/f1"]);
    expect(read).toEqual(["", "d3", "d3/s5", "d3/s6"]);
  });

  it("honours nested .gitignore files like git, and always skips .git", async () => {
    const dir = path.join(base, "gi");
    materialize(dir, {
      ".gitignore": null,
      ".git": { HEAD: null },
      "a.log": null,
      "keep.txt": null,
      build: { "x.txt": null },
      sub: {
        ".gitignore": null,
        "b.log": null,
        "c.tmp": null,
        "d.txt": null,
        deep: { "e.tmp": null },
      },
    });
    writeFileSync(path.join(dir, ".gitignore"), "*.log\nbuild/\n");
    writeFileSync(path.join(dir, "sub/.gitignore"), "*.tmp\n!b.log\n");
    const got = (
      await collect(dir, { ...OPTIONS, includeHidden: false, respectGitignore: true })
    ).map((e) => e.path);
    expect(got).toEqual(["keep.txt", "sub", "sub/b.log", "sub/d.txt", "sub/deep"]);
    const withHidden = (await collect(dir, { ...OPTIONS, respectGitignore: true })).map(
      (e) => e.path,
    );
    expect(withHidden).toContain(".gitignore");
    expect(withHidden.some((p) => p.startsWith(".git/") || p === ".git")).toBe(false);
  });

  it("applies .gitignore files of ancestors when walking a subdirectory", async () => {
    const dir = path.join(base, "anc");
    materialize(dir, { ".gitignore": null, sub: { "x.log": null, "y.txt": null } });
    writeFileSync(path.join(dir, ".gitignore"), "sub/*.log\n");
    const got = (
      await collect(path.join(dir, "sub"), {
        ...OPTIONS,
        respectGitignore: true,
        ancestors: [dir],
      })
    ).map((e) => e.path);
    expect(got).toEqual(["y.txt"]);
  });

  it("counts and skips an unreadable directory (injected fs: chmod does not stop root)", async () => {
    const dir = path.join(base, "unreadable");
    materialize(dir, { a: { "x.txt": null }, b: { "y.txt": null }, c: null });
    const fs = {
      openSync: (p: string, flags: number) => {
        if (p.endsWith("/b")) {
          throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
        }
        return nodeFs.openSync(p, flags);
      },
    };
    const out: string[] = [];
    const stats = await walk(dir, { ...OPTIONS, fs }, (e) => out.push(e.path));
    expect(out).toEqual(["a", "a/x.txt", "b", "c"]);
    expect(stats.unreadable).toBe(1);
    expect(stats.firstUnreadable).toBe("b");
  });

  it("does not follow symlinks, so a directory loop cannot hang it", async () => {
    const dir = path.join(base, "loop");
    materialize(dir, { a: { "x.txt": null } });
    nodeFs.symlinkSync("..", path.join(dir, "a/up"));
    const got = await collect(dir);
    expect(got.map((e) => `${e.path}:${e.type}`)).toEqual([
      "a:directory",
      "a/up:symlink",
      "a/x.txt:file",
    ]);
  });

  it("reads a directory larger than what the walk may still read only up to the limit", async () => {
    const dir = path.join(base, "wide");
    mkdirSync(dir);
    for (let i = 0; i < 3000; i++) writeFileSync(path.join(dir, `f${i}`), "");
    // Given up one entry past the limit, not after reading all 3,000 names.
    await expect(collect(dir, { ...OPTIONS, maxEntries: 100 })).rejects.toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_walk_entries", limit: 100, value: 101 } },
    });
    // Read in batches when its size allows more entries than the limit, it is listed whole.
    const all = await collect(dir, { ...OPTIONS, maxEntries: 3000 });
    expect(all.length).toBe(3000);
    expect(all.map((e) => e.path)).toEqual(
      Array.from({ length: 3000 }, (_, i) => `f${i}`).sort(compareCodePoints),
    );
  });

  it("fails with RESOURCE_LIMIT_EXCEEDED beyond maxEntries", async () => {
    const dir = path.join(base, "limit");
    materialize(dir, { a: null, b: null, c: { d: null } });
    await expect(collect(dir, { ...OPTIONS, maxEntries: 3 })).rejects.toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "max_walk_entries", limit: 3 } },
    });
  });
});

describe("a directory the caller names is never hidden by rules", () => {
  it("ancestors' rules do not hide the walked directory; entries they match alone still go", async () => {
    const dir = path.join(base, "named");
    materialize(dir, {
      ".gitignore": null,
      node_modules: { typescript: { lib: { "a.js": null, "a.d.ts": null } }, ".bin": null },
      src: { "x.ts": null },
    });
    writeFileSync(path.join(dir, ".gitignore"), "node_modules\n*.js\n");
    const options = { ...OPTIONS, includeHidden: false, respectGitignore: true, ancestors: [dir] };
    const paths: string[] = [];
    const stats = await walk(path.join(dir, "node_modules"), options, (e) => paths.push(e.path));
    expect(paths).toEqual(["typescript", "typescript/lib", "typescript/lib/a.d.ts"]);
    expect(stats).toMatchObject({ ignored: 1, hidden: 1 });
    // From the root, node_modules itself is ignored and counted once (its content is not read).
    const fromRoot: string[] = [];
    const rootStats = await walk(dir, { ...options, ancestors: [] }, (e) => fromRoot.push(e.path));
    expect(fromRoot).toEqual(["src", "src/x.ts"]);
    expect(rootStats).toMatchObject({ ignored: 1, hidden: 1 });
  });

  it("a hidden directory the caller names is listed", async () => {
    const dir = path.join(base, "hidden-named");
    materialize(dir, { ".github": { workflows: { "ci.yml": null } } });
    const got = (
      await collect(path.join(dir, ".github"), { ...OPTIONS, includeHidden: false })
    ).map((e) => e.path);
    expect(got).toEqual(["workflows", "workflows/ci.yml"]);
  });
});

describe("the walk reads only what lies inside the walked directory", () => {
  it("never lists an outside directory while a subdirectory is swapped for a symlink (race)", async () => {
    const dir = path.join(base, "race");
    const out = path.join(base, "race-outside");
    // The same shape inside and outside, so a swap anywhere on the path could land outside.
    const shape = (tag: string): Tree => ({
      [`${tag}-1`]: null,
      [`${tag}-2`]: null,
      deeper: { [`${tag}-3`]: null, deepest: { [`${tag}-4`]: null } },
    });
    materialize(dir, { a: { "in-0": null }, sub: shape("in"), z: { "in-9": null } });
    materialize(out, shape("OUTSIDE"));
    nodeFs.symlinkSync(out, path.join(dir, "link"));
    const race = startSwapRace(dir);
    let outsideSeen = 0;
    let insideSeen = 0;
    let walks = 0;
    try {
      while (walks < 5000 && (walks < 1000 || insideSeen < 50)) {
        walks++;
        await walk(dir, OPTIONS, (e) => {
          const name = path.basename(e.path);
          if (name.startsWith("OUTSIDE")) outsideSeen++;
          if (e.path.startsWith("sub/") && name.startsWith("in-")) insideSeen++;
        });
      }
    } finally {
      await race.stop();
    }
    expect(race.swaps()).toBeGreaterThan(0);
    expect(insideSeen).toBeGreaterThan(0);
    expect(outsideSeen).toBe(0);
  }, 60_000);
});

describe("directory descriptors", () => {
  const openFds = () => readdirSync("/proc/self/fd").length;

  it.runIf(process.platform === "linux")(
    "are all closed after a walk, a failed walk and a cancelled one, however deep",
    async () => {
      const dir = path.join(base, "fds");
      let deep = dir;
      for (let i = 0; i < 100; i++) deep = path.join(deep, `d${i}`);
      mkdirSync(deep, { recursive: true });
      writeFileSync(path.join(deep, "leaf"), "x");
      const before = openFds();
      let maxDuring = 0;
      const got = await collect(dir, {
        ...OPTIONS,
        onDirectory: () => {
          maxDuring = Math.max(maxDuring, openFds());
        },
      });
      expect(got.length).toBe(101);
      expect(openFds()).toBe(before);
      // One kept per level of the current path, at most 64.
      expect(maxDuring - before).toBeLessThanOrEqual(64);
      expect(maxDuring - before).toBeGreaterThanOrEqual(60);
      await expect(collect(dir, { ...OPTIONS, maxEntries: 50 })).rejects.toMatchObject({
        code: "RESOURCE_LIMIT_EXCEEDED",
      });
      expect(openFds()).toBe(before);
      const controller = new AbortController();
      let dirs = 0;
      await expect(
        collect(dir, {
          ...OPTIONS,
          signal: controller.signal,
          onDirectory: () => {
            if (++dirs === 40) controller.abort();
          },
        }),
      ).rejects.toThrow();
      expect(openFds()).toBe(before);
    },
  );
});
