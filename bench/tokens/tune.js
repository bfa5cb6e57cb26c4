/**
 * @module
 * Tuning aid for the `default` estimator's constants: how candidate constants would do, per kind,
 * on fixed pages of training seeds, without the server and without rebuilding.
 *
 * It cuts each kind's sample (corpus seeds 1001 and 2002 by default: the training seeds, never the
 * benchmark's 20260) into JSON pages at the bench's budgets with the built estimator, counts every
 * page once with o200k, cl100k and the Claude tokenizer (cached in the system's temporary folder),
 * and then scores the built estimator, or a variant of it with some constants replaced, on those
 * same pages: the worst real / estimate per tokenizer, the smallest margin (estimate /
 * max(o200k, cl100k, Claude)) and the median waste (estimate / o200k), per kind and over the common
 * kinds. A variant is the built dist/core/estimate/default.js with its constants rewritten as text,
 * so nothing in src/ changes until a variant is chosen.
 *
 *   node bench/tokens/tune.js                                   # the built estimator
 *   node bench/tokens/tune.js --set CHAR_COST.PUNCT=480,CASE_CHANGE_COST=800
 *   node bench/tokens/tune.js --features CHAR_COST.PUNCT,PIECE_COST.G_BS --json features.json
 *
 * Options:
 *   --seeds 1001,2002      corpus seeds of the pages
 *   --kinds a,b            only these kinds (default: every kind; held-out kinds are reported apart)
 *   --budgets 300,2000,8000,25000
 *   --chars 120000         approximate size of each kind's sample
 *   --set NAME=V,…         a variant: NAME is a scalar constant (CASE_CHANGE_COST), an array entry by
 *                          class or group name (CHAR_COST.PUNCT, PIECE_COST.G_BS, LONG_COST.G_LATIN),
 *                          an entry by index (LETTER_RARITY_COST.2) or a piece pair
 *                          (PIECE_AFTER.G_ESC>G_BS) or an entry by group (PUNCT_ESCAPE_AFTER.G_PUNCT)
 *   --features A,B,…       also write, per page, the real counts and the estimate's raw cost and its
 *                          derivative in each named constant (for a linear fit) to --json FILE
 *   --json FILE            where --features writes
 *   --server               cut the pages with the real server (`read`, as bench/tokens/run.js does)
 *                          instead of in-process with a made-up envelope: slower, but the envelope
 *                          (version, position, cursor) is the one the model sees
 *   --layouts all|native|REGEX  which layouts of each kind (corpus.js VARIANTS): only the native
 *                          one (the default), all, or those whose variant name matches REGEX
 *   --presentations escaped,raw  JSON pages (escaped content) and/or raw text (line-mode windows)
 *   --adversarial          also score (and, with --features, write as kind "adversarial") the runs
 *                          of adversarial.js, each as a JSON page
 *
 * The variant's pages are the ones cut by the built estimator: a cheaper variant would cut slightly
 * longer pages, which changes the ratios by less than the rounding of one token.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { claudeSamplePages, runPages } from "./adversarial.js";
import { countClaude } from "./claude.js";
import { fakeEnvelope, VARIANTS } from "./corpus.js";
import { escapedPages, rawPages, startServer } from "./pages.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const BUILT = resolve(HERE, "../../dist/core/estimate/default.js");
const CACHE = join(tmpdir(), "pagewise-tune-cache");
const PLAIN = { disallowedSpecial: new Set() };

function parseArgs(argv) {
  const opts = {
    seeds: [1001, 2002],
    kinds: null,
    budgets: [300, 2000, 8000, 25_000],
    chars: 120_000,
    set: {},
    features: [],
    json: null,
    server: false,
    layouts: "native",
    presentations: ["escaped"],
    adversarial: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === "--seeds") opts.seeds = next().split(",").map(Number);
    else if (a === "--kinds") opts.kinds = new Set(next().split(","));
    else if (a === "--budgets") opts.budgets = next().split(",").map(Number);
    else if (a === "--chars") opts.chars = Number(next());
    else if (a === "--set") opts.set = parseSet(next());
    else if (a === "--features") opts.features = next().split(",");
    else if (a === "--json") opts.json = next();
    else if (a === "--server") opts.server = true;
    else if (a === "--layouts") opts.layouts = next();
    else if (a === "--presentations") opts.presentations = next().split(",");
    else if (a === "--adversarial") opts.adversarial = true;
    else throw new Error(`unknown option ${a}`);
  }
  return opts;
}

function parseSet(text) {
  const set = {};
  for (const item of text.split(",").filter(Boolean)) {
    const [name, value] = item.split("=");
    set[name] = Number(value);
  }
  return set;
}

// ---------------------------------------------------------------------------------------------
// Variants of the built estimator

/** The value of `const NAME = n;` in the built source. */
function constantValue(source, name) {
  const m = source.match(new RegExp(`const ${name} = (-?\\d+);`));
  if (!m) throw new Error(`no constant ${name}`);
  return Number(m[1]);
}

