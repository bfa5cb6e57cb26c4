#!/usr/bin/env node
/**
 * `npm run bundle`: the Claude Desktop bundle (`pagewise-VERSION.mcpb`). Stages exactly what
 * `npm pack` publishes plus the production dependencies from the lockfile, writes manifest.json
 * with the package's version, and packs it with the official `mcpb` tool. Needs a built dist/.
 * Usage: node scripts/bundle.js [OUTPUT.mcpb]
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packExtension, validateManifest } from "@anthropic-ai/mcpb";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
const output = path.resolve(process.argv[2] ?? path.join(repo, `pagewise-${pkg.version}.mcpb`));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = { stdio: ["ignore", "ignore", "inherit"] };

const work = mkdtempSync(path.join(tmpdir(), "pagewise-bundle-"));
try {
  // The published files, as npm selects them (package.json "files").
  const tarball = execFileSync(npm, ["pack", "--silent", "--pack-destination", work], {
    cwd: repo,
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["-xzf", path.join(work, tarball), "-C", work]);
  const stage = path.join(work, "package");
  copyFileSync(path.join(repo, "package-lock.json"), path.join(stage, "package-lock.json"));
  execFileSync(
    npm,
    ["ci", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: stage, ...quiet },
  );
  const manifest = JSON.parse(readFileSync(path.join(repo, "manifest.json"), "utf8"));
  manifest.version = pkg.version;
  writeFileSync(path.join(stage, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // Not needed to run the server: type declarations, source maps, the lockfile, and the parts of
  // gpt-tokenizer that ESM imports never load (its CommonJS build, TypeScript sources, raw data).
  const unused = ["*.d.ts", "*.d.mts", "*.d.cts", "*.map", "package-lock.json", ".mcpbignore"];
  for (const dir of ["cjs", "src", "data"]) unused.push(`node_modules/gpt-tokenizer/${dir}/`);
  writeFileSync(path.join(stage, ".mcpbignore"), `${unused.join("\n")}\n`);
  if (!validateManifest(path.join(stage, "manifest.json"))) process.exit(1);
  rmSync(output, { force: true });
  if (!(await packExtension({ extensionPath: stage, outputPath: output, silent: true }))) {
    process.exit(1);
  }
  const bytes = statSync(output).size;
  process.stdout.write(`${output} (${(bytes / 1024 / 1024).toFixed(1)} MiB)\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
