#!/usr/bin/env node
/**
 * Builds dist/ only when it is older than its sources, so `npm run demo`, `npm test`, `npm pack`
 * (through `prepare`) and the benchmarks build once however many run after another. When a source is
 * newer, tsc rebuilds incrementally (dist/.tsbuildinfo). `--force` always runs tsc.
 *
 * Then esbuild (its WebAssembly build: no install script, no platform binary) bundles what `bin/pagewise.js` runs into dist/bundle/: the command's entry and the
 * two worker entries, split at the dynamic imports so that a command still loads only its own code.
 * Perf: Node reads each ES module with its own round trip through the thread pool, so a command
 * that loaded 60-80 files spent most of its start waiting for them (`list` 300 ms over `node -e 0`
 * unbundled). The library (dist/index.js) stays unbundled; `PAGEWISE_UNBUNDLED=1` runs the command
 * from dist/cli/ to see its modules (test/loading.e2e.test.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const stamp = path.join(repo, "dist", ".build-stamp");
const inputs = ["src", "tsconfig.json", "tsconfig.build.json", "package.json"];

/** The newest modification time (ms) among the files at or under `p`. */
function newest(p) {
  const stats = statSync(p);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let max = stats.mtimeMs; // a deleted file shows as a newer directory
  for (const entry of readdirSync(p)) max = Math.max(max, newest(path.join(p, entry)));
  return max;
}

const force = process.argv.includes("--force");
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : -1;
const sources = Math.max(...inputs.map((i) => newest(path.join(repo, i))));
const bundled = existsSync(path.join(repo, "dist", "bundle", "main.js"));
if (!force && bundled && built >= sources) process.exit(0);

const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");
const args = [
  "-p",
  "tsconfig.build.json",
  "--incremental",
  "--tsBuildInfoFile",
  "dist/.tsbuildinfo",
];
const result = spawnSync(process.execPath, [tsc, ...args], { cwd: repo, stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
await bundleCommand();
writeFileSync(stamp, `${new Date().toISOString()}\n`);

/** dist/bundle/: the command and its workers, from tsc's output (see the top of this file). */
async function bundleCommand() {
  const { build } = await import("esbuild-wasm");
  const dist = path.join(repo, "dist");
  const outdir = path.join(dist, "bundle");
  const { version } = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
  rmSync(outdir, { recursive: true, force: true });
  await build({
    // Named as the modules that start them expect: new URL("./walk-worker.js", import.meta.url).
    entryPoints: {
      main: path.join(dist, "cli", "main.js"),
      "walk-worker": path.join(dist, "sources", "walk-worker.js"),
      "regex-worker": path.join(dist, "sources", "pattern", "regex-worker.js"),
    },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    chunkNames: "chunk-[hash]",
    // CommonJS dependencies bundled into ES modules call require for Node's built-ins.
    banner: {
      js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
    },
    logLevel: "warning",
    plugins: [
      {
        // version.js reads ../package.json, which is not there from dist/bundle/.
        name: "package-version",
        setup(b) {
          b.onLoad({ filter: /[\\/]dist[\\/]version\.js$/ }, () => ({
            contents: `export const PACKAGE_VERSION = ${JSON.stringify(version)};`,
            loader: "js",
          }));
        },
      },
    ],
  });
}
