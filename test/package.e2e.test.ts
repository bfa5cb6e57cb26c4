/**
 * pagewise as users install it. The npm tarball installs with `--ignore-scripts` and
 * `--engine-strict` into an empty project, quietly, with no compiler, under every Node version
 * named in PAGEWISE_TEST_NODE_BINARIES (`.ci/run` sets Node 22 and 24) besides the one running the
 * tests, and serves every tool over stdio. The Claude Desktop bundle carries nothing
 * platform-specific, takes its defaults from the server, and its server, started from the unpacked
 * bundle exactly as its manifest says, answers every tool; the exact tokenizers are in it only
 * when asked for.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getMcpConfigForManifest, unpackExtension, validateManifest } from "@anthropic-ai/mcpb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOKENS_CAP } from "../src/core/limits.js";
import { TOOLS } from "../src/tools/index.js";
import {
  envWithoutNpm,
  exerciseStdioServer,
  HELLO,
  npmCliScript,
  platformSpecificFiles,
  treeBytes,
  writeContent,
} from "./support/package.js";
import { REPO, tempDir } from "./support/server.js";

const SLOW = 300_000;
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8"));
const manifest = JSON.parse(readFileSync(path.join(REPO, "manifest.json"), "utf8"));
/** The promise made to users about a default install of the tarball. */
const MAX_INSTALL_BYTES = 25_000_000;
/** Lifecycle scripts npm runs when a package is installed (none may be in the published package). */
/**
 * Scripts npm runs when the package is installed. `prepare` is not one of them for a tarball or a
 * registry install (npm runs it only in a clone, for git dependencies and before packing), and in a
 * clone it is the build that makes `npm ci` leave a working `bin` (the contract's install promise).
 */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"];

/** The Node binaries the package is checked under: this one, then PAGEWISE_TEST_NODE_BINARIES. */
const NODES = [
  process.execPath,
  ...(process.env.PAGEWISE_TEST_NODE_BINARIES ?? "").split(path.delimiter).filter(Boolean),
].map((binary) => ({
  binary,
  version: execFileSync(binary, ["--version"], { encoding: "utf8" }).trim(),
}));

let work: string;
let cleanup: () => void;
let content: string;
let tarball: string;
/** `npm run bundle`'s .mcpb, built in the background while the npm package is packed and installed. */
let bundled: Promise<string>;
/** The same with `--exact-tokenizers`. */
let bundledExact: Promise<string>;

beforeAll(() => {
  // On /dev/shm: npm install and the bundle's npm ci write tens of thousands of small files.
  ({ dir: work, cleanup } = tempDir("pagewise-package-", { inMemory: true }));
  content = path.join(work, "content");
  writeContent(content);
  // `npm pack` runs `prepare` (the build); building first makes every pack below a no-op build,
  // so no two of them build dist/ at the same time.
  execFileSync(process.execPath, [path.join(REPO, "scripts/build.js")], { cwd: REPO });
  bundled = runBundle(path.join(work, "pagewise.mcpb"));
  bundledExact = runBundle(path.join(work, "pagewise-exact.mcpb"), ["--exact-tokenizers"]);
  bundled.catch(() => undefined); // reported by the bundle's tests
  bundledExact.catch(() => undefined);
  const name = execFileSync(npm, ["pack", "--silent", "--pack-destination", work], {
    cwd: REPO,
    encoding: "utf8",
  }).trim();
  tarball = path.join(work, name);
}, SLOW);
afterAll(async () => {
  await Promise.allSettled([bundled, bundledExact]);
  cleanup?.();
}, SLOW);

/** `node scripts/bundle.js [FLAGS] OUTPUT`, staging in `work`; resolves to OUTPUT. */
function runBundle(output: string, flags: string[] = []): Promise<string> {
  const dir = path.join(work, path.basename(output, ".mcpb"));
  mkdirSync(dir);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(REPO, "scripts/bundle.js"), ...flags, output],
      { cwd: REPO, env: { ...process.env, TMPDIR: dir }, maxBuffer: 16 << 20 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(output),
    );
  });
}

/** `npm install ARGS` in `project`, npm itself running on `node`; returns everything npm printed. */
function npmInstall(node: string, project: string, args: string[]): string {
  const run = spawnSync(
    node,
    [
      npmCliScript(),
      "install",
      "--ignore-scripts",
      "--engine-strict",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      ...args,
    ],
    { cwd: project, encoding: "utf8", env: envWithoutNpm() },
  );
  const printed = `${run.stdout}${run.stderr}`;
  expect(run.status, printed).toBe(0);
  return printed;
}

