/**
 * @module
 * `npm run bench:compare`: pagewise beside what a user would otherwise run, one row per speed
 * target, in one run on generated data (made once under `.bench-data/`). Prints the table and
 * writes it into `docs/benchmarks.md` between the `bench:compare` markers, with the command and
 * the load average (`--no-write` only prints).
 *
 * Rows (medians of `BENCH_REPS` interleaved runs, default 3):
 * - `search` (bench/search-compare.bench.js): first page with the exact total against
 *   `rg --count-matches | awk`, first page without a total against `rg | head -100`, a dense exact
 *   count (`e` over `node_modules`, millions of matches) against `rg -i -uu --count-matches`, and a
 *   continuation at 50,000 files against one at 10,000;
 * - `list` of 100,000 files, `recursive`, `type: "file"`: the first page, and the whole walk with
 *   `limit: 1000` and the cursor alone (at the default budget and at 25,000 tokens), against
 *   `find . -type f | LC_ALL=C sort`;
 * - `read`: the first page of a 10 GiB file (1 MiB of text, then a hole made by `truncate`) and of
 *   a 1 GiB file of real bytes, on a server that has answered a call already, against
 *   `head -n 150`; and `offset` to a line near the end of the 1 GiB file, first and second call,
 *   against `tail -n +N | head -5`;
 * - `json_read` of every `$[*].id` in 100 MiB of JSON Lines through the SDK client against
 *   `jq -c .id`;
 * - CLI start: `pagewise --version`, and a one-page `read`, `tail` and `list` of a small tree,
 *   each a process of its own, against `node -e 0`; `pagewise json FILE '$[*].id'` into a pipe
 *   (every match, one value per line) against `jq -c .id` (cliRows, group `cli`);
 * - per-call overhead: 2,000 `read` calls of a one-line file against server-filesystem's
 *   `read_text_file`, and start-up (spawn to `tools/list` answered) against server-filesystem.
 *
 * pagewise and the peer run behind the official SDK client over stdio; times are wall times of
 * the calls (spawn excluded except for start-up). Needs `npm run build`, `rg`, `jq` (installed
 * with apt-get when absent). `BENCH_COMPARE_ONLY=search,list,read,json,cli,overhead` picks groups.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureJson, ensureSourceTree } from "./data.js";
import {
  DATA_DIR,
  ensureDataFile,
  ensureTool,
  fmtMs,
  GiB,
  log,
  MiB,
  machine,
  median,
  printTable,
  REPO,
  ratio,
  startPagewise,
  startPeer,
  timeShell,
} from "./harness.js";
import { searchRows } from "./search-compare.bench.js";

const REPS = Number(process.env.BENCH_REPS ?? 3);
/** Groups of rows to measure (`BENCH_COMPARE_ONLY=list,read`; default all). */
const ONLY = (process.env.BENCH_COMPARE_ONLY ?? "search,list,read,json,cli,overhead").split(",");
const WRITE = !process.argv.includes("--no-write");
const DOC = path.join(REPO, "docs", "benchmarks.md");
const START = "<!-- bench:compare start -->";
const END = "<!-- bench:compare end -->";
const HEADER = ["what", "reference", "pagewise", "pagewise / reference", "target"];

