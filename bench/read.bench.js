/**
 * @module
 * Benchmarks of `read` (run by `npm run bench`, or `npm run bench -- read`; needs `npm run build`).
 *
 * 1. Per-page cost of a continuation on a 1 GiB file versus a 1 MiB file: deep cursors at the same
 *    relative positions of both files, then continuation pages at max_tokens 2000, each timed from
 *    the client. The ratio 1 GiB / 1 MiB should be ~1 (a continuation costs O(page)). Also: the same
 *    continuations on a fresh server with the 1 GiB file evicted from the page cache.
 * 2. Peak RSS (VmHWM) of the server while it pages the 1 GiB file: the first page (which hashes the
 *    whole file once) plus 200 continuation pages from four deep positions, against the same on 1 MiB.
 * 3. A 200 MiB file: pagewise's first page and a full paged pass at max_tokens 8000 (all of it,
 *    reconstruction checked by SHA-256) versus @modelcontextprotocol/server-filesystem's
 *    `read_text_file` — whole file through a plain JSON-RPC client (the SDK client cannot take a
 *    response over 10 MiB), and `head` of the same lines as pagewise's first page through the SDK
 *    client. Then a 4 MiB file, small enough for the peer's whole-file answer (sent twice: `content`
 *    and `structuredContent`) to pass through the SDK client: the peer's one call versus pagewise's
 *    full paged pass, both through the SDK client.
 *
 * 4. Per-page cost as the budget grows (2000 … 100000 tokens), SDK client versus a plain JSON-RPC
 *    client, to separate the server's cost per page from the client's.
 *
 * Environment: BENCH_REPS (default 5), BENCH_FULL_REPS (200 MiB passes, default 3), BENCH_ESTIMATOR
 * (default "default"), BENCH_SKIP_SDK_FAILURE=1 to skip the one-off demonstration that the SDK
 * client cannot take the peer's 200 MiB answer, BENCH_PAGEWISE_BIN to measure another build,
 * BENCH_ONLY=deep,large,sdk,budgets to run some parts only (1–2, 3, 3b, 4).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  compare,
  DATA_DIR,
  ensureDataFile,
  fmtBytes,
  fmtMs,
  GiB,
  log,
  MiB,
  machine,
  median,
  PAGEWISE_BIN,
  percentile,
  printTable,
  RssSampler,
  ratio,
  runOnce,
  sha256File,
  startPagewise,
  startPeer,
  startRawPagewise,
  startRawPeer,
} from "./harness.js";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const FULL_REPS = Number(process.env.BENCH_FULL_REPS ?? 3);
const ESTIMATOR = process.env.BENCH_ESTIMATOR ?? "default";
const SMALL_PAGE = 2000;
const LARGE_PAGE = 8000;
/** Relative line positions of the deep cursors, and continuation pages timed from each. */
const POSITIONS = [0.1, 0.4, 0.7, 0.95];
const PAGES_PER_POSITION = 50;

const results = { machine: machine(), estimator: ESTIMATOR, reps: REPS, fullReps: FULL_REPS };

function page(response) {
  if (response.isError) throw new Error(`read failed: ${response.text}`);
  return JSON.parse(response.text);
}

function keyFile() {
  const file = path.join(DATA_DIR, "bench-cursor.key");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600 });
  return file;
}

/**
 * Deep cursors for `file` (at POSITIONS), made once with the shared key so that measured servers
 * (fresh processes with the same key) can continue from them. Also times the `offset` seek, which
 * scans lines from the start (O(position)) and is not part of the per-page cost.
 */
async function deepCursors(file, key) {
  const seeks = [];
  const cursors = [];
  const server = await startPagewise({ root: DATA_DIR, estimator: ESTIMATOR, keyFile: key });
  try {
    page(await server.call("read", { path: file.name, max_tokens: SMALL_PAGE })); // hash once
    for (const p of POSITIONS) {
      const offset = Math.floor(file.lines * p);
      const t0 = performance.now();
      const first = page(await server.call("read", { path: file.name, offset, max_tokens: 2000 }));
      seeks.push({ position: p, offset, ms: performance.now() - t0 });
      cursors.push(first.next_cursor);
    }
  } finally {
    await server.close();
  }
  return { cursors, seeks };
}

