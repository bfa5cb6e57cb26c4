/**
 * @module
 * The directory walker's confinement and hostile `.gitignore` files (run by
 * `npm run bench -- walk`; needs `npm run build`).
 *
 * 1. Confinement cost: on a tree of 50,000 files in 5,050 directories, the walker (each directory
 *    opened O_NOFOLLOW, checked by its descriptor's real path, read through `/proc/self/fd/N`)
 *    against a minimal depth-first walk that reads directories by path (no hidden or ignore
 *    filtering, no code-point keys: a floor, cheaper than the walker ever was), each also with an
 *    lstat of every entry (what a `list` page adds: through the descriptor, or by path), and
 *    `find -type f | wc -l`. `BENCH_REPS` runs each (default 5), interleaved, in-process.
 * 2. Hostile `.gitignore` files: `pagewise list DIR --recursive` (a fresh process each) over a
 *    directory of 1,000 files whose `.gitignore` is a symlink to /dev/zero, a symlink outside, a
 *    FIFO, 43 MB, 100,000 lines, or 1,000 costly rules (in force), against the same directory with
 *    a plain 2-rule `.gitignore`: wall time and peak RSS (`VmHWM` via /usr/bin/time).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  DATA_DIR,
  fmtBytes,
  fmtMs,
  log,
  median,
  PAGEWISE_BIN,
  printTable,
  ratio,
} from "./harness.js";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const DIST = path.join(path.dirname(PAGEWISE_BIN), "../dist");
const { walk } = await import(pathToFileURL(path.join(DIST, "sources/walk/index.js")).href);

const tree = path.join(existsSync("/dev/shm") ? "/dev/shm" : DATA_DIR, "pagewise-bench-walk");
if (!existsSync(path.join(tree, "done"))) {
  log(`making ${tree}`);
  rmSync(tree, { recursive: true, force: true });
  for (let a = 0; a < 50; a++) {
    for (let b = 0; b < 100; b++) {
      const d = path.join(tree, `d${a}`, `s${b}`);
      mkdirSync(d, { recursive: true });
      for (let c = 0; c < 10; c++) writeFileSync(path.join(d, `f${c}.txt`), "x");
    }
  }
  writeFileSync(path.join(tree, ".gitignore"), "*.log\nbuild/\n");
  writeFileSync(path.join(tree, "done"), "");
}

/** A minimal depth-first walk reading directories by path: the floor confinement is compared with. */
function walkByPath(dir, visit) {
  const stack = [[dir, ""]];
  while (stack.length > 0) {
    const [abs, rel] = stack.pop();
    const entries = readdirSync(abs, { withFileTypes: true }).sort((x, y) =>
      x.name < y.name ? 1 : -1,
    );
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      visit(`${abs}/${e.name}`);
      if (e.isDirectory()) stack.push([`${abs}/${e.name}`, `${rel}${e.name}/`]);
    }
  }
}

const options = { recursive: true, includeHidden: false, respectGitignore: true, maxEntries: 1e8 };
const subjects = {
  "walk, confined": async () => walk(tree, options, () => {}),
  "minimal walk by path": async () => walkByPath(tree, () => {}),
  "walk + lstat each entry, confined": async () =>
    walk(tree, options, (e) => lstatSync(e.statPath)),
  "minimal walk + lstat by path": async () => walkByPath(tree, (p) => lstatSync(p)),
  "find -type f | wc -l": async () =>
    execFileSync("sh", ["-c", `find '${tree}' -type f | wc -l`], { encoding: "utf8" }),
};
const times = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
const load = [os.loadavg()[0]];
for (let r = 0; r < REPS; r++) {
  for (const [name, run] of Object.entries(subjects)) {
    const t = performance.now();
    await run();
    times[name].push(performance.now() - t);
  }
}
load.push(os.loadavg()[0]);
const find = median(times["find -type f | wc -l"]);
printTable(
  `Walker confinement, 50,000 files in 5,050 directories (median of ${REPS}; load ${load.map((l) => l.toFixed(1)).join(" → ")})`,
  ["subject", "time", "vs minimal by path", "vs find"],
  Object.entries(times).map(([name, v]) => {
    const floor = name.includes("lstat")
      ? median(times["minimal walk + lstat by path"])
      : median(times["minimal walk by path"]);
    return [
      name,
      fmtMs(median(v)),
      name.includes("find") ? "" : ratio(median(v), floor),
      ratio(median(v), find),
    ];
  }),
);

// 2. Hostile .gitignore files, each in its own directory of 1,000 files.
const hostileRoot = path.join(os.tmpdir(), `pagewise-bench-hostile-${process.pid}`);
const outside = path.join(os.tmpdir(), `pagewise-bench-outside-${process.pid}`);
mkdirSync(outside, { recursive: true });
writeFileSync(path.join(outside, "rules"), "f1.txt\n");
const kinds = {
  "plain, 2 rules (baseline)": (g) => writeFileSync(g, "*.log\nbuild/\n"),
  "symlink to /dev/zero": (g) => symlinkSync("/dev/zero", g),
  "symlink outside the root": (g) => symlinkSync(path.join(outside, "rules"), g),
  FIFO: (g) => execFileSync("mkfifo", [g]),
  "43 MB (sparse)": (g) => {
    writeFileSync(g, "");
    truncateSync(g, 43 << 20);
  },
  "100,000 lines": (g) =>
    writeFileSync(g, Array.from({ length: 100_000 }, (_, i) => `r${i}`).join("\n")),
  "1,000 rules with ** (in force)": (g) =>
    writeFileSync(g, Array.from({ length: 1000 }, (_, i) => `docs/**/gen${i}-*.tmp`).join("\n")),
};
const rows = [];
let baseline;
for (const [name, make] of Object.entries(kinds)) {
  const dir = path.join(hostileRoot, name.replace(/\W+/g, "-"));
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 1000; i++) writeFileSync(path.join(dir, `f${i}.txt`), "x");
  make(path.join(dir, ".gitignore"));
  const runs = [];
  const rss = [];
  let answer = "";
  for (let r = 0; r < REPS; r++) {
    const t = performance.now();
    const p = spawnSync(
      "/usr/bin/time",
      ["-f", "%M", process.execPath, PAGEWISE_BIN, "list", dir, "--recursive", "--root", dir],
      { encoding: "utf8", timeout: 120_000 },
    );
    runs.push(performance.now() - t);
    rss.push(Number(p.stderr.trim().split("\n").pop()) * 1024);
    const page = JSON.parse(p.stdout || "{}");
    answer = page.skipped?.first_gitignore?.reason ?? (page.error ? page.error.code : "applied");
  }
  const ms = median(runs);
  baseline ??= ms;
  rows.push([name, fmtMs(ms), ratio(ms, baseline), fmtBytes(median(rss)), answer]);
}
rmSync(hostileRoot, { recursive: true, force: true });
rmSync(outside, { recursive: true, force: true });
printTable(
  `Hostile .gitignore: pagewise list DIR --recursive, 1,000 files (median of ${REPS}; load ${os.loadavg()[0].toFixed(1)})`,
  ["the .gitignore", "time", "vs plain", "peak RSS", "the page says"],
  rows,
);
