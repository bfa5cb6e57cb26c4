/**
 * @module
 * The tasks: each a goal with a checked answer, and for each server the call sequence a capable
 * agent would make from that server's own tool descriptions (`plan`, in words, also printed in
 * `docs/benchmarks.md`; `run`, the same in code).
 *
 * Fairness rules the strategies follow:
 * - A strategy knows only the question (`ctx.question`) and what its own calls returned; the facts
 *   the answer is checked against stay with the checker.
 * - Each server gets its best natural route: its own search and paging arguments where it has
 *   them, file filters where it has them, chunked reads sized to stay under Claude Code's
 *   50,000-character limit where the tool can read a range. Where a server has no tool for a step,
 *   the strategy does what an agent would do with the tools there are (read the whole file, walk
 *   every directory), or stops and says why.
 * - DesktopCommander's file tools are used as its descriptions direct ("use this instead of …
 *   ls", read_file "without starting a shell command"); its shell (`start_process`) only where no
 *   file tool can answer (file sizes across a tree). Its searches run in the background: the agent
 *   polls `get_more_search_results`, pausing `POLL_PAUSE_MS` between polls as an agent's turn would
 *   (the pause is not counted in the wall time).
 * - pagewise follows the contract (`docs/contract.md` and its amendments): continue with
 *   `next_cursor` until it is null; where a build does not take `cursor` yet (`tail`) or a file
 *   for `search`, the strategy falls back as an agent reading the error would, and the fallback's
 *   calls are counted.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  ensureLog,
  ensureLongLineDoc,
  ensureOrders,
  ensureTimeline,
  ensureTree,
  REPO,
  symbolFacts,
} from "./data.js";

/** An agent's pause between polls of a background search. */
const POLL_PAUSE_MS = 1000;
/** Chunked reads aim under Claude Code's 50,000-character limit, with room for JSON escaping. */
const CHUNK_TARGET_CHARS = 40_000;
/** A strategy gives up after this many polls or pages of one kind. */
const MAX_ROUNDS = 400;

// ---------------------------------------------------------------------------------------------
// Helpers shared by strategies

const linesOf = (text) => {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
};
const isErrorLine = (line) => /^\S+ ERROR /.test(line);

/** The next tail length: 1.5 × the lines `count` errors need at the density seen (×10 if none). */
function errorsTailGrowth(lines, n, count) {
  const errors = lines.filter(isErrorLine).length;
  return errors === 0 ? n * 10 : Math.ceil(((count * lines.length) / errors) * 1.5);
}

function fail(r, what) {
  if (r.isError) throw new Error(`${what}: ${r.text.slice(0, 300)}`);
  return r;
}

/** The error code of a pagewise error result, if it is one. */
const errorCode = (r) => (r.isError ? r.json?.error?.code : undefined);

/**
 * Reads lines from `line` (1-based) with `readLines(offset0, limit)` in chunks of `chunk` lines
 * until the definition that starts there is closed by a line at its own indentation.
 */
async function readBody(readLines, line, chunk = 100) {
  const lines = [];
  for (let round = 0; round < 20; round++) {
    const got = linesOf(await readLines(line - 1 + lines.length, chunk));
    lines.push(...got);
    const indent = /^\s*/.exec(lines[0] ?? "")[0];
    const end = lines.findIndex((l, i) => i > 0 && l.startsWith(`${indent}}`));
    if (end >= 0) return lines.slice(0, end + 1).join("\n");
    if (got.length < chunk) break;
  }
  throw new Error("the definition's end was not found");
}

// pagewise

/**
 * The next page of a pagewise walk: `{cursor: next_cursor}` as the contract says; a build that
 * refuses `cursor` on this tool gets `legacyKey` (e.g. `before` for `tail`) from then on.
 */
async function pagewiseNext(s, tool, page, state, legacyKey) {
  const cursor = page.json?.next_cursor ?? null;
  if (!cursor) return null;
  if (state.legacy?.[tool]) return fail(await s.call(tool, { [legacyKey]: cursor }), tool);
  const r = await s.call(tool, { cursor });
  if (legacyKey && errorCode(r) === "INVALID_ARGUMENT" && /cursor/i.test(r.text)) {
    state.legacy = { ...state.legacy, [tool]: true };
    state.notes.push(`${tool} refused cursor; continued with ${legacyKey}`);
    return fail(await s.call(tool, { [legacyKey]: cursor }), tool);
  }
  return fail(r, tool);
}

// DesktopCommander

/** read_file's text without its "[Reading … lines …]" header; `total` lines when it says. */
function dcContent(text) {
  const m = /^\[Reading [^\]]*\]\n\n/.exec(text);
  const header = m ? m[0] : "";
  const total = /total: (\d+) lines/.exec(header);
  return { content: text.slice(header.length), total: total ? Number(total[1]) : undefined };
}

