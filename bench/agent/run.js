#!/usr/bin/env node
/**
 * @module
 * `npm run bench:agent`: the agent-workload benchmark. Every task of `tasks.js` runs against every
 * server of `servers.js`, each in a fresh server process behind the official SDK client, with
 * that server's own call sequence; every result is measured (`session.js`, `measure.js`).
 *
 * Usage: `node bench/agent/run.js [--smoke] [--only TASK,…] [--servers ID,…] [--no-write] [--report]`
 * - `--smoke`: small data (`.bench-data/agent/smoke/`), the tasks that have a smoke scale.
 * - `--only`, `--servers`: a subset (task ids, server ids: pagewise, filesystem, desktopCommander).
 * - `--no-write`: print the tables only; by default a full run of every task and server writes
 *   `docs/agent-bench.svg`, its table into `docs/benchmarks.md` and its summary into `README.md`
 *   (between `agent-bench` markers).
 * - `--report`: no run; render (and write) the tables and the chart from the last raw results.
 * - `BENCH_AGENT_REPS=N`: run each pair N times in a row and report median CPU and wall times.
 * - `BENCH_AGENT_INSTALL_PEERS=0`: do not install DesktopCommander when it is missing (skip it).
 *
 * Raw results (every call) go to `.bench-data/agent/results-<scale>.json` (`results-<scale>-subset.json`
 * for a subset). Progress on stderr.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DATA_ROOT, REPO } from "./data.js";
import { renderReport, writeDocs } from "./report.js";
import { ensureDesktopCommander, PAGEWISE_BIN, SERVERS } from "./servers.js";
import { runTask } from "./session.js";
import { TASKS } from "./tasks.js";

export const SERVER_ORDER = ["pagewise", "filesystem", "desktopCommander"];
const QUIET_MS = 3000;

/** Progress on stderr. */
function log(message) {
  process.stderr.write(`[bench:agent ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function option(args, name) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  return args[i + 1]?.split(",").filter(Boolean) ?? [];
}

function describeBuild() {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    return `${head}${dirty ? " (with uncommitted changes in src/)" : ""}`;
  } catch {
    return "unknown";
  }
}

/**
 * Runs the benchmark; returns `{ results, meta }`. `results` holds one record per task and
 * server (or a `skipped` reason).
 */
export async function runBench({
  scale = "full",
  only,
  servers = SERVER_ORDER,
  reps = 1,
  installPeers = true,
  onProgress = log,
} = {}) {
  const tasks = TASKS.filter(
    (t) => (t.scales ?? ["full", "smoke"]).includes(scale) && (!only || only.includes(t.id)),
  );
  const dc = servers.includes("desktopCommander")
    ? ensureDesktopCommander({ install: installPeers })
    : { ok: false, reason: "not selected" };
  if (!dc.ok && servers.includes("desktopCommander"))
    onProgress(`DesktopCommander skipped: ${dc.reason}`);
  const meta = {
    date: new Date().toISOString().slice(0, 10),
    scale,
    build: describeBuild(),
    pagewiseBin: path.relative(REPO, PAGEWISE_BIN),
    node: process.version,
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    loadStart: os.loadavg().map((x) => x.toFixed(2)),
    desktopCommander: dc,
    versions: Object.fromEntries(
      Object.values(SERVERS)
        .filter((s) => s.version)
        .map((s) => [s.id, s.version()]),
    ),
    reps,
  };
  const results = [];
  for (const task of tasks) {
    onProgress(`${task.id}: preparing data`);
    let prepared;
    try {
      prepared = await prepareTask(task, scale);
    } catch (err) {
      onProgress(`  could not prepare the data: ${err?.message ?? err}`);
    }
    for (const serverId of servers) {
      if (!task.strategies[serverId]) continue;
      results.push(
        prepared
          ? await runPair(task, serverId, prepared, { dc, reps, onProgress })
          : { task: task.id, server: serverId, skipped: "the task's data could not be made" },
      );
    }
  }
  meta.loadEnd = os.loadavg().map((x) => x.toFixed(2));
  return { results, meta };
}

/** Makes (or reuses) a task's data; returns `{ ctx, question, facts }`. */
export async function prepareTask(task, scale) {
  const root = task.root?.() ?? path.join(DATA_ROOT, scale);
  const ctx = { scale, root };
  const prepared = await task.prepare(ctx);
  // pagewise re-hashes files modified in the last 2 s on every call: measure the steady state,
  // once the newest data set (its manifest is written last) has been quiet for QUIET_MS.
  const dir = path.join(DATA_ROOT, scale);
  const newest = Math.max(
    0,
    ...(existsSync(dir) ? readdirSync(dir) : [])
      .filter((f) => f.endsWith(".manifest.json"))
      .map((f) => statSync(path.join(dir, f)).mtimeMs),
  );
  const wait = newest + QUIET_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  return { ctx, ...prepared };
}

/**
 * Runs one task's strategy for one server `reps` times; returns the record (first run, median
 * CPU and wall), or `{ skipped }` when DesktopCommander is not available (`dc` from
 * `ensureDesktopCommander`).
 *
 * @param {any} task
 * @param {string} serverId
 * @param {any} prepared
 * @param {{ dc?: any, reps?: number, onProgress?: (message: string) => void }} [options]
 */
export async function runPair(task, serverId, prepared, { dc, reps = 1, onProgress = log } = {}) {
  const strategy = task.strategies[serverId];
  const base = { task: task.id, server: serverId };
  if (serverId === "desktopCommander" && !dc?.ok) return { ...base, skipped: dc?.reason };
  const server = SERVERS[strategy.server ?? serverId];
  const { ctx } = prepared;
  const runs = [];
  for (let rep = 0; rep < reps; rep++) {
    onProgress(`${task.id} × ${server.label}${reps > 1 ? ` (run ${rep + 1}/${reps})` : ""}`);
    const record = await runTask({
      server,
      root: ctx.root,
      strategy: strategy.run,
      context: { root: ctx.root, question: prepared.question },
      check: (answer) => task.check(answer, prepared.facts, ctx),
    });
    runs.push(record);
    const over = record.calls.filter((c) => c.verdict && c.verdict !== "shown").length;
    onProgress(
      `  ${record.correct ? "correct" : "NOT correct"}, ${record.calls.length} calls, ${over} over Claude Code's limits, CPU ${record.cpuMs.toFixed(0)} ms${record.error ? `, error: ${record.error}` : ""}${record.note ? ` (${record.note})` : ""}`,
    );
  }
  return { ...aggregate(runs), ...base, via: strategy.server };
}

