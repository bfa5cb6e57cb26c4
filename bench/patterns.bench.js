/**
 * @module
 * `npm run bench:patterns` (or `npm run bench -- patterns`): the pattern engines side by side on the
 * same work, then the chosen design inside pagewise beside the build it replaces and the tools
 * people use. The numbers and their reading are in docs/patterns.md.
 *
 * 1. Engines (each measurement in a fresh child process, one warm-up run then one timed run, killed
 *    after BENCH_PATTERN_TIMEOUT_MS, default 60 s; BENCH_REPS reps, default 3, each running every
 *    engine in turn; medians):
 *    - V8's backtracking engine (the reference: exactly JavaScript, not linear);
 *    - V8's linear engine (`--enable-experimental-regexp-engine`, flag `l`: it refuses `i`, `u`,
 *      `\p`, counts above ~16, lookaround: such cells say "refused");
 *    - native `re2` (the addon pagewise used before), `re2-wasm`, `@adguard/re2-wasm`: installed
 *      on demand under `.bench-data/engines/` (`npm install`, never a dependency of the package)
 *      and skipped with a note when that fails; `BENCH_RE2_FROM=/path/to/node_modules/re2` uses
 *      an already built `re2` (its install compiles C++ where no prebuilt binary downloads);
 *    - re2js (pure JavaScript RE2);
 *    - pagewise's final design (pattern/: V8 where the backtracking is bounded by the pattern's
 *      syntax, re2js otherwise; what `compilePattern` picks is shown).
 *    RE2-family engines get the RE2 spelling pagewise sends (`toRe2Source`), V8 the JavaScript one.
 *    Work: every match of each line of 10,000 files of the 50,000-file search tree (what `search`
 *    does per candidate line), of each whole file (a chunk pre-scan), a dense count (`e`, ignoring
 *    case, over a 9 MiB `node_modules` file, per line and whole), `tail` grep (a yes/no per line
 *    of a 16 MiB log), glob matching (`**\/*.test.ts` per path of the 50,000-file tree), cold start
 *    (a fresh process: load, first compile, first match) and install size (`du` of the package).
 * 2. Product (`BENCH_BEFORE_BIN` = `bin/pagewise.js` of the build with native re2, e.g. a
 *    worktree of `b93b3fd`; without it, only the current build): the search rows of
 *    search-compare.bench.js (exact total and `count: "none"` over 50,000 files, the dense exact
 *    count over `node_modules`) beside rg, `tail` with `grep` over a 256 MiB log beside
 *    `tac | grep -m50 | tac`, `list` with a glob, and a one-shot CLI `search` (process start
 *    included) with a pattern for each engine.
 *
 * `BENCH_PATTERNS_ONLY=engines,product` picks the parts. Needs `npm run build`, `rg`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureSourceTree } from "./data.js";
import {
  DATA_DIR,
  ensureDataFile,
  ensureTool,
  fmtBytes,
  fmtMs,
  log,
  MiB,
  median,
  PAGEWISE_BIN,
  printTable,
  REPO,
  ratio,
  timeShell,
} from "./harness.js";
import { searchRows } from "./search-compare.bench.js";

const REPS = Number(process.env.BENCH_REPS ?? 3);
const TIMEOUT_MS = Number(process.env.BENCH_PATTERN_TIMEOUT_MS ?? 60_000);
const ONLY = (process.env.BENCH_PATTERNS_ONLY ?? "engines,product").split(",");
const ENGINE_DIR = path.join(DATA_DIR, "engines");
const DIST = path.join(path.dirname(PAGEWISE_BIN), "..", "dist");

/** Packages installed on demand (never dependencies of pagewise). */
const INSTALLED = {
  re2: { spec: "re2@1.27.1", module: "re2" },
  "re2-wasm": { spec: "re2-wasm@1.0.2", module: "re2-wasm" },
  "@adguard/re2-wasm": { spec: "@adguard/re2-wasm@1.2.0", module: "@adguard/re2-wasm" },
};
const ENGINES = ["v8", "v8-linear", "re2", "re2-wasm", "@adguard/re2-wasm", "re2js", "pagewise"];
const ENGINE_NAMES = {
  v8: "V8 backtracking (reference, not linear)",
  "v8-linear": "V8 linear (`l` flag)",
  re2: "re2 (native addon)",
  "re2-wasm": "re2-wasm 1.0.2",
  "@adguard/re2-wasm": "@adguard/re2-wasm 1.2.0",
  re2js: "re2js 2.10.0",
  pagewise: "pagewise (final design)",
};