async function dcRead(s, file, args = {}) {
  const r = fail(await s.call("read_file", { path: file, ...args }), "read_file");
  return dcContent(r.text);
}

/** Results of a `📄 file:line - match` / `📁 file` listing. */
function dcResults(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const content = /^📄 (.*):(\d+) - (.*)$/u.exec(line);
    if (content) out.push({ file: content[1], line: Number(content[2]), match: content[3] });
    else if (line.startsWith("📁 ")) out.push({ file: line.slice(3) });
  }
  return out;
}

/**
 * Starts a search and pages its results (`length` per call) until it has completed and every
 * result was read; with `countOnly`, polls for the total without reading results.
 */
async function dcSearch(s, args, { countOnly = false } = {}) {
  const started = fail(await s.call("start_search", args), "start_search");
  const sessionId = /session: (\S+)/.exec(started.text)?.[1];
  if (!sessionId) throw new Error(`no search session in: ${started.text.slice(0, 200)}`);
  const results = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const r = fail(
      await s.call("get_more_search_results", {
        sessionId,
        offset: countOnly ? 0 : results.length,
        length: countOnly ? 1 : 100,
      }),
      "get_more_search_results",
    );
    const done = /Status: COMPLETED/.test(r.text);
    const total = Number(/Total results found: (\d+)/.exec(r.text)?.[1] ?? Number.NaN);
    if (countOnly) {
      if (done) return { total, results };
    } else {
      const page = dcResults(r.text.split("\nResults:\n")[1] ?? "");
      results.push(...page);
      if (done && !/More results available/.test(r.text)) return { total, results };
      if (page.length > 0) continue;
    }
    await s.think(POLL_PAUSE_MS);
  }
  throw new Error("the search did not complete");
}

/**
 * Runs a shell command with `start_process` and reads its output (`read_process_output`, after a
 * pause) until `done(output)` or the process says it finished.
 */
async function dcShell(s, command, done) {
  const r = fail(await s.call("start_process", { command, timeout_ms: 60_000 }), "start_process");
  let output = r.text;
  const pid = Number(/PID (\d+)/.exec(r.text)?.[1]);
  for (
    let round = 0;
    round < 30 && pid && !done(output) && !/finished|exited/i.test(output);
    round++
  ) {
    await s.think(POLL_PAUSE_MS);
    output += fail(
      await s.call("read_process_output", { pid, timeout_ms: 10_000 }),
      "read_process_output",
    ).text;
  }
  return output;
}

/**
 * Reads the end of a file until `enough(lines)`: its last `first` lines (negative offset), then,
 * when read_file told the file's line count (files under 10 MB), earlier ranges sized to stay
 * under Claude Code's character limit; without a count (larger files) a range cannot be placed,
 * so a longer tail (`offset: -n`, n from `grow(lines, n)`), which comes back in one result.
 */
async function dcReadBackwards(s, file, first, enough, grow) {
  const tail = await dcRead(s, file, { offset: -first });
  let lines = linesOf(tail.content);
  if (tail.total === undefined) {
    for (let round = 0, n = first; round < 8 && !enough(lines); round++) {
      n = grow(lines, n);
      lines = linesOf((await dcRead(s, file, { offset: -n })).content);
    }
    return lines;
  }
  let end = tail.total - lines.length;
  const avgChars = Math.max(1, tail.content.length / Math.max(1, lines.length));
  const chunk = Math.max(1, Math.floor(CHUNK_TARGET_CHARS / avgChars));
  for (let round = 0; round < MAX_ROUNDS && !enough(lines) && end > 0; round++) {
    const start = Math.max(0, end - chunk);
    const got = await dcRead(s, file, { offset: start, length: end - start });
    lines = [...linesOf(got.content), ...lines];
    end = start;
  }
  return lines;
}

/**
 * The lines of search hits, read with `read_file` (`offset: line-1, length: 1`) and checked with
 * `matches(line)` as an agent would check them against the search's match. In files over 10 MB
 * read_file places a deep offset by an estimate (the average line length of the first 10 KB) and
 * can return another line; after the first wrong line the rest are read in one shell command
 * (`sed -n`), and `notes` says so.
 */
async function dcReadHitLines(s, file, hits, matches, notes) {
  const lines = [];
  for (const [i, hit] of hits.entries()) {
    const got = linesOf((await dcRead(s, file, { offset: hit.line - 1, length: 1 })).content)[0];
    if (got !== undefined && matches(got)) {
      lines.push(got);
      continue;
    }
    notes.push(
      `read_file at line ${hit.line} returned another line (its position is estimated in files over 10 MB); read the lines with its shell (sed)`,
    );
    const rest = hits.slice(i);
    const output = await dcShell(
      s,
      `sed -n '${rest.map((h) => `${h.line}p`).join(";")}' '${file}'`,
      (out) => linesOf(out).filter(matches).length >= rest.length,
    );
    lines.push(...linesOf(output).filter(matches).slice(0, rest.length));
    break;
  }
  return lines;
}

