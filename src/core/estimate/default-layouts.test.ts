import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countDefault } from "./default.js";

/**
 * @module
 * The `default` estimator stays within budget on every layout of every kind: code indented with 2
 * spaces, 4 spaces or tabs, JSON minified or pretty-printed, prose as paragraphs or hard-wrapped,
 * each with LF and CRLF line ends, and each shown both ways a model sees text: escaped inside a
 * JSON page (`read` in page mode, `search`, `tail`, `json_read`) and raw (`read` in line mode).
 * A fixed sample here (one page of each kind × layout × presentation, from a seed the estimator
 * was never tuned on); `npm run bench:tokens` measures every page of the whole corpus.
 */

const SPECIAL_AS_TEXT = { disallowedSpecial: new Set<string>() };

interface Variant {
  name: string;
  kind: string;
  layout: string;
  heldOut: boolean;
  common: boolean;
  generate(seed: number, approxChars: number): string;
}

// The benchmark's corpus and Claude counter (plain JavaScript, outside src/), as default.test.ts.
const corpus = (await import(new URL("../../../bench/tokens/corpus.js", import.meta.url).href)) as {
  VARIANTS: Variant[];
};
const { countClaude } = (await import(
  new URL("../../../bench/tokens/claude.js", import.meta.url).href
)) as { countClaude: (text: string) => number };

/** A page as `read` returns it in page mode (the envelope's fields, the content escaped). */
function readPage(name: string, content: string, line: number, byte: number): string {
  return JSON.stringify({
    uri: `file:///home/dev/project/${name}`,
    content,
    version: "Kr1MUBzUjmc",
    position: { line, byte, size: 48_213 },
    has_more: true,
    next_cursor: "AYm3uboeAawCBPEuCHBrZy5qc29uKrIMUBzUjmcG_8ZP-9aGyQMRAPfNEstTESPS8wA",
  });
}

/** Whole lines of `text` from its first line start at or after `from`, about `units` long. */
function wholeLines(text: string, from: number, units: number): string {
  const start = from === 0 ? 0 : text.indexOf("\n", from) + 1;
  let end = text.indexOf("\n", start + units);
  end = end < 0 ? text.length : end + 1;
  return text.slice(start, end);
}

/** `text[from, from + units)`, never splitting a surrogate pair. */
function slice(text: string, from: number, units: number): string {
  let end = Math.min(text.length, from + units);
  if (/[\udc00-\udfff]/.test(text[end] ?? "")) end++;
  return text.slice(from, end);
}

