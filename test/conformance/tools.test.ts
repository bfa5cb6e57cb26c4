/**
 * Every paging tool held to the one conformance suite (conformance.ts), over the SDK's in-memory
 * transport against the server built from `src/`.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { rewriteKeepingMtime, runSourceConformance } from "./conformance.js";

/** Lines of a few hundred characters, with escapes and non-ASCII text, for text-like fixtures. */
function line(i: number, tag = "v1"): string {
  return `${tag} line ${String(i).padStart(4, "0")} "quoted" \\ tab\t naïve 中文 ${"x".repeat(i % 50)}`;
}
const LINES = 300;
/**
 * Why an item tool's walk may need more than the budget it started at: the walk reserve covers a
 * page's own metadata (cursor, numbers, one character), and `read` and `tail` clamp what does not
 * fit, but an entry, match or value further on can be larger than the first by more than that.
 */
const LARGER_ITEM_FURTHER_ON =
  "an entry, match or value further on can cost more than the first by more than the walk reserve; the refusal then names the budget to pass with the cursor";
const text = (tag = "v1") => Array.from({ length: LINES }, (_, i) => `${line(i, tag)}\n`).join("");

runSourceConformance({
  tool: "read",
  setup: (dir) => writeFileSync(path.join(dir, "doc.txt"), text()),
  first: { path: "doc.txt" },
  budget: 900,
  next: (p) => (p.has_more ? { cursor: p.next_cursor } : undefined),
  units: (p) => [p.content],
  expected: (dir) => [readFileSync(path.join(dir, "doc.txt"), "utf8")],
  ordered: true,
  change: (dir) => rewriteKeepingMtime(path.join(dir, "doc.txt"), text("v2")),
  conflicting: { offset: 3 },
  otherPath: { path: "other.txt" },
});

runSourceConformance({
  tool: "list",
  skip: {
    changed:
      "list continues by key-set on the current tree: entries added or removed between pages are the contract's expected result, reported by version",
    "walk-at-threshold": LARGER_ITEM_FURTHER_ON,
  },
  setup: (dir) => {
    for (let d = 0; d < 6; d++) {
      mkdirSync(path.join(dir, "tree", `dir-${d}`), { recursive: true });
      for (let f = 0; f < 40; f++)
        writeFileSync(path.join(dir, "tree", `dir-${d}`, `file-${f}.txt`), "x".repeat(f));
    }
  },
  first: { path: "tree", recursive: true, limit: 1000 },
  budget: 700,
  next: (p) => (p.pagination.has_more ? { cursor: p.next_cursor } : undefined),
  units: (p) => p.items.map((i: { path: string }) => i.path),
  expected: () => {
    const out: string[] = [];
    for (let d = 0; d < 6; d++) {
      out.push(`dir-${d}`);
      for (let f = 0; f < 40; f++) out.push(`dir-${d}/file-${f}.txt`);
    }
    return out;
  },
  change: () => {},
  conflicting: { recursive: false },
  otherPath: { path: "tree/dir-1" },
});

const MATCH_FILES = 5;
const searchFile = (f: number, tag = "v1") =>
  Array.from(
    { length: 80 },
    (_, i) => `${tag} needle ${f}:${i} ${"filler ".repeat(i % 7)}needle end\n`,
  ).join("");

runSourceConformance({
  tool: "search",
  skip: { "walk-at-threshold": LARGER_ITEM_FURTHER_ON },
  setup: (dir) => {
    mkdirSync(path.join(dir, "src"), { recursive: true });
    for (let f = 0; f < MATCH_FILES; f++)
      writeFileSync(path.join(dir, "src", `f${f}.txt`), searchFile(f));
  },
  first: { pattern: "needle", path: "src" },
  budget: 1200,
  next: (p) => (p.pagination.has_more ? { cursor: p.next_cursor } : undefined),
  units: (p) =>
    p.items.map((i: { path: string; line: number; column: number; text: string }) =>
      JSON.stringify([i.path, i.line, i.column, i.text]),
    ),
  expected: () => {
    const out: string[] = [];
    for (let f = 0; f < MATCH_FILES; f++) {
      const lines = searchFile(f).split("\n").slice(0, -1);
      lines.forEach((l, i) => {
        let at = l.indexOf("needle");
        while (at >= 0) {
          out.push(JSON.stringify([`f${f}.txt`, i + 1, at + 1, l]));
          at = l.indexOf("needle", at + 1);
        }
      });
    }
    return out;
  },
  change: (dir) => {
    for (let f = 0; f < MATCH_FILES; f++)
      rewriteKeepingMtime(path.join(dir, "src", `f${f}.txt`), searchFile(f, "v2"));
  },
  conflicting: { pattern: "other" },
  otherPath: { path: "." },
});

