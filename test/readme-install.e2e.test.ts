/**
 * The README's install and client-configuration commands, run as written so that they cannot drift
 * from what works. In a copy of this working tree (what a clone holds), every `sh` line of the
 * section "Install and use it from an MCP client" runs in order, with `/path/to/project` (and VS
 * Code's `${workspaceFolder}`) replaced by a content directory and the HTTP port by a free one;
 * `npm install -g` installs into a private prefix whose `bin` is on PATH. Every server a line or a
 * JSON configuration starts (`claude mcp add … -- CMD…`: the command after `--`; `code --add-mcp
 * JSON`; Claude Desktop, Cursor and VS Code files) answers every tool through the SDK client.
 * Commands that need the npm registry to know pagewise appear only where the README says "not yet".
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Command,
  envWithoutNpm,
  exerciseEveryTool,
  exerciseStdioServer,
  HELLO,
  writeContent,
} from "./support/package.js";
import { REPO, sdkClient, tempDir } from "./support/server.js";

const SLOW = 600_000;
const README = readFileSync(path.join(REPO, "README.md"), "utf8");
const SECTION_TITLE = "## Install and use it from an MCP client";
/** A command that fetches pagewise by name from the npm registry, where it is not yet. */
const REGISTRY_FORM =
  /(?:npx(?: -y)?|npm (?:install|i)(?: -g)?) pagewise(?![-\w./])|"-y",\s*"pagewise"/;

interface Block {
  lang: string;
  body: string;
}

/** The fenced blocks of `markdown`, in order (indented ones inside list items included). */
function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^( *)```(\w*)\n([\s\S]*?)^\1```$/gm;
  for (const m of markdown.matchAll(fence)) {
    const indent = m[1]!.length;
    const body = m[3]!
      .split("\n")
      .map((line) => line.slice(indent))
      .join("\n");
    blocks.push({ lang: m[2]!, body });
  }
  return blocks;
}

/** The README section `title` up to the next `## ` heading. */
function section(title: string): string {
  const start = README.indexOf(title);
  expect(start, title).toBeGreaterThanOrEqual(0);
  const next = README.indexOf("\n## ", start + title.length);
  return README.slice(start, next < 0 ? undefined : next);
}

const isNotYet = (block: Block) => /^# not yet\b/i.test(block.body);

/** A shell line's words as the shell expands them (quotes, `$(…)`); runs nothing else. */
function shellWords(line: string, env: Record<string, string>): string[] {
  const script = `set -- ${line}\nfor word; do printf '%s\\0' "$word"; done`;
  const out = execFileSync("sh", ["-c", script], { encoding: "utf8", env });
  return out.split("\0").slice(0, -1);
}

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The files a clone of the working tree holds (tracked and new, not ignored), copied to `to`. */
function copyWorkingTree(to: string): void {
  const listed = execFileSync("git", ["ls-files", "-z", "-co", "--exclude-standard"], {
    cwd: REPO,
    encoding: "utf8",
  });
  for (const file of new Set(listed.split("\0").filter(Boolean))) {
    const from = path.join(REPO, file);
    if (!existsSync(from) || !lstatSync(from).isFile()) continue; // deleted, or a symbolic link
    mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    copyFileSync(from, path.join(to, file));
  }
}

let work: string;
let cleanup: () => void;
let clone: string;
let content: string;
let env: Record<string, string>;
let port = 8080; // chosen anew just before the README's server line runs
const servers: ChildProcess[] = [];

beforeAll(async () => {
  ({ dir: work, cleanup } = tempDir("pagewise-readme-", { inMemory: true }));
  clone = path.join(work, "pagewise");
  content = path.join(work, "project");
  writeContent(content);
  copyWorkingTree(clone);
  const prefix = path.join(work, "global");
  mkdirSync(prefix);
  // `npm install -g` writes into this prefix, and its bin directory comes first on PATH; the
  // node_modules/.bin directories `npm test` puts on PATH are not on a new user's.
  const userPath = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !/node_modules[\\/]\.bin$/.test(dir));
  env = envWithoutNpm({
    npm_config_prefix: prefix,
    PATH: [path.join(prefix, "bin"), ...userPath].join(path.delimiter),
  });
});
afterAll(() => {
  for (const server of servers) server.kill();
  cleanup?.();
});

