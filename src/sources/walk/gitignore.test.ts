/**
 * Hostile `.gitignore` files: each kind gives a prompt walk that reports the file as skipped and
 * never applies what it names. Work is counted (files opened, bytes the walk could have read), not
 * timed.
 */

import { execFileSync } from "node:child_process";
import * as nodeFs from "node:fs";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_GITIGNORE_BYTES, MAX_GITIGNORE_RULE_CHARS, MAX_GITIGNORE_RULES } from "../limits.js";
import { compileGitignore, isGitignoreSkip, readGitignore } from "./gitignore.js";
import { type WalkOptions, type WalkStats, walk } from "./walk.js";

const base = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-gitignore-")));
const outside = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-gitignore-outside-")));
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const OPTIONS: WalkOptions = {
  recursive: true,
  includeHidden: false,
  respectGitignore: true,
  maxEntries: 1_000_000,
};

async function walked(
  dir: string,
  options: Partial<WalkOptions> = {},
): Promise<{ paths: string[]; stats: WalkStats }> {
  const paths: string[] = [];
  const stats = await walk(dir, { ...OPTIONS, ...options }, (e) => paths.push(e.path));
  return { paths, stats };
}

/** A directory holding `secret.txt` and `keep.txt`, and a `.gitignore` made by `make`. */
function hostile(name: string, make: (gitignore: string) => void): string {
  const dir = path.join(base, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "secret.txt"), "x");
  writeFileSync(path.join(dir, "keep.txt"), "x");
  make(path.join(dir, ".gitignore"));
  return dir;
}

