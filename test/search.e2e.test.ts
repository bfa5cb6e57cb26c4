/**
 * `search` end to end over stdio with the SDK client: totals against grep, order, cursor and offset
 * paging, a 5 MB single-line file read back through its line_cursor, hostile inputs.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultEstimator } from "../dist/core/index.js";
import { readAllPages, type ServerHandle, startServer, tempDir } from "./support/server.js";

const tmp = tempDir("pagewise-search-e2e-");
const root = tmp.dir;
const tree = path.join(root, "tree");
let server: ServerHandle;
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

beforeAll(async () => {
  let seed = 7;
  const rand = (n: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const words = [
    "needle",
    "Needle",
    "NEEDLE",
    "needles",
    "hay",
    "stack",
    "nee dle",
    "ñeedle",
    "😀",
  ];
  for (let f = 0; f < 2000; f++) {
    const dir = path.join(tree, `d${f % 13}`, `e${f % 7}`);
    mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    for (let l = 0; l < 1 + rand(30); l++) {
      lines.push(Array.from({ length: rand(8) }, () => words[rand(words.length)]).join(" "));
    }
    writeFileSync(
      path.join(dir, `f${f}${f % 5 === 0 ? "-x" : ""}.txt`),
      lines.join(f % 3 ? "\n" : "\r\n"),
    );
  }
  mkdirSync(path.join(tree, ".hidden"));
  writeFileSync(path.join(tree, ".hidden", "h.txt"), "needle needle\n");
  writeFileSync(path.join(tree, "binary.dat"), Buffer.from("needle\0needle\n"));
  symlinkSync("..", path.join(tree, "d0", "loop"));
  execFileSync("mkfifo", [path.join(tree, "fifo")]);
  // 5 MB on one line, one match in the middle, a terminator at the end.
  const long = `${"a".repeat(2_500_000)}NEEDLE-LONG${"b".repeat(2_500_000)}`;
  mkdirSync(path.join(root, "long"));
  writeFileSync(path.join(root, "long", "one-line.txt"), `${long}\n`);
  server = await startServer(["--root", root, "--search-stall-ms", "1500"]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  tmp.cleanup();
}, 60_000);

/** The top-level names under `dir` that are not hidden (grep's starting points). */
function topLevel(dir: string): string[] {
  return readdirSync(dir).filter((n) => !n.startsWith("."));
}

/**
 * grep's matches under `dir` (default: the tree) as "path:line" in code-point order of path, then
 * line, one per match.
 */
function grepMatches(args: string[], dir = tree): string[] {
  let out = "";
  try {
    out = execFileSync(
      "grep",
      ["-rIon", "-D", "skip", "--exclude-dir=.*", "--exclude=.*", ...args, "--", ...topLevel(dir)],
      {
        cwd: dir,
        maxBuffer: 256 << 20,
        encoding: "utf8",
        env: { ...process.env, LC_ALL: "C.UTF-8" },
      },
    );
  } catch (err) {
    out = (err as { stdout?: string }).stdout ?? "";
  }
  const rows = out
    .split("\n")
    .filter(Boolean)
    .map((row) => {
      const [file, line] = row.split(":");
      return { file: file!, line: Number(line) };
    });
  rows.sort((a, b) => byBytes(a.file, b.file) || a.line - b.line);
  return rows.map((r) => `${r.file}:${r.line}`);
}

async function allMatches(args: Record<string, unknown>, mode: "cursor" | "offset") {
  const out: string[] = [];
  let page = await server.call("search", args);
  let total = -1;
  let pages = 1;
  for (;;) {
    expect(page.isError, page.text).toBe(false);
    expect(defaultEstimator.count(page.text)).toBeLessThanOrEqual(
      (args.max_tokens as number) ?? 8000,
    );
    const json = page.json;
    if (total < 0) total = json.pagination.total;
    expect(json.pagination.total).toBe(total);
    expect(json.pagination.offset).toBe(out.length);
    out.push(...json.items.map((i: { path: string; line: number }) => `${i.path}:${i.line}`));
    if (!json.pagination.has_more) break;
    pages++;
    page =
      mode === "cursor"
        ? await server.call("search", { cursor: json.next_cursor, max_tokens: args.max_tokens })
        : await server.call("search", { ...args, offset: json.pagination.next_offset });
  }
  return { out, total, pages };
}