/**
 * The paging workload of benchmarks 1 and 2: optionally the first page (hashes the file when the
 * server has not seen it), then PAGES_PER_POSITION continuations from each deep cursor, each timed.
 * A chain that reaches EOF starts over from its deep cursor (repeating a cursor is allowed).
 */
function pagingWorkload(file, cursors, { firstPage = true } = {}) {
  return async (server) => {
    let firstMs = Number.NaN;
    let firstCpuMs = Number.NaN;
    let firstPeakRss = Number.NaN;
    if (firstPage) {
      const c0 = server.cpuMs();
      const t0 = performance.now();
      page(await server.call("read", { path: file.name, max_tokens: SMALL_PAGE }));
      firstMs = performance.now() - t0;
      firstCpuMs = server.cpuMs() - c0;
      firstPeakRss = server.memory().peakRss;
    }
    const times = [];
    const byPosition = [];
    const byPositionCpu = [];
    let contentBytes = 0;
    const cpuStart = server.cpuMs();
    for (const start of cursors) {
      const mine = [];
      const c0 = server.cpuMs();
      let cursor = start;
      for (let i = 0; i < PAGES_PER_POSITION; i++) {
        const t0 = performance.now();
        const res = await server.call("read", { cursor, max_tokens: SMALL_PAGE });
        const ms = performance.now() - t0;
        const p = page(res);
        contentBytes += Buffer.byteLength(p.content);
        mine.push(ms);
        times.push(ms);
        cursor = p.has_more ? p.next_cursor : start;
      }
      byPosition.push(median(mine));
      byPositionCpu.push((server.cpuMs() - c0) / PAGES_PER_POSITION);
    }
    return {
      firstMs,
      firstCpuMs,
      firstPeakRss,
      pageCpuMs: (server.cpuMs() - cpuStart) / times.length,
      byPositionCpu,
      pageMs: median(times),
      pageP90Ms: percentile(times, 90),
      byPosition,
      pages: times.length,
      bytesPerPage: contentBytes / times.length,
    };
  };
}

