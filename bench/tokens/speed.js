/**
 * @module
 * Speed of each estimator, in MB/s of UTF-8 text counted (and millions of UTF-16 units per second).
 *
 * `npm run build --silent && node bench/tokens/speed.js` prints a table; bench/tokens/run.js calls
 * `measureSpeeds` to put the same table into docs/tokens.md.
 *
 * `node bench/tokens/speed.js --per-kind [--json FILE] [--compare FILE]` times the `default`
 * estimator on a JSON page of every corpus kind; `--json` saves the rates, `--compare` prints them
 * beside rates saved earlier (for a before/after table).
 */

import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { createEstimator } from "../../dist/core/estimate/index.js";
import { KINDS } from "./corpus.js";

const SAMPLES = [
  ["ASCII (English prose, raw)", "english-prose", false, 1 << 20],
  ["JSON page of minified JSON", "json-minified", true, 1 << 20],
  ["JSON page of TypeScript", "typescript", true, 1 << 20],
  ["JSON page of Chinese", "chinese", true, 1 << 19],
];

function sample(kindName, asPage, chars) {
  const text = KINDS.find((k) => k.name === kindName).generate(7, chars);
  return asPage
    ? JSON.stringify({ uri: "file:///x", content: text, version: "v", has_more: false })
    : text;
}

/**
 * Counts per second of `count(text)`: the best of many timed calls over about `ms` milliseconds,
 * after a warm-up. The best call is the one least disturbed by other work on a shared machine.
 */
function rate(count, text, ms) {
  let sink = 0;
  for (let i = 0; i < 5; i++) sink += count(text); // warm-up: let the JIT settle
  const end = process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
  let best = Number.POSITIVE_INFINITY;
  do {
    const start = process.hrtime.bigint();
    sink += count(text);
    best = Math.min(best, Number(process.hrtime.bigint() - start));
  } while (process.hrtime.bigint() < end);
  if (sink < 0) throw new Error("unreachable");
  return 1e9 / best;
}

/** Measures every estimator on every sample. */
export async function measureSpeeds({ names = ["default", "openviking", "o200k", "cl100k"] } = {}) {
  const texts = SAMPLES.map(([label, kind, asPage, chars]) => ({
    label,
    text: sample(kind, asPage, chars),
  }));
  const rows = [];
  for (const name of names) {
    const estimator = await createEstimator(name);
    const exact = name === "o200k" || name === "cl100k";
    for (const { label, text } of texts) {
      // Perf: the tokenizers run at a few MB/s; a 64 KiB slice is plenty to time them.
      const t = exact ? text.slice(0, 1 << 16) : text;
      const perSecond = rate((s) => estimator.count(s), t, exact ? 1500 : 1000);
      rows.push({
        estimator: name,
        sample: label,
        mbPerSecond: (Buffer.byteLength(t) * perSecond) / 1e6,
        unitsPerSecond: (t.length * perSecond) / 1e6,
      });
    }
  }
  return {
    rows,
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    load: loadavg()[0],
  };
}

/** The speed table in Markdown. */
export function speedTable(speeds) {
  const samples = [...new Set(speeds.rows.map((r) => r.sample))];
  const names = [...new Set(speeds.rows.map((r) => r.estimator))];
  const lines = [
    `| estimator | ${samples.join(" | ")} |`,
    `|---|${samples.map(() => "--:").join("|")}|`,
  ];
  for (const name of names) {
    const cells = samples.map((s) => {
      const r = speeds.rows.find((x) => x.estimator === name && x.sample === s);
      return `${r.mbPerSecond.toFixed(r.mbPerSecond < 10 ? 1 : 0)} MB/s (${r.unitsPerSecond.toFixed(r.unitsPerSecond < 10 ? 1 : 0)} M units/s)`;
    });
    lines.push(`| \`${name}\` | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    `Best of many timed calls after a warm-up; Node ${speeds.node}, ${speeds.cpu}, ${speeds.cores} cores, load average ${speeds.load.toFixed(1)} while measuring (on a busy machine every number is lower).`,
  );
  return lines.join("\n");
}

/** MB/s of `estimatorName` on a 256 KiB JSON page of every corpus kind, best of many calls. */
export async function measurePerKind(estimatorName = "default", ms = 700) {
  const estimator = await createEstimator(estimatorName);
  const texts = KINDS.map((kind) => sample(kind.name, true, 1 << 18));
  // Warm-up on every kind first: a path of the loop that the first kinds never took would
  // otherwise deoptimize it in the middle of a later kind's timing, and the order of the kinds,
  // not the estimator, would decide which rows come out slow.
  for (let round = 0; round < 3; round++) for (const text of texts) estimator.count(text);
  const rows = [];
  for (const [i, kind] of KINDS.entries()) {
    const text = texts[i];
    const perSecond = rate((s) => estimator.count(s), text, ms);
    rows.push({ kind: kind.name, mbPerSecond: (Buffer.byteLength(text) * perSecond) / 1e6 });
  }
  return { estimator: estimatorName, rows, node: process.version, load: loadavg()[0] };
}

function perKindTable(now, before) {
  const lines = before
    ? ["| kind | before MB/s | after MB/s | after / before |", "|---|--:|--:|--:|"]
    : ["| kind | MB/s |", "|---|--:|"];
  for (const r of now.rows) {
    const b = before?.rows.find((x) => x.kind === r.kind);
    lines.push(
      b
        ? `| ${r.kind} | ${b.mbPerSecond.toFixed(0)} | ${r.mbPerSecond.toFixed(0)} | ${(r.mbPerSecond / b.mbPerSecond).toFixed(2)} |`
        : `| ${r.kind} | ${r.mbPerSecond.toFixed(0)} |`,
    );
  }
  const loads = before ? `${before.load.toFixed(1)} / ${now.load.toFixed(1)}` : now.load.toFixed(1);
  lines.push(
    "",
    `\`${now.estimator}\`, JSON page of each kind (256 KiB of content); Node ${now.node}; load average ${loads}.`,
  );
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes("--per-kind")) {
    const now = await measurePerKind();
    const save = option("--json");
    if (save) writeFileSync(save, JSON.stringify(now, null, 1));
    const compare = option("--compare");
    const before = compare ? JSON.parse(readFileSync(compare, "utf8")) : undefined;
    process.stdout.write(`${perKindTable(now, before)}\n`);
  } else {
    const speeds = await measureSpeeds();
    process.stdout.write(`${speedTable(speeds)}\n`);
  }
}