/** The first run's record, with median CPU and wall times over all runs. */
function aggregate(runs) {
  const median = (xs) => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    if (s.length === 0) return Number.NaN;
    return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  return {
    ...runs[0],
    cpuMs: median(runs.map((r) => r.cpuMs)),
    wallMs: median(runs.map((r) => r.wallMs)),
    runs: runs.length,
  };
}

async function main() {
  const args = process.argv.slice(2);
  const scale = args.includes("--smoke") ? "smoke" : "full";
  const only = option(args, "--only");
  const servers = option(args, "--servers") ?? SERVER_ORDER;
  const reps = Math.max(1, Number(process.env.BENCH_AGENT_REPS ?? 1));
  const installPeers = process.env.BENCH_AGENT_INSTALL_PEERS !== "0";
  // A subset's results go beside the full ones, never over them.
  const subset = only || servers.length < SERVER_ORDER.length;
  const out = path.join(DATA_ROOT, `results-${scale}${subset ? "-subset" : ""}.json`);
  let results;
  let meta;
  if (args.includes("--report")) {
    ({ results, meta } = JSON.parse(readFileSync(out, "utf8")));
  } else {
    ({ results, meta } = await runBench({ scale, only, servers, reps, installPeers }));
    mkdirSync(DATA_ROOT, { recursive: true });
    writeFileSync(out, JSON.stringify({ meta, results }, null, 2));
    log(`raw results: ${path.relative(REPO, out)}`);
  }
  const report = renderReport({ results, meta, tasks: TASKS });
  process.stdout.write(`${report.markdown}\n`);
  const complete =
    scale === "full" &&
    SERVER_ORDER.every((id) => results.some((r) => r.server === id)) &&
    TASKS.every((t) => results.some((r) => r.task === t.id));
  if (complete && !args.includes("--no-write")) {
    writeDocs(report);
    log("wrote docs/agent-bench.svg, docs/benchmarks.md and README.md");
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