/** An empty project with the tarball installed by npm running on `node`; returns its directory. */
function installTarball(node: string, name: string): { project: string; printed: string } {
  const project = path.join(work, name);
  mkdirSync(project);
  writeFileSync(path.join(project, "package.json"), '{"name":"try-pagewise","private":true}');
  return { project, printed: npmInstall(node, project, [tarball]) };
}

/** The `>=N` lower bound of an engines range, or undefined when the range is not of that form. */
function lowerBound(range: string): number[] | undefined {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}
const atMost = (a: number[], b: number[]) =>
  a[0]! < b[0]! || (a[0] === b[0] && (a[1]! < b[1]! || (a[1] === b[1] && a[2]! <= b[2]!)));

describe("the npm package", () => {
  it("packs what runs, with no install script and no exact tokenizer in its dependencies", () => {
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(files).toContain("package/LICENSE");
    expect(files).toContain("package/bin/pagewise.js");
    expect(files).toContain("package/dist/index.js");
    expect(files).toContain("package/dist/cli/main.js");
    expect(files.filter((f) => /\.map$|tsbuildinfo|build-stamp|\.test\.js$/.test(f))).toEqual([]);
    const packed = JSON.parse(
      execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }),
    );
    expect(INSTALL_SCRIPTS.filter((s) => packed.scripts?.[s] !== undefined)).toEqual([]);
    // gpt-tokenizer (30 MB) is an optional peer: installed only by a user who asks for it.
    expect(packed.dependencies["gpt-tokenizer"]).toBeUndefined();
    expect(packed.optionalDependencies?.["gpt-tokenizer"]).toBeUndefined();
    expect(packed.peerDependencies["gpt-tokenizer"]).toBeDefined();
    expect(packed.peerDependenciesMeta["gpt-tokenizer"]).toEqual({ optional: true });
  });

  it("npm ci in a clone compiles nothing native: no install script anywhere, and prepare only builds dist/", () => {
    expect(INSTALL_SCRIPTS.filter((s) => pkg.scripts[s] !== undefined)).toEqual([]);
    expect(pkg.scripts.prepare).toBe("node scripts/build.js");
    const withScripts = Object.entries<any>(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([where]) => where);
    expect(withScripts).toEqual([]);
  });

  it("claims no Node version a production dependency refuses", () => {
    const ours = lowerBound(pkg.engines.node);
    expect(ours, pkg.engines.node).toBeDefined();
    const refusing: string[] = [];
    for (const [where, entry] of Object.entries<any>(lock.packages)) {
      if (where === "" || entry.dev || entry.devOptional) continue;
      const range: string | undefined = entry.engines?.node;
      if (range === undefined) continue;
      const theirs = lowerBound(range);
      if (theirs === undefined || !atMost(theirs, ours!)) refusing.push(`${where}: ${range}`);
    }
    expect(refusing).toEqual([]);
    // The bundle's manifest says the same.
    expect(manifest.compatibility.runtimes.node).toBe(pkg.engines.node);
  });

  describe.each(NODES)("under Node $version", ({ binary, version }) => {
    it(
      "installs with --ignore-scripts and --engine-strict, quietly, and serves every tool",
      async () => {
        const { project, printed } = installTarball(binary, `project-${version}`);
        // No EBADENGINE, no install-script notice, no deprecation: nothing at all to warn about.
        expect(printed).not.toMatch(/EBADENGINE|npm warn|npm WARN/);
        const modules = path.join(project, "node_modules");
        expect(existsSync(path.join(modules, "gpt-tokenizer"))).toBe(false);
        expect(platformSpecificFiles(modules)).toEqual([]);
        expect(treeBytes(modules)).toBeLessThan(MAX_INSTALL_BYTES);
        const bin = path.join(modules, "pagewise", "bin", "pagewise.js");
        expect(execFileSync(binary, [bin, "--version"], { encoding: "utf8" })).toBe(
          `${pkg.version}\n`,
        );
        await exerciseStdioServer({ command: binary, args: [bin, "serve", "--root", content] });
      },
      SLOW,
    );
  });

  it(
    "runs from its .bin shim, and every import the docs show resolves from the package root",
    () => {
      const { project } = installTarball(process.execPath, "project-imports");
      const shim = path.join(project, "node_modules", ".bin", "pagewise");
      expect(execFileSync(shim, ["--version"], { encoding: "utf8" })).toBe(`${pkg.version}\n`);
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
      // The exact tokenizers load only when chosen: without them the choice stops the server
      // with one line saying what to install (exit status 2), and once installed they count.
      const bin = path.join(project, "node_modules", "pagewise", "bin", "pagewise.js");
      const refused = spawnSync(process.execPath, [bin, "serve", "--estimator", "o200k", content], {
        encoding: "utf8",
        input: "",
      });
      expect(refused.status, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/gpt-tokenizer.*npm install gpt-tokenizer/);
      expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
      npmInstall(process.execPath, project, [
        `gpt-tokenizer@${pkg.devDependencies["gpt-tokenizer"]}`,
      ]);
      const counted = execFileSync(
        process.execPath,
        [
          bin,
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
        { cwd: content, encoding: "utf8" },
      );
      expect(JSON.parse(counted).content).toBe(HELLO);
    },
    SLOW,
  );
});