const PATTERNS = {
  bounded: "new (Timeout|Retry)Error\\(",
  regex: "await \\w+\\.\\w+s\\.",
  folded: "timeout",
  dense: "e",
  glob: "**/*.test.ts",
};
/** Which work each pattern does. */
const WORK = [
  ["lines", "bounded"],
  ["lines", "regex"],
  ["lines", "folded"],
  ["files", "bounded"],
  ["files", "regex"],
  ["dense-lines", "dense"],
  ["dense-text", "dense"],
  ["grep", "folded"],
  ["glob", "glob"],
];

// ---------------------------------------------------------------------------------------------
// Engines

/** Where an installed engine's module is, or why it is not there (installs it on first use). */
function enginePath(name) {
  if (name === "re2" && process.env.BENCH_RE2_FROM) return { at: process.env.BENCH_RE2_FROM };
  const { spec, module } = INSTALLED[name];
  const dir = path.join(ENGINE_DIR, spec.replace(/[/@]/g, "_"));
  const at = path.join(dir, "node_modules", module);
  if (existsSync(path.join(at, "package.json"))) return { at, dir };
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "package.json"), '{"private":true}\n');
  log(`installing ${spec} under ${path.relative(REPO, dir)}…`);
  const r = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", spec], {
    cwd: dir,
    encoding: "utf8",
    timeout: Number(process.env.BENCH_ENGINE_INSTALL_MS ?? 300_000),
  });
  if (r.status === 0 && existsSync(path.join(at, "package.json"))) return { at, dir };
  const why = r.error ? r.error.message : (r.stderr || "").trim().split("\n").slice(-1)[0];
  return { missing: `npm install ${spec} failed (${why.slice(0, 120)})` };
}

/** A counter and a tester over strings for `engine` (in the child process). */
async function compileFor(engine, source, mode) {
  const pattern = await import(pathToFileURL(path.join(DIST, "sources/pattern/index.js")).href);
  const p = pattern.compilePattern(source, false, mode);
  const fold = !p.caseSensitive;
  const re2Source = pattern.toRe2Source(p.source, fold);
  const execCounter = (re) => (text) => {
    re.lastIndex = 0;
    let n = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      n++;
      if (m[0].length === 0) re.lastIndex = m.index + 1;
    }
    return n;
  };
  const execTester = (re) => (text) => {
    re.lastIndex = 0;
    return re.test(text);
  };
  switch (engine) {
    case "v8": {
      const re = new RegExp(p.source, p.flags);
      return { count: execCounter(re), test: execTester(re) };
    }
    case "v8-linear": {
      const v8 = await import("node:v8");
      v8.setFlagsFromString("--enable-experimental-regexp-engine");
      const re = new RegExp(p.source, `g${fold ? "i" : ""}l`);
      return { count: execCounter(re), test: execTester(re) };
    }
    case "re2":
    case "re2-wasm":
    case "@adguard/re2-wasm": {
      const where = enginePath(engine);
      if (where.missing) throw new Error(where.missing);
      const mod = createRequire(import.meta.url)(where.at);
      const RE2 = mod.RE2 ?? mod;
      const re = new RE2(re2Source, `gu${fold ? "i" : ""}`);
      return { count: execCounter(re), test: execTester(re) };
    }
    case "re2js": {
      const { RE2JS } = createRequire(path.join(REPO, "package.json"))("re2js");
      const re = RE2JS.compile(re2Source, fold ? RE2JS.CASE_INSENSITIVE : 0);
      return {
        count(text) {
          const m = re.matcher(text);
          let n = 0;
          for (let from = 0; from <= text.length && m.find(from); n++)
            from = m.end() > m.start() ? m.end() : m.end() + 1;
          return n;
        },
        test: (text) => re.test(text),
      };
    }
    case "pagewise": {
      const m = pattern.lineMatcher(p);
      return { count: (text) => m.count(text), test: (text) => m.test(text), engine: p.engine };
    }
  }
  throw new Error(`unknown engine ${engine}`);
}

