/**
 * `list` end to end over stdio with the SDK client: a 50,000-file tree walked by next_offset and by
 * next_cursor against `find`, budgets, limits, changes between pages, hostile inputs (hostile
 * `.gitignore` files answered while other calls are), what ignore and hidden-file rules removed.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultEstimator } from "../dist/core/index.js";
import { outOfRacyWindow, type ServerHandle, startServer, tempDir } from "./support/server.js";

const FILES = 50_000;
const BUDGET = 18_000;
const tmp = tempDir("pagewise-list-e2e-", { inMemory: true });
const root = tmp.dir;
const big = path.join(root, "big");
let serverA: ServerHandle;
let serverB: ServerHandle;

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The tree of the test of what a continuation reads again; made first, so it has aged by then. */
const semantics = path.join(root, "semantics");

beforeAll(async () => {
  for (const d of ["a", "b", "c"]) {
    mkdirSync(path.join(semantics, d), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(path.join(semantics, d, `${d}${i}`), "x");
  }
  let made = 0;
  for (let a = 0; made < FILES; a++) {
    for (let b = 0; b < 10 && made < FILES; b++) {
      const dir = path.join(big, `d${a}`, `s${b}`);
      mkdirSync(dir, { recursive: true });
      for (let c = 0; c < 100 && made < FILES; c++, made++) {
        writeFileSync(path.join(dir, `f${c}.txt`), "x");
      }
      if (b === 3) {
        writeFileSync(path.join(dir, "noise.log"), "ignored");
        writeFileSync(path.join(dir, ".hidden"), "hidden");
        mkdirSync(path.join(dir, "ignored"));
        writeFileSync(path.join(dir, "ignored", "x.txt"), "ignored");
      }
    }
    // Names that sort between "dN" and "dN/…" in code-point order ("-" < "/").
    writeFileSync(path.join(big, `d${a}-x`), "x");
  }
  mkdirSync(path.join(big, ".git"));
  writeFileSync(path.join(big, ".git", "HEAD"), "ref");
  writeFileSync(path.join(big, ".gitignore"), "*.log\nignored/\n");
  [serverA, serverB] = await Promise.all([
    startServer(["--root", root]),
    startServer(["--root", root, "--max-walk-entries", "1000"]),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([serverA?.close(), serverB?.close()]);
  tmp.cleanup();
}, 180_000);

function findFiles(dir: string): string[] {
  const out = execFileSync(
    "find",
    [
      ".",
      "-type",
      "f",
      "-not",
      "-path",
      "*/.*",
      "-not",
      "-name",
      "*.log",
      "-not",
      "-path",
      "*/ignored/*",
    ],
    { cwd: dir, maxBuffer: 64 << 20, encoding: "utf8" },
  );
  return out
    .split("\n")
    .filter(Boolean)
    .map((p) => p.slice(2))
    .sort(byBytes);
}

async function walkPages(
  server: ServerHandle,
  mode: "offset" | "cursor",
  dir = "big",
): Promise<{ paths: string[]; pages: number }> {
  const paths: string[] = [];
  const args = { path: dir, recursive: true, type: "file", limit: 1000, max_tokens: BUDGET };
  let page = await server.call("list", args);
  let pages = 0;
  for (;;) {
    expect(page.isError, page.text).toBe(false);
    expect(page.blocks).toBe(1);
    expect(defaultEstimator.count(page.text)).toBeLessThanOrEqual(BUDGET);
    const json = page.json;
    expect(json.pagination.offset).toBe(paths.length);
    paths.push(...json.items.map((i: { path: string }) => i.path));
    pages++;
    if (!json.pagination.has_more) {
      expect(json.pagination.next_offset).toBeNull();
      expect(json.next_cursor).toBeNull();
      break;
    }
    expect(json.pagination.next_offset).toBe(paths.length);
    page =
      mode === "offset"
        ? await server.call("list", { ...args, offset: json.pagination.next_offset })
        : await server.call("list", { cursor: json.next_cursor, max_tokens: BUDGET });
  }
  return { paths, pages };
}

describe("list over stdio", () => {
  it("walks 50,000 files by next_cursor and a subtree by next_offset, equal to find's list", async () => {
    const expected = findFiles(big);
    expect(expected.length).toBe(FILES + Math.ceil(FILES / 1000));
    // Every offset page walks its whole directory again (its exact total needs it), so the offset
    // walk covers one subtree of 1,000 files in many pages; the cursor walk covers the tree.
    const subtree = findFiles(path.join(big, "d0"));
    const [byOffset, byCursor] = await Promise.all([
      walkPages(serverA, "offset", "big/d0"),
      walkPages(serverA, "cursor"),
    ]);
    expect(byOffset.pages).toBeGreaterThan(2);
    expect(byOffset.paths).toEqual(subtree);
    expect(byCursor.paths).toEqual(expected);
    expect(new Set(byCursor.paths).size).toBe(expected.length);
  }, 120_000);

  it("lowers limit 5000 to 1000 and says so; reports the budget it applied", async () => {
    const page = await serverA.call("list", {
      path: "big/d0/s0",
      limit: 5000,
      max_tokens: 1_000_000,
    });
    expect(page.isError, page.text).toBe(false);
    expect(page.json.pagination.limit).toBe(1000);
    expect(page.json.note).toMatch(/5000.*1000/);
    expect(page.json.max_tokens).toBe(25_000);
  });

  it("gives items in code-point order with the contract's fields", async () => {
    const page = await serverA.call("list", { path: "big", limit: 4 });
    expect(page.json.items.map((i: { path: string }) => i.path)).toEqual([
      "d0",
      "d0-x",
      "d1",
      "d1-x",
    ]);
    const item = page.json.items[0];
    expect(Object.keys(item)).toEqual(["path", "type", "size", "mtime"]);
    expect(item.type).toBe("directory");
    expect(new Date(item.mtime).toISOString()).toBe(item.mtime);
    expect(page.json.uri).toBe(`file://${big}`);
    expect(typeof page.json.version).toBe("string");
    expect(page.json.next_cursor.length).toBeLessThanOrEqual(100);
  });

  it("keeps cursor paging exact while files are added and deleted; version changes", async () => {
    const dir = path.join(root, "changing");
    mkdirSync(dir);
    const initial = Array.from({ length: 120 }, (_, i) => `f${String(i).padStart(3, "0")}`);
    for (const n of initial) writeFileSync(path.join(dir, n), n);
    const seen: string[] = [];
    const deleted = new Set<string>();
    let page = await serverA.call("list", { path: "changing", limit: 10 });
    const firstVersion = page.json.version;
    let step = 0;
    let lastVersion = firstVersion;
    for (;;) {
      expect(page.isError, page.text).toBe(false);
      seen.push(...page.json.items.map((i: { path: string }) => i.path));
      lastVersion = page.json.version;
      if (!page.json.next_cursor) break;
      // Delete one entry already seen and one not yet seen; add one before and one after.
      const seenVictim = seen[step];
      const aheadVictim = initial[Math.min(initial.length - 1, seen.length + 3 + step)]!;
      for (const v of [seenVictim, aheadVictim]) {
        if (v && !deleted.has(v)) {
          unlinkSync(path.join(dir, v));
          deleted.add(v);
        }
      }
      writeFileSync(path.join(dir, `a-new-${step}`), "new"); // sorts before everything seen
      writeFileSync(path.join(dir, `z-new-${step}`), "new"); // sorts after
      step++;
      page = await serverA.call("list", { cursor: page.json.next_cursor });
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const n of initial) if (!deleted.has(n)) expect(seen).toContain(n);
    expect(seen.filter((p) => p.startsWith("z-new-")).length).toBeGreaterThan(0);
    expect(seen.some((p) => p.startsWith("a-new-"))).toBe(false);
    expect(lastVersion).not.toBe(firstVersion);
    const again = await serverA.call("list", { path: "changing", limit: 10 });
    expect(again.json.version).toBe(lastVersion);
  });

  it("continues with the first page's total and version until a page reads a changed directory", async () => {
    const dir = semantics;
    // Directories changed less than 2 s before a full walk (timestamps rounded to the second)
    // count as changed since: the tree must have aged first (it was made before the big one).
    await outOfRacyWindow(
      ["", "a", "b", "c"].map((d) => path.join(dir, d)),
      3100,
    );
    const args = { path: "semantics", recursive: true, type: "file", limit: 7 };
    const first = await serverA.call("list", args);
    expect(first.json.items.at(-1).path).toBe("b/b1");
    expect(first.json.pagination.total).toBe(15);
    // A change in "a", which the next page does not read (it reads "", "b" and "c").
    unlinkSync(path.join(dir, "a", "a0"));
    const second = await serverA.call("list", { cursor: first.json.next_cursor });
    expect(second.json.items.map((i: { path: string }) => i.path)).toEqual([
      "b/b2",
      "b/b3",
      "b/b4",
      "c/c0",
      "c/c1",
      "c/c2",
      "c/c3",
    ]);
    expect(second.json.pagination).toMatchObject({ total: 15, offset: 7, has_more: true });
    expect(second.json.version).toBe(first.json.version);
    const fresh = await serverA.call("list", args);
    expect(fresh.json.pagination.total).toBe(14);
    expect(fresh.json.version).not.toBe(first.json.version);
    // A change in "c", which the next page reads: it walks again and reports the current listing.
    writeFileSync(path.join(dir, "c", "c5"), "x");
    const third = await serverA.call("list", { cursor: second.json.next_cursor });
    expect(third.json.items.map((i: { path: string }) => i.path)).toEqual(["c/c4", "c/c5"]);
    expect(third.json.pagination).toMatchObject({ total: 15, offset: 13, has_more: false });
    const now = await serverA.call("list", args);
    expect(third.json.version).toBe(now.json.version);
    expect(third.json.version).not.toBe(fresh.json.version);
  });

  it("answers hostile inputs with structured errors or documented entries, never a hang", async () => {
    const dir = path.join(root, "hostile");
    mkdirSync(path.join(dir, "a"), { recursive: true });
    symlinkSync("..", path.join(dir, "a", "loop"));
    symlinkSync("/etc", path.join(dir, "out"));
    execFileSync("mkfifo", [path.join(dir, "fifo")]);
    writeFileSync(path.join(dir, "file.txt"), "x");
    const listing = await serverA.call("list", { path: "hostile", recursive: true });
    expect(listing.isError, listing.text).toBe(false);
    expect(
      listing.json.items.map((i: { path: string; type: string }) => `${i.path}:${i.type}`),
    ).toEqual(["a:directory", "a/loop:symlink", "fifo:other", "file.txt:file", "out:symlink"]);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ path: "hostile", glob: "[" }, "INVALID_ARGUMENT"],
      [{ path: "hostile", glob: "{a" }, "INVALID_ARGUMENT"],
      [{ path: ".." }, "ACCESS_DENIED"],
      [{ path: "/etc" }, "ACCESS_DENIED"],
      [{ path: "hostile/out" }, "ACCESS_DENIED"],
      [{ path: "hostile/file.txt" }, "NOT_A_DIRECTORY"],
      [{ path: "hostile/missing" }, "NOT_FOUND"],
      [{ path: "hostile", limit: 0 }, "INVALID_ARGUMENT"],
      [{ cursor: "garbage" }, "INVALID_CURSOR"],
      [{ path: "hostile", max_tokens: 5 }, "BUDGET_TOO_SMALL"],
    ];
    for (const [args, code] of cases) {
      const r = await serverA.call("list", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.json.error.code, JSON.stringify(args)).toBe(code);
      expect(r.json.error.message.length).toBeGreaterThan(10);
    }
  });

  it("stops a walk beyond --max-walk-entries with RESOURCE_LIMIT_EXCEEDED", async () => {
    const r = await serverB.call("list", { path: "big", recursive: true });
    expect(r.isError).toBe(true);
    expect(r.json.error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
    expect(r.json.error.limit).toMatchObject({ name: "max_walk_entries", limit: 1000 });
    const small = await serverB.call("list", { path: "big" });
    expect(small.isError, small.text).toBe(false);
  });

  it("says what ignore and hidden-file rules removed, and never hides a directory it is given", async () => {
    const page = await serverA.call("list", { path: "big/d0/s3" });
    expect(page.isError, page.text).toBe(false);
    expect(page.json.items.some((i: { path: string }) => i.path === "noise.log")).toBe(false);
    expect(page.json.filtered).toEqual({
      ignored: 2,
      hidden: 1,
      hint: "respect_gitignore: false / include_hidden: true include them.",
    });
    const all = await serverA.call("list", {
      path: "big/d0/s3",
      respect_gitignore: false,
      include_hidden: true,
    });
    expect(all.json.pagination.total).toBe(page.json.pagination.total + 3);
    expect(all.json.filtered).toBeUndefined();
    // "ignored/" is in big/.gitignore: named explicitly, it is listed (like fd and rg).
    const named = await serverA.call("list", { path: "big/d0/s3/ignored" });
    expect(named.json.items.map((i: { path: string }) => i.path)).toEqual(["x.txt"]);
    expect(named.json.filtered).toBeUndefined();
  });
});

describe("hostile .gitignore files over stdio", () => {
  const outside = tempDir("pagewise-list-e2e-outside-");
  const hg = path.join(root, "hg");
  afterAll(() => outside.cleanup());

  /** `hg/<kind>` with secret.txt and keep.txt, its `.gitignore` made by `make`. */
  function kind(name: string, make: (gitignore: string) => void): string {
    const dir = path.join(hg, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "secret.txt"), "x");
    writeFileSync(path.join(dir, "keep.txt"), "x");
    make(path.join(dir, ".gitignore"));
    return `hg/${name}`;
  }

  it("each kind gives a structured page at once while another call is answered", async () => {
    writeFileSync(path.join(outside.dir, "rules"), "secret.txt\n");
    const cases: Array<[string, RegExp]> = [
      [kind("zero", (g) => symlinkSync("/dev/zero", g)), /symbolic link/],
      [kind("outside", (g) => symlinkSync(path.join(outside.dir, "rules"), g)), /symbolic link/],
      [kind("fifo", (g) => execFileSync("mkfifo", [g])), /not a regular file/],
      [
        kind("huge", (g) => {
          writeFileSync(g, "secret.txt\n");
          truncateSync(g, 43 << 20);
        }),
        /max_gitignore_bytes/,
      ],
      [
        kind("many", (g) =>
          writeFileSync(
            g,
            `secret.txt\n${Array.from({ length: 100_000 }, (_, i) => `r${i}`).join("\n")}`,
          ),
        ),
        /max_gitignore_rules/,
      ],
    ];
    for (const [dir, reason] of cases) {
      const [listing, other] = await Promise.all([
        serverA.call("list", { path: dir, recursive: true }),
        serverA.call("list", { path: "big", limit: 1 }),
      ]);
      expect(listing.isError, listing.text).toBe(false);
      expect(other.isError, other.text).toBe(false);
      // The file's rules are not applied (secret.txt stays), and the page says so.
      expect(listing.json.items.map((i: { path: string }) => i.path)).toEqual([
        "keep.txt",
        "secret.txt",
      ]);
      expect(listing.json.skipped.gitignore_files, dir).toBe(1);
      expect(listing.json.skipped.first_gitignore.path).toBe(".gitignore");
      expect(listing.json.skipped.first_gitignore.reason, dir).toMatch(reason);
    }
    // The parent listing includes each hostile directory's .gitignore in its count too.
    const parent = await serverA.call("list", { path: "hg", recursive: true });
    expect(parent.json.skipped.gitignore_files).toBe(cases.length);
  });

  it("a walk costly in rules (1,000 in force, 4,000 entries) lets other calls through", async () => {
    const dir = path.join(hg, "costly");
    mkdirSync(dir, { recursive: true });
    const rules = Array.from({ length: 999 }, (_, i) => `docs/**/gen${i}-*.tmp`);
    writeFileSync(path.join(dir, ".gitignore"), `${rules.join("\n")}\n*.log\n`);
    for (let i = 0; i < 4000; i++)
      writeFileSync(path.join(dir, `f${i}.${i % 2 ? "log" : "txt"}`), "");
    let done = false;
    const listing = serverA.call("list", { path: "hg/costly", limit: 1 }).finally(() => {
      done = true;
    });
    let answeredMeanwhile = 0;
    while (!done) {
      const r = await serverA.call("read", { path: "big/d0-x" });
      expect(r.isError, r.text).toBe(false);
      if (!done) answeredMeanwhile++;
    }
    const page = await listing;
    expect(page.isError, page.text).toBe(false);
    expect(page.json.pagination.total).toBe(2000);
    expect(page.json.filtered.ignored).toBe(2000);
    expect(answeredMeanwhile).toBeGreaterThan(0);
  }, 60_000);
});
