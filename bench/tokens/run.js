/**
 * @module
 * `npm run bench:tokens`: how well each estimator keeps real pages within their budget.
 *
 * Writes one sample of every corpus kind (bench/tokens/corpus.js) into a temporary directory,
 * starts the real server over stdio (`node bin/pagewise.js serve --root DIR --estimator NAME`),
 * pages every file with the `read` tool at several budgets, following `next_cursor` to the end,
 * and counts each returned text block (the exact JSON page the model sees) with three reference
 * tokenizers: o200k and cl100k (gpt-tokenizer) and the public Claude tokenizer
 * (@anthropic-ai/tokenizer, a legacy one: current Claude models' tokenizers are not public). Prints a
 * table and rewrites the results section of docs/tokens.md.
 *
 * Then, for the first estimator, every layout of every kind (corpus.js VARIANTS: LF and CRLF line
 * ends, code indented with 2 spaces, 4 spaces or tabs, JSON minified or pretty-printed with each,
 * prose as paragraphs or hard-wrapped), each shown both ways a model sees text (bench/tokens/pages.js):
 * escaped in a JSON page (`read` in page mode, through the server) and raw (`read` in line mode:
 * the most whole lines whose estimate fits the budget). A table per kind, layout and presentation
 * goes into the same section.
 *
 * Options:
 *   --estimators default,openviking   estimators to run (the first is the one the doc is about)
 *   --budgets 300,2000,8000,25000     max_tokens values
 *   --chars 120000                    approximate size of each kind's sample, in UTF-16 units
 *   --seed 20260                      corpus seed (the estimator was tuned on other seeds)
 *   --kinds a,b                       only these kinds
 *   --simulate                        no server: fit pages in-process (same rule, fake envelope)
 *   --layout-chars 30000              approximate size of each layout's sample
 *   --no-layouts                      skip the layouts
 *   --no-speed                        skip the speed measurement
 *   --no-write                        print only; leave docs/tokens.md alone
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { createEstimator } from "../../dist/core/estimate/index.js";
import { countClaude } from "./claude.js";
import { COMMON_KINDS, KINDS, VARIANTS } from "./corpus.js";
import { escapedPages, rawPages, startServer } from "./pages.js";
import { measureSpeeds, speedTable } from "./speed.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const DOC = join(ROOT, "docs/tokens.md");
const PLAIN = { disallowedSpecial: new Set() };
const MARK_START = "<!-- bench:tokens results start -->";
const MARK_END = "<!-- bench:tokens results end -->";

function parseArgs(argv) {
  const opts = {
    estimators: ["default", "openviking"],
    budgets: [300, 2000, 8000, 25_000],
    chars: 120_000,
    seed: 20260,
    kinds: null,
    simulate: false,
    layouts: true,
    layoutChars: 30_000,
    speed: true,
    write: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === "--estimators") opts.estimators = next().split(",");
    else if (a === "--budgets") opts.budgets = next().split(",").map(Number);
    else if (a === "--chars") opts.chars = Number(next());
    else if (a === "--seed") opts.seed = Number(next());
    else if (a === "--kinds") opts.kinds = new Set(next().split(","));
    else if (a === "--simulate") opts.simulate = true;
    else if (a === "--layout-chars") opts.layoutChars = Number(next());
    else if (a === "--no-layouts") opts.layouts = false;
    else if (a === "--no-speed") opts.speed = false;
    else if (a === "--no-write") opts.write = false;
    else throw new Error(`unknown option ${a}`);
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Paging

/** In-process stand-in for the server: the longest code-point prefix whose page fits. */
function pageSimulated(estimator, kindName, text, maxTokens, seed) {
  const { pages, render } = escapedPages(
    (page) => estimator.count(page),
    kindName,
    text,
    maxTokens,
    seed,
  );
  return pages.map(([start, end, n]) => render(start, end, n));
}

// ---------------------------------------------------------------------------------------------
// Statistics