/** The glob's regex as compileGlob builds it (picomatch, segment guards dropped). */
async function globSource(glob) {
  const picomatch = createRequire(path.join(REPO, "package.json"))("picomatch");
  let source = picomatch.makeRe(glob, { dot: true, basename: false, strictBrackets: true }).source;
  for (const guard of ["(?!(?:^|\\/)\\.{1,2}(?:\\/|$))", "(?!\\.{1,2}(?:\\/|$))", "(?=.)"])
    source = source.split(guard).join("");
  return source;
}

// ---------------------------------------------------------------------------------------------
// Data (made once by the parent, read by the children)

const DATA = {
  tree: path.join(DATA_DIR, "patterns-tree-10k.txt"),
  paths: path.join(DATA_DIR, "patterns-paths-50k.txt"),
  dense: path.join(REPO, "node_modules/typescript/lib/typescript.js"),
};

function prepareData(log16) {
  const tree = ensureSourceTree(50_000);
  if (!existsSync(DATA.tree) || !existsSync(DATA.paths)) {
    const files = [];
    const walk = (dir, rel) => {
      for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name < b.name ? -1 : 1,
      )) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(path.join(dir, e.name), r);
        else files.push(r);
      }
    };
    walk(tree, "");
    writeFileSync(DATA.paths, files.join("\n"));
    const texts = files.slice(0, 10_000).map((f) => readFileSync(path.join(tree, f), "utf8"));
    writeFileSync(DATA.tree, texts.join("\0"));
  }
  return { ...DATA, log: log16 };
}

/** Runs one measurement in this (child) process and prints `{ms, result, engine}` as JSON. */
async function measureHere({ engine, work, pattern, data, reps }) {
  const t0 = performance.now();
  const source = pattern === "glob" ? await globSource(PATTERNS.glob) : PATTERNS[pattern];
  const mode = pattern === "glob" ? "sensitive" : "smart";
  let compiled;
  try {
    compiled = await compileFor(engine, source, mode);
  } catch (err) {
    const msg = err.message ?? String(err);
    const refused = /linear time|Invalid|invalid|refuse/.test(msg);
    console.log(JSON.stringify({ refused: refused ? msg.slice(0, 80) : undefined, error: msg }));
    return;
  }
  if (work === "cold") {
    compiled.test("const x = await ctx.orders.fetch(input);");
    console.log(JSON.stringify({ ms: performance.now() - t0, result: 0, engine: compiled.engine }));
    return;
  }
  const inputs = (() => {
    switch (work) {
      case "lines":
        return readFileSync(data.tree, "utf8").split(/\0|\n/);
      case "files":
        return readFileSync(data.tree, "utf8").split("\0");
      case "dense-lines":
        return readFileSync(data.dense, "utf8").split("\n");
      case "dense-text":
        return [readFileSync(data.dense, "utf8")];
      case "grep":
        return readFileSync(data.log, "utf8").split("\n");
      case "glob":
        return readFileSync(data.paths, "utf8").split("\n");
    }
  })();
  const once = work === "grep" || work === "glob" ? compiled.test : compiled.count;
  const run = () => {
    let n = 0;
    for (const text of inputs) n += Number(once(text));
    return n;
  };
  const times = [];
  let result = run(); // warm-up
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    result = run();
    times.push(performance.now() - t);
  }
  console.log(JSON.stringify({ ms: median(times), result, engine: compiled.engine }));
}

/** One measurement in a fresh child, with the time limit. */
function measure(spec) {
  const r = spawnSync(
    process.execPath,
    [
      "--max-old-space-size=4096",
      new URL(import.meta.url).pathname,
      "--measure",
      JSON.stringify(spec),
    ],
    { encoding: "utf8", timeout: TIMEOUT_MS, maxBuffer: 16 * MiB },
  );
  if (r.error?.code === "ETIMEDOUT" || r.signal === "SIGTERM") return { timeout: true };
  const line = (r.stdout || "").trim().split("\n").pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: (r.stderr || "no output").trim().split("\n").slice(-1)[0] };
  }
}

function cell(r) {
  if (!r) return "—";
  if (r.timeout) return `> ${fmtMs(TIMEOUT_MS)}`;
  if (r.refused) return "refused";
  if (r.error) return `error (${r.error.slice(0, 40)})`;
  return fmtMs(r.ms);
}