/** Time of one tool call through the SDK client; throws on an error result. */
async function timed(server, tool, args) {
  const t0 = performance.now();
  const r = await server.call(tool, args);
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${tool} failed: ${r.text.slice(0, 300)}`);
  return {
    ms,
    get json() {
      return JSON.parse(r.text);
    },
  };
}

/** Medians of `samples` by key, collected over interleaved reps. */
function collector() {
  const samples = {};
  return {
    add(key, ms) {
      samples[key] ??= [];
      samples[key].push(ms);
    },
    m: (key) => median(samples[key]),
  };
}

async function listRows() {
  const tree = ensureSourceTree(100_000);
  const s = collector();
  const walk = async (server, maxTokens) => {
    let page = await timed(server, "list", {
      recursive: true,
      type: "file",
      limit: 1000,
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
    });
    let ms = page.ms;
    let pages = 1;
    let entries = page.json.items.length;
    while (page.json.next_cursor) {
      page = await timed(server, "list", { cursor: page.json.next_cursor });
      ms += page.ms;
      pages++;
      entries += page.json.items.length;
    }
    return { ms, pages, entries };
  };
  const shape = {};
  for (let rep = 0; rep < REPS; rep++) {
    log(`list rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    s.add("find", timeShell("find . -type f | LC_ALL=C sort > /dev/null", tree).ms);
    // What a list page holds (each file's size and mtime) costs find a stat per file too.
    s.add(
      "find-stat",
      timeShell("find . -type f -printf '%P\\t%s\\t%T@\\n' | LC_ALL=C sort > /dev/null", tree).ms,
    );
    // A fresh server per measurement: no listing cache from an earlier walk.
    for (const [key, run] of [
      [
        "first",
        async (server) => (await timed(server, "list", { recursive: true, type: "file" })).ms,
      ],
      [
        "walk-default",
        async (server) => {
          shape.default = await walk(server);
          return shape.default.ms;
        },
      ],
      [
        "walk-25000",
        async (server) => {
          shape.big = await walk(server, 25_000);
          return shape.big.ms;
        },
      ],
    ]) {
      const server = await startPagewise({ root: tree });
      try {
        s.add(key, await run(server));
      } finally {
        await server.close();
      }
    }
  }
  const find = s.m("find");
  const ref = `\`find -type f \\| sort\` ${fmtMs(find)}`;
  return [
    ["list, first page (100,000 files)", ref, fmtMs(s.m("first")), ratio(s.m("first"), find), "—"],
    [
      `list, whole walk, limit 1000, default budget (${shape.default.pages} pages, ${shape.default.entries} entries)`,
      ref,
      fmtMs(s.m("walk-default")),
      ratio(s.m("walk-default"), find),
      "≤ ×3",
    ],
    [
      `list, whole walk, limit 1000, max_tokens 25000 (${shape.big.pages} pages)`,
      ref,
      fmtMs(s.m("walk-25000")),
      ratio(s.m("walk-25000"), find),
      "≤ ×3",
    ],
    [
      "list, whole walk, max_tokens 25000, against a find that also stats (size, mtime)",
      `\`find -type f -printf '%P %s %T@' \\| sort\` ${fmtMs(s.m("find-stat"))}`,
      fmtMs(s.m("walk-25000")),
      ratio(s.m("walk-25000"), s.m("find-stat")),
      "—",
    ],
  ];
}

/**
 * A file of `bytes` under `.bench-data/` whose first MiB is the text block and the rest a hole
 * (`truncate`: no disk space; the hole reads as NUL bytes, which a first page never reaches).
 */
async function ensureSparseFile(name, bytes) {
  const file = path.join(DATA_DIR, name);
  if (!existsSync(file) || statSync(file).size !== bytes) {
    const head = await ensureDataFile("read-1MiB.txt", MiB);
    mkdirSync(DATA_DIR, { recursive: true });
    copyFileSync(head.path, file);
    truncateSync(file, bytes);
  }
  return { path: file, name };
}

/**
 * The first page of a file on a server that has answered a call already (the read source is
 * loaded), as an agent's first look at a file it has not read before.
 */
async function firstPageMs(root, name, warmName) {
  const server = await startPagewise({ root });
  try {
    await timed(server, "read", { path: warmName, max_tokens: 2000 });
    return (await timed(server, "read", { path: name, max_tokens: 2000 })).ms;
  } finally {
    await server.close();
  }
}

async function readRows() {
  const data = await ensureDataFile("read-1GiB.txt", GiB);
  const sparse = await ensureSparseFile("read-10GiB-sparse.txt", 10 * GiB);
  const root = path.dirname(data.path);
  const warm = (await ensureDataFile("read-1MiB.txt", MiB)).name;
  const line = data.lines - 1000;
  const s = collector();
  for (let rep = 0; rep < REPS; rep++) {
    log(`read rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    s.add("head-10", timeShell(`head -n 150 ${sparse.name} > /dev/null`, root).ms);
    s.add("first-10", await firstPageMs(root, sparse.name, warm));
    s.add("head-1", timeShell(`head -n 150 ${data.name} > /dev/null`, root).ms);
    s.add("first-1", await firstPageMs(root, data.name, warm));
    s.add("tail", timeShell(`tail -n +${line} ${data.name} | head -5 > /dev/null`, root).ms);
    // A fresh server: the first offset call scans to its line; the second uses what it learned.
    const server = await startPagewise({ root });
    try {
      const at = (offset) => ({ path: data.name, offset, limit: 5, max_tokens: 2000 });
      s.add("offset-1", (await timed(server, "read", at(line))).ms);
      s.add("offset-2", (await timed(server, "read", at(line + 50))).ms);
    } finally {
      await server.close();
    }
  }
  const tail = s.m("tail");
  return [
    [
      "read, first page of a 10 GiB file (1 MiB of text, then a hole)",
      `\`head -n 150\` ${fmtMs(s.m("head-10"))}`,
      fmtMs(s.m("first-10")),
      ratio(s.m("first-10"), s.m("head-10")),
      "≤ 50 ms",
    ],
    [
      "read, first page of a 1 GiB file (real bytes)",
      `\`head -n 150\` ${fmtMs(s.m("head-1"))}`,
      fmtMs(s.m("first-1")),
      ratio(s.m("first-1"), s.m("head-1")),
      "≤ 50 ms",
    ],
    [
      "read, `offset` near the end of 1 GiB, first call",
      `\`tail -n +N \\| head\` ${fmtMs(tail)}`,
      fmtMs(s.m("offset-1")),
      ratio(s.m("offset-1"), tail),
      "—",
    ],
    [
      "read, `offset` near the end of 1 GiB, second call",
      `\`tail -n +N \\| head\` ${fmtMs(tail)}`,
      fmtMs(s.m("offset-2")),
      ratio(s.m("offset-2"), tail),
      "≤ 50 ms",
    ],
  ];
}

