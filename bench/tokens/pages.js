/**
 * @module
 * How the token bench cuts a text into the pages a model would see, in its two presentations:
 *
 * - **escaped**: a JSON page whose `content` is a slice of the text (what `read` in page mode
 *   returns; `search`, `tail` and `json_read` escape their text the same way inside their pages),
 *   cut by the real server (`serverPages`) or in-process with a made-up envelope
 *   (`escapedPages`), as the longest code-point prefix whose page fits the budget;
 * - **raw**: the text itself, as `read` in line mode returns it (`rawPages`): the most whole lines
 *   whose estimate fits the budget, and a line longer than the budget cut at code points (as a
 *   value inside a `json_read` page or a long `search` line would be).
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fakeEnvelope } from "./corpus.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, "../../bin/pagewise.js");
/** A page of budget B never holds more than 8·B UTF-16 units (`maxUnitsPerToken` of `default`). */
const MAX_UNITS_PER_TOKEN = 8;

/** `at` moved off the low half of a surrogate pair (a cut never splits a pair). */
function codePointCut(text, at) {
  const unit = text.charCodeAt(at);
  return at < text.length && unit >= 0xdc00 && unit <= 0xdfff ? at + 1 : at;
}

/** The largest cut in (start, hi] with `fits(cut)`, by bisection (fits is monotone), or -1. */
function longestFit(text, start, hi, fits) {
  let lo = start + 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const end = codePointCut(text, mid);
    if (fits(end)) {
      best = end;
      lo = end + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

/**
 * Escaped pages cut in-process: `[start, end, n]` slices and `render(start, end, n)`, the page
 * text (a made-up envelope shaped like the server's, seeded by `seed + n`).
 */
export function escapedPages(count, name, text, budget, seed) {
  const render = (from, end, n) =>
    JSON.stringify(fakeEnvelope(seed + n, name, text.slice(from, end), end < text.length));
  const pages = [];
  let start = 0;
  let n = 0;
  do {
    const hi = Math.min(text.length, start + MAX_UNITS_PER_TOKEN * budget);
    const end = longestFit(text, start, hi, (cut) => count(render(start, cut, n)) <= budget);
    if (end < 0) throw new Error(`budget ${budget} too small for ${name}`);
    pages.push([start, end, n]);
    start = end;
    n++;
  } while (start < text.length);
  return { pages, render };
}

/** Offsets just after each line end of `text` (and its length, if it does not end with one). */
function lineEnds(text) {
  const ends = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) ends.push(i + 1);
  if (ends.at(-1) !== text.length) ends.push(text.length);
  return ends;
}

/**
 * Raw pages, as `read` in line mode shows them: `[start, end]` slices of the most whole lines from
 * `start` whose estimate fits `budget`; a first line that alone does not fit is cut at the longest
 * code-point prefix that does.
 */
export function rawPages(count, text, budget) {
  const ends = lineEnds(text);
  const pages = [];
  let start = 0;
  let line = 0; // index in `ends` of the first line end after `start`
  while (start < text.length) {
    while (ends[line] <= start) line++;
    // the most whole lines that fit, by bisection over line ends (the count is prefix-monotone)
    let lo = line;
    let hi = ends.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (
        ends[mid] - start <= MAX_UNITS_PER_TOKEN * budget + 1 &&
        count(text.slice(start, ends[mid])) <= budget
      ) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    let end;
    if (best >= 0) {
      end = ends[best];
    } else {
      const hiCut = Math.min(ends[line], start + MAX_UNITS_PER_TOKEN * budget);
      end = longestFit(text, start, hiCut, (cut) => count(text.slice(start, cut)) <= budget);
      if (end < 0) throw new Error(`budget ${budget} too small for a raw page`);
    }
    pages.push([start, end]);
    start = end;
  }
  return pages;
}

/**
 * A running server (`pagewise serve --root DIR --estimator NAME` over stdio) and a function that
 * pages one file of DIR with `read` at a budget, following `next_cursor` to the end.
 */
export async function startServer(dir, estimator = "default") {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "serve", "--root", dir, "--estimator", estimator],
    stderr: "ignore",
  });
  const client = new Client({ name: "pagewise-bench-tokens", version: "1.0.0" });
  await client.connect(transport);
  const pageFile = async (path, maxTokens) => {
    const pages = [];
    let args = { path, max_tokens: maxTokens };
    for (;;) {
      const result = await client.callTool({ name: "read", arguments: args });
      const text = result.content?.[0]?.text;
      if (result.isError || typeof text !== "string") {
        throw new Error(`read ${path} @${maxTokens} failed: ${text ?? JSON.stringify(result)}`);
      }
      pages.push(text);
      const page = JSON.parse(text);
      if (!page.has_more) return pages;
      args = { cursor: page.next_cursor, max_tokens: maxTokens };
    }
  };
  return { pageFile, close: () => client.close() };
}

/** Escaped pages of one text cut by the real server (a temporary root holding only that file). */
export async function serverPages(name, text, budget) {
  const dir = mkdtempSync(join(tmpdir(), "pagewise-pages-"));
  let server;
  try {
    writeFileSync(join(dir, `${name}.txt`), text);
    server = await startServer(dir);
    return await server.pageFile(`${name}.txt`, budget);
  } finally {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