function installSize(engine) {
  const du = (p) => Number(execFileSync("du", ["-sb", p], { encoding: "utf8" }).split("\t")[0]);
  if (engine === "v8" || engine === "v8-linear") return "0 (built in)";
  if (engine === "re2js" || engine === "pagewise")
    return `${fmtBytes(du(path.join(REPO, "node_modules/re2js")))}${engine === "pagewise" ? " (re2js)" : ""}`;
  const where = enginePath(engine);
  if (where.missing) return "—";
  const size = du(where.dir ? path.join(where.dir, "node_modules") : where.at);
  return `${fmtBytes(size)}${engine === "re2" ? " (+ a C++ toolchain where no prebuilt binary downloads)" : ""}`;
}

async function engineTable(data) {
  const results = {};
  const available = {};
  for (const e of ENGINES) {
    if (!INSTALLED[e]) continue;
    const where = enginePath(e);
    available[e] = where.missing;
    if (where.missing) log(`${e}: skipped — ${where.missing}`);
  }
  const engines = ENGINES.filter((e) => !available[e]);
  // The machine is shared: every rep runs each engine once, in turn (A B C … A B C …), so that a
  // change in load hits every engine alike; a cell is the median of its reps.
  for (const [work, pattern] of [...WORK, ["cold", "regex"]]) {
    log(`${work} / ${pattern} (load ${os.loadavg()[0].toFixed(1)})`);
    const runs = {};
    for (let rep = 0; rep < REPS; rep++) {
      for (const engine of engines) {
        const first = runs[engine]?.[0];
        if (first && (first.timeout || first.refused || first.error)) continue;
        runs[engine] ??= [];
        runs[engine].push(measure({ engine, work, pattern, data, reps: 1 }));
      }
    }
    for (const engine of engines) {
      const ok = runs[engine].filter((x) => x.ms !== undefined);
      results[`${work}/${pattern}/${engine}`] = ok.length
        ? { ms: median(ok.map((x) => x.ms)), result: ok[0].result, engine: ok[0].engine }
        : runs[engine][0];
    }
  }
  const label = {
    lines: "every match per line, 10,000 files",
    files: "every match per whole file, 10,000 files",
    "dense-lines": "dense count per line, 9 MiB of node_modules",
    "dense-text": "dense count over the whole 9 MiB text",
    grep: "tail grep: yes/no per line, 16 MiB log",
    glob: "glob test per path, 50,000 paths",
    cold: "cold start: load + first compile + first match",
  };
  const rows = [];
  for (const [work, pattern] of [...WORK, ["cold", "regex"]]) {
    const key = (e) => `${work}/${pattern}/${e}`;
    const counts = new Set(
      engines.map((e) => results[key(e)]?.result).filter((x) => x !== undefined),
    );
    const mismatch = work !== "cold" && counts.size > 1 ? " (engines disagree!)" : "";
    const picked = results[key("pagewise")]?.engine;
    rows.push([
      `${label[work]}: \`${pattern === "glob" ? PATTERNS.glob : PATTERNS[pattern]}\`${picked ? ` (pagewise: ${picked})` : ""}${mismatch}`,
      ...engines.map((e) => cell(results[key(e)])),
      ratio(results[key("pagewise")]?.ms, results[key("re2")]?.ms),
    ]);
  }
  rows.push(["install size", ...engines.map(installSize), "—"]);
  const notes = Object.entries(available)
    .filter(([, why]) => why)
    .map(([e, why]) => `${e} skipped: ${why}`);
  return { engines, rows, notes };
}

// ---------------------------------------------------------------------------------------------
// Product: before (native re2) and after, beside the tools people use

async function callTimed(server, tool, args) {
  const t0 = performance.now();
  const r = await server.call(tool, args);
  if (r.isError) throw new Error(`${tool} failed: ${r.text.slice(0, 300)}`);
  return { ms: performance.now() - t0, json: JSON.parse(r.text) };
}