let unpackedCount = 0;
/** Unpacks a bundle; returns the directory and how the host would start its server. */
async function unpackBundle(bundle: string, userConfig: Record<string, unknown>) {
  const unpacked = path.join(work, `unpacked-${++unpackedCount}`);
  expect(await unpackExtension({ mcpbPath: bundle, outputDir: unpacked, silent: true })).toBe(true);
  expect(validateManifest(path.join(unpacked, "manifest.json"))).toBe(true);
  const unpackedManifest = JSON.parse(readFileSync(path.join(unpacked, "manifest.json"), "utf8"));
  const config = await getMcpConfigForManifest({
    manifest: unpackedManifest,
    extensionPath: unpacked,
    systemDirs: {},
    userConfig: { directories: [content], ...userConfig },
    pathSeparator: path.sep,
  });
  expect(config).toBeDefined();
  return { unpacked, manifest: unpackedManifest, config: config! };
}

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
    "npm run bundle's .mcpb carries nothing platform-specific, and its server, started as its manifest says, answers every tool",
    async () => {
      const { unpacked, manifest: shipped, config } = await unpackBundle(await bundled, {});
      expect(shipped.compatibility.platforms).toEqual(["darwin", "win32", "linux"]);
      expect(platformSpecificFiles(unpacked)).toEqual([]);
      expect(existsSync(path.join(unpacked, "node_modules", "gpt-tokenizer"))).toBe(false);
      // A user who leaves the settings alone gets the server's own budgets.
      expect(shipped.user_config.default_max_tokens.default).toBe(DEFAULT_MAX_TOKENS);
      expect(shipped.user_config.max_tokens_cap.default).toBe(DEFAULT_MAX_TOKENS_CAP);
      expect(config.env).toMatchObject({
        PAGEWISE_DEFAULT_MAX_TOKENS: String(DEFAULT_MAX_TOKENS),
        PAGEWISE_MAX_TOKENS_CAP: String(DEFAULT_MAX_TOKENS_CAP),
        PAGEWISE_ESTIMATOR: "default",
      });
      // Exactly the host's command: `node` from PATH, the manifest's arguments and environment.
      expect(config.command).toBe("node");
      await exerciseStdioServer({
        command: config.command,
        args: config.args ?? [],
        env: config.env ?? {},
      });
    },
    SLOW,
  );

  it(
    "the README states the bundle's size",
    async () => {
      const mib = statSync(await bundled).size / 1024 / 1024;
      const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
      const stated = new RegExp(`pagewise-${pkg.version}\\.mcpb\`[^)]*?about ([\\d.]+) MiB`).exec(
        readme,
      );
      expect(stated, "README: `pagewise-VERSION.mcpb` … about N MiB").not.toBeNull();
      expect(
        Math.abs(Number(stated![1]) - mib),
        `the bundle is ${mib.toFixed(1)} MiB`,
      ).toBeLessThan(0.5);
    },
    SLOW,
  );

  it(
    "with --exact-tokenizers it carries gpt-tokenizer, and the o200k estimator counts",
    async () => {
      const { unpacked, config } = await unpackBundle(await bundledExact, { estimator: "o200k" });
      expect(existsSync(path.join(unpacked, "node_modules", "gpt-tokenizer"))).toBe(true);
      expect(platformSpecificFiles(unpacked)).toEqual([]);
      expect(config.env?.PAGEWISE_ESTIMATOR).toBe("o200k");
      await exerciseStdioServer({
        command: config.command,
        args: config.args ?? [],
        env: config.env ?? {},
      });
    },
    SLOW,
  );

  it(
    "without them, choosing o200k stops the bundle's server with a message saying how to get them",
    async () => {
      const { config } = await unpackBundle(await bundled, { estimator: "o200k" });
      const run = spawnSync(config.command, config.args ?? [], {
        env: { ...process.env, ...config.env },
        encoding: "utf8",
        input: "",
      });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/npm run bundle -- --exact-tokenizers/);
    },
    SLOW,
  );
});
