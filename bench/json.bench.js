/**
 * @module
 * Benchmarks of `json_read` (run by `npm run bench -- json`; needs `npm run build`).
 *
 * 1. Scan throughput of `$[*].id` over a 200 MiB JSONL and `$.orders[*].id` over a 200 MiB single
 *    document: pagewise paging ALL matches (max_items 1000, max_tokens 100000) through the SDK client,
 *    the engine alone in-process (`runQuery` + `compactJsonText` of every match), and `jq -c` (a
 *    process writing every match to /dev/null).
 * 2. Cost of page 1 versus a page near the end of the matches (cursors kept from the full pass),
 *    timed from the client and interleaved: the ratio must be about 1 (a continuation is O(page)).
 * 3. Server peak RSS (VmHWM) on a 1 GiB JSONL: `json_open` with full validation, a filter that scans
 *    the whole file in one call, and pages near its start and end.
 * 4. (`BENCH_ONLY=names`, not in the default set) Peak RSS of the engine, in a fresh process, on one
 *    object of 2,000 and 4,000 member names of 100 KB each, and of 1,000,000 names of 32 and 40
 *    bytes: full validation and `$.*` over it (duplicate detection must not keep long names).
 *
 * Data files are made under `.bench-data/json/` and reused. Environment: BENCH_JSON_MIB (default
 * 200), BENCH_JSON_BIG_MIB (default 1024), BENCH_REPS (page timings, default 21),
 * BENCH_ONLY=scan,flat,rss.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { ensureJson } from "./data.js";
import {
  DATA_DIR,
  fmtBytes,
  fmtMs,
  log,
  MiB,
  machine,
  median,
  printTable,
  ratio,
  runOnce,
  startPagewise,
} from "./harness.js";

const { compactJsonText, compileQuery, fileHandleReader, runQuery } = await import(
  "../dist/json/index.js"
);
const ENGINE_URL = new URL("../dist/json/index.js", import.meta.url).href;

const SIZE = Number(process.env.BENCH_JSON_MIB ?? 200) * MiB;
const BIG = Number(process.env.BENCH_JSON_BIG_MIB ?? 1024) * MiB;
const REPS = Number(process.env.BENCH_REPS ?? 21);
const ONLY = (process.env.BENCH_ONLY ?? "scan,flat,rss").split(",");
const DIR = path.join(DATA_DIR, "json");

// ---------------------------------------------------------------------------------------------
// Data

// ---------------------------------------------------------------------------------------------
// Subjects

async function engineScan(file, format, query) {
  const handle = await open(file, "r");
  try {
    const st = await handle.stat();
    const reader = fileHandleReader(handle, st.size);
    const compiled = compileQuery("jsonpath", query);
    let n = 0;
    let chars = 0;
    // Values are read through a 256 KiB window, as the server does (one pread per match would
    // dominate: matches are small and close together).
    let wStart = 0;
    let window = new Uint8Array(0);
    const valueBytes = async (start, end) => {
      if (start < wStart || end > wStart + window.length) {
        window = await reader.read(start, Math.max(end - start, 256 * 1024));
        wStart = start;
      }
      return window.subarray(start - wStart, end - wStart);
    };
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for await (const m of runQuery(reader, format, compiled)) {
      chars += compactJsonText(await valueBytes(m.start, m.end)).length;
      n++;
    }
    const cpu = process.cpuUsage(cpu0);
    return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, matches: n, chars };
  } finally {
    await handle.close();
  }
}

/**
 * `jq -c FILTER FILE > /dev/null`: wall time, and CPU time (user + system) through GNU time when
 * present. CPU time is the fairer comparison on a shared machine: wall time also counts the waits
 * for a CPU, which differ from process to process.
 */
function jqScan(file, filter) {
  const timed = existsSync("/usr/bin/time");
  const argv = timed
    ? ["/usr/bin/time", ["-f", "cpu %U %S", "jq", "-c", filter, file]]
    : ["jq", ["-c", filter, file]];
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv[1], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.error || r.status !== 0) return { ms: Number.NaN, error: String(r.error ?? r.stderr) };
  const m = /cpu ([\d.]+) ([\d.]+)/.exec(r.stderr ?? "");
  return { ms, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : Number.NaN };
}

/** Pages every match through the server; returns the cursors of every page and per-page times. */
async function pageAll(server, file, query) {
  const cursors = [null];
  const ms = [];
  let matches = 0;
  let args = { path: file, language: "jsonpath", query, max_items: 1000, max_tokens: 100000 };
  for (;;) {
    const t = performance.now();
    const r = await server.call("json_read", args);
    ms.push(performance.now() - t);
    if (r.isError) throw new Error(r.text.slice(0, 500));
    const page = JSON.parse(r.text);
    matches += page.items.length;
    if (page.complete) break;
    cursors.push(page.next_cursor);
    args = { cursor: page.next_cursor, max_tokens: 100000 };
  }
  return { matches, pages: ms.length, cursors, pageMs: ms };
}

