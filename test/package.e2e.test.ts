/**
 * pagewise as users install it: the npm tarball installed into an empty project runs with no build
 * step and serves MCP over stdio; the Claude Desktop bundle validates with the official `mcpb` tool
 * and its server starts from the unpacked bundle exactly as the host would start it.
 */
import { execFile, execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getMcpConfigForManifest, unpackExtension, validateManifest } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../src/tools/index.js";
import { REPO, tempDir } from "./support/server.js";

const SLOW = 300_000;
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8"));
const manifest = JSON.parse(readFileSync(path.join(REPO, "manifest.json"), "utf8"));

let work: string;
let cleanup: () => void;
let content: string;
/** `npm run bundle`'s .mcpb, built in the background while the npm package is packed and installed. */
let bundled: Promise<string>;

beforeAll(() => {
  // On /dev/shm: npm install and the bundle's npm ci write tens of thousands of small files.
  ({ dir: work, cleanup } = tempDir("pagewise-package-", { inMemory: true }));
  content = path.join(work, "content");
  execFileSync("mkdir", ["-p", content]);
  writeFileSync(path.join(content, "hello.txt"), "hello from the installed package\n");
  // Both `npm pack`s below run `prepare` (the build); building first makes both no-ops, so the
  // two never build dist/ at the same time.
  execFileSync(process.execPath, [path.join(REPO, "scripts/build.js")], { cwd: REPO });
  bundled = runBundle(path.join(work, "pagewise.mcpb"));
  bundled.catch(() => undefined); // reported by the bundle's test
});
afterAll(async () => {
  await bundled?.catch(() => undefined);
  cleanup?.();
}, SLOW);

/** `node scripts/bundle.js OUTPUT`, staging in `work` (its temporary directory); resolves to OUTPUT. */
function runBundle(output: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(REPO, "scripts/bundle.js"), output],
      { cwd: REPO, env: { ...process.env, TMPDIR: work }, maxBuffer: 16 << 20 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(output),
    );
  });
}

/** Connects the SDK client to a server command; returns the tool names and a read of hello.txt. */
async function exercise(command: string, args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    cwd: work,
    stderr: "ignore",
  });
  const client = new Client({ name: "pagewise-package-test", version: "0.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const result = (await client.callTool({
      name: "read",
      arguments: { path: "hello.txt", max_tokens: 500 },
    })) as { content: { text: string }[] };
    return { names: tools.map((t) => t.name), page: JSON.parse(result.content[0]!.text) };
  } finally {
    await client.close();
  }
}

describe("the npm package", () => {
  let tarball: string;

  it(
    "packs what runs, and nothing of the build",
    () => {
      const name = execFileSync(npm, ["pack", "--silent", "--pack-destination", work], {
        cwd: REPO,
        encoding: "utf8",
      }).trim();
      tarball = path.join(work, name);
      const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
      expect(files).toContain("package/LICENSE");
      expect(files).toContain("package/bin/pagewise.js");
      expect(files).toContain("package/dist/index.js");
      expect(files).toContain("package/dist/cli/main.js");
      expect(files.filter((f) => /\.map$|tsbuildinfo|build-stamp|\.test\.js$/.test(f))).toEqual([]);
    },
    SLOW,
  );

  it(
    "installs into an empty project and serves tools/list over stdio with no build",
    async () => {
      const project = path.join(work, "project");
      execFileSync("mkdir", ["-p", project]);
      writeFileSync(path.join(project, "package.json"), '{"name":"try-pagewise","private":true}');
      execFileSync(
        npm,
        ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball],
        { cwd: project, stdio: "ignore" },
      );
      const bin = path.join(project, "node_modules", ".bin", "pagewise");
      expect(execFileSync(bin, ["--version"], { encoding: "utf8" })).toBe(`${pkg.version}\n`);
      const { names, page } = await exercise(bin, ["serve", "--root", content]);
      expect(names).toEqual(TOOLS.map((t) => t.name));
      expect(page.content).toBe("hello from the installed package\n");
      // Every import the docs show resolves from the package root.
      const probe =
        'import("pagewise").then((m) => console.log([m.runHttpServer, m.startHttpServer, m.Roots, m.pageItems, m.CursorCodec].map((x) => typeof x).join(",")))';
      const types = execFileSync(process.execPath, ["--input-type=module", "-e", probe], {
        cwd: project,
        encoding: "utf8",
      });
      expect(types.trim()).toBe("function,function,function,function,function");
      const docs = ["README.md", ...readdirSync(path.join(REPO, "docs")).map((f) => `docs/${f}`)];
      for (const doc of docs) {
        const text = readFileSync(path.join(REPO, doc), "utf8");
        expect(text, doc).not.toMatch(/from "pagewise\/(?!package\.json)/);
      }
    },
    SLOW,
  );
});

describe("the Claude Desktop bundle", () => {
  it("declares the server's tools, the package's version and a directory list", () => {
    expect(validateManifest(path.join(REPO, "manifest.json"))).toBe(true);
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.tools.map((t: { name: string }) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(manifest.user_config.directories).toMatchObject({
      type: "directory",
      multiple: true,
      required: true,
    });
    expect(manifest.user_config.cursor_key.sensitive).toBe(true);
  });

  it(
    "npm run bundle's .mcpb validates, unpacks, and its server starts as the host starts it",
    async () => {
      const bundle = await bundled;
      const unpacked = path.join(work, "unpacked");
      expect(await unpackExtension({ mcpbPath: bundle, outputDir: unpacked, silent: true })).toBe(
        true,
      );
      expect(validateManifest(path.join(unpacked, "manifest.json"))).toBe(true);
      const config = await getMcpConfigForManifest({
        manifest: JSON.parse(readFileSync(path.join(unpacked, "manifest.json"), "utf8")),
        extensionPath: unpacked,
        systemDirs: {},
        userConfig: { directories: [content], estimator: "o200k" },
        pathSeparator: path.sep,
      });
      expect(config?.command).toBe("node");
      // The host runs `node` from the user's PATH; the test runs the same script with this node.
      const { names, page } = await exercise(process.execPath, config!.args ?? [], config!.env);
      expect(names).toEqual(TOOLS.map((t) => t.name));
      expect(page.content).toBe("hello from the installed package\n");
    },
    SLOW,
  );
});