// server-filesystem

/** `tail: n` with n grown until `enough(lines)`; `grow(lines, n)` gives the next n. */
async function filesystemTail(s, file, first, enough, grow) {
  let n = first;
  for (let round = 0; round < 8; round++) {
    const r = fail(await s.call("read_text_file", { path: file, tail: n }), "read_text_file");
    const lines = linesOf(r.text);
    if (enough(lines)) return lines;
    n = grow(lines, n);
  }
  throw new Error("gave up growing the tail");
}

/**
 * The lines of a whole-file answer that contain `needle`: from the text, or — for an answer too
 * large to parse — from the raw message, where the text is JSON-escaped (`\n` between lines).
 */
function linesContaining(r, needle) {
  if (!r.raw) return linesOf(r.text).filter((l) => l.includes(needle));
  const escaped = Buffer.from(JSON.stringify(needle).slice(1, -1));
  const lineBreak = Buffer.from("\\n");
  const out = [];
  // The text comes first in the message (content, then structuredContent's copy): stop there.
  const copy = r.raw.indexOf(Buffer.from('"structuredContent":'));
  const limit = copy >= 0 ? copy : r.raw.length;
  let at = r.raw.indexOf(escaped);
  while (at >= 0 && at < limit) {
    const start = r.raw.lastIndexOf(lineBreak, at) + 2;
    const end = r.raw.indexOf(lineBreak, at);
    out.push(JSON.parse(`"${r.raw.subarray(start, end).toString("utf8")}"`));
    at = r.raw.indexOf(escaped, end);
  }
  return out;
}

const HUMAN_SIZE = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

// ---------------------------------------------------------------------------------------------
// The tasks

const sameLines = (a, b) =>
  Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);

