/**
 * @module
 * Runs the benchmarks: every `bench/*.bench.js` in name order, or only those named on the command
 * line (`npm run bench -- read tail`; a name is the file name without `.bench.js`). Each benchmark
 * runs in its own Node process, so one's memory and failures do not touch the next. Results go to
 * stdout as Markdown tables; progress goes to stderr. `npm run bench` builds the server first.
 *
 * The server under test is a copy of `bin/`, `dist/` and `package.json` taken when the run starts
 * (under `.bench-data/`), handed to the benchmarks as `BENCH_PAGEWISE_BIN`, so that a rebuild of the
 * working tree during a long run (other people's `npm test`) cannot swap the server mid-run. Set
 * `BENCH_PAGEWISE_BIN` yourself to measure another build instead.
 *
 * Exit status: 0 when every benchmark run exited 0, else 1. `--list` prints the names and exits.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(BENCH_DIR);
const SUFFIX = ".bench.js";

const available = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith(SUFFIX))
  .sort()
  .map((f) => f.slice(0, -SUFFIX.length));

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  console.log(`Usage: npm run bench [-- NAME…]   (or: node bench/run.js [--list] [NAME…])
Runs bench/NAME.bench.js for each NAME (default: all, in name order).
Available: ${available.join(", ") || "(none)"}`);
  process.exit(0);
}
if (args.includes("--list")) {
  console.log(available.join("\n"));
  process.exit(0);
}

const wanted = args.map((a) => path.basename(a).replace(/\.bench\.js$/, ""));
const unknown = wanted.filter((n) => !available.includes(n));
if (unknown.length > 0) {
  console.error(
    `Unknown benchmark${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}. Available: ${available.join(", ")}`,
  );
  process.exit(2);
}
const selected = wanted.length > 0 ? available.filter((n) => wanted.includes(n)) : available;

/** What is being measured: the commit, and whether src/ had uncommitted changes (read-only git). */
function describeSource() {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    return `${head}${dirty ? ` + uncommitted changes in src/ (${dirty.split("\n").length} files)` : ""}`;
  } catch {
    return "unknown (no git)";
  }
}

/** Removes build copies left by runs that were interrupted (their process is gone). */
function removeStaleSnapshots() {
  const dir = path.join(REPO, ".bench-data");
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const m = name.match(/^build-(\d+)$/);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      rmSync(path.join(dir, name), { recursive: true, force: true });
    }
  }
}

removeStaleSnapshots();
let snapshot;
const env = { ...process.env };
if (!env.BENCH_PAGEWISE_BIN && existsSync(path.join(REPO, "dist"))) {
  snapshot = path.join(REPO, ".bench-data", `build-${process.pid}`);
  mkdirSync(snapshot, { recursive: true });
  for (const part of ["bin", "dist", "package.json"]) {
    cpSync(path.join(REPO, part), path.join(snapshot, part), { recursive: true });
  }
  env.BENCH_PAGEWISE_BIN = path.join(snapshot, "bin/pagewise.js");
}
const server = env.BENCH_PAGEWISE_BIN
  ? `${path.relative(REPO, env.BENCH_PAGEWISE_BIN)}${snapshot ? ` (a copy of the build of ${describeSource()}, taken at start)` : ""}`
  : "bin/pagewise.js";

console.log(
  `# pagewise benchmarks\n\n${os.availableParallelism?.() ?? os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}; ${new Date().toISOString()}\nServer started by bench/harness.js: ${server}\nRunning: ${selected.join(", ")}`,
);

const outcomes = [];
for (const name of selected) {
  const file = path.join(BENCH_DIR, `${name}${SUFFIX}`);
  process.stderr.write(`\n[bench] ${name}: node ${path.relative(process.cwd(), file)}\n`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [file], { stdio: "inherit", env });
  const seconds = (performance.now() - t0) / 1000;
  const status = r.error ? `error: ${r.error.message}` : r.signal ? `signal ${r.signal}` : r.status;
  outcomes.push({ name, status, seconds });
}

console.log("\n## Benchmark runs\n");
console.log("| benchmark | outcome | time |\n| --- | --- | --- |");
for (const o of outcomes) {
  console.log(
    `| ${o.name} | ${o.status === 0 ? "ok" : `FAILED (${o.status})`} | ${o.seconds.toFixed(1)} s |`,
  );
}
if (snapshot) rmSync(snapshot, { recursive: true, force: true });
process.exitCode = outcomes.every((o) => o.status === 0) ? 0 : 1;
