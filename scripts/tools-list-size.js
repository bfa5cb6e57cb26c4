#!/usr/bin/env node
/**
 * The size of pagewise's `tools/list` answer as an agent's context pays for it on every turn:
 * characters and o200k tokens of the JSON `{"tools":[…]}`, fetched from the built server over stdio
 * with the SDK client, beside the same figure for the peer most agents use
 * (@modelcontextprotocol/server-filesystem, a dev dependency). It also prints the server
 * instructions' length and the longest tool description, which Claude Code cuts at 2,048
 * characters each.
 *
 * Usage: `npm run build && node scripts/tools-list-size.js [REPO_DIR]` (REPO_DIR: another
 * checkout's built server, to compare).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const repo = path.resolve(process.argv[2] ?? here);
const PEER = path.join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

/** `tools/list` and the instructions of the server `args` starts. */
async function listTools(args) {
  const client = new Client({ name: "pagewise-tools-list-size", version: "0.0.0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" }),
  );
  const { tools } = await client.listTools();
  const instructions = client.getInstructions?.() ?? "";
  await client.close();
  return { tools, instructions };
}

function report(name, { tools, instructions }) {
  const text = JSON.stringify({ tools });
  const longest = Math.max(...tools.map((t) => (t.description ?? "").length));
  process.stdout.write(
    `${name}: ${tools.length} tools, ${text.length} characters, ${encode(text).length} o200k tokens` +
      ` (longest description ${longest} characters; instructions ${instructions.length} characters,` +
      ` ${encode(instructions).length} o200k tokens)\n`,
  );
}

const empty = mkdtempSync(path.join(os.tmpdir(), "pagewise-tools-list-"));
try {
  report(repo, await listTools([path.join(repo, "bin/pagewise.js"), "serve", "--root", repo]));
  report("server-filesystem (peer)", await listTools([PEER, empty]));
} finally {
  rmSync(empty, { recursive: true, force: true });
}
