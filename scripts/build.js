#!/usr/bin/env node
/**
 * Builds dist/ only when it is older than its sources, so `npm run demo`, `npm test`, `npm pack`
 * (through `prepare`) and the benchmarks build once however many run after another. When a source is
 * newer, tsc rebuilds incrementally (dist/.tsbuildinfo). `--force` always runs tsc.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
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
if (!force && built >= sources) process.exit(0);

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
writeFileSync(stamp, `${new Date().toISOString()}\n`);