/** Replaces one entry of the array `const ARRAY = [ … ];` (entries separated by commas). */
function replaceEntry(source, array, index, value) {
  const start = source.indexOf(`const ${array} = [`);
  if (start < 0) throw new Error(`no array ${array}`);
  const open = source.indexOf("[", start);
  const close = source.indexOf("];", open);
  const body = source.slice(open + 1, close);
  // Entries are numbers, several to a line or one to a line with a comment after it.
  let n = -1;
  const replaced = body
    .split("\n")
    .map((line) => {
      const cut = line.indexOf("//");
      const code = cut < 0 ? line : line.slice(0, cut);
      const comment = cut < 0 ? "" : line.slice(cut);
      return (
        code.replace(/-?\d+/g, (number) => {
          n++;
          return n === index ? String(value) : number;
        }) + comment
      );
    })
    .join("\n");
  if (n < index) throw new Error(`${array} has no entry ${index}`);
  return source.slice(0, open + 1) + replaced + source.slice(close);
}

/** The built source with the constants of `set` replaced (see --set). */
export function variantSource(source, set) {
  let out = source;
  for (const [name, value] of Object.entries(set)) {
    const [array, key] = name.split(".");
    if (key === undefined) {
      const re = new RegExp(`const ${name} = -?\\d+;`);
      if (!re.test(out)) throw new Error(`no constant ${name}`);
      out = out.replace(re, `const ${name} = ${value};`);
    } else if (array === "PUNCT_ESCAPE_AFTER") {
      const re = new RegExp(`\\[${key}, -?\\d+\\]`);
      if (!re.test(out)) throw new Error(`no punctuation-escape entry ${key}`);
      out = out.replace(re, `[${key}, ${value}]`);
    } else if (array === "PIECE_AFTER") {
      const [from, to] = key.split(">");
      const re = new RegExp(`\\[${from}, ${to}, -?\\d+\\]`);
      if (!re.test(out)) throw new Error(`no piece pair ${key}`);
      out = out.replace(re, `[${from}, ${to}, ${value}]`);
    } else {
      const index = /^\d+$/.test(key) ? Number(key) : constantValue(source, key);
      out = replaceEntry(out, array, index, value);
    }
  }
  return out;
}

let variantCount = 0;

/** Loads `countDefault` from a variant of the built estimator; `raw` returns cost / 1024 unrounded. */
export async function loadCounter(set, raw = false) {
  const source = readFileSync(BUILT, "utf8");
  let text = variantSource(source, set);
  if (raw) {
    const before = text;
    text = text.replace(
      /const remainder = state\.cost % SUB;[^}]*?return [^;]+;/s,
      "return state.cost / SUB;",
    );
    if (text === before) throw new Error("could not find the rounding in the built estimator");
  }
  if (Object.keys(set).length === 0 && !raw) {
    return (await import(pathToFileURL(BUILT).href)).countDefault;
  }
  mkdirSync(CACHE, { recursive: true });
  const file = join(CACHE, `variant-${process.pid}-${variantCount++}.js`);
  writeFileSync(file, text);
  return (await import(pathToFileURL(file).href)).countDefault;
}

// ---------------------------------------------------------------------------------------------
// Fixed pages and their real counts

/** The variants (kind × layout) the options select. */
function selectVariants(opts) {
  const native = new Set();
  return VARIANTS.filter((v) => {
    if (opts.kinds && !opts.kinds.has(v.kind)) return false;
    if (opts.layouts === "all") return true;
    if (opts.layouts === "native") {
      if (native.has(v.kind)) return false;
      native.add(v.kind);
      return true;
    }
    return new RegExp(opts.layouts).test(v.name);
  });
}

