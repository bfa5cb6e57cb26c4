#!/usr/bin/env node
/**
 * The size of pagewise's `tools/list` answer as an agent's context pays for it: characters and
 * o200k tokens of the JSON `{"tools":[…]}`, fetched from the built server over stdio with the SDK
 * client. Usage: `npm run build && node scripts/tools-list-size.js [REPO_DIR]` (REPO_DIR: another
 * checkout's built server, to compare).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const repo = path.resolve(
  process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."),
);
const client = new Client({ name: "pagewise-tools-list-size", version: "0.0.0" });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [path.join(repo, "bin/pagewise.js"), "serve", "--root", repo],
    stderr: "ignore",
  }),
);
const { tools } = await client.listTools();
await client.close();
const text = JSON.stringify({ tools });
process.stdout.write(
  `${repo}: ${tools.length} tools, ${text.length} characters, ${encode(text).length} o200k tokens\n`,
);