describe("hostile .gitignore files", () => {
  it("a symlink to /dev/zero is never opened through: skipped, reported", async () => {
    const dir = hostile("zero", (g) => symlinkSync("/dev/zero", g));
    const { paths, stats } = await walked(dir);
    expect(paths).toEqual(["keep.txt", "secret.txt"]);
    expect(stats.gitignoreSkipped).toBe(1);
    expect(stats.firstGitignoreSkipped).toMatchObject({
      path: ".gitignore",
      reason: expect.stringMatching(/symbolic link/),
    });
  });

  it("a symlink to a file outside is not applied (its lines would hide secret.txt)", async () => {
    writeFileSync(path.join(outside, "rules"), "secret.txt\n");
    const dir = hostile("out", (g) => symlinkSync(path.join(outside, "rules"), g));
    const { paths, stats } = await walked(dir);
    expect(paths).toContain("secret.txt");
    expect(stats.ignored).toBe(0);
    expect(stats.gitignoreSkipped).toBe(1);
  });

  it("a FIFO never blocks the walk: skipped as not a regular file", async () => {
    const dir = hostile("fifo", (g) => execFileSync("mkfifo", [g]));
    const { paths, stats } = await walked(dir);
    expect(paths).toEqual(["keep.txt", "secret.txt"]);
    expect(stats.firstGitignoreSkipped?.reason).toMatch(/not a regular file/);
  });

  it("a directory named .gitignore is skipped as not a regular file", async () => {
    const dir = hostile("dir", (g) => mkdirSync(g));
    const { stats } = await walked(dir);
    expect(stats.firstGitignoreSkipped?.reason).toMatch(/not a regular file/);
  });

  it("a file over max_gitignore_bytes is skipped whole, naming the limit, before any read", async () => {
    const dir = hostile("huge", (g) =>
      writeFileSync(g, `secret.txt\n${"#".repeat(MAX_GITIGNORE_BYTES)}\n`),
    );
    const { paths, stats } = await walked(dir);
    expect(paths).toContain("secret.txt");
    expect(stats.firstGitignoreSkipped).toMatchObject({
      limit: { name: "max_gitignore_bytes", limit: MAX_GITIGNORE_BYTES },
    });
    // 16 GiB (sparse): decided by fstat of the opened descriptor, so nothing is read.
    const sparse = path.join(base, "sparse.gitignore");
    writeFileSync(sparse, "");
    nodeFs.truncateSync(sparse, 16 * 2 ** 30);
    expect(await readGitignore(sparse)).toMatchObject({
      limit: { name: "max_gitignore_bytes", value: 16 * 2 ** 30 },
    });
    expect(await readGitignore("/dev/zero")).toEqual({ reason: "not a regular file" });
  });

  it("a smaller cap given to the walk applies", async () => {
    const dir = hostile("capped", (g) => writeFileSync(g, "secret.txt\n"));
    expect((await walked(dir)).paths).toEqual(["keep.txt"]);
    const { paths, stats } = await walked(dir, { maxGitignoreBytes: 4 });
    expect(paths).toContain("secret.txt");
    expect(stats.firstGitignoreSkipped?.limit).toEqual({
      name: "max_gitignore_bytes",
      limit: 4,
      value: 11,
    });
  });

  it("100,000 rules are never compiled: skipped with max_gitignore_rules", async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `r${i}`);
    const dir = hostile("many", (g) => writeFileSync(g, `secret.txt\n${lines.join("\n")}\n`));
    const { paths, stats } = await walked(dir);
    expect(paths).toContain("secret.txt");
    expect(stats.firstGitignoreSkipped?.limit).toEqual({
      name: "max_gitignore_rules",
      limit: MAX_GITIGNORE_RULES,
      value: 100_001,
    });
  });

  it("rules in force are capped across nested files: a deeper file that would exceed is skipped", async () => {
    const dir = path.join(base, "nested-cap");
    mkdirSync(path.join(dir, "sub"), { recursive: true });
    const half = Array.from({ length: MAX_GITIGNORE_RULES / 2 + 1 }, (_, i) => `r${i}`);
    writeFileSync(path.join(dir, ".gitignore"), `${half.join("\n")}\na.log\n`);
    writeFileSync(path.join(dir, "sub/.gitignore"), `${half.join("\n")}\nb.log\n`);
    writeFileSync(path.join(dir, "sub/a.log"), "x");
    writeFileSync(path.join(dir, "sub/b.log"), "x");
    const { paths, stats } = await walked(dir);
    expect(paths).toEqual(["sub", "sub/b.log"]);
    expect(stats.firstGitignoreSkipped).toMatchObject({
      path: "sub/.gitignore",
      limit: { name: "max_gitignore_rules" },
    });
    // Siblings after the deeper file are back under the outer file's budget only.
    expect(stats.gitignoreSkipped).toBe(1);
  });

  it("costly rules are refused before compiling: three ** (depth^3), too many characters", async () => {
    const skip = await compileGitignore("ok\n**/a/**/a/**/b\n");
    expect(isGitignoreSkip(skip) && skip.limit).toEqual({
      name: "max_gitignore_globstars_per_rule",
      limit: 2,
      value: 3,
    });
    expect(isGitignoreSkip(await compileGitignore("a/**/b/**\n"))).toBe(false);
    // 1,000 rules of 40 characters: within the rule count, over the characters in force.
    const long = await compileGitignore(
      Array.from(
        { length: 1000 },
        (_, i) => `${"*a".repeat(18)}${String(i).padStart(4, "0")}`,
      ).join("\n"),
    );
    expect(isGitignoreSkip(long) && long.limit).toEqual({
      name: "max_gitignore_rule_chars",
      limit: MAX_GITIGNORE_RULE_CHARS,
      value: 40_000,
    });
  });

  it("reads a regular file fully below the cap, and nothing for a missing one", async () => {
    const file = path.join(base, "plain.gitignore");
    writeFileSync(file, "a\nb\n");
    expect(await readGitignore(file)).toBe("a\nb\n");
    expect(await readGitignore(path.join(base, "missing"))).toBeUndefined();
  });
});