function evict(file) {
  // GNU dd with iflag=nocache and count=0 asks the kernel to drop the file's cached pages.
  execFileSync("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

function residentFraction(file) {
  try {
    const out = execFileSync("fincore", ["--bytes", "--noheadings", "--output", "RES,SIZE", file], {
      encoding: "utf8",
    }).trim();
    const [res, size] = out.split(/\s+/).map(Number);
    return res / size;
  } catch {
    return Number.NaN;
  }
}

async function benchDeepPaging(key) {
  const small = await ensureDataFile("read-1MiB.txt", MiB);
  const large = await ensureDataFile("read-1GiB.txt", GiB);
  log("making deep cursors (offset seeks)");
  const smallDeep = await deepCursors(small, key);
  const largeDeep = await deepCursors(large, key);
  const start = () => startPagewise({ root: DATA_DIR, estimator: ESTIMATOR, keyFile: key });
  const runs = await compare(
    [
      { name: "1 MiB", start, workload: pagingWorkload(small, smallDeep.cursors) },
      { name: "1 GiB", start, workload: pagingWorkload(large, largeDeep.cursors) },
    ],
    { reps: REPS, label: "deep paging" },
  );

  // Cold: a fresh server continues from the cursors (no first page: the cursor's identity
  // fingerprint lets it skip the hash) with the 1 GiB file evicted from the page cache.
  const cold = [];
  for (let r = 0; r < REPS; r++) {
    evict(large.path);
    const resident = residentFraction(large.path);
    log(`cold deep paging run ${r + 1}/${REPS} (resident before: ${(resident * 100).toFixed(1)}%)`);
    cold.push({
      ...(await runOnce(start, pagingWorkload(large, largeDeep.cursors, { firstPage: false }))),
      resident,
    });
  }
  const coldMedian = (f) => median(cold.map((x) => x[f]));

  const s = runs["1 MiB"];
  const l = runs["1 GiB"];
  const row = (label, field, fmt = fmtMs) => [
    label,
    fmt(s.median(field)),
    fmt(l.median(field)),
    ratio(l.median(field), s.median(field)),
    fmt(coldMedian(field)),
  ];
  const posRow = (label, field, i) => {
    const at = (runs) => median(runs.map((x) => x[field][i]));
    return [
      label,
      fmtMs(at(s.runs)),
      fmtMs(at(l.runs)),
      ratio(at(l.runs), at(s.runs)),
      fmtMs(at(cold)),
    ];
  };
  printTable(
    `1. Continuation page at max_tokens ${SMALL_PAGE}, 1 GiB vs 1 MiB (median of ${REPS} runs × ${POSITIONS.length * PAGES_PER_POSITION} pages)`,
    ["", "1 MiB", "1 GiB", "1 GiB / 1 MiB", "1 GiB, cold cache, fresh server"],
    [
      row("per page, wall time at the client, median", "pageMs"),
      row("per page, wall time at the client, p90", "pageP90Ms"),
      row("per page, server CPU time", "pageCpuMs"),
      ...POSITIONS.map((p, i) =>
        posRow(`  server CPU per page from ${p * 100}% of the file`, "byPositionCpu", i),
      ),
      row("content per page", "bytesPerPage", fmtBytes),
      [...row("first page (hashes the file), wall", "firstMs").slice(0, 4), "not called"],
      [...row("first page, server CPU", "firstCpuMs").slice(0, 4), "not called"],
    ],
  );
  printTable(
    "1b. Getting there: `offset` seek (scans lines from the start; not part of the per-page cost)",
    ["file", ...POSITIONS.map((p) => `to ${p * 100}%`)],
    [
      ["1 MiB", ...smallDeep.seeks.map((x) => fmtMs(x.ms))],
      ["1 GiB", ...largeDeep.seeks.map((x) => fmtMs(x.ms))],
    ],
  );
  printTable(
    `2. Server memory while paging (median of ${REPS} runs; first page + ${POSITIONS.length * PAGES_PER_POSITION} continuations)`,
    ["", "1 MiB", "1 GiB", "1 GiB / 1 MiB", "1 GiB cold, no first page"],
    [
      [
        "RSS before the first call",
        fmtBytes(s.median("idleRss")),
        fmtBytes(l.median("idleRss")),
        ratio(l.median("idleRss"), s.median("idleRss")),
        fmtBytes(coldMedian("idleRss")),
      ],
      [
        "peak RSS after the first page",
        fmtBytes(s.median("firstPeakRss")),
        fmtBytes(l.median("firstPeakRss")),
        ratio(l.median("firstPeakRss"), s.median("firstPeakRss")),
        "—",
      ],
      [
        "peak RSS (VmHWM) at the end",
        fmtBytes(s.median("peakRss")),
        fmtBytes(l.median("peakRss")),
        ratio(l.median("peakRss"), s.median("peakRss")),
        fmtBytes(coldMedian("peakRss")),
      ],
      [
        "largest sampled VmRSS",
        fmtBytes(s.median("sampledRss")),
        fmtBytes(l.median("sampledRss")),
        ratio(l.median("sampledRss"), s.median("sampledRss")),
        fmtBytes(coldMedian("sampledRss")),
      ],
    ],
  );
  results.deepPaging = {
    small: { runs: s.runs, seeks: smallDeep.seeks },
    large: { runs: l.runs, seeks: largeDeep.seeks },
    cold,
  };
}

/** A full paged pass: every page at `maxTokens`, reconstruction checked against `sha256`. */
function fullPassWorkload(file, maxTokens, sha256) {
  return async (server) => {
    const hash = createHash("sha256");
    const c0 = server.cpuMs();
    const t0 = performance.now();
    let p = page(await server.call("read", { path: file.name, max_tokens: maxTokens }));
    const firstMs = performance.now() - t0;
    const firstCpuMs = server.cpuMs() - c0;
    const firstPeakRss = server.memory().peakRss;
    const firstLines = countNewlines(p.content);
    let pages = 1;
    let responseBytes = 0;
    let maxResponseBytes = 0;
    for (;;) {
      hash.update(p.content, "utf8");
      if (!p.has_more) break;
      const res = await server.call("read", { cursor: p.next_cursor, max_tokens: maxTokens });
      const size = Buffer.byteLength(res.text);
      responseBytes += size;
      if (size > maxResponseBytes) maxResponseBytes = size;
      p = page(res);
      pages++;
    }
    const totalMs = performance.now() - t0;
    const exact = hash.digest("hex") === sha256;
    if (!exact) throw new Error(`full pass of ${file.name} did not reconstruct the file`);
    return {
      firstMs,
      firstCpuMs,
      firstPeakRss,
      firstLines,
      totalMs,
      pages,
      responseBytes,
      maxResponseBytes,
      exact,
    };
  };
}

function countNewlines(text) {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The peer's whole-file read; `viaSdk` tells how to account the response size. */
function peerWholeWorkload(file) {
  return async (server) => {
    const t0 = performance.now();
    const c0 = server.cpuMs();
    const res = await server.call("read_text_file", { path: file.path });
    const totalMs = performance.now() - t0;
    const firstCpuMs = server.cpuMs() - c0;
    if (res.isError) throw new Error(`peer read failed: ${res.text?.slice(0, 300)}`);
    return { firstMs: totalMs, firstCpuMs, totalMs, pages: 1, responseBytes: res.bytes };
  };
}

function peerHeadWorkload(file, lines) {
  return async (server) => {
    const t0 = performance.now();
    const c0 = server.cpuMs();
    const res = await server.call("read_text_file", { path: file.path, head: lines });
    const totalMs = performance.now() - t0;
    const firstCpuMs = server.cpuMs() - c0;
    if (res.isError) throw new Error(`peer head failed: ${res.text?.slice(0, 300)}`);
    return { firstMs: totalMs, firstCpuMs, totalMs, pages: 1, responseBytes: res.bytes };
  };
}

async function benchLargeFile() {
  const big = await ensureDataFile("read-200MiB.txt", 200 * MiB);
  log(`hashing ${big.name} for the reconstruction check`);
  const bigSha = sha256File(big.path);
  // The number of lines in pagewise's first page, so the peer's `head` returns the same text.
  const probe = await startPagewise({ root: DATA_DIR, estimator: ESTIMATOR });
  const firstLines = countNewlines(
    page(await probe.call("read", { path: big.name, max_tokens: LARGE_PAGE })).content,
  );
  await probe.close();

  const runs = await compare(
    [
      {
        name: "pagewise",
        start: () => startPagewise({ root: DATA_DIR, estimator: ESTIMATOR }),
        workload: fullPassWorkload(big, LARGE_PAGE, bigSha),
      },
      {
        name: "peer head",
        start: () => startPeer({ root: DATA_DIR }),
        workload: peerHeadWorkload(big, firstLines),
      },
      {
        name: "peer whole (raw client)",
        start: () => startRawPeer({ root: DATA_DIR }),
        workload: peerWholeWorkload(big),
      },
    ],
    { reps: FULL_REPS, label: "200 MiB" },
  );

  let sdkFailure;
  if (process.env.BENCH_SKIP_SDK_FAILURE !== "1") {
    log("one-off: the peer's 200 MiB answer through the SDK client");
    const server = await startPeer({ root: DATA_DIR });
    const sampler = new RssSampler(server.pid);
    const t0 = performance.now();
    try {
      await server.call("read_text_file", { path: big.path });
      sdkFailure = { ok: true, ms: performance.now() - t0 };
    } catch (err) {
      sdkFailure = { ok: false, ms: performance.now() - t0, error: String(err?.message ?? err) };
    }
    sdkFailure.peakRss = sampler.stop();
    await server.close().catch(() => {});
  }

  const pw = runs.pagewise;
  const head = runs["peer head"];
  const whole = runs["peer whole (raw client)"];
  printTable(
    `3. 200 MiB file (median of ${FULL_REPS} runs)`,
    ["", "pagewise", "peer", "pagewise / peer"],
    [
      [
        `first page: pagewise max_tokens ${LARGE_PAGE} vs peer head ${firstLines} lines (SDK client)`,
        fmtMs(pw.median("firstMs")),
        fmtMs(head.median("firstMs")),
        ratio(pw.median("firstMs"), head.median("firstMs")),
      ],
      [
        "  server CPU time",
        fmtMs(pw.median("firstCpuMs")),
        fmtMs(head.median("firstCpuMs")),
        ratio(pw.median("firstCpuMs"), head.median("firstCpuMs")),
      ],
      [
        "  server peak RSS after it",
        fmtBytes(pw.median("firstPeakRss")),
        fmtBytes(head.median("peakRss")),
        ratio(pw.median("firstPeakRss"), head.median("peakRss")),
      ],
      [
        "whole file: pagewise full paged pass (SDK client) vs peer one call (plain JSON-RPC client)",
        fmtMs(pw.median("totalMs")),
        fmtMs(whole.median("totalMs")),
        ratio(pw.median("totalMs"), whole.median("totalMs")),
      ],
      [
        "  server CPU time",
        fmtMs(pw.median("cpuMs")),
        fmtMs(whole.median("cpuMs")),
        ratio(pw.median("cpuMs"), whole.median("cpuMs")),
      ],
      ["  calls", String(pw.median("pages")), "1", ""],
      [
        "  largest single response",
        fmtBytes(pw.median("maxResponseBytes")),
        fmtBytes(whole.median("responseBytes")),
        ratio(pw.median("maxResponseBytes"), whole.median("responseBytes")),
      ],
      [
        "  bytes on the wire (pagewise: page texts; peer: the JSON-RPC line)",
        fmtBytes(pw.median("responseBytes")),
        fmtBytes(whole.median("responseBytes")),
        ratio(pw.median("responseBytes"), whole.median("responseBytes")),
      ],
      [
        "  server peak RSS",
        fmtBytes(pw.median("peakRss")),
        fmtBytes(whole.median("peakRss")),
        ratio(pw.median("peakRss"), whole.median("peakRss")),
      ],
      [
        "  reconstruction (SHA-256 of the concatenated pages)",
        pw.runs.every((r) => r.exact) ? "exact" : "MISMATCH",
        "—",
        "",
      ],
    ],
  );
  if (sdkFailure) {
    console.log(
      `\nThe peer's whole 200 MiB answer through the SDK client: ${sdkFailure.ok ? "succeeded" : `failed after ${fmtMs(sdkFailure.ms)}: ${sdkFailure.error}`} (largest server RSS sampled: ${fmtBytes(sdkFailure.peakRss)}).`,
    );
  }
  results.large = {
    firstLines,
    pagewise: pw.runs,
    peerHead: head.runs,
    peerWhole: whole.runs,
    sdkFailure,
  };
}

async function benchSdkSized() {
  const mid = await ensureDataFile("read-4MiB.txt", 4 * MiB);
  const sha = sha256File(mid.path);
  const pwStart = () => startPagewise({ root: DATA_DIR, estimator: ESTIMATOR });
  const runs = await compare(
    [
      {
        name: `pagewise ${LARGE_PAGE}`,
        start: pwStart,
        workload: fullPassWorkload(mid, LARGE_PAGE, sha),
      },
      {
        name: "pagewise 100000",
        start: pwStart,
        workload: fullPassWorkload(mid, 100_000, sha),
      },
      {
        name: "peer",
        start: () => startPeer({ root: DATA_DIR }),
        workload: peerWholeWorkload(mid),
      },
    ],
    { reps: REPS, label: "4 MiB" },
  );
  const a = runs[`pagewise ${LARGE_PAGE}`];
  const b = runs["pagewise 100000"];
  const peer = runs.peer;
  const row = (label, field, fmt) => [
    label,
    fmt(a.median(field)),
    fmt(b.median(field)),
    fmt(peer.median(field)),
    ratio(a.median(field), peer.median(field)),
    ratio(b.median(field), peer.median(field)),
  ];
  printTable(
    `3b. 4 MiB file, whole file, everything through the SDK client (median of ${REPS} runs)`,
    [
      "",
      `pagewise, max_tokens ${LARGE_PAGE}`,
      "pagewise, max_tokens 100000",
      "peer read_text_file",
      "pw 8000 / peer",
      "pw 100000 / peer",
    ],
    [
      row("wall time, all calls", "totalMs", fmtMs),
      row("server CPU time, all calls", "cpuMs", fmtMs),
      row("first call", "firstMs", fmtMs),
      row("calls", "pages", String),
      row(
        "bytes returned (pagewise: page texts; peer: content + structuredContent)",
        "responseBytes",
        fmtBytes,
      ),
      row("server peak RSS", "peakRss", fmtBytes),
    ],
  );
  results.sdkSized = { pagewise8000: a.runs, pagewise100000: b.runs, peer: peer.runs };
}

/**
 * Per-page cost as the budget grows, on the 4 MiB file: continuation pages at each budget, through
 * the SDK client and through a plain JSON-RPC client (which shows what the SDK client adds).
 */
async function benchBudgets() {
  const mid = await ensureDataFile("read-4MiB.txt", 4 * MiB);
  const budgets = [2000, 8000, 30000, 100_000];
  const pagesPerRun = 10;
  const workload = (maxTokens) => async (server) => {
    const first = page(await server.call("read", { path: mid.name, max_tokens: maxTokens }));
    const times = [];
    let bytes = 0;
    let p = first;
    const c0 = server.cpuMs();
    for (let i = 0; i < pagesPerRun; i++) {
      const cursor = p.has_more ? p.next_cursor : first.next_cursor;
      const t0 = performance.now();
      const res = await server.call("read", { cursor, max_tokens: maxTokens });
      times.push(performance.now() - t0);
      p = page(res);
      bytes += Buffer.byteLength(p.content);
    }
    const pageCpuMs = (server.cpuMs() - c0) / pagesPerRun;
    return { pageMs: median(times), pageCpuMs, bytesPerPage: bytes / pagesPerRun };
  };
  const subjects = [];
  for (const b of budgets) {
    subjects.push({
      name: `sdk ${b}`,
      start: () => startPagewise({ root: DATA_DIR, estimator: ESTIMATOR }),
      workload: workload(b),
    });
    subjects.push({
      name: `raw ${b}`,
      start: () => startRawPagewise({ root: DATA_DIR, estimator: ESTIMATOR }),
      workload: workload(b),
    });
  }
  const runs = await compare(subjects, { reps: REPS, label: "budgets" });
  printTable(
    `4. Continuation page cost by budget, 4 MiB file (median of ${REPS} runs × ${pagesPerRun} pages)`,
    [
      "max_tokens",
      "content per page",
      "wall, SDK client",
      "wall, plain JSON-RPC client",
      "SDK / plain",
      "server CPU per page",
      "server CPU per MiB of content",
    ],
    budgets.map((b) => {
      const sdk = runs[`sdk ${b}`];
      const raw = runs[`raw ${b}`];
      const bytes = raw.median("bytesPerPage");
      const cpu = median([...sdk.runs, ...raw.runs].map((x) => x.pageCpuMs));
      return [
        String(b),
        fmtBytes(bytes),
        fmtMs(sdk.median("pageMs")),
        fmtMs(raw.median("pageMs")),
        ratio(sdk.median("pageMs"), raw.median("pageMs")),
        fmtMs(cpu),
        fmtMs((cpu * MiB) / bytes),
      ];
    }),
  );
  results.budgets = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.runs]));
}