/** The real counts of one page. */
function counted(text) {
  return {
    o200k: countO200k(text, PLAIN),
    cl100k: countCl100k(text, PLAIN),
    claude: countClaude(text),
  };
}

/**
 * Every page of one variant, presentation and seed, with its real counts (cached: counting is the
 * slow part). Escaped pages are cut in-process (a made-up envelope) or by `server`; raw pages are
 * line-mode windows.
 */
async function variantPages(count, variant, presentation, seed, opts, server) {
  const text = variant.generate(seed, opts.chars);
  const mode = presentation === "raw" ? "raw" : opts.server ? "server" : "fake";
  const key = createHash("sha256")
    .update(JSON.stringify([variant.name, seed, opts.chars, opts.budgets, text.length, mode]))
    .digest("hex")
    .slice(0, 16);
  const file = join(CACHE, `pages-${variant.name}-${presentation}-${seed}-${key}.json`);
  if (mode === "server") {
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
    const path = `${variant.name}-${seed}.txt`;
    writeFileSync(join(server.dir, path), text);
    const pages = [];
    for (const budget of opts.budgets) {
      for (const page of await server.pageFile(path, budget)) {
        pages.push({ budget, text: page, ...counted(page) });
      }
    }
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(file, JSON.stringify(pages));
    return pages;
  }
  const render =
    mode === "raw"
      ? (p) => text.slice(p.start, p.end)
      : (p) =>
          JSON.stringify(
            fakeEnvelope(seed + p.n, variant.kind, text.slice(p.start, p.end), p.end < text.length),
          );
  let cached;
  if (existsSync(file)) {
    cached = JSON.parse(readFileSync(file, "utf8"));
  } else {
    cached = [];
    for (const budget of opts.budgets) {
      const slices =
        mode === "raw"
          ? rawPages(count, text, budget).map(([start, end]) => ({ start, end, n: 0 }))
          : escapedPages(count, variant.kind, text, budget, seed).pages.map(([start, end, n]) => ({
              start,
              end,
              n,
            }));
      for (const p of slices) cached.push({ budget, ...p, ...counted(render(p)) });
    }
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(file, JSON.stringify(cached));
  }
  return cached.map((p) => ({ ...p, text: render(p) }));
}

// ---------------------------------------------------------------------------------------------
// Scores

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function score(count, pages) {
  let worstO200k = 0;
  let worstCl100k = 0;
  let worstClaude = 0;
  let margin = Number.POSITIVE_INFINITY;
  const waste = [];
  for (const p of pages) {
    const estimate = count(p.text);
    worstO200k = Math.max(worstO200k, p.o200k / estimate);
    worstCl100k = Math.max(worstCl100k, p.cl100k / estimate);
    worstClaude = Math.max(worstClaude, p.claude / estimate);
    margin = Math.min(margin, estimate / Math.max(p.o200k, p.cl100k, p.claude));
    waste.push(estimate / p.o200k);
  }
  return { pages: pages.length, worstO200k, worstCl100k, worstClaude, margin, waste };
}

const f2 = (x) => x.toFixed(2);
const f3 = (x) => x.toFixed(3);