async function productRows(logFile) {
  const builds = [["after", PAGEWISE_BIN]];
  if (process.env.BENCH_BEFORE_BIN)
    builds.push(["before", path.resolve(process.env.BENCH_BEFORE_BIN)]);
  const rows = [];
  const { rows: search } = await searchRows(REPS);
  rows.push(...search);
  const tree = ensureSourceTree(50_000);
  const logDir = path.dirname(logFile.path);
  const samples = {};
  const add = (k, ms) => {
    samples[k] ??= [];
    samples[k].push(ms);
  };
  const servers = {};
  for (const [name, bin] of builds) {
    process.env.BENCH_PAGEWISE_BIN = bin;
    const { startPagewise } = await import(`./harness.js?patterns-${name}`);
    servers[name] = {
      tree: await startPagewise({ root: tree }),
      logs: await startPagewise({ root: logDir }),
    };
  }
  process.env.BENCH_PAGEWISE_BIN = PAGEWISE_BIN;
  const grepArgs = { path: logFile.name, grep: "timeout", limit: 50 };
  const globArgs = { recursive: true, type: "file", glob: "**/mod3/**/*.ts", limit: 100 };
  for (const s of Object.values(servers)) {
    await callTimed(s.logs, "tail", grepArgs);
    await callTimed(s.tree, "list", globArgs);
  }
  const small = path.join(tree, "pkg0", "mod0");
  const smallFiles = Number(timeShell("find . -type f | wc -l", small).out.trim());
  for (let rep = 0; rep < REPS; rep++) {
    log(`product rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    add(
      "tac",
      timeShell(`tac ${logFile.name} | grep -i -m50 timeout | tac > /dev/null`, logDir).ms,
    );
    add(
      "find",
      timeShell("find . -type f -path '*/mod3/*.ts' | LC_ALL=C sort | head -100 > /dev/null", tree)
        .ms,
    );
    for (const [name, bin] of builds) {
      add(`${name}-grep`, (await callTimed(servers[name].logs, "tail", grepArgs)).ms);
      add(`${name}-glob`, (await callTimed(servers[name].tree, "list", globArgs)).ms);
      for (const [kind, pattern] of [
        ["bounded", PATTERNS.folded],
        ["linear", PATTERNS.regex],
      ]) {
        const t0 = performance.now();
        execFileSync(
          process.execPath,
          [bin, "search", pattern, small, "--json", "--count", "none"],
          {
            stdio: "ignore",
          },
        );
        add(`${name}-cli-${kind}`, performance.now() - t0);
      }
    }
  }
  for (const s of Object.values(servers)) {
    await s.tree.close();
    await s.logs.close();
  }
  const m = (k) => median(samples[k] ?? []);
  for (const [name] of builds) {
    rows.push([
      `${name}: tail grep \`timeout\`, 50 records of a ${fmtBytes(logFile.bytes)} log`,
      `\`tac | grep -i -m50 | tac\` ${fmtMs(m("tac"))}`,
      fmtMs(m(`${name}-grep`)),
      ratio(m(`${name}-grep`), m("tac")),
    ]);
    rows.push([
      `${name}: list with glob \`${globArgs.glob}\`, first 100 of 50,000 files`,
      `\`find -path | sort | head\` ${fmtMs(m("find"))}`,
      fmtMs(m(`${name}-glob`)),
      ratio(m(`${name}-glob`), m("find")),
    ]);
    for (const kind of ["bounded", "linear"]) {
      rows.push([
        `${name}: CLI \`search ${kind === "bounded" ? PATTERNS.folded : PATTERNS.regex}\` over ${smallFiles} files, fresh process`,
        "—",
        fmtMs(m(`${name}-cli-${kind}`)),
        builds.length > 1 && name === "after"
          ? `${ratio(m(`after-cli-${kind}`), m(`before-cli-${kind}`))} of before`
          : "—",
      ]);
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------

if (process.argv[2] === "--measure") {
  await measureHere(JSON.parse(process.argv[3]));
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensureTool("rg", "ripgrep");
  const loadBefore = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  const logFile = await ensureDataFile("patterns-16MiB.log", 16 * MiB);
  const data = prepareData(logFile.path);
  if (ONLY.includes("engines")) {
    const { engines, rows, notes } = await engineTable(data);
    printTable(
      `Pattern engines on the same work — ${new Date().toISOString().slice(0, 10)}, ${os.availableParallelism()} CPUs, Node ${process.version}; medians of ${REPS} runs, each in a fresh process; load average ${loadBefore} at the start, ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at the end`,
      ["work", ...engines.map((e) => ENGINE_NAMES[e]), "pagewise / re2"],
      rows,
    );
    for (const n of notes) console.log(`\n- ${n}`);
  }
  if (ONLY.includes("product")) {
    const big = await ensureDataFile("patterns-256MiB.log", 256 * MiB);
    const rows = await productRows(big);
    printTable(
      `pagewise with the final design${process.env.BENCH_BEFORE_BIN ? " (after) and with native re2 (before)" : ""} beside rg, tac | grep, find — medians of ${REPS} interleaved runs; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
      ["what", "reference", "pagewise", "ratio"],
      rows,
    );
  }
}