async function main() {
  const m = results.machine;
  console.log(
    `\n## read — ${m.cpus} CPUs (${m.cpuModel}), ${fmtBytes(m.memory)} RAM, Node ${m.node}, estimator ${ESTIMATOR}, server ${path.relative(process.cwd(), PAGEWISE_BIN) || PAGEWISE_BIN}`,
  );
  const loadStart = os.loadavg();
  const key = keyFile();
  const started = performance.now();
  const only = process.env.BENCH_ONLY?.split(",") ?? ["deep", "large", "sdk", "budgets"];
  if (only.includes("deep")) await benchDeepPaging(key);
  if (only.includes("large")) await benchLargeFile();
  if (only.includes("sdk")) await benchSdkSized();
  if (only.includes("budgets")) await benchBudgets();
  results.loadAverage = { start: loadStart, end: os.loadavg() };
  console.log(
    `\nLoad average (1/5/15 min) at the start: ${loadStart.map((x) => x.toFixed(1)).join(" ")}; at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} (on ${m.cpus} CPUs).`,
  );
  results.totalMs = performance.now() - started;
  const out = path.join(DATA_DIR, "read-results.json");
  writeFileSync(out, JSON.stringify(results, null, 2));
  console.log(`\nread benchmarks took ${fmtMs(results.totalMs)}; raw results in ${out}`);
}

await main();