function realCounts(text: string): [number, number, number] {
  return [countO200k(text, SPECIAL_AS_TEXT), countCl100k(text, SPECIAL_AS_TEXT), countClaude(text)];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

describe("default estimator: every layout, escaped and raw", () => {
  it("never under-counts a page of any kind in any layout (seed unused in tuning)", () => {
    const { VARIANTS } = corpus;
    expect(VARIANTS.length).toBeGreaterThanOrEqual(150);
    const failures: string[] = [];
    const waste = { escaped: [] as number[], raw: [] as number[] };
    for (const variant of VARIANTS) {
      const text = variant.generate(31337, 7000);
      const pages = {
        escaped: readPage(`${variant.name}.txt`, slice(text, 700, 4000), 19, 700),
        raw: wholeLines(text, 4700, 2000),
      };
      for (const [presentation, page] of Object.entries(pages) as [keyof typeof pages, string][]) {
        if (page.length === 0) continue;
        const estimate = countDefault(page);
        const [o200k, cl100k, claude] = realCounts(page);
        if (Math.max(o200k, cl100k, claude) > estimate) {
          failures.push(
            `${variant.name} ${presentation}: estimate ${estimate}, o200k ${o200k}, cl100k ${cl100k}, Claude ${claude}`,
          );
        }
        if (variant.common) waste[presentation].push(estimate / o200k);
      }
    }
    expect(failures).toEqual([]);
    // The kinds most pages are made of stay cheap in every layout.
    expect(median(waste.escaped)).toBeLessThanOrEqual(1.33);
    expect(median(waste.raw)).toBeLessThanOrEqual(1.4);
  });
});

/**
 * The shapes that were over budget before the corpus had layouts (pretty-printed JSON with short
 * values, prose with CRLF line ends), with each tokenizer's count stored when it was measured, so
 * that the check needs no tokenizer; the test after it re-counts them.
 */
const PACKAGE_JSON = JSON.stringify(
  {
    name: "@acme/web-console",
    version: "3.14.2",
    private: true,
    type: "module",
    scripts: { build: "tsc -p tsconfig.json", test: "vitest run", lint: "eslint ." },
    engines: { node: ">=20" },
    dependencies: { "@acme/ui": "^3.2.0", react: "18.3.1", zod: "~3.23.8", "date-fns": "4.1.0" },
    devDependencies: { "@types/node": "20.19.43", typescript: "5.9.3", vitest: "4.1.12" },
    files: ["dist", "bin"],
    sideEffects: false,
  },
  null,
  2,
);
/** `JSON.stringify(x, null, 2)` of data: every number of an array on a line of its own. */
const DATA_JSON = JSON.stringify(
  {
    id: 4812,
    active: true,
    owner: null,
    tags: [],
    scores: [12, 7, 3, 0, 41, 8, 8, 19, 2, 5, 63, 1],
    bbox: [13.404954, 52.520008, 13.761117, 52.67551],
    grid: [
      [0, 1, 0],
      [1, 1, 0],
      [0, 0, 1],
    ],
    stats: { count: 12, mean: 14.08, enabled: false },
  },
  null,
  2,
);
/** English prose hard-wrapped at 72 columns with CRLF line ends, as an editor on Windows saves it. */
const WRAPPED_CRLF_PROSE = [
  "The budget is checked on the exact text returned to the model, so every",
  "escape and every field name counts. When a page is cut, the cursor says",
  "where the next one starts, and the pages concatenate to the file",
  "exactly. Short lines, blank lines and line ends of two characters are",
  "what a tokenizer sees most often in files saved on Windows",
  "",
  "- keep the estimate above the real count",
  "- never mix two versions of a file",
  "",
].join("\r\n");

const LAYOUT_SAMPLES: ReadonlyArray<{
  name: string;
  text: string;
  o200k: number;
  cl100k: number;
  claude: number;
}> = [
  {
    name: "package.json, page",
    text: readPage("package.json", PACKAGE_JSON, 1, 0),
    o200k: 344,
    cl100k: 344,
    claude: 365,
  },
  { name: "package.json, raw", text: PACKAGE_JSON, o200k: 210, cl100k: 210, claude: 213 },
  {
    name: "JSON data, page",
    text: readPage("data.json", DATA_JSON, 1, 0),
    o200k: 349,
    cl100k: 344,
    claude: 328,
  },
  { name: "JSON data, raw", text: DATA_JSON, o200k: 201, cl100k: 201, claude: 169 },
  {
    name: "CRLF prose, page",
    text: readPage("NOTES.txt", WRAPPED_CRLF_PROSE, 1, 0),
    o200k: 198,
    cl100k: 199,
    claude: 218,
  },
  { name: "CRLF prose, raw", text: WRAPPED_CRLF_PROSE, o200k: 93, cl100k: 93, claude: 98 },
];

describe("default estimator: the shapes of issue 25", () => {
  it("counts each stored sample at least as much as every tokenizer did", () => {
    const under = LAYOUT_SAMPLES.filter(
      (s) => countDefault(s.text) < Math.max(s.o200k, s.cl100k, s.claude),
    ).map((s) => `${s.name}: ${countDefault(s.text)} < ${Math.max(s.o200k, s.cl100k, s.claude)}`);
    expect(under).toEqual([]);
  });

  it("stores the tokenizers' real counts of the samples", () => {
    for (const s of LAYOUT_SAMPLES) {
      expect(realCounts(s.text), s.name).toEqual([s.o200k, s.cl100k, s.claude]);
    }
  });
});