async function jsonRows() {
  const data = await ensureJson("orders-100MiB.jsonl", 100 * MiB, "jsonl");
  const root = path.dirname(data.file);
  const s = collector();
  let pages = 0;
  for (let rep = 0; rep < REPS; rep++) {
    log(`json rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    s.add("jq", timeShell(`jq -c .id ${data.name} > /dev/null`, root).ms);
    const server = await startPagewise({ root, extraArgs: ["--max-tokens-cap", "100000"] });
    try {
      const args = {
        path: data.name,
        language: "jsonpath",
        query: "$[*].id",
        max_items: 1000,
        max_tokens: 100_000,
      };
      let page = await timed(server, "json_read", args);
      let ms = page.ms;
      let matches = page.json.items.length;
      pages = 1;
      while (!page.json.complete) {
        page = await timed(server, "json_read", { cursor: page.json.next_cursor });
        ms += page.ms;
        matches += page.json.items.length;
        pages++;
      }
      if (matches !== data.records) throw new Error(`json_read: ${matches} ≠ ${data.records}`);
      s.add("pagewise", ms);
    } finally {
      await server.close();
    }
  }
  return [
    [
      `json walk: json_read, every \`$[*].id\` of 100 MiB JSONL (${data.records} values, ${pages} pages of 1,000)`,
      `\`jq -c .id\` ${fmtMs(s.m("jq"))}`,
      fmtMs(s.m("pagewise")),
      ratio(s.m("pagewise"), s.m("jq")),
      "≤ ×1.2",
    ],
  ];
}

/** Runs of a whole process for CLI start-up; more than REPS, since each is short. */
const CLI_START_RUNS = Math.max(15, REPS * 5);

/**
 * The terminal command's start and its JSON stream, each process timed from spawn to exit, the
 * commands interleaved (A B C A B C …).
 */