describe("search over stdio", () => {
  it("counts every match exactly like grep -o (smart case), in order, by cursor and by offset", async () => {
    const expected = grepMatches(["-i", "needle"]);
    expect(expected.length).toBeGreaterThan(5000);
    const args = { pattern: "needle", path: "tree", limit: 1000, max_tokens: 12_000 };
    const byCursor = await allMatches(args, "cursor");
    expect(byCursor.total).toBe(expected.length);
    expect(byCursor.out).toEqual(expected);
    // An offset page re-walks the matches before it, so following next_offset costs O(pages²):
    // it is followed through one of the 13 top-level directories (still several pages, each
    // ending inside a file), not through the whole tree.
    const subtree = { ...args, path: "tree/d1" };
    const expectedInSubtree = grepMatches(["-i", "needle"], path.join(tree, "d1"));
    const byOffset = await allMatches(subtree, "offset");
    expect(byOffset.pages).toBeGreaterThan(3);
    expect(byOffset.out).toEqual(expectedInSubtree);
  }, 120_000);

  it("is case-sensitive when the pattern has an upper-case letter; regex and literal agree with grep", async () => {
    const upper = await server.call("search", { path: "tree", pattern: "Needle", limit: 1 });
    expect(upper.json.pagination.total).toBe(grepMatches(["Needle"]).length);
    const regex = await server.call("search", { path: "tree", pattern: "ne+dles?", limit: 1 });
    expect(regex.json.pagination.total).toBe(grepMatches(["-iE", "ne+dles?"]).length);
    const literal = await server.call("search", {
      path: "tree",
      pattern: "nee dle",
      literal: true,
      limit: 1,
    });
    expect(literal.json.pagination.total).toBe(grepMatches(["-iF", "nee dle"]).length);
    const anchored = await server.call("search", { path: "tree", pattern: "^needle", limit: 1 });
    expect(anchored.json.pagination.total).toBe(grepMatches(["-i", "^needle"]).length);
    const sensitive = await server.call("search", {
      path: "tree",
      pattern: "needle",
      case_sensitive: true,
      limit: 1,
    });
    expect(sensitive.json.pagination.total).toBe(grepMatches(["needle"]).length);
  });

  it("gives columns in code points and context lines without terminators", async () => {
    const r = await server.call("search", {
      pattern: "😀 needle",
      path: "tree",
      context: 2,
      limit: 5,
    });
    expect(r.isError, r.text).toBe(false);
    for (const item of r.json.items) {
      const cps = [...item.text];
      expect(cps.slice(item.column - 1, item.column + 1).join("")).toBe("😀 ");
      expect(Array.isArray(item.before) && Array.isArray(item.after)).toBe(true);
      for (const l of [...item.before, ...item.after, item.text]) expect(l).not.toMatch(/[\r\n]/);
    }
  });

  it("clamps a match in a 5 MB line; its line_cursor reads back the whole line exactly", async () => {
    const r = await server.call("search", { pattern: "NEEDLE-LONG", path: "long" });
    expect(r.isError, r.text).toBe(false);
    const [item] = r.json.items;
    expect(item.truncated).toBe(true);
    expect(item.text.length).toBeLessThanOrEqual(400);
    expect(item.text).toContain("NEEDLE-LONG");
    expect(item.column).toBe(2_500_001);
    const pages = await readAllPages(server, { cursor: item.line_cursor }, 100_000);
    const line = pages.map((p) => p.json.content).join("");
    expect(line).toBe(`${"a".repeat(2_500_000)}NEEDLE-LONG${"b".repeat(2_500_000)}`);
    expect(pages.at(-1)!.json.has_more).toBe(false);
  }, 60_000);

  it("answers hostile inputs with structured errors, and survives a catastrophic regex", async () => {
    writeFileSync(path.join(root, "long", "evil.txt"), `${"a".repeat(40)}!\n`);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ pattern: "(" }, "INVALID_ARGUMENT"],
      [{ pattern: "x", glob: "[" }, "INVALID_ARGUMENT"],
      [{ pattern: "" }, "INVALID_ARGUMENT"],
      [{ pattern: "x", path: ".." }, "ACCESS_DENIED"],
      [{ pattern: "x", path: "tree/fifo" }, "NOT_A_FILE"],
      [{ pattern: "x", context: 11 }, "INVALID_ARGUMENT"],
      // Lookahead: only V8 runs it, in the guarded worker, which stops it.
      [{ pattern: "(?=a)(a+)+$", path: "long", glob: "evil.txt" }, "RESOURCE_LIMIT_EXCEEDED"],
    ];
    for (const [args, code] of cases) {
      const r = await server.call("search", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.json.error.code, JSON.stringify(args)).toBe(code);
    }
    // What the linear-time engines can run is answered exactly, whatever its backtracking cost would be.
    for (const [pattern, total] of [
      ["(a+)+$", 0],
      ["(a+)+!$", 1],
      ["(a|aa)+!", 1],
    ] as const) {
      const r = await server.call("search", { pattern, path: "long", glob: "evil.txt" });
      expect(r.isError, r.text).toBe(false);
      expect(r.json.pagination.total, pattern).toBe(total);
    }
    // A file is a target too, a hidden one included when named.
    const file = await server.call("search", { pattern: "needle", path: "tree/.hidden/h.txt" });
    expect(file.isError, file.text).toBe(false);
    expect(file.json.pagination.total).toBe(2);
    expect(file.json.items[0].path).toBe("h.txt");
    // The server is still responsive, and skipped binary files are reported.
    const ok = await server.call("search", { pattern: "needle", path: "tree", limit: 1 });
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.json.skipped.binary).toBe(1);
  }, 60_000);
});