function max(values) {
  let m = Number.NEGATIVE_INFINITY;
  for (const v of values) if (v > m) m = v;
  return m;
}

function median(values) {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Adds `pages` (escaped: JSON pages; raw: the text itself) at `maxTokens` to `stats`. */
function measurePages(estimator, pages, maxTokens, stats, raw = false) {
  for (const text of pages) {
    const o200k = countO200k(text, PLAIN);
    const cl100k = countCl100k(text, PLAIN);
    const claude = countClaude(text);
    const estimate = estimator.count(text);
    const page = raw ? { content: text, has_more: true } : JSON.parse(text);
    stats.pages++;
    if (o200k > maxTokens) stats.overO200k++;
    if (cl100k > maxTokens) stats.overCl100k++;
    if (claude > maxTokens) stats.overClaude++;
    if (estimate > maxTokens) stats.overOwn++;
    stats.usedO200k.push(o200k / maxTokens);
    stats.usedCl100k.push(cl100k / maxTokens);
    stats.usedClaude.push(claude / maxTokens);
    stats.ratioO200k.push(o200k / estimate);
    stats.ratioCl100k.push(cl100k / estimate);
    stats.ratioClaude.push(claude / estimate);
    stats.waste.push(estimate / o200k);
    stats.wasteCl100k.push(estimate / cl100k);
    stats.wasteClaude.push(estimate / claude);
    if (page.has_more) stats.fill.push(estimate / maxTokens);
    stats.content += page.content;
  }
}

function newStats() {
  return {
    pages: 0,
    overO200k: 0,
    overCl100k: 0,
    overClaude: 0,
    overOwn: 0,
    usedO200k: [],
    usedCl100k: [],
    usedClaude: [],
    ratioO200k: [],
    ratioCl100k: [],
    ratioClaude: [],
    waste: [],
    wasteCl100k: [],
    wasteClaude: [],
    fill: [],
    content: "",
  };
}

function addStats(into, stats) {
  for (const key of Object.keys(into)) {
    // Perf: concat, not push(...x): a spread of 100k+ values overflows the call stack.
    if (Array.isArray(into[key])) into[key] = into[key].concat(stats[key]);
    else if (typeof into[key] === "number") into[key] += stats[key];
  }
}

function summarize(stats) {
  return {
    pages: stats.pages,
    overO200k: stats.overO200k,
    overCl100k: stats.overCl100k,
    overClaude: stats.overClaude,
    overOwn: stats.overOwn,
    usedO200kMedian: median(stats.usedO200k),
    usedO200kMax: max(stats.usedO200k),
    usedCl100kMedian: median(stats.usedCl100k),
    usedCl100kMax: max(stats.usedCl100k),
    usedClaudeMedian: median(stats.usedClaude),
    usedClaudeMax: max(stats.usedClaude),
    worstO200k: max(stats.ratioO200k),
    worstCl100k: max(stats.ratioCl100k),
    worstClaude: max(stats.ratioClaude),
    ratioO200kMedian: median(stats.ratioO200k),
    ratioCl100kMedian: median(stats.ratioCl100k),
    ratioClaudeMedian: median(stats.ratioClaude),
    wasteMedian: median(stats.waste),
    wasteCl100kMedian: median(stats.wasteCl100k),
    wasteClaudeMedian: median(stats.wasteClaude),
    fillMedian: median(stats.fill),
  };
}

// ---------------------------------------------------------------------------------------------
// One estimator over every kind

async function runEstimator(name, kinds, samples, dir, opts) {
  const estimator = await createEstimator(name);
  const server = opts.simulate ? undefined : await startServer(dir, name);
  const rows = [];
  const all = newStats();
  const common = newStats();
  try {
    for (const kind of kinds) {
      const stats = newStats();
      for (const budget of opts.budgets) {
        const pages = opts.simulate
          ? pageSimulated(estimator, kind.name, samples.get(kind.name), budget, opts.seed)
          : await server.pageFile(`${kind.name}.txt`, budget);
        stats.content = "";
        measurePages(estimator, pages, budget, stats);
        if (stats.content !== samples.get(kind.name)) {
          throw new Error(
            `${name}: pages of ${kind.name} @${budget} do not concatenate to the file`,
          );
        }
      }
      addStats(all, stats);
      if (COMMON_KINDS.includes(kind.name)) addStats(common, stats);
      const row = { kind: kind.name, heldOut: kind.heldOut, ...summarize(stats) };
      rows.push(row);
      process.stderr.write(
        `${name.padEnd(10)} ${kind.name.padEnd(24)} pages ${String(row.pages).padStart(5)}  over ${row.overO200k}/${row.overCl100k}/${row.overClaude}  worst ${f2(row.worstO200k)}/${f2(row.worstCl100k)}/${f2(row.worstClaude)}  waste ${f2(row.wasteMedian)}/${f2(row.wasteCl100kMedian)}/${f2(row.wasteClaudeMedian)}\n`,
      );
    }
  } finally {
    await server?.close();
  }
  return { name, rows, total: summarize(all), common: summarize(common) };
}

/**
 * The first estimator over every layout of every kind (VARIANTS), escaped (pages of the server,
 * or simulated) and raw (line-mode windows): a row per variant and presentation, and summaries.
 */
async function runLayouts(name, variants, samples, dir, opts) {
  const estimator = await createEstimator(name);
  const count = (text) => estimator.count(text);
  const server = opts.simulate ? undefined : await startServer(dir, name);
  const rows = [];
  const groups = new Map();
  const addTo = (key, stats) => {
    if (!groups.has(key)) groups.set(key, newStats());
    addStats(groups.get(key), stats);
  };
  try {
    for (const variant of variants) {
      const text = samples.get(variant.name);
      for (const presentation of ["escaped", "raw"]) {
        const stats = newStats();
        for (const budget of opts.budgets) {
          const raw = presentation === "raw";
          const pages = raw
            ? rawPages(count, text, budget).map(([start, end]) => text.slice(start, end))
            : opts.simulate
              ? pageSimulated(estimator, variant.kind, text, budget, opts.seed)
              : await server.pageFile(`layouts/${variant.name}.txt`, budget);
          stats.content = "";
          measurePages(estimator, pages, budget, stats, raw);
          if (stats.content !== text) {
            throw new Error(
              `${name}: ${presentation} pages of ${variant.name} @${budget} lose text`,
            );
          }
        }
        const row = { variant, presentation, ...summarize(stats) };
        rows.push(row);
        addTo(`${presentation}|all`, stats);
        if (variant.common) addTo(`${presentation}|common`, stats);
        addTo(`${presentation}|form ${variant.form}`, stats);
        addTo(`${presentation}|line ends ${variant.lineEnds}`, stats);
        process.stderr.write(
          `layouts ${variant.name.padEnd(42)} ${presentation.padEnd(7)} pages ${String(row.pages).padStart(5)}  over ${row.overO200k}/${row.overCl100k}/${row.overClaude}  worst ${f2(row.worstO200k)}/${f2(row.worstCl100k)}/${f2(row.worstClaude)}  waste ${f2(row.wasteMedian)}\n`,
        );
      }
    }
  } finally {
    await server?.close();
  }
  const summaries = [...groups].map(([key, stats]) => {
    const [presentation, label] = key.split("|");
    return { presentation, label, ...summarize(stats) };
  });
  return { name, rows, summaries };
}

// ---------------------------------------------------------------------------------------------
// Rendering

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : "–");