export const TASKS = [
  {
    id: "symbol",
    short: "Class definition in node_modules",
    title: "Where a class is defined in node_modules, and its body",
    goal: "Find where `class StdioClientTransport` is defined in this project's node_modules (JavaScript, not type declarations) and read its whole body.",
    scales: ["full"],
    root: () => path.join(REPO, "node_modules"),
    prepare: (ctx) => ({
      question: { symbol: "StdioClientTransport" },
      facts: symbolFacts(ctx.root, "StdioClientTransport"),
    }),
    check: (answer, facts) =>
      facts.sites.some((site) => site.path === answer.path && site.body === answer.body),
    strategies: {
      pagewise: {
        plan: "`search` the regex `class StdioClientTransport\\b` with `glob: \"*.{js,mjs,cjs}\"` (following `next_cursor` until a hit); `read` 100 lines from the hit's line (line mode), and 100 more until the body's closing brace.",
        async run(s, { question }) {
          const state = { notes: [] };
          let page = fail(
            await s.call("search", {
              pattern: `class ${question.symbol}\\b`,
              glob: "*.{js,mjs,cjs}",
            }),
            "search",
          );
          let hit;
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            hit = page.json.items.find((it) => /\.(c|m)?js$/.test(it.path));
            if (hit) break;
            page = await pagewiseNext(s, "search", page, state);
          }
          if (!hit) return { note: "no definition found" };
          const body = await readBody(
            async (offset, limit) =>
              fail(await s.call("read", { path: hit.path, offset, limit }), "read").text,
            hit.line,
          );
          return { answer: { path: hit.path, body }, note: state.notes.join("; ") || undefined };
        },
      },
      filesystem: {
        plan: "No content search: `search_files` for `**/*stdio*` (the class name's first word), keep JavaScript paths that mention `client`, `read_text_file` them whole until one holds the class, and cut its body out.",
        async run(s, { root, question }) {
          const words = question.symbol.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
          const found = fail(
            await s.call("search_files", { path: root, pattern: `**/*${words[0]}*` }),
            "search_files",
          );
          const candidates = linesOf(found.text)
            .filter((p) => /\.(c|m)?js$/.test(p) && p.toLowerCase().includes(words[1]))
            .slice(0, 6);
          for (const file of candidates) {
            const r = await s.call("read_text_file", { path: file });
            if (r.isError || !r.text.includes(`class ${question.symbol}`)) continue;
            const lines = linesOf(r.text);
            const at = lines.findIndex((l) =>
              new RegExp(`^\\s*(export\\s+)?class\\s+${question.symbol}\\b`).test(l),
            );
            if (at < 0) continue;
            const body = await readBody(
              async (offset, limit) => lines.slice(offset, offset + limit).join("\n"),
              at + 1,
            );
            return { answer: { path: path.relative(root, file), body } };
          }
          return { note: `no definition in the ${candidates.length} files named like it` };
        },
      },
      desktopCommander: {
        plan: '`start_search` (content, the regex, `filePattern: "*.js|*.mjs|*.cjs"`, `ignoreCase: false`, `contextLines: 0`), poll `get_more_search_results` until complete; when it finds nothing (its ripgrep also applies the `.gitignore` above the folder, here `dist/`, and `start_search` cannot turn that off), `start_process` with `rg -n --no-ignore …`; then `read_file` 100 lines from the hit (`offset`/`length`), and 100 more until the closing brace.',
        async run(s, { root, question }) {
          const { results } = await dcSearch(s, {
            path: root,
            pattern: `class ${question.symbol}\\b`,
            searchType: "content",
            filePattern: "*.js|*.mjs|*.cjs",
            ignoreCase: false,
            contextLines: 0,
          });
          let hit = results.find((r) => /\.(c|m)?js$/.test(r.file));
          let note;
          if (!hit) {
            // Its ripgrep applies .gitignore files above the searched folder too (this project's
            // ignores `dist/`), and start_search has no switch for that: the shell can.
            note =
              "start_search found nothing (ripgrep applied the project's .gitignore, `dist/`); searched with its shell";
            const output = await dcShell(
              s,
              `rg -n --no-ignore -g '*.js' -g '*.mjs' -g '*.cjs' 'class ${question.symbol}\\b' '${root}' | head -20`,
              (out) => /:\d+:/.test(out),
            );
            const m = /^(.+?):(\d+):/m.exec(output);
            if (m) hit = { file: m[1], line: Number(m[2]) };
          }
          if (!hit) return { note: note ?? "no definition found" };
          const body = await readBody(
            async (offset, length) => (await dcRead(s, hit.file, { offset, length })).content,
            hit.line,
          );
          return { answer: { path: path.relative(root, hit.file), body }, note };
        },
      },
    },
  },

  {
    id: "log-last-errors",
    short: "Last 20 errors, 1 GiB log",
    title: "The last 20 errors of a 1 GiB log",
    goal: "The last 20 ERROR lines of `logs/app.log` (1 GiB), exactly.",
    prepare: (ctx) => {
      const facts = ensureLog(ctx.scale);
      return { question: { file: "logs/app.log", count: 20 }, facts };
    },
    check: (answer, facts) => sameLines(answer, facts.lastErrors),
    strategies: {
      pagewise: {
        plan: '`tail` with `grep: " ERROR "`, `grep_literal: true`, `limit: 20`; `next_cursor` for earlier records while fewer than 20.',
        async run(s, { question }) {
          const state = { notes: [] };
          let page = fail(
            await s.call("tail", {
              path: question.file,
              grep: " ERROR ",
              grep_literal: true,
              limit: question.count,
            }),
            "tail",
          );
          let lines = [];
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            lines = [...page.json.items.map((it) => it.text), ...lines];
            if (lines.length >= question.count) break;
            page = await pagewiseNext(s, "tail", page, state, "before");
          }
          return {
            answer: lines.slice(-question.count),
            note: state.notes.join("; ") || undefined,
          };
        },
      },
      filesystem: {
        plan: "`read_text_file` with `tail: 100`; from the error density seen, `tail: n` with n = 1.5 × the lines 20 errors need (×10 when none seen) until 20 errors are in it. (`tail` is its only way to read the end; it cannot read a range.)",
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          const lines = await filesystemTail(
            s,
            file,
            100,
            (ls) => ls.filter(isErrorLine).length >= question.count,
            (ls, n) => errorsTailGrowth(ls, n, question.count),
          );
          return { answer: lines.filter(isErrorLine).slice(-question.count) };
        },
      },
      desktopCommander: {
        plan: "`read_file` with `offset: -100`; when it tells the file's line count (files under 10 MB) it would read earlier ranges (`offset`/`length`) of as many lines as fit in 40,000 characters, but for this 1 GiB file it does not, so a longer tail (`offset: -n`, n grown as for server-filesystem), which comes back in one result.",
        async run(s, { root, question }) {
          const lines = await dcReadBackwards(
            s,
            path.join(root, question.file),
            100,
            (ls) => ls.filter(isErrorLine).length >= question.count,
            (ls, n) => errorsTailGrowth(ls, n, question.count),
          );
          return { answer: lines.filter(isErrorLine).slice(-question.count) };
        },
      },
    },
  },

  {
    id: "log-request-errors",
    short: "One request's errors, 1 GiB log",
    title: "The errors of one request id in a 1 GiB log",
    goal: "Every ERROR line of request `req=<id>` in `logs/app.log` (1 GiB); the request is in the middle of the file.",
    prepare: (ctx) => {
      const facts = ensureLog(ctx.scale);
      return { question: { file: "logs/app.log", requestId: facts.targetRequest }, facts };
    },
    check: (answer, facts) => sameLines(answer, facts.targetErrors),
    strategies: {
      pagewise: {
        plan: "`search` the file for the regex `ERROR.*req=<id>` (the contract's amendment: `search` takes a file), following `next_cursor`; a build whose `search` refuses a file gets `tail` with that `grep`, walked back with `next_cursor` to the start of the file.",
        async run(s, { question }) {
          const state = { notes: [] };
          const pattern = `ERROR.*req=${question.requestId}`;
          let page = await s.call("search", { path: question.file, pattern });
          let lines = [];
          if (errorCode(page) === "NOT_A_DIRECTORY" || errorCode(page) === "INVALID_ARGUMENT") {
            state.notes.push("search refused a file; walked tail with grep");
            page = fail(await s.call("tail", { path: question.file, grep: pattern }), "tail");
            for (let round = 0; round < MAX_ROUNDS && page; round++) {
              lines = [...page.json.items.map((it) => it.text), ...lines];
              page = await pagewiseNext(s, "tail", page, state, "before");
            }
          } else {
            fail(page, "search");
            for (let round = 0; round < MAX_ROUNDS && page; round++) {
              lines.push(...page.json.items.map((it) => it.text));
              page = await pagewiseNext(s, "search", page, state);
            }
          }
          return { answer: lines, note: state.notes.join("; ") || undefined };
        },
      },
      filesystem: {
        plan: "`get_file_info` (1 GiB); no content search, and `read_text_file` can only return the whole file, its head or its tail: a 1 GiB read cannot be sent (it stops answering near 300 MiB, V8's string limit). The agent stops.",
        async run(s, { root, question }) {
          const info = fail(
            await s.call("get_file_info", { path: path.join(root, question.file) }),
            "get_file_info",
          );
          const size = Number(/size: (\d+)/.exec(info.text)?.[1]);
          if (size > 256 * 1024 * 1024)
            return {
              note: "no content search; the file is too large to read whole (stopped after get_file_info)",
            };
          const whole = fail(
            await s.call("read_text_file", { path: path.join(root, question.file) }),
            "read_text_file",
          );
          return {
            answer: linesContaining(whole, `req=${question.requestId}`).filter(isErrorLine),
          };
        },
      },
      desktopCommander: {
        plan: "`start_search` on the file (content, regex `ERROR.*req=<id>`, `ignoreCase: false`, `contextLines: 0`), poll until complete; its results show the match, cut at 100 characters, so `read_file` each hit's line (`offset: line-1, length: 1`) and check it holds the request id. In files over 10 MB `read_file` places a deep offset by estimate and returns another line: after the first wrong line, the lines are read with its shell (`start_process`, `sed -n '<line>p;…'`).",
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          const { results } = await dcSearch(s, {
            path: file,
            pattern: `ERROR.*req=${question.requestId}`,
            searchType: "content",
            ignoreCase: false,
            contextLines: 0,
          });
          const notes = [];
          const lines = await dcReadHitLines(
            s,
            file,
            results,
            (l) => isErrorLine(l) && l.includes(`req=${question.requestId}`),
            notes,
          );
          return { answer: lines, note: notes.join("; ") || undefined };
        },
      },
    },
  },

  {
    id: "orders-field",
    short: "One field, 200 MB JSONL",
    title: "One field of one record in a 200 MB JSONL",
    goal: "The shipping city of order `ord_…` in `orders/orders.jsonl` (200 MB, one order a line).",
    prepare: (ctx) => {
      const facts = ensureOrders(ctx.scale);
      return { question: { file: "orders/orders.jsonl", orderId: facts.targetOrder }, facts };
    },
    check: (answer, facts) => answer === facts.targetCity,
    strategies: {
      pagewise: {
        plan: '`read` the first line (line mode, `limit: 1`) to see the record\'s shape; `json_read` the JSONPath `$[?@.id=="<id>"].shipping.city`.',
        async run(s, { question }) {
          const state = { notes: [] };
          fail(await s.call("read", { path: question.file, limit: 1 }), "read");
          let page = fail(
            await s.call("json_read", {
              path: question.file,
              language: "jsonpath",
              query: `$[?@.id==${JSON.stringify(question.orderId)}].shipping.city`,
            }),
            "json_read",
          );
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            const item = page.json.items[0];
            if (item) return { answer: item.value };
            page = await pagewiseNext(s, "json_read", page, state);
          }
          return { note: "no match" };
        },
      },
      filesystem: {
        plan: "`read_text_file` with `head: 1` for the shape; no search: `read_text_file` the whole file and find the line.",
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          fail(await s.call("read_text_file", { path: file, head: 1 }), "read_text_file");
          const whole = fail(await s.call("read_text_file", { path: file }), "read_text_file");
          const line = linesContaining(whole, `"id":${JSON.stringify(question.orderId)}`)[0];
          return line ? { answer: JSON.parse(line).shipping.city } : { note: "no match" };
        },
      },
      desktopCommander: {
        plan: '`read_file` the first line (`offset: 0, length: 1`); `start_search` the file for the literal `"id":"<id>"` (`literalSearch: true`), poll until complete; `read_file` the hit\'s line and check it holds the id (if not, as above: its shell, `sed -n`).',
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          await dcRead(s, file, { offset: 0, length: 1 });
          const { results } = await dcSearch(s, {
            path: file,
            pattern: `"id":${JSON.stringify(question.orderId)}`,
            searchType: "content",
            literalSearch: true,
            ignoreCase: false,
            contextLines: 0,
          });
          if (!results[0]) return { note: "no match" };
          const notes = [];
          const needle = `"id":${JSON.stringify(question.orderId)}`;
          const [line] = await dcReadHitLines(
            s,
            file,
            results.slice(0, 1),
            (l) => l.includes(needle),
            notes,
          );
          return { answer: JSON.parse(line).shipping.city, note: notes.join("; ") || undefined };
        },
      },
    },
  },

  {
    id: "orders-filter",
    short: "Filtered set, 200 MB JSONL",
    title: "A filtered set over a 200 MB JSONL",
    goal: "The ids and totals of every refunded order of customer `cus_…` in `orders/orders.jsonl`.",
    prepare: (ctx) => {
      const facts = ensureOrders(ctx.scale);
      return {
        question: { file: "orders/orders.jsonl", customerId: facts.targetCustomer },
        facts,
      };
    },
    check: (answer, facts) =>
      Array.isArray(answer) &&
      JSON.stringify([...answer].sort((a, b) => a.id.localeCompare(b.id))) ===
        JSON.stringify(facts.refunded),
    strategies: {
      pagewise: {
        plan: '`read` the first line for the shape; `json_read` `$[?@.customer.id=="<id>" && @.status=="refunded"]["id","total"]`, following `next_cursor` until null.',
        async run(s, { question }) {
          const state = { notes: [] };
          fail(await s.call("read", { path: question.file, limit: 1 }), "read");
          let page = fail(
            await s.call("json_read", {
              path: question.file,
              language: "jsonpath",
              query: `$[?@.customer.id==${JSON.stringify(question.customerId)} && @.status=="refunded"]["id","total"]`,
            }),
            "json_read",
          );
          const byRecord = new Map();
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            for (const item of page.json.items) {
              const [, record, field] = item.path.split("/");
              byRecord.set(record, { ...byRecord.get(record), [field]: item.value });
            }
            page = await pagewiseNext(s, "json_read", page, state);
          }
          return { answer: [...byRecord.values()] };
        },
      },
      filesystem: {
        plan: "`head: 1` for the shape; no search: `read_text_file` the whole file and filter its lines.",
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          fail(await s.call("read_text_file", { path: file, head: 1 }), "read_text_file");
          const whole = fail(await s.call("read_text_file", { path: file }), "read_text_file");
          const answer = linesContaining(
            whole,
            `"customer":{"id":${JSON.stringify(question.customerId)}`,
          )
            .map((l) => JSON.parse(l))
            .filter((o) => o.status === "refunded")
            .map((o) => ({ id: o.id, total: o.total }));
          return { answer };
        },
      },
      desktopCommander: {
        plan: '`read_file` the first line; `start_search` the regex `"customer":\\{"id":"<id>".*"status":"refunded"` (`ignoreCase: false`), poll until complete; `read_file` each hit\'s line and check it (if one is wrong, the rest with its shell, `sed -n`).',
        async run(s, { root, question }) {
          const file = path.join(root, question.file);
          await dcRead(s, file, { offset: 0, length: 1 });
          const { results } = await dcSearch(s, {
            path: file,
            pattern: `"customer":\\{"id":"${question.customerId}".*"status":"refunded"`,
            searchType: "content",
            ignoreCase: false,
            contextLines: 0,
          });
          const notes = [];
          const customer = `"customer":{"id":${JSON.stringify(question.customerId)}`;
          const lines = await dcReadHitLines(
            s,
            file,
            results,
            (l) => l.includes(customer) && l.includes('"status":"refunded"'),
            notes,
          );
          const answer = lines.map((l) => JSON.parse(l)).map((o) => ({ id: o.id, total: o.total }));
          return { answer, note: notes.join("; ") || undefined };
        },
      },
    },
  },

  {
    id: "long-line",
    short: "120,000-character line, whole",
    title: "A document with a 120,000-character line, read whole",
    goal: "Read `docs/import-notes.md` whole: 11 lines, one of them 120,000 characters of CJK, emoji, quotes and backslashes (the demo's line).",
    prepare: (ctx) => {
      const facts = ensureLongLineDoc(ctx.scale);
      return { question: { file: "docs/import-notes.md" }, facts };
    },
    // Exact, except that a read which drops the file's final newline still counts as right.
    check: (answer, facts, ctx) => {
      const text = readFileSync(path.join(ctx.root, "docs", facts.file), "utf8");
      return answer === text || answer === text.replace(/\n$/, "");
    },
    strategies: {
      pagewise: {
        plan: "`read` the file (line mode); it answers RESPONSE_TOO_LARGE with `retry: {max_tokens}`; read with that, then `next_cursor` until null, and join the pages.",
        async run(s, { question }) {
          const state = { notes: [] };
          let page = await s.call("read", { path: question.file });
          if (!page.isError) return { answer: page.text };
          const retry = page.json?.error?.retry;
          if (!retry) fail(page, "read");
          page = fail(await s.call("read", { path: question.file, ...retry }), "read");
          let text = "";
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            text += page.json.content;
            page = await pagewiseNext(s, "read", page, state);
          }
          return { answer: text };
        },
      },
      filesystem: {
        plan: "`read_text_file` the file (its only way: `head`/`tail` count lines, and the long line is one line).",
        async run(s, { root, question }) {
          const r = fail(
            await s.call("read_text_file", { path: path.join(root, question.file) }),
            "read_text_file",
          );
          return { answer: r.text };
        },
      },
      desktopCommander: {
        plan: "`read_file` the file (1,000 lines by default; this one has 11).",
        async run(s, { root, question }) {
          const { content } = await dcRead(s, path.join(root, question.file));
          return { answer: content };
        },
      },
    },
  },

  {
    id: "tree-count",
    short: ".ts files among 50,000",
    title: "How many .ts files in a 50,000-file tree",
    goal: "The number of `*.ts` files under `tree/` (50,000 files; `.d.ts` count, `.tsx` do not).",
    prepare: (ctx) => {
      const facts = ensureTree(ctx.scale);
      return { question: { dir: "tree" }, facts };
    },
    check: (answer, facts) => answer === facts.tsFiles,
    strategies: {
      pagewise: {
        plan: '`list` with `recursive: true`, `glob: "*.ts"`, `type: "file"`, `limit: 1`, and read `pagination.total`.',
        async run(s, { question }) {
          const r = fail(
            await s.call("list", {
              path: question.dir,
              recursive: true,
              glob: "*.ts",
              type: "file",
              limit: 1,
            }),
            "list",
          );
          return { answer: r.json.pagination.total };
        },
      },
      filesystem: {
        plan: "`search_files` with `**/*.ts` and count the paths.",
        async run(s, { root, question }) {
          const r = fail(
            await s.call("search_files", {
              path: path.join(root, question.dir),
              pattern: "**/*.ts",
            }),
            "search_files",
          );
          if (r.raw) return { note: "the answer was too large to count here" };
          return { answer: linesOf(r.text).filter((l) => l.endsWith(".ts")).length };
        },
      },
      desktopCommander: {
        plan: '`start_search` (files, `*.ts`), poll `get_more_search_results` (`length: 1`) until complete, and read "Total results found".',
        async run(s, { root, question }) {
          const { total } = await dcSearch(
            s,
            { path: path.join(root, question.dir), pattern: "*.ts", searchType: "files" },
            { countOnly: true },
          );
          return { answer: total };
        },
      },
    },
  },

  {
    id: "tree-largest",
    short: "10 largest of 50,000 files",
    title: "The ten largest files of a 50,000-file tree",
    goal: "The paths of the ten largest files under `tree/`, largest first.",
    prepare: (ctx) => {
      const facts = ensureTree(ctx.scale);
      return { question: { dir: "tree", count: 10 }, facts };
    },
    check: (answer, facts) =>
      sameLines(
        answer?.map((f) => f.path),
        facts.largest.map((f) => f.path),
      ),
    strategies: {
      pagewise: {
        plan: '`list` with `recursive: true`, `type: "file"`, `limit: 1000`, following `next_cursor` to the end (no sort by size), and keep the ten largest.',
        async run(s, { question }) {
          const state = { notes: [] };
          let page = fail(
            await s.call("list", {
              path: question.dir,
              recursive: true,
              type: "file",
              limit: 1000,
            }),
            "list",
          );
          let files = [];
          for (let round = 0; round < 10 * MAX_ROUNDS && page; round++) {
            files.push(...page.json.items.map((it) => ({ path: it.path, size: it.size })));
            files = files.sort((a, b) => b.size - a.size).slice(0, question.count);
            page = await pagewiseNext(s, "list", page, state);
          }
          return { answer: files };
        },
      },
      filesystem: {
        plan: '`list_directory_with_sizes` (`sortBy: "size"`) on every directory, breadth first from `tree/` (`directory_tree` has no sizes), and keep the ten largest (sizes as it prints them, e.g. "1.85 MB").',
        async run(s, { root, question }) {
          const base = path.join(root, question.dir);
          const queue = [base];
          let files = [];
          for (let round = 0; queue.length > 0 && round < 20_000; round++) {
            const dir = queue.shift();
            const r = fail(
              await s.call("list_directory_with_sizes", { path: dir, sortBy: "size" }),
              "list_directory_with_sizes",
            );
            for (const line of linesOf(r.text)) {
              const entry = /^\[(FILE|DIR)\] (.+?)\s+(?:([\d.]+) (B|KB|MB|GB))?\s*$/.exec(line);
              if (!entry) continue;
              const full = path.join(dir, entry[2]);
              if (entry[1] === "DIR") queue.push(full);
              else
                files.push({
                  path: path.relative(base, full),
                  size: Number(entry[3]) * HUMAN_SIZE[entry[4]],
                });
            }
            files = files.sort((a, b) => b.size - a.size).slice(0, question.count);
          }
          return { answer: files };
        },
      },
      desktopCommander: {
        plan: "No file tool gives sizes across a tree (`list_directory` has none; `get_file_info` is one file a call): its shell, `start_process` with `find tree -type f -printf '%s %P\\n' | sort -rn | head -10`, and `read_process_output` until it has finished.",
        async run(s, { root, question }) {
          const base = path.join(root, question.dir);
          const output = await dcShell(
            s,
            `find '${base}' -type f -printf '%s %P\\n' | sort -rn | head -${question.count}`,
            (out) => (out.match(/^\d+ \S+$/gm) ?? []).length >= question.count,
          );
          const files = [...output.matchAll(/^(\d+) (\S+)$/gm)].map((m) => ({
            path: m[2],
            size: Number(m[1]),
          }));
          return { answer: files.slice(0, question.count) };
        },
      },
    },
  },

  {
    id: "timeline",
    short: "3,589-event thread, newest first",
    title: "A long thread read newest-first",
    goal: "Read the 3,589-event thread newest-first until the newest long report (a body over 2,000 characters); its id and whole body. pagewise: the library example `examples/timeline-server`; the peers: the same events as `timeline/thread.jsonl`, one a line.",
    prepare: async (ctx) => {
      const facts = await ensureTimeline(ctx.scale);
      return { question: { file: "timeline/thread.jsonl", longChars: 2000 }, facts };
    },
    check: (answer, facts) =>
      answer?.id === facts.newestLongId && answer?.body === facts.newestLongBody,
    strategies: {
      pagewise: {
        server: "timelineExample",
        plan: "The example's `timeline_read` (newest events that fit its default budget), `before: earlier_cursor` until a long body shows (clamped, `truncated: true`); then `timeline_body` from its `body_cursor`, following `next_cursor` until null.",
        async run(s, { question }) {
          const state = { notes: [] };
          let page = fail(await s.call("timeline_read", {}), "timeline_read");
          for (let round = 0; round < MAX_ROUNDS && page; round++) {
            const items = [...page.json.items].reverse();
            const long = items.find(
              (e) => e.truncated === true || e.body.length > question.longChars,
            );
            if (long) {
              let body = long.body;
              let rest = long.truncated
                ? fail(await s.call("timeline_body", { cursor: long.body_cursor }), "timeline_body")
                : null;
              for (let r = 0; r < MAX_ROUNDS && rest; r++) {
                body += rest.json.content;
                rest = await pagewiseNext(s, "timeline_body", rest, state);
              }
              return { answer: { id: long.id, body } };
            }
            const before = page.json.earlier_cursor;
            page = before ? fail(await s.call("timeline_read", { before }), "timeline_read") : null;
          }
          return { note: "no long report" };
        },
      },
      filesystem: {
        plan: "`read_text_file` with `tail: 20`, then `tail` ×5 (100, 500…) until a long body is among the lines.",
        async run(s, { root, question }) {
          const findLong = (lines) =>
            lines
              .map((l) => {
                try {
                  return JSON.parse(l);
                } catch {
                  return undefined;
                }
              })
              .reverse()
              .find((e) => e && e.body.length > question.longChars);
          const lines = await filesystemTail(
            s,
            path.join(root, question.file),
            20,
            (ls) => findLong(ls) !== undefined,
            (_, n) => n * 5,
          );
          const long = findLong(lines);
          return { answer: { id: long.id, body: long.body } };
        },
      },
      desktopCommander: {
        plan: "`read_file` with `offset: -20`, then (it tells this 3.5 MB file's line count) earlier ranges of as many lines as fit in 40,000 characters, until a long body is among them.",
        async run(s, { root, question }) {
          const isLong = (l) => {
            try {
              return JSON.parse(l).body.length > question.longChars;
            } catch {
              return false;
            }
          };
          const lines = await dcReadBackwards(
            s,
            path.join(root, question.file),
            20,
            (ls) => ls.some(isLong),
            (_, n) => n * 5,
          );
          const long = JSON.parse(lines.reverse().find(isLong));
          return { answer: { id: long.id, body: long.body } };
        },
      },
    },
  },
];