async function cliRows() {
  const bin = path.join(REPO, "bin", "pagewise.js");
  const tree = path.join(DATA_DIR, "compare-cli");
  mkdirSync(tree, { recursive: true });
  for (let i = 0; i < 20; i++)
    writeFileSync(path.join(tree, `f${i}.log`), `line ${i}\n`.repeat(50));
  const env = "PAGEWISE_CURSOR_KEY=bench-compare-cli-key-0123456789";
  const node = `${env} ${process.execPath}`;
  const starts = [
    ["node", `${process.execPath} -e 0`],
    ["version", `${node} ${bin} --version`],
    ["read", `${node} ${bin} read f0.log --raw`],
    ["tail", `${node} ${bin} tail f0.log --raw`],
    ["list", `${node} ${bin} list . --raw`],
  ];
  const s = collector();
  for (let rep = 0; rep < CLI_START_RUNS; rep++) {
    if (rep % 5 === 0)
      log(`cli start run ${rep + 1}/${CLI_START_RUNS} (load ${os.loadavg()[0].toFixed(1)})`);
    for (const [key, cmd] of starts) s.add(key, timeShell(`${cmd} > /dev/null`, tree).ms);
  }
  const data = await ensureJson("orders-100MiB.jsonl", 100 * MiB, "jsonl");
  const root = path.dirname(data.file);
  for (let rep = 0; rep < REPS; rep++) {
    log(`json stream rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    s.add("jq", timeShell(`jq -c .id ${data.name} > /dev/null`, root).ms);
    s.add("stream", timeShell(`${node} ${bin} json ${data.name} '$[*].id' > /dev/null`, root).ms);
  }
  const ref = `\`node -e 0\` ${fmtMs(s.m("node"))}`;
  const start = (what, key, target) => [
    what,
    ref,
    `${fmtMs(s.m(key))} (+${fmtMs(s.m(key) - s.m("node"))})`,
    ratio(s.m(key), s.m("node")),
    target,
  ];
  return [
    start("CLI start, `pagewise --version`", "version", "≤ +40 ms"),
    start("CLI start, `pagewise read FILE` (one small page)", "read", "≤ +80 ms"),
    start("CLI start, `pagewise tail FILE`", "tail", "≤ +80 ms"),
    start("CLI start, `pagewise list DIR` (20 files)", "list", "≤ +80 ms"),
    [
      `CLI \`json\` into a pipe, every \`$[*].id\` of 100 MiB JSONL (${data.records} values)`,
      `\`jq -c .id\` ${fmtMs(s.m("jq"))}`,
      fmtMs(s.m("stream")),
      ratio(s.m("stream"), s.m("jq")),
      "≤ ×1",
    ],
  ];
}

async function overheadRows() {
  const dir = path.join(DATA_DIR, "compare-tiny");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "tiny.txt");
  writeFileSync(file, "one line of text\n");
  const CALLS = 2000;
  const s = collector();
  const subjects = [
    ["pagewise", () => startPagewise({ root: dir }), "read", { path: "tiny.txt" }],
    ["peer", () => startPeer({ root: dir }), "read_text_file", { path: file }],
  ];
  for (let rep = 0; rep < REPS; rep++) {
    log(`per-call rep ${rep + 1}/${REPS} (load ${os.loadavg()[0].toFixed(1)})`);
    for (const [name, start, tool, args] of subjects) {
      const t0 = performance.now();
      const server = await start();
      await server.client.listTools();
      s.add(`${name}-startup`, performance.now() - t0);
      try {
        await timed(server, tool, args); // warm
        const t1 = performance.now();
        for (let i = 0; i < CALLS; i++) await timed(server, tool, args);
        s.add(`${name}-calls`, (CALLS * 1000) / (performance.now() - t1));
      } finally {
        await server.close();
      }
    }
  }
  const rate = (key) => `${Math.round(s.m(key)).toLocaleString("en-US")} calls/s`;
  return [
    [
      `per-call overhead, ${CALLS} tiny \`read\` calls (calls per second; higher is better)`,
      `server-filesystem ${rate("peer-calls")}`,
      rate("pagewise-calls"),
      ratio(s.m("pagewise-calls"), s.m("peer-calls")),
      "≥ ×1",
    ],
    [
      "start-up, spawn to `tools/list` answered",
      `server-filesystem ${fmtMs(s.m("peer-startup"))}`,
      fmtMs(s.m("pagewise-startup")),
      ratio(s.m("pagewise-startup"), s.m("peer-startup")),
      "≤ ×1",
    ],
  ];
}

function writeDoc(table) {
  const doc = readFileSync(DOC, "utf8");
  const block = `${START}\n${table}\n${END}`;
  const at = doc.indexOf(START);
  const next =
    at >= 0
      ? doc.slice(0, at) + block + doc.slice(doc.indexOf(END) + END.length)
      : `${doc.trimEnd()}\n\n## Side by side with rg, find, jq and server-filesystem (\`npm run bench:compare\`)\n\n${block}\n`;
  writeFileSync(DOC, next);
  log(`wrote ${path.relative(REPO, DOC)}`);
}

ensureTool("rg", "ripgrep");
ensureTool("jq", "jq");
const loadBefore = os.loadavg();
const searchGroup = async () =>
  (await searchRows(REPS)).rows.map(([what, ref, pw, r]) => [
    what.replace(/^after: /, "search, "),
    ref,
    pw,
    r,
    what.includes("dense")
      ? "≤ ×3"
      : what.includes("exact")
        ? "≤ ×2"
        : what.includes("continuation")
          ? "≤ ×1.5"
          : "≤ ×0.5",
  ]);
const groups = {
  search: searchGroup,
  list: listRows,
  read: readRows,
  json: jsonRows,
  cli: cliRows,
  overhead: overheadRows,
};
const rows = [];
for (const [name, measure] of Object.entries(groups))
  if (ONLY.includes(name)) rows.push(...(await measure()));
// A pipe inside a cell (a shell pipeline) would end the cell in Markdown.
const cells = rows.map((row) => row.map((cell) => String(cell).replace(/(?<!\\)\|/g, "\\|")));
const loadAfter = os.loadavg();
const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(" ");
const m = machine();
const title = `pagewise beside rg, find, jq, tail and server-filesystem — ${new Date().toISOString().slice(0, 10)}, ${m.cpus ?? os.cpus().length} CPUs, Node ${process.version}; medians of ${REPS} interleaved runs; load average ${fmtLoad(loadBefore)} at the start, ${fmtLoad(loadAfter)} at the end`;
const lines = [];
const originalLog = console.log;
console.log = (line = "") => {
  lines.push(line);
  originalLog(line);
};
printTable(title, HEADER, cells);
console.log = originalLog;
if (WRITE) {
  writeDoc(
    `Reproduce: \`npm run bench:compare\` (or \`node bench/compare.js --no-write\` after \`npm run build\`; \`BENCH_REPS\` sets the runs). The continuation row compares a page at 50,000 files with one at 10,000 (flat is O(page)).\n\n${lines.join("\n").trim()}`,
  );
}
