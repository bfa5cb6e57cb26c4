/**
 * Test support for pagewise as users get it (the installed tarball, the unpacked Claude Desktop
 * bundle, the README's commands): a small tree with something for every tool to find, and one pass
 * over every tool through the official SDK v2 client that checks the answers.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { TOOLS } from "../../src/tools/index.js";
import { InPlaceProbeStdioClientTransport, outcomeOf, sdkClient } from "./server.js";

export const HELLO = "hello from the installed package\n";

/** Writes the tree `exerciseEveryTool` expects under `dir` (the server's one root). */
export function writeContent(dir: string): void {
  const files: Record<string, string> = {
    "hello.txt": HELLO,
    "src/app.ts": "export const a = 1; // TODO: tidy\n",
    "src/util.ts": "export const b = 2;\n// TODO: test\n",
    "notes.md": "# notes\nTODO later\n",
    "logs/app.log": "INFO start\nERROR disk full\nINFO ok\nERROR net down\nINFO done\n",
    "data/records.json":
      '[{"id":1,"name":"alpha"},{"id":2,"name":"beta"},{"id":3,"name":"alphabet"}]\n',
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
}

/** Calls a tool and returns its JSON page, failing with the server's own words on an error. */
async function page(client: Client, name: string, args: Record<string, unknown>) {
  const out = outcomeOf(await client.callTool({ name, arguments: args }));
  expect(out.isError, `${name} ${JSON.stringify(args)}: ${out.text}`).toBe(false);
  return out.json;
}

/**
 * Every tool once, on the tree of `writeContent` (relative paths resolve against the server's
 * first root): read, list with a glob, search (regex and literal), tail with grep, and json_open /
 * json_read with a `match()` filter / json_close.
 */
export async function exerciseEveryTool(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));

  expect((await page(client, "read", { path: "hello.txt", max_tokens: 500 })).content).toBe(HELLO);

  const listed = await page(client, "list", { path: ".", recursive: true, glob: "*.ts" });
  expect(listed.items.map((i: { path: string }) => i.path)).toEqual(["src/app.ts", "src/util.ts"]);

  const found = await page(client, "search", { path: ".", pattern: "TODO:\\s*\\w+" });
  expect(found.pagination.total).toBe(2);
  expect(found.items.map((i: { path: string; line: number }) => [i.path, i.line])).toEqual([
    ["src/app.ts", 1],
    ["src/util.ts", 2],
  ]);
  const literal = await page(client, "search", { path: ".", pattern: "TODO l", literal: true });
  expect(literal.items.map((i: { path: string; text: string }) => [i.path, i.text])).toEqual([
    ["notes.md", "TODO later"],
  ]);

  const tailed = await page(client, "tail", { path: "logs/app.log", grep: "ERROR \\w+" });
  expect(tailed.items.map((i: { text: string }) => i.text)).toEqual([
    "ERROR disk full",
    "ERROR net down",
  ]);

  const opened = await page(client, "json_open", { path: "data/records.json" });
  const matched = await page(client, "json_read", {
    file_id: opened.file_id,
    language: "jsonpath",
    query: "$[?match(@.name, 'alpha.*')].id",
  });
  expect(matched.items).toEqual([
    { path: "/0/id", value: 1 },
    { path: "/2/id", value: 3 },
  ]);
  await page(client, "json_close", { file_id: opened.file_id });
}

export interface Command {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** Starts `command` as an MCP client would (stdio), runs `exerciseEveryTool`, and stops it. */
export async function exerciseStdioServer({ command, args, env = {}, cwd }: Command) {
  const transport = new InPlaceProbeStdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    ...(cwd === undefined ? {} : { cwd }),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += chunk.toString();
  });
  const client = sdkClient();
  try {
    await client.connect(transport);
    await exerciseEveryTool(client);
  } catch (err) {
    throw new Error(`${command} ${args.join(" ")}: ${(err as Error).message}\nstderr: ${stderr}`, {
      cause: err,
    });
  } finally {
    await client.close();
  }
}

/** Sum of the sizes of the files under `dir` (what `du --apparent-size` counts), in bytes. */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

/** Files that run on one platform only (native addons, shared libraries, gyp builds). */
export function platformSpecificFiles(dir: string, rel = ""): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) found.push(...platformSpecificFiles(dir, name));
    else if (/\.(node|so|dylib|dll|exe)$|(^|\/)binding\.gyp$/.test(name)) found.push(name);
  }
  return found;
}

/**
 * npm's own command-line script (npm-cli.js), so that npm can be run under another Node binary:
 * `npm_execpath` when npm started the tests, else the `npm` found on PATH.
 */
export function npmCliScript(): string {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm && /npm-cli\.js$/.test(fromNpm)) return fromNpm;
  const npm = execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim();
  return realpathSync(npm);
}

/** The environment without the `npm_*` variables `npm test` sets, so child npm runs are clean. */
export function envWithoutNpm(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^npm_/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}