function table(result) {
  const lines = [
    "| kind | pages | over budget (o200k / cl100k / Claude) | worst real / estimate (o200k / cl100k / Claude) | budget used, max (o200k / cl100k / Claude) | waste, median (o200k / cl100k / Claude) | page fill (median) |",
    "|---|--:|--:|--:|--:|--:|--:|",
  ];
  const row = (r, label) =>
    `| ${label} | ${r.pages} | ${r.overO200k} / ${r.overCl100k} / ${r.overClaude} | ${f2(r.worstO200k)} / ${f2(r.worstCl100k)} / ${f2(r.worstClaude)} | ${f2(r.usedO200kMax)} / ${f2(r.usedCl100kMax)} / ${f2(r.usedClaudeMax)} | ${f2(r.wasteMedian)} / ${f2(r.wasteCl100kMedian)} / ${f2(r.wasteClaudeMedian)} | ${f2(r.fillMedian)} |`;
  for (const r of result.rows.filter((x) => !x.heldOut)) lines.push(row(r, r.kind));
  const held = result.rows.filter((x) => x.heldOut);
  if (held.length > 0) {
    lines.push(`| **held out (never used for tuning):** | | | | | | |`);
    for (const r of held) lines.push(row(r, `${r.kind} *(held out)*`));
  }
  lines.push(row(result.common, "**common kinds** (code, JSON, logs, English prose)"));
  lines.push(row(result.total, "**all pages**"));
  return lines.join("\n");
}