describe("gitignore rules test one path, like git during a walk", () => {
  it("keeps git's semantics for the common rule shapes (the ignore package's rule list)", async () => {
    const rules = await compileGitignore(
      "*.log\nbuild/\n/top\ndocs/**/gen\n!keep.log\nnode_modules\n",
    );
    if (isGitignoreSkip(rules)) throw new Error(rules.reason);
    expect(rules.count).toBe(6);
    const cases: Array<[string, 1 | -1 | 0]> = [
      ["a.log", 1],
      ["x/a.log", 1],
      ["keep.log", -1],
      ["build/", 1],
      ["build", 0], // a file named build: the rule is for directories
      ["top", 1],
      ["x/top", 0],
      ["docs/a/b/gen", 1],
      ["node_modules/", 1],
      // Parents are not consulted: inside a directory the caller named, entries are tested alone.
      ["node_modules/typescript/", 0],
      ["build/x.txt", 0],
      // Case-sensitive where git is (Linux): *.log does not match A.LOG.
      ["A.LOG", process.platform === "linux" ? 0 : 1],
    ];
    for (const [p, verdict] of cases) expect([p, rules.test(p)]).toEqual([p, verdict]);
  });

  it("the last matching rule decides across compile chunks, as in one list", async () => {
    const filler = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
    const text = ["a.x", ...filler(100, "f"), "!a.x", ...filler(100, "g"), "b.x", "# note"];
    const rules = await compileGitignore([...text, ...filler(30, "h"), "!b.x"].join("\n"));
    if (isGitignoreSkip(rules)) throw new Error(rules.reason);
    expect([rules.test("a.x"), rules.test("b.x"), rules.test("f3"), rules.test("c.x")]).toEqual([
      -1, -1, 1, 0,
    ]);
    let pauses = 0;
    await compileGitignore(text.join("\n"), undefined, async () => {
      pauses++;
    });
    expect(pauses).toBe(4); // 203 rules in chunks of 64
  });

  it("an ancestor's hostile .gitignore is skipped and named relative to the walked directory", async () => {
    const dir = path.join(base, "anc-fifo");
    mkdirSync(path.join(dir, "sub"), { recursive: true });
    execFileSync("mkfifo", [path.join(dir, ".gitignore")]);
    writeFileSync(path.join(dir, "sub/a.txt"), "x");
    const { paths, stats } = await walked(path.join(dir, "sub"), { ancestors: [dir] });
    expect(paths).toEqual(["a.txt"]);
    expect(stats.firstGitignoreSkipped).toMatchObject({
      path: "../.gitignore",
      reason: "not a regular file",
    });
  });
});

describe("the walk agrees with git", () => {
  const names = ["a", "b", "c.x", "d.y"];
  const ruleArb = fc.oneof(
    fc.constantFrom(...names),
    fc.constantFrom(...names).map((n) => `${n}/`),
    fc.constantFrom(...names).map((n) => `/${n}`),
    fc.constantFrom(...names).map((n) => `!${n}`),
    fc.constantFrom("*.x", "*.y", "!*.x", "a/b", "a/**/c.x", "**/b", "b/**", "!b/", "a/*"),
  );
  type Spec = { files: string[]; ignores: Array<[string, string[]]> };
  const pathArb = fc
    .array(fc.constantFrom(...names), { minLength: 1, maxLength: 3 })
    .map((p) => p.join("/"));
  const specArb: fc.Arbitrary<Spec> = fc.record({
    files: fc.uniqueArray(pathArb, { minLength: 1, maxLength: 12 }),
    ignores: fc.array(
      fc.tuple(fc.constantFrom("", "a/", "b/", "a/b/"), fc.array(ruleArb, { maxLength: 4 })),
      { maxLength: 3 },
    ),
  });
  let run = 0;

  /** Materializes the spec: a path that is a prefix of another becomes a directory. */
  function make(dir: string, spec: Spec): void {
    const dirs = new Set<string>();
    for (const f of spec.files) {
      const parts = f.split("/");
      for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
    }
    for (const d of dirs) mkdirSync(path.join(dir, d), { recursive: true });
    for (const f of spec.files) if (!dirs.has(f)) writeFileSync(path.join(dir, f), "x");
    for (const [at, rules] of spec.ignores) {
      if (at !== "" && !dirs.has(at.slice(0, -1))) continue;
      writeFileSync(path.join(dir, at, ".gitignore"), `${rules.join("\n")}\n`);
    }
  }

  it("lists the files git reports as untracked and not ignored (property)", async () => {
    await fc.assert(
      fc.asyncProperty(specArb, async (spec) => {
        const dir = path.join(base, `git${run++}`);
        mkdirSync(dir);
        make(dir, spec);
        // No template: its hook samples cost most of an init, and its info/exclude is comments.
        execFileSync("git", ["init", "-q", "--template="], { cwd: dir });
        const byGit = execFileSync(
          "git",
          ["-c", "core.ignorecase=false", "ls-files", "--others", "--exclude-standard", "-z"],
          { cwd: dir, encoding: "utf8" },
        )
          .split("\0")
          .filter(Boolean)
          .sort();
        const { paths } = await walked(dir, { includeHidden: true });
        const files = paths.filter((p) => nodeFs.lstatSync(path.join(dir, p)).isFile()).sort();
        expect(files).toEqual(byGit);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
