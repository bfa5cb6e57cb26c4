#!/usr/bin/env node
/**
 * tail benchmark. Run after `npm run build`:
 *
 *   node bench/tail.bench.js [--size-mib 1024] [--dir /tmp/pagewise-bench-tail]
 *
 * 1. Newest page of a 1 GiB log (in-process, warm) versus `tail -n 50` (a process per call), and the
 *    `pagewise tail` command versus `tail -n 50` (both a process per call).
 * 2. A `before` page deep in the file (about 1 GiB from the end) versus one near the end: the
 *    ratio must be about 1 (flat), since a page reads only the blocks of its own records.
 * Prints medians in milliseconds and the ratios.
 */
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { Roots } from "../dist/access/index.js";
import {
  CursorCodec,
  defaultEstimator,
  ephemeralCursorKey,
  FileVersions,
} from "../dist/core/index.js";
import { tailPage } from "../dist/sources/index.js";

const { values } = parseArgs({
  options: {
    "size-mib": { type: "string", default: "1024" },
    dir: { type: "string", default: "/tmp/pagewise-bench-tail" },
    runs: { type: "string", default: "41" },
  },
});
const sizeBytes = Number(values["size-mib"]) * 1024 * 1024;
const runs = Number(values.runs);
const dir = values.dir;
const file = path.join(dir, "app.log");
const BIN = new URL("../bin/pagewise.js", import.meta.url).pathname;

function makeLog() {
  mkdirSync(dir, { recursive: true });
  if (existsSync(file) && statSync(file).size === sizeBytes) return;
  const fd = openSync(file, "w");
  let written = 0;
  let n = 0;
  const levels = ["INFO", "DEBUG", "WARN", "ERROR"];
  while (written < sizeBytes) {
    const lines = [];
    let chunk = 0;
    while (chunk < 4 * 1024 * 1024) {
      const line = `2026-11-02T12:${String(n % 60).padStart(2, "0")}:${String(n % 59).padStart(2, "0")}.${String(n % 1000).padStart(3, "0")}Z ${levels[n % 4]} worker-${n % 17} request ${n} handled in ${n % 997}ms\n`;
      lines.push(line);
      chunk += line.length;
      n++;
    }
    let buf = Buffer.from(lines.join(""));
    if (written + buf.length > sizeBytes) {
      buf = buf.subarray(0, sizeBytes - written);
      buf[buf.length - 1] = 0x0a;
    }
    writeSync(fd, buf);
    written += buf.length;
  }
  closeSync(fd);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn, n = runs) {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return median(out);
}

const t0 = performance.now();
makeLog();
process.stdout.write(
  `log: ${file}, ${(statSync(file).size / 2 ** 30).toFixed(2)} GiB (ready in ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
);

const ctx = {
  caller: { identity: "bench", roots: new Roots([dir]) },
  codec: new CursorCodec({ key: ephemeralCursorKey() }),
  estimator: defaultEstimator,
  versions: new FileVersions(),
};
const base = { limit: 50, maxCharsPerItem: 2000, maxTokens: 8000 };
const tail = async (req) => JSON.parse(await tailPage(ctx, { ...base, ...req }));

// Count the bytes a page reads from the file (deterministic, unlike timings on a busy machine).
let bytesRead = 0;
{
  const probe = await open(file);
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const read = proto.read;
  proto.read = async function (...args) {
    const result = await read.apply(this, args);
    bytesRead += result.bytesRead;
    return result;
  };
}
async function bytesOf(fn) {
  bytesRead = 0;
  await fn();
  return bytesRead;
}

/** Medians of two measurements taken alternately, so load changes hit both alike. */
async function timePair(a, b, n = runs) {
  for (let i = 0; i < 3; i++) {
    await a();
    await b();
  }
  const ta = [];
  const tb = [];
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await a();
    ta.push(performance.now() - t);
    t = performance.now();
    await b();
    tb.push(performance.now() - t);
  }
  return [median(ta), median(tb)];
}

// 1. Newest page versus tail -n 50.
const [newest, tailN] = await timePair(
  () => tail({ path: "app.log" }),
  () => execFileSync("tail", ["-n", "50", file]),
);
const newestBytes = await bytesOf(() => tail({ path: "app.log" }));
const cli = await time(
  () => execFileSync(process.execPath, [BIN, "tail", "app.log", "--root", dir]),
  11,
);
const nodeStart = await time(() => execFileSync(process.execPath, ["-e", "0"]), 11);

// 2. before deep versus near the end.
const first = await tail({ path: "app.log" });
const nearCursor = first.earlier_cursor;
const start = await tail({ path: "app.log", fromStart: true, limit: 1000, maxTokens: 100_000 });
const afterStart = await tail({ after: start.later_cursor });
const deepCursor = afterStart.earlier_cursor;
const deepPage = await tail({ before: deepCursor });
const nearPage = await tail({ before: nearCursor });
const [near, deep] = await timePair(
  () => tail({ before: nearCursor }),
  () => tail({ before: deepCursor }),
);
const nearBytes = await bytesOf(() => tail({ before: nearCursor }));
const deepBytes = await bytesOf(() => tail({ before: deepCursor }));
const fromEnd = (p) => ((statSync(file).size - p.items[0].position) / 2 ** 20).toFixed(1);

const rows = [
  [`newest page, in-process (warm), 50 records, ${newestBytes} bytes read`, newest],
  ["tail -n 50 (one process per call)", tailN],
  ["pagewise tail FILE (one process per call)", cli],
  ["node -e 0 (process start alone)", nodeStart],
  [
    `before page near the end (${fromEnd(nearPage)} MiB from the end), ${nearBytes} bytes read`,
    near,
  ],
  [`before page deep (${fromEnd(deepPage)} MiB from the end), ${deepBytes} bytes read`, deep],
];
for (const [name, ms] of rows) process.stdout.write(`${name.padEnd(78)} ${ms.toFixed(3)} ms\n`);
process.stdout.write(
  `ratio newest page (in-process) / tail -n 50:      ${(newest / tailN).toFixed(2)}\n`,
);
process.stdout.write(
  `ratio pagewise tail command / tail -n 50:         ${(cli / tailN).toFixed(2)}\n`,
);
process.stdout.write(
  `ratio (pagewise tail command - node start) / tail -n 50: ${((cli - nodeStart) / tailN).toFixed(2)}\n`,
);
process.stdout.write(
  `ratio before deep / before near end (flat = 1):   ${(deep / near).toFixed(2)}\n`,
);
process.stdout.write(
  `ratio bytes read, before deep / before near end:  ${(deepBytes / nearBytes).toFixed(2)}\n`,
);
process.stdout.write(
  `cursor lengths: earlier ${first.earlier_cursor.length}, later ${first.later_cursor.length} characters\n`,
);