const SHOWN_AS = { escaped: "escaped (page)", raw: "raw (lines)" };
const triple = (a, b, c) => `${f2(a)} / ${f2(b)} / ${f2(c)}`;

/** The table of every kind × layout × presentation, then the summaries. */
function layoutsTable(result) {
  const lines = [
    "| kind | layout | shown | pages | over budget (o200k / cl100k / Claude) | real / estimate, median (o200k / cl100k / Claude) | real / estimate, max (o200k / cl100k / Claude) | waste, median (vs o200k) |",
    "|---|---|---|--:|--:|--:|--:|--:|",
  ];
  const row = (r, kind, layout) =>
    `| ${kind} | ${layout} | ${SHOWN_AS[r.presentation]} | ${r.pages} | ${r.overO200k} / ${r.overCl100k} / ${r.overClaude} | ${triple(r.ratioO200kMedian, r.ratioCl100kMedian, r.ratioClaudeMedian)} | ${triple(r.worstO200k, r.worstCl100k, r.worstClaude)} | ${f2(r.wasteMedian)} |`;
  for (const r of result.rows) {
    const { variant } = r;
    const kind = `${variant.kind}${variant.common ? " *(common)*" : ""}${variant.heldOut ? " *(held out)*" : ""}`;
    lines.push(row(r, kind, variant.layout));
  }
  const order = (s) => (s.label === "all" ? 0 : s.label === "common" ? 1 : 2);
  const summaries = [...result.summaries].sort(
    (a, b) =>
      order(a) - order(b) ||
      a.label.localeCompare(b.label) ||
      a.presentation.localeCompare(b.presentation),
  );
  for (const s of summaries) {
    const label =
      s.label === "all"
        ? "**all kinds**"
        : s.label === "common"
          ? "**common kinds**"
          : `**all kinds, ${s.label}**`;
    lines.push(row(s, label, "all"));
  }
  return lines.join("\n");
}