/** The README's text with the placeholders replaced by this test's directory and port. */
function substituted(text: string): string {
  return text
    .replaceAll("/path/to/project", content)
    .replaceAll("/path/to/pagewise-", `${clone}/pagewise-`)
    .replaceAll("$" + "{workspaceFolder}", content) // VS Code's variable, not a template
    .replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`);
}

/** Starts `pagewise serve --http …` and resolves once it says it is listening. */
function startHttpServer(words: string[]): Promise<void> {
  const server = spawn(words[0]!, words.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
  servers.push(server);
  let printed = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes('"event":"listening"')) resolve();
    };
    server.stdout!.on("data", onData);
    server.stderr!.on("data", onData);
    server.once("exit", (code) =>
      reject(new Error(`${words.join(" ")} exited ${code}: ${printed}`)),
    );
  });
}

async function exerciseHttp(url: string): Promise<void> {
  const client = sdkClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await exerciseEveryTool(client);
  } finally {
    await client.close();
  }
}

/** What `claude mcp add` would run: the command after `--` with its `-e` variables, or a URL. */
function claudeServer(words: string[]): Command | { url: string } {
  expect(words.slice(0, 3)).toEqual(["claude", "mcp", "add"]);
  const dashes = words.indexOf("--");
  if (dashes < 0) {
    expect(words).toContain("http");
    return { url: words.at(-1)! };
  }
  const serverEnv: Record<string, string> = {};
  words.slice(3, dashes).forEach((word, i, options) => {
    if (word !== "-e" && word !== "--env") return;
    const [name, ...value] = options[i + 1]!.split("=");
    serverEnv[name!] = value.join("=");
  });
  const [command, ...args] = words.slice(dashes + 1);
  return { command: command!, args, env: { ...env, ...serverEnv }, cwd: work };
}

/**
 * Runs one line of an `sh` block the way its kind asks; returns what it did, for the tally. The
 * line is substituted as it runs, so the HTTP server's port is chosen just before it listens.
 */
async function runLine(readmeLine: string): Promise<string> {
  const line = substituted(readmeLine);
  const first = /^\s*(\S+)/.exec(line)![1];
  if (first !== "claude" && first !== "code" && first !== "pagewise") {
    const run = spawnSync("sh", ["-c", line], { cwd: clone, env, encoding: "utf8" });
    expect(run.status, `${line}\n${run.stdout}${run.stderr}`).toBe(0);
    return line.trim().split(/\s+/).slice(0, 2).join(" ");
  }
  // A client's command line: one simple command whose words the shell expands.
  expect(line, "one command per line").not.toMatch(/&&|\|\||;|\|(?![^(]*\))/);
  const words = shellWords(line, env);
  if (words[0] === "claude") {
    const server = claudeServer(words);
    if ("url" in server) await exerciseHttp(server.url);
    else await exerciseStdioServer(server);
    return "claude mcp add";
  }
  if (words[0] === "code") {
    expect(words[1]).toBe("--add-mcp");
    const config = JSON.parse(words[2]!);
    await exerciseStdioServer({ ...config, env: { ...env, ...config.env }, cwd: work });
    return "code --add-mcp";
  }
  expect(words.slice(0, 3), "a server the next line connects to").toEqual([
    "pagewise",
    "serve",
    "--http",
  ]);
  // The port was free when chosen, but a parallel test may take it before the server binds.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await startHttpServer(shellWords(substituted(readmeLine), env));
      return "pagewise serve --http";
    } catch (error) {
      if (attempt === 3 || !String(error).includes("EADDRINUSE")) throw error;
    }
  }
}

/** Every server a client-configuration JSON names, started and driven as that client would. */
async function runConfiguration(json: string): Promise<number> {
  const config = JSON.parse(json);
  const entries = Object.values<any>(config.mcpServers ?? config.servers ?? {});
  expect(entries.length, json).toBeGreaterThan(0);
  for (const entry of entries) {
    if (entry.type !== undefined) expect(entry.type).toBe("stdio");
    await exerciseStdioServer({
      command: entry.command,
      args: entry.args ?? [],
      env: { ...env, ...entry.env },
      cwd: work,
    });
  }
  return entries.length;
}

describe("the README's install commands", () => {
  it("name the registry only where they say it does not work yet", () => {
    const chunks = [
      ...fencedBlocks(README).map((b) => b.body),
      ...README.replace(/^( *)```[\s\S]*?^\1```$/gm, "").split(/\n\s*\n/),
    ];
    const unmarked = chunks.filter(
      (chunk) => REGISTRY_FORM.test(chunk) && !/not yet|E404/i.test(chunk),
    );
    expect(unmarked).toEqual([]);
    // The section's blocks that are run below hold no registry form either.
    for (const block of fencedBlocks(section(SECTION_TITLE)).filter((b) => !isNotYet(b))) {
      expect(block.body).not.toMatch(REGISTRY_FORM);
    }
  });

  it(
    "work as written in a clone: the tarball, the bundle, and every client configuration",
    async () => {
      const done: string[] = [];
      for (const block of fencedBlocks(section(SECTION_TITLE))) {
        if (isNotYet(block)) continue;
        if (block.lang === "json") {
          const servers = await runConfiguration(substituted(block.body));
          done.push(...Array(servers).fill("configuration file"));
          continue;
        }
        expect(block.lang, block.body).toBe("sh");
        for (const line of block.body.split("\n")) {
          if (line.trim() === "" || line.trim().startsWith("#")) continue;
          done.push(await runLine(line));
        }
      }
      const tally = (kind: string) => done.filter((d) => d === kind).length;
      expect(done).toContain("npm ci");
      expect(done).toContain("npm install");
      expect(done).toContain("npm run");
      expect(tally("claude mcp add")).toBeGreaterThanOrEqual(3); // two stdio, one HTTP
      expect(tally("configuration file")).toBeGreaterThanOrEqual(2); // Claude Desktop, VS Code
      expect(tally("code --add-mcp")).toBe(1);
      expect(tally("pagewise serve --http")).toBe(1);

      // `npm run bundle` made the file the README names, of the size it states.
      const version = JSON.parse(readFileSync(path.join(clone, "package.json"), "utf8")).version;
      const bundle = path.join(clone, `pagewise-${version}.mcpb`);
      const mib = statSync(bundle).size / 1024 / 1024;
      const stated = /about ([\d.]+) MiB/.exec(section(SECTION_TITLE));
      expect(Math.abs(Number(stated?.[1]) - mib), `${mib.toFixed(1)} MiB`).toBeLessThan(0.5);
      // The tarball run in place with npx, as the section says it can be (with a cache of its
      // own, so that runs of this test leave nothing in the user's).
      const inPlace = /`(npx -y -p \/path\/to\/pagewise-[^`]+\.tgz pagewise)`/.exec(
        section(SECTION_TITLE),
      );
      expect(inPlace, "npx -y -p /path/to/pagewise-VERSION.tgz pagewise").not.toBeNull();
      const npx = spawnSync("sh", ["-c", `${substituted(inPlace![1]!)} --version`], {
        cwd: work,
        env: { ...env, npm_config_cache: path.join(work, "npx-cache") },
        encoding: "utf8",
      });
      expect(npx.stdout, npx.stderr).toBe(`${version}\n`);
      // The exact tokenizers, installed as the Estimators paragraph says, count for the global
      // install (the paragraph's line ran above, being in this section).
      const counted = execFileSync(
        "pagewise",
        [
          "read",
          "hello.txt",
          "--estimator",
          "o200k",
          "--max-tokens",
          "2000",
          "--json",
          "--root",
          content,
        ],
        { cwd: content, env, encoding: "utf8" },
      );
      expect(JSON.parse(counted).content).toBe(HELLO);
    },
    SLOW,
  );
});