runSourceConformance({
  tool: "search",
  name: "search of one file",
  skip: { "walk-at-threshold": LARGER_ITEM_FURTHER_ON },
  setup: (dir) => {
    mkdirSync(path.join(dir, "src"), { recursive: true });
    writeFileSync(path.join(dir, "src", "f0.txt"), searchFile(0));
  },
  first: { pattern: "needle", path: "src/f0.txt" },
  budget: 1200,
  next: (p) => (p.pagination.has_more ? { cursor: p.next_cursor } : undefined),
  units: (p) =>
    p.items.map((i: { path: string; line: number; column: number; text: string }) =>
      JSON.stringify([i.path, i.line, i.column, i.text]),
    ),
  expected: () => {
    const out: string[] = [];
    searchFile(0)
      .split("\n")
      .slice(0, -1)
      .forEach((l, i) => {
        for (let at = l.indexOf("needle"); at >= 0; at = l.indexOf("needle", at + 1))
          out.push(JSON.stringify(["f0.txt", i + 1, at + 1, l]));
      });
    return out;
  },
  change: (dir) => rewriteKeepingMtime(path.join(dir, "src", "f0.txt"), searchFile(0, "v2")),
  conflicting: { pattern: "other" },
  otherPath: { path: "src" },
});

const RECORDS = 400;
const record = (i: number, tag = "v1") =>
  `{"seq":${String(i).padStart(5, "0")},"tag":"${tag}","msg":"event ${"y".repeat(i % 40)}"}`;
const log = (tag = "v1") =>
  Array.from({ length: RECORDS }, (_, i) => `${record(i, tag)}\n`).join("");

runSourceConformance({
  tool: "tail",
  setup: (dir) => writeFileSync(path.join(dir, "app.log"), log()),
  first: { path: "app.log", limit: 1000 },
  budget: 800,
  next: (p) => (p.has_earlier ? { before: p.earlier_cursor } : undefined),
  units: (p) => p.items.map((i: { text: string }) => i.text),
  expected: () => Array.from({ length: RECORDS }, (_, i) => record(i)),
  change: (dir) => rewriteKeepingMtime(path.join(dir, "app.log"), log("v2")),
  conflicting: { grep: "seq" },
  otherPath: { path: "other.txt" },
});

const ROWS = 300;
const row = (i: number, tag = "v1") => `{"id":${i},"tag":"${tag}","name":"n${"z".repeat(i % 30)}"}`;
const jsonl = (tag = "v1") => Array.from({ length: ROWS }, (_, i) => `${row(i, tag)}\n`).join("");

runSourceConformance({
  tool: "json_read",
  skip: { "walk-at-threshold": LARGER_ITEM_FURTHER_ON },
  setup: (dir) => writeFileSync(path.join(dir, "rows.jsonl"), jsonl()),
  first: { path: "rows.jsonl", language: "jsonpath", query: "$[*].name", max_items: 1000 },
  budget: 500,
  next: (p) => (p.complete ? undefined : { cursor: p.next_cursor }),
  units: (p) => p.items.map((i: { path: string; value: unknown }) => `${i.path}=${i.value}`),
  expected: () => Array.from({ length: ROWS }, (_, i) => `/${i}/name=n${"z".repeat(i % 30)}`),
  change: (dir) => rewriteKeepingMtime(path.join(dir, "rows.jsonl"), jsonl("v2")),
  conflicting: { query: "$[*].id" },
  otherPath: { path: "other.txt" },
});
