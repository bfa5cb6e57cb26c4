#!/usr/bin/env node
/**
 * The pagewise demo: a real MCP client (the official SDK's) starts the server over stdio, pages a
 * file whose single 120,000-character line would overflow any agent's context, proves the pages
 * rebuild it exactly, then changes the file mid-read and shows that pagewise refuses to mix versions.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createEstimator } from "../dist/core/index.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dir = mkdtempSync(path.join(tmpdir(), "pagewise-demo-"));
const BUDGET = 2000;
const ESTIMATOR = "default";
/** Small enough to split the CSV file, large enough for the page's metadata (uri, version, cursor). */
const SMALL_BUDGET = 140;

const say = (line = "") => process.stdout.write(`${line}\n`);
const bar = (fraction, width = 30) => "█".repeat(Math.round(fraction * width)).padEnd(width, "·");

async function main() {
  const line = '中文🙂 "quoted" \\ path '.repeat(6000);
  writeFileSync(path.join(dir, "one-long-line.txt"), line);
  const crlf = 'id,name,comment\r\n1,Ada,"says \\"hi\\""\r\n2,Lin,emoji 🙂\r\n3,Bo,tab\there\r\n';
  writeFileSync(path.join(dir, "table.csv"), crlf);

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(repo, "bin/pagewise.js"), "serve", "--root", dir, "--estimator", ESTIMATOR],
    stderr: "ignore",
  });
  const client = new Client(
    { name: "pagewise-demo", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  const estimator = await createEstimator(ESTIMATOR);
  const call = async (args) => {
    const result = await client.callTool({ name: "read", arguments: args });
    const text = result.content[0].text;
    return { text, json: JSON.parse(text), isError: result.isError === true };
  };

  const { tools } = await client.listTools();
  say(`Connected to pagewise over stdio. Tools: ${tools.map((t) => t.name).join(", ")}`);
  say();
  say(`1. one-long-line.txt: ONE line of ${[...line].length.toLocaleString()} code points`);
  say(
    `   (CJK, emoji, quotes, backslashes: every quote and backslash costs extra once JSON-escaped).`,
  );
  say(
    `   Reading it with max_tokens ${BUDGET}, estimator "${ESTIMATOR}", measured on the exact text returned:`,
  );
  say();
  // The real o200k count of each page, when the optional tokenizer package is installed.
  const o200k = await import("gpt-tokenizer/encoding/o200k_base").then(
    (m) => m.countTokens,
    () => undefined,
  );
  say(`   page  chars   tokens/budget  fill${" ".repeat(35)}${o200k ? "real o200k tokens" : ""}`);
  const contents = [];
  let longestCursor = 0;
  let largestReal = 0;
  let page = await call({ path: "one-long-line.txt", max_tokens: BUDGET });
  for (let n = 1; ; n++) {
    if (page.isError) throw new Error(page.text);
    const tokens = estimator.count(page.text);
    if (o200k) largestReal = Math.max(largestReal, o200k(page.text));
    contents.push(page.json.content);
    if (n <= 5 || !page.json.has_more) {
      say(
        `   ${String(n).padStart(4)}  ${String(page.json.content.length).padStart(5)}   ${String(tokens).padStart(5)}/${BUDGET}     ${bar(tokens / BUDGET)} ${((100 * tokens) / BUDGET).toFixed(1).padStart(5)}%   ${o200k ? o200k(page.text) : ""}`,
      );
    } else if (n === 6) {
      say("    ...");
    }
    if (tokens > BUDGET) throw new Error("over budget");
    if (!page.json.has_more) break;
    longestCursor = Math.max(longestCursor, page.json.next_cursor.length);
    page = await call({ cursor: page.json.next_cursor, max_tokens: BUDGET });
  }
  const rebuilt = contents.join("");
  say();
  say(
    `   ${contents.length} pages, every one within budget; the longest cursor was ${longestCursor} characters.`,
  );
  if (o200k) {
    say(
      `   The real o200k count of the largest page is ${largestReal}: the default estimator is built to stay above real tokenizers, and on CJK, emoji and escapes it does so with room to spare (docs/tokens.md).`,
    );
  }
  say(
    `   Pages concatenated == file: ${rebuilt === readFileSync(path.join(dir, "one-long-line.txt"), "utf8") ? "YES, byte for byte" : "NO"}`,
  );
  say();

  say("2. table.csv has CRLF line ends. Line mode returns the lines exactly as stored:");
  const lines = await client.callTool({
    name: "read",
    arguments: { path: "table.csv", offset: 1, limit: 2 },
  });
  say(`   ${JSON.stringify(lines.content[0].text)}`);
  const small = [];
  let p = await call({ path: "table.csv", max_tokens: SMALL_BUDGET });
  for (;;) {
    if (p.isError) throw new Error(p.text);
    small.push(p.json.content);
    if (!p.json.has_more) break;
    p = await call({ cursor: p.json.next_cursor, max_tokens: SMALL_BUDGET });
  }
  const same = small.join("") === crlf ? "YES" : "NO";
  say(
    `   Paged at max_tokens ${SMALL_BUDGET}: ${small.length} pages, rebuilt == file: ${same} (\\r\\n kept)`,
  );
  say();

  say("3. The file changes between two pages:");
  const first = await call({ path: "one-long-line.txt", max_tokens: BUDGET });
  say(`   page 1 read at version ${first.json.version}; now another process rewrites the file...`);
  writeFileSync(path.join(dir, "one-long-line.txt"), line.replace("quoted", "QUOTED"));
  const second = await call({ cursor: first.json.next_cursor, max_tokens: BUDGET });
  say(`   page 2 → ${second.text}`);
  say("   No text from the new version was mixed into the old one.");
  say();

  say("4. A tampered cursor, and a budget too small for even one character:");
  const c = first.json.next_cursor;
  const forged = await call({
    cursor: `${c.slice(0, 10)}${c[10] === "A" ? "B" : "A"}${c.slice(11)}`,
    max_tokens: BUDGET,
  });
  say(`   forged cursor → ${forged.json.error.code}: ${forged.json.error.message}`);
  const tiny = await call({ path: "table.csv", max_tokens: 10 });
  say(`   max_tokens 10 → ${tiny.json.error.code}: ${tiny.json.error.message}`);

  await client.close();
}

main()
  .catch((err) => {
    process.stderr.write(`demo failed: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