function renderResults(results, opts, speeds, layouts) {
  const when = new Date().toISOString().slice(0, 10);
  const mode = opts.simulate
    ? "in-process simulation (pages fitted by the bench itself, fake envelope)"
    : "the real server over stdio (`node bin/pagewise.js serve --root DIR --estimator NAME`, SDK client, tool `read`)";
  const parts = [
    MARK_START,
    "",
    `Generated by \`npm run bench:tokens\` on ${when}: ${mode}; corpus seed ${opts.seed}, about ${opts.chars} UTF-16 units per kind, budgets ${opts.budgets.join(", ")} tokens, every page of every file (${results[0].total.pages} pages for \`${results[0].name}\`). Reference tokenizers: o200k and cl100k (gpt-tokenizer 4.0.0) and the public Claude tokenizer (@anthropic-ai/tokenizer 0.0.4, NFKC-normalized as that package counts; a legacy tokenizer, used as a proxy for current Claude models). "Worst real / estimate" is the largest ratio of a page's real count to its estimate (above 1.00: the estimate was too low); "budget used" is real tokens / \`max_tokens\`; "waste" is the estimate / real tokens; "page fill" is the estimate / \`max_tokens\` over pages that are not the last one. Common kinds: ${COMMON_KINDS.join(", ")}.`,
    "",
  ];
  for (const result of results) {
    parts.push(`### \`--estimator ${result.name}\``, "", table(result), "");
  }
  if (layouts) {
    parts.push(
      `### \`--estimator ${layouts.name}\` by layout`,
      "",
      `Every kind in each layout files of its kind come in (${layouts.rows.length / 2} kinds × layouts, about ${opts.layoutChars} UTF-16 units each, corpus seed ${opts.seed}, the same budgets), shown both ways: escaped in a JSON page (\`read\` in page mode through the server; \`search\`, \`tail\` and \`json_read\` escape their text the same way) and raw (\`read\` in line mode: the most whole lines whose estimate fits the budget, a longer line cut at code points). Layouts: code indented with 2 spaces, 4 spaces or tabs; JSON minified or pretty-printed with each; prose as paragraphs or hard-wrapped at 72–80 columns; each with LF and CRLF line ends. "Real / estimate" is a page's real count over its estimate (above 1.00: over budget); "waste" is the estimate / o200k.`,
      "",
      layoutsTable(layouts),
      "",
    );
  }
  if (speeds) parts.push("### Speed", "", speedTable(speeds), "");
  parts.push(MARK_END);
  return parts.join("\n");
}

function writeDoc(results, opts, speeds, layouts) {
  const section = renderResults(results, opts, speeds, layouts);
  let doc;
  try {
    doc = readFileSync(DOC, "utf8");
  } catch {
    doc = `# Token estimation\n\n## Results\n\n${MARK_START}\n${MARK_END}\n`;
  }
  const a = doc.indexOf(MARK_START);
  const b = doc.indexOf(MARK_END);
  const next =
    a >= 0 && b > a
      ? doc.slice(0, a) + section + doc.slice(b + MARK_END.length)
      : `${doc.trimEnd()}\n\n## Results\n\n${section}\n`;
  writeFileSync(DOC, next);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const kinds = KINDS.filter((k) => !opts.kinds || opts.kinds.has(k.name));
  const dir = mkdtempSync(join(tmpdir(), "pagewise-bench-tokens-"));
  const samples = new Map();
  try {
    for (const kind of kinds) {
      const text = kind.generate(opts.seed, opts.chars);
      samples.set(kind.name, text);
      writeFileSync(join(dir, `${kind.name}.txt`), text);
    }
    const results = [];
    for (const name of opts.estimators) {
      results.push(await runEstimator(name, kinds, samples, dir, opts));
    }
    let layouts = null;
    if (opts.layouts) {
      const variants = VARIANTS.filter((v) => !opts.kinds || opts.kinds.has(v.kind));
      mkdirSync(join(dir, "layouts"));
      const layoutSamples = new Map();
      for (const variant of variants) {
        const text = variant.generate(opts.seed, opts.layoutChars);
        layoutSamples.set(variant.name, text);
        writeFileSync(join(dir, "layouts", `${variant.name}.txt`), text);
      }
      layouts = await runLayouts(opts.estimators[0], variants, layoutSamples, dir, opts);
    }
    const speeds = opts.speed ? await measureSpeeds() : null;
    const out = renderResults(results, opts, speeds, layouts);
    process.stdout.write(`${out}\n`);
    if (opts.write) {
      writeDoc(results, opts, speeds, layouts);
      process.stderr.write(`wrote ${DOC}\n`);
    }
    const first = results[0].total;
    const overLayouts = (layouts?.rows ?? []).reduce(
      (n, r) => n + r.overO200k + r.overCl100k + r.overClaude,
      0,
    );
    if (first.overO200k + first.overCl100k + first.overClaude + overLayouts > 0)
      process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
