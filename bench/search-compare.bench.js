/**
 * @module
 * `search` side by side with ripgrep (run by `npm run bench -- search-compare`, or
 * `npm run bench:compare`; needs `npm run build` and `rg`, installed with apt-get if absent).
 *
 * Trees of generated TypeScript-like source files (50,000 and 10,000, ~1.5 KiB each, 20 a
 * directory, three levels), made once under `.bench-data/` (deterministic). Rows, each measured
 * `BENCH_REPS` times (default 5) with the subjects interleaved, medians reported:
 *
 * 1. first page with the exact total (`limit: 100`) vs `rg --count-matches PATTERN | awk` (the
 *    sum, what an exact total costs ripgrep);
 * 2. first page without a total (`count: "none"`) vs `rg PATTERN | head -100`;
 * 3. a continuation page (a cursor halfway through the matches, repeated) at 50,000 files vs at
 *    10,000 files: flat is O(page);
 * 4. a dense exact count: `e` (smart case: ignoring case) over this repository's `node_modules`
 *    with hidden and git-ignored files, millions of matches, vs `rg -i -uu --count-matches e | awk`.
 *
 * pagewise runs behind the SDK's stdio client, one server per tree, warmed by one call (its
 * worker threads started); what is timed is the call. Set `BENCH_BEFORE_BIN` to a `bin/pagewise.js`
 * of another build to measure it in the same run (rows marked "before"; a build without
 * `count` gets the exact first page for row 2). Totals are checked against ripgrep's.
 */
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureSourceTree } from "./data.js";
import {
  ensureTool,
  fmtMs,
  log,
  median,
  PAGEWISE_BIN,
  printTable,
  REPO,
  ratio,
  timeShell,
} from "./harness.js";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN
  ? path.resolve(process.env.BENCH_BEFORE_BIN)
  : undefined;
const PATTERN = "new (Timeout|Retry)Error\\(";
const DENSE_ROOT = path.join(REPO, "node_modules");
const DENSE = { pattern: "e", include_hidden: true, respect_gitignore: false, limit: 100 };
const RG_DENSE = "rg -i -uu --count-matches e . | awk -F: '{s+=$NF} END {print s+0}'";

async function timeCall(server, args) {
  const t0 = performance.now();
  const r = await server.call("search", args);
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`search failed: ${r.text.slice(0, 300)}`);
  return { ms, json: JSON.parse(r.text) };
}

/** A cursor about `pages` pages into the tree (count none: cheap to reach). */
async function middleCursor(server, pages) {
  let page = (await timeCall(server, { pattern: PATTERN, limit: 100, count: "none" })).json;
  for (let i = 1; i < pages && page.next_cursor; i++)
    page = (await timeCall(server, { cursor: page.next_cursor })).json;
  return page.next_cursor;
}

/**
 * Measures the three rows (see the module comment) and returns them with their table's title; the
 * compare bench (`bench/compare.js`) prints them beside the other tools' rows.
 */