// ---------------------------------------------------------------------------------------------

const m = machine();
console.log(
  `\n## JSON benchmarks\n\n${m.cpus} CPUs (${m.cpuModel}), ${fmtBytes(m.memory)} RAM, Node ${m.node}, ${m.platform}`,
);

const jqVersion = spawnSync("jq", ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "absent";
const cases = [
  { kind: "jsonl", name: "orders.jsonl", query: "$[*].id", jq: ".id" },
  { kind: "json", name: "orders.json", query: "$.orders[*].id", jq: ".orders[].id" },
];

const flatRows = [];
if (ONLY.includes("scan") || ONLY.includes("flat")) {
  const rows = [];
  for (const c of cases) {
    const data = await ensureJson(c.name, SIZE, c.kind);
    const root = DIR;
    log(`${c.name}: engine in-process`);
    const engine = await engineScan(data.file, c.kind, c.query);
    log(`${c.name}: jq -c`);
    const jq = jqScan(data.file, c.jq);
    log(`${c.name}: pagewise paging all matches through the SDK client`);
    let cursors = [];
    const full = await runOnce(
      () => startPagewise({ root }),
      async (server) => {
        const res = await pageAll(server, c.name, c.query);
        cursors = res.cursors;
        if (ONLY.includes("flat")) {
          // Page 1 (by path: detection, version from cache) vs a page near the start and one near
          // the end of the matches (by cursor), interleaved on the same warm server.
          const near = cursors[1];
          const late = cursors[cursors.length - 2];
          const t = { first: [], second: [], late: [] };
          for (let i = 0; i < REPS; i++) {
            for (const [key, args] of [
              [
                "first",
                {
                  path: c.name,
                  language: "jsonpath",
                  query: c.query,
                  max_items: 1000,
                  max_tokens: 100000,
                },
              ],
              ["second", { cursor: near, max_tokens: 100000 }],
              ["late", { cursor: late, max_tokens: 100000 }],
            ]) {
              const t0 = performance.now();
              const r = await server.call("json_read", args);
              t[key].push(performance.now() - t0);
              if (r.isError) throw new Error(r.text.slice(0, 300));
            }
          }
          flatRows.push([
            `${c.name} \`${c.query}\``,
            String(res.pages),
            fmtMs(median(t.first)),
            fmtMs(median(t.second)),
            fmtMs(median(t.late)),
            ratio(median(t.late), median(t.first)),
            ratio(median(t.late), median(t.second)),
            `${Math.round(median(cursors.slice(1).map((x) => x.length)))}`,
          ]);
        }
        return res;
      },
    );
    if (full.matches !== engine.matches)
      throw new Error(`match counts differ: ${full.matches} vs ${engine.matches}`);
    const mibps = (ms) => `${(data.bytes / MiB / (ms / 1000)).toFixed(0)} MiB/s`;
    rows.push([
      `${c.name} (${fmtBytes(data.bytes)}) \`${c.query}\``,
      String(engine.matches),
      `${fmtMs(engine.ms)} (${mibps(engine.ms)})`,
      `${fmtMs(full.wallMs)} (${mibps(full.wallMs)}), ${full.pages} pages`,
      Number.isFinite(jq.ms) ? `${fmtMs(jq.ms)} (${mibps(jq.ms)})` : `— ${jq.error ?? ""}`,
      ratio(engine.ms, jq.ms),
      `${fmtMs(engine.cpuMs)} / ${fmtMs(jq.cpuMs)} = ${ratio(engine.cpuMs, jq.cpuMs)}`,
      ratio(full.wallMs, jq.ms),
      fmtBytes(full.peakRss),
    ]);
  }
  printTable(
    `Scan throughput: every match (${jqVersion} for jq)`,
    [
      "file and query",
      "matches",
      "engine in-process",
      "pagewise, all pages via SDK client",
      "jq -c",
      "engine / jq",
      "CPU time: engine / jq",
      "pagewise / jq",
      "server peak RSS",
    ],
    rows,
  );
}

if (flatRows.length > 0) {
  printTable(
    `Page cost: page 1 vs a page near the start and near the end of the matches (median of ${REPS}, max_items 1000, max_tokens 100000)`,
    [
      "file and query",
      "pages",
      "page 1 (path)",
      "page 2 (cursor)",
      "page near the end (cursor)",
      "end / page 1",
      "end / page 2",
      "cursor length",
    ],
    flatRows,
  );
}

if (ONLY.includes("rss")) {
  const data = await ensureJson("big.jsonl", BIG, "jsonl");
  const steps = [];
  const res = await runOnce(
    () => startPagewise({ root: DIR }),
    async (server) => {
      const step = async (label, tool, args) => {
        const t0 = performance.now();
        const r = await server.call(tool, args);
        if (r.isError) throw new Error(`${label}: ${r.text.slice(0, 300)}`);
        steps.push([label, fmtMs(performance.now() - t0), fmtBytes(server.memory().peakRss)]);
        return JSON.parse(r.text);
      };
      await step("json_open, validation full", "json_open", {
        path: "big.jsonl",
        validation: "full",
      });
      const last = data.records - 1;
      await step(`filter over every record ($[?@.id == ${last}].id)`, "json_read", {
        path: "big.jsonl",
        language: "jsonpath",
        query: `$[?@.id == ${last}].id`,
      });
      const p = await step("page 1 of $[*] (max_tokens 100000)", "json_read", {
        path: "big.jsonl",
        language: "jsonpath",
        query: "$[*]",
        max_items: 1000,
        max_tokens: 100000,
      });
      await step("page 2 by cursor", "json_read", { cursor: p.next_cursor, max_tokens: 100000 });
      await step(`pointer to the last record (/${last})`, "json_read", {
        path: "big.jsonl",
        language: "pointer",
        query: `/${last}`,
      });
      return {};
    },
  );
  printTable(
    `Server memory on a ${fmtBytes(data.bytes)} JSONL (${data.records} records)`,
    ["step", "time", "server peak RSS so far"],
    [...steps, ["whole run (VmHWM at the end)", fmtMs(res.wallMs), fmtBytes(res.peakRss)]],
  );
}

if (ONLY.includes("names")) {
  const rows = [];
  // Long names (the hashed path), and the most names one object may hold (max_object_members) at
  // the longest length kept as is (32) and just beyond it.
  const shapes = [
    { count: 2000, nameChars: 100 * 1024 },
    { count: 4000, nameChars: 100 * 1024 },
    { count: 1_000_000, nameChars: 32 },
    { count: 1_000_000, nameChars: 40 },
  ];
  for (const { count, nameChars } of shapes) {
    const file = path.join(DIR, `names-${count}x${nameChars}.json`);
    if (!existsSync(file)) {
      mkdirSync(DIR, { recursive: true });
      log(
        `writing ${count} member names of ${nameChars} bytes to ${path.relative(process.cwd(), file)}`,
      );
      const fd = openSync(`${file}.tmp`, "w");
      writeSync(fd, "{");
      let parts = [];
      for (let i = 0; i < count; i++) {
        parts.push(`${i > 0 ? "," : ""}"${String(i).padStart(nameChars, "n")}":${i}`);
        if (parts.length >= 1000) {
          writeSync(fd, parts.join(""));
          parts = [];
        }
      }
      writeSync(fd, `${parts.join("")}}\n`);
      closeSync(fd);
      renameSync(`${file}.tmp`, file);
    }
    // A fresh process per measurement, so the peak belongs to this input alone.
    const script = `
      const { compileQuery, fileHandleReader, runQuery, validate } = await import(${JSON.stringify(ENGINE_URL)});
      const { open } = await import("node:fs/promises");
      const h = await open(${JSON.stringify(file)}, "r");
      const reader = fileHandleReader(h, (await h.stat()).size);
      const t0 = performance.now();
      await validate(reader, "json", "full");
      const validateMs = performance.now() - t0;
      const validateRss = process.resourceUsage().maxRSS * 1024;
      let n = 0;
      for await (const _ of runQuery(reader, "json", compileQuery("jsonpath", "$.*"))) n++;
      console.log(JSON.stringify({ validateMs, validateRss, queryRss: process.resourceUsage().maxRSS * 1024, n }));
      await h.close();`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(r.stderr);
    const m = JSON.parse(r.stdout);
    rows.push([
      `${count} names × ${fmtBytes(nameChars)} (${fmtBytes(statSync(file).size)})`,
      fmtMs(m.validateMs),
      fmtBytes(m.validateRss),
      `${fmtBytes(m.queryRss)} (${m.n} matches)`,
    ]);
  }
  printTable(
    "Engine peak RSS on one object with many or long member names (fresh process each)",
    ["input", "validate full", "peak RSS after validate", "peak RSS after also $.*"],
    rows,
  );
}
