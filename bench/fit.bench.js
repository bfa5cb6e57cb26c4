/**
 * @module
 * Budget fitting and the cost of paging a whole file (run by `npm run bench -- fit`; needs
 * `npm run build`).
 *
 * 1. Work per page, in-process: a 20 MiB text file paged to the end through the `read` tool at
 *    max_tokens 8000 and 25000, once with the estimator wrapped to count its work (whole-page
 *    counts, "probes", and characters counted per character returned) and once with the plain
 *    estimator for the CPU per page; and the CPU of the 20 pages nearest the end against the 20
 *    nearest the start (a page near the end must cost what a page near the start costs).
 * 2. Server CPU of reading the whole 20 MiB file: pagewise paging it with cursors alone after a
 *    first call with max_tokens (8000 and 25000) against @modelcontextprotocol/server-filesystem's
 *    `read_text_file` returning it in one answer, both behind a plain JSON-RPC client (the SDK
 *    client is quadratic on large answers), interleaved runs, medians. CPU is the server
 *    process's own (schedstat), so a busy machine does not inflate it.
 *
 * Environment: BENCH_REPS (default 5), BENCH_FIT_MIB (default 20), BENCH_PAGEWISE_BIN to measure
 * another build (e.g. an older commit's, for before/after).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  compare,
  ensureDataFile,
  fmtMs,
  log,
  MiB,
  machine,
  median,
  PAGEWISE_BIN,
  printTable,
  ratio,
  startRawPagewise,
  startRawPeer,
} from "./harness.js";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const SIZE_MIB = Number(process.env.BENCH_FIT_MIB ?? 20);
const BUDGETS = [8000, 25000];

const dist = path.join(path.dirname(PAGEWISE_BIN), "..", "dist");
const load = (rel) => import(pathToFileURL(path.join(dist, rel)).href);

/**
 * An estimator that counts its own work: whole-page counts, and characters counted (by `count`, or
 * added to a running count, which pages are fitted with when the estimator keeps one).
 */
function counting(inner) {
  const stats = { calls: 0, chars: 0, pageCounts: 0 };
  const runningOf = (count) => ({
    add(text, from = 0, to = text.length) {
      stats.chars += to - from;
      count.add(text, from, to);
    },
    tokens: () => count.tokens(),
    fork: () => runningOf(count.fork()),
  });
  return {
    stats,
    estimator: {
      name: inner.name,
      maxUnitsPerToken: inner.maxUnitsPerToken,
      count(text) {
        stats.calls++;
        stats.chars += text.length;
        if (text.startsWith('{"uri"')) stats.pageCounts++;
        return inner.count(text);
      },
      ...(inner.running ? { running: () => runningOf(inner.running()) } : {}),
    },
  };
}

/**
 * Pages the whole file through the `read` tool in-process with `estimator`; returns each page's
 * CPU time and the characters of content returned.
 */
async function pageInProcess(file, budget, estimator) {
  const { TOOLS } = await load("tools/index.js");
  const core = await load("core/index.js");
  const { Roots } = await load("access/index.js");
  const read = TOOLS.find((t) => t.name === "read");
  const ctx = {
    caller: { identity: "bench", roots: new Roots([path.dirname(file)]) },
    codec: new core.CursorCodec({ key: core.ephemeralCursorKey() }),
    estimator,
    versions: new core.FileVersions(),
    settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
  };
  const perPageCpu = [];
  let returned = 0;
  let args = { path: path.basename(file), max_tokens: budget };
  for (;;) {
    const c0 = process.cpuUsage();
    const page = JSON.parse(await read.run(args, ctx));
    const c1 = process.cpuUsage(c0);
    perPageCpu.push((c1.user + c1.system) / 1000);
    returned += page.content.length;
    if (!page.has_more) break;
    // Continuations pass the cursor alone when the build carries the budget in it.
    args = { cursor: page.next_cursor, max_tokens: budget };
  }
  return { perPageCpu, returned };
}

/**
 * Work per page: counted with a wrapped estimator, timed with the plain one (the wrapper's own
 * calls would slow a running count's many small ones).
 */
async function inProcess(file, budget) {
  const core = await load("core/index.js");
  const { stats, estimator } = counting(core.defaultEstimator);
  const counted = await pageInProcess(file, budget, estimator);
  const { perPageCpu } = await pageInProcess(file, budget, core.defaultEstimator);
  const pages = perPageCpu.length;
  const first = perPageCpu.slice(1, 21);
  const last = perPageCpu.slice(-21, -1);
  return {
    pages,
    probesPerPage: stats.pageCounts / pages,
    countedPerReturned: stats.chars / counted.returned,
    cpuPerPage: median(perPageCpu.slice(1)),
    endVsStart: median(last) / median(first),
  };
}

async function fullRead(file, budget) {
  const name = path.basename(file);
  return compare(
    [
      {
        name: "pagewise",
        start: () => startRawPagewise({ root: path.dirname(file) }),
        async workload(server) {
          let pages = 0;
          let args = { path: name, max_tokens: budget };
          for (;;) {
            const r = await server.call("read", args);
            if (r.isError) throw new Error(r.text);
            pages++;
            const page = JSON.parse(r.text);
            if (!page.has_more) break;
            args = { cursor: page.next_cursor, max_tokens: budget };
          }
          return { pages };
        },
      },
      {
        name: "server-filesystem",
        start: () => startRawPeer({ root: path.dirname(file) }),
        async workload(server) {
          const r = await server.call("read_text_file", { path: file });
          if (r.isError) throw new Error(r.text);
          return { bytes: r.bytes };
        },
      },
    ],
    { reps: REPS, label: `full read ${SIZE_MIB} MiB at ${budget}` },
  );
}

const file = (await ensureDataFile(`fit-${SIZE_MIB}m.txt`, SIZE_MIB * MiB)).path;
log(`machine: ${JSON.stringify(machine())}`);
const work = [];
for (const budget of BUDGETS) {
  const r = await inProcess(file, budget);
  work.push([
    budget,
    r.pages,
    r.probesPerPage.toFixed(2),
    r.countedPerReturned.toFixed(2),
    fmtMs(r.cpuPerPage),
    `×${r.endVsStart.toFixed(2)}`,
  ]);
}
printTable(
  `Work per page, in-process, ${SIZE_MIB} MiB text file paged to the end`,
  [
    "max_tokens",
    "pages",
    "whole-page counts per page",
    "chars counted per char returned",
    "CPU per page (median)",
    "last 20 pages / first 20",
  ],
  work,
);
const rows = [];
for (const budget of BUDGETS) {
  const r = await fullRead(file, budget);
  const ours = median(r.pagewise.runs.map((x) => x.cpuMs));
  const peer = median(r["server-filesystem"].runs.map((x) => x.cpuMs));
  rows.push([budget, r.pagewise.runs[0].pages, fmtMs(ours), fmtMs(peer), ratio(ours, peer)]);
}
printTable(
  `Server CPU to read a whole ${SIZE_MIB} MiB file (plain JSON-RPC client, medians of ${REPS})`,
  ["max_tokens", "pages", "pagewise CPU", "server-filesystem CPU", "ratio"],
  rows,
);