export async function searchRows(reps = REPS) {
  ensureTool("rg", "ripgrep");
  const big = ensureSourceTree(50_000);
  const small = ensureSourceTree(10_000);
  const rgTotal = Number(
    timeShell(
      `rg --count-matches '${PATTERN}' . | awk -F: '{s+=$NF} END {print s+0}'`,
      big,
    ).out.trim(),
  );
  const rgDense = Number(timeShell(RG_DENSE, DENSE_ROOT).out.trim());
  const builds = [{ name: "after", bin: PAGEWISE_BIN }];
  if (BEFORE_BIN) builds.push({ name: "before", bin: BEFORE_BIN });
  const servers = {};
  for (const b of builds) {
    process.env.BENCH_PAGEWISE_BIN = b.bin;
    for (const [treeName, root] of [
      ["50k", big],
      ["10k", small],
    ]) {
      const { startPagewise: start } = await import(`./harness.js?${b.name}-${treeName}`);
      const server = await start({ root });
      if (treeName === "50k") {
        const dense = await start({ root: DENSE_ROOT });
        // A build may stop this search (the stall guard): the row then says so.
        const warmDense = await timeCall(dense, DENSE).catch((err) => ({ error: err.message }));
        const total = warmDense.json?.pagination.total;
        if (total !== undefined && total !== rgDense) {
          log(`WARNING: ${b.name} dense total ${total} ≠ rg's ${rgDense}`);
        }
        servers[`${b.name}-dense`] = { server: dense, total, error: warmDense.error };
      }
      const warm = await timeCall(server, { pattern: PATTERN, limit: 100 });
      if (treeName === "50k" && warm.json.pagination.total !== rgTotal) {
        log(`WARNING: ${b.name} total ${warm.json.pagination.total} ≠ rg's ${rgTotal}`);
      }
      const supportsCount = !(
        await server.call("search", { pattern: PATTERN, count: "none", limit: 1 })
      ).isError;
      servers[`${b.name}-${treeName}`] = {
        server,
        supportsCount,
        total: warm.json.pagination.total,
      };
    }
  }
  const samples = {};
  const add = (key, ms) => {
    samples[key] ??= [];
    samples[key].push(ms);
  };
  const cursors = {};
  for (const key of Object.keys(servers)) {
    if (key.endsWith("-dense")) continue;
    const s = servers[key];
    // Old cursors do not know `count`; a plain exact walk reaches the middle too.
    cursors[key] = s.supportsCount
      ? await middleCursor(s.server, Math.max(1, Math.floor(s.total / 200)))
      : await exactMiddle(s.server, Math.max(1, Math.floor(s.total / 200)));
  }
  for (let rep = 0; rep < reps; rep++) {
    log(`rep ${rep + 1}/${reps} (load ${os.loadavg()[0].toFixed(1)})`);
    add(
      "rg-count",
      timeShell(`rg --count-matches '${PATTERN}' . | awk -F: '{s+=$NF} END {print s+0}'`, big).ms,
    );
    add("rg-head", timeShell(`rg '${PATTERN}' . | head -100 > /dev/null`, big).ms);
    add("rg-dense", timeShell(RG_DENSE, DENSE_ROOT).ms);
    for (const b of builds) {
      const s50 = servers[`${b.name}-50k`];
      const s10 = servers[`${b.name}-10k`];
      add(`${b.name}-exact`, (await timeCall(s50.server, { pattern: PATTERN, limit: 100 })).ms);
      const noTotal = s50.supportsCount
        ? { pattern: PATTERN, limit: 100, count: "none" }
        : { pattern: PATTERN, limit: 100 };
      add(`${b.name}-first`, (await timeCall(s50.server, noTotal)).ms);
      add(
        `${b.name}-cont-50k`,
        (await timeCall(s50.server, { cursor: cursors[`${b.name}-50k`] })).ms,
      );
      add(
        `${b.name}-cont-10k`,
        (await timeCall(s10.server, { cursor: cursors[`${b.name}-10k`] })).ms,
      );
      const dense = servers[`${b.name}-dense`];
      if (!dense.error) add(`${b.name}-dense`, (await timeCall(dense.server, DENSE)).ms);
    }
  }
  for (const { server } of Object.values(servers)) await server.close();
  const m = (k) => median(samples[k] ?? []);
  const rows = [];
  for (const b of builds) {
    rows.push([
      `${b.name}: first page, exact total (50k files)`,
      `rg --count-matches | awk ${fmtMs(m("rg-count"))}`,
      fmtMs(m(`${b.name}-exact`)),
      ratio(m(`${b.name}-exact`), m("rg-count")),
    ]);
    rows.push([
      `${b.name}: first page, ${servers[`${b.name}-50k`].supportsCount ? 'count: "none"' : "exact (no count option)"}`,
      `rg | head -100 ${fmtMs(m("rg-head"))}`,
      fmtMs(m(`${b.name}-first`)),
      ratio(m(`${b.name}-first`), m("rg-head")),
    ]);
    rows.push([
      `${b.name}: dense exact count, \`e\` over node_modules (${rgDense.toLocaleString("en-US")} matches)`,
      `rg -i -uu --count-matches | awk ${fmtMs(m("rg-dense"))}`,
      servers[`${b.name}-dense`].error
        ? `stopped: ${/"code":"(\w+)"/.exec(servers[`${b.name}-dense`].error)?.[1] ?? "error"}`
        : fmtMs(m(`${b.name}-dense`)),
      ratio(m(`${b.name}-dense`), m("rg-dense")),
    ]);
    rows.push([
      `${b.name}: continuation page, 50k vs 10k files`,
      `10k: ${fmtMs(m(`${b.name}-cont-10k`))}`,
      `50k: ${fmtMs(m(`${b.name}-cont-50k`))}`,
      ratio(m(`${b.name}-cont-50k`), m(`${b.name}-cont-10k`)),
    ]);
  }
  const title = `search vs ripgrep — pattern \`${PATTERN}\`, ${rgTotal} matches in 50,000 files; medians of ${reps} interleaved runs; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`;
  return { title, rows };
}

/** A cursor `pages` pages into an exact walk (builds without `count`). */
async function exactMiddle(server, pages) {
  let page = (await timeCall(server, { pattern: PATTERN, limit: 100 })).json;
  for (let i = 1; i < pages && page.next_cursor; i++)
    page = (await timeCall(server, { cursor: page.next_cursor })).json;
  return page.next_cursor;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { title, rows } = await searchRows();
  printTable(title, ["what", "reference", "pagewise", "ratio"], rows);
}