function report(rows) {
  const line = (label, s) =>
    `${label.padEnd(48)} ${String(s.pages).padStart(5)}  worst ${f2(s.worstO200k)} / ${f2(s.worstCl100k)} / ${f2(s.worstClaude)}  margin ${f3(s.margin)}  waste ${f3(median(s.waste))}`;
  const merge = (list) => ({
    pages: list.reduce((a, s) => a + s.pages, 0),
    worstO200k: Math.max(...list.map((s) => s.worstO200k)),
    worstCl100k: Math.max(...list.map((s) => s.worstCl100k)),
    worstClaude: Math.max(...list.map((s) => s.worstClaude)),
    margin: Math.min(...list.map((s) => s.margin)),
    waste: list.flatMap((s) => s.waste),
  });
  const out = [];
  for (const r of rows) out.push(line(r.heldOut ? `${r.label} (held out)` : r.label, r.score));
  const common = rows.filter((r) => r.common);
  const training = rows.filter((r) => !r.heldOut);
  if (common.length > 0) out.push(line("COMMON KINDS", merge(common.map((r) => r.score))));
  if (training.length > 0) out.push(line("TRAINING KINDS", merge(training.map((r) => r.score))));
  out.push(line("ALL", merge(rows.map((r) => r.score))));
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const variants = selectVariants(opts);
  const built = await loadCounter({});
  const count = await loadCounter(opts.set);
  const rows = [];
  const featureRows = [];
  const raw = opts.features.length > 0 ? await loadCounter(opts.set, true) : null;
  // Derivative of the raw cost in each named constant: the cost with the constant one unit
  // higher, minus the cost (the estimate is linear in each constant, except where a repetition
  // floor takes over: there the derivative is what a small change does).
  const plusOne = [];
  if (raw) {
    const source = variantSource(readFileSync(BUILT, "utf8"), opts.set);
    for (const name of opts.features) {
      const current = currentValue(source, name);
      plusOne.push(await loadCounter({ ...opts.set, [name]: current + 1 }, true));
    }
  }
  let server;
  if (opts.server && opts.presentations.includes("escaped")) {
    const dir = mkdtempSync(join(tmpdir(), "pagewise-tune-"));
    server = { dir, ...(await startServer(dir)) };
  }
  try {
    for (const variant of variants) {
      for (const presentation of opts.presentations) {
        const pages = [];
        for (const seed of opts.seeds) {
          pages.push(...(await variantPages(built, variant, presentation, seed, opts, server)));
        }
        const label = `${variant.name}${presentation === "raw" ? " [raw]" : ""}`;
        rows.push({
          label,
          heldOut: variant.heldOut,
          common: variant.common,
          score: score(count, pages),
        });
        if (raw) {
          for (const p of pages) {
            const base = raw(p.text);
            featureRows.push({
              kind: variant.kind,
              variant: variant.name,
              presentation,
              heldOut: variant.heldOut,
              common: variant.common,
              budget: p.budget,
              o200k: p.o200k,
              cl100k: p.cl100k,
              claude: p.claude,
              cost: base,
              d: plusOne.map((f) => Math.round((f(p.text) - base) * 1024) / 1024),
            });
          }
        }
        process.stderr.write(".");
      }
    }
    if (opts.adversarial) {
      const pages = [...runPages({ raw: true }), ...claudeSamplePages()].map((p) => ({
        budget: 0,
        text: p.text,
        ...counted(p.text),
      }));
      rows.push({
        label: "adversarial runs",
        heldOut: false,
        common: false,
        score: score(count, pages),
      });
      if (raw) {
        for (const p of pages) {
          const base = raw(p.text);
          featureRows.push({
            kind: "adversarial",
            variant: "adversarial",
            presentation: "escaped",
            heldOut: false,
            common: false,
            budget: 0,
            o200k: p.o200k,
            cl100k: p.cl100k,
            claude: p.claude,
            cost: base,
            d: plusOne.map((f) => Math.round((f(p.text) - base) * 1024) / 1024),
          });
        }
      }
    }
  } finally {
    await server?.close();
    if (server) rmSync(server.dir, { recursive: true, force: true });
  }
  process.stderr.write("\n");
  process.stdout.write(`${report(rows)}\n`);
  if (raw && opts.json) {
    writeFileSync(opts.json, JSON.stringify({ features: opts.features, pages: featureRows }));
    process.stderr.write(`wrote ${opts.json}\n`);
  }
}

/** The current value of a --set name in `source`. */
export function currentValue(source, name) {
  const [array, key] = name.split(".");
  if (key === undefined) return constantValue(source, name);
  if (array === "PUNCT_ESCAPE_AFTER") {
    const m = source.match(new RegExp(`\\[${key}, (-?\\d+)\\]`));
    if (!m) throw new Error(`no punctuation-escape entry ${key}`);
    return Number(m[1]);
  }
  if (array === "PIECE_AFTER") {
    const [from, to] = key.split(">");
    const m = source.match(new RegExp(`\\[${from}, ${to}, (-?\\d+)\\]`));
    if (!m) throw new Error(`no piece pair ${key}`);
    return Number(m[1]);
  }
  const index = /^\d+$/.test(key) ? Number(key) : constantValue(source, key);
  const start = source.indexOf(`const ${array} = [`);
  const open = source.indexOf("[", start);
  const close = source.indexOf("];", open);
  const numbers = source
    .slice(open + 1, close)
    .split("\n")
    .flatMap((line) => line.split("//")[0].match(/-?\d+/g) ?? []);
  return Number(numbers[index]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
