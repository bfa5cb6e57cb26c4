#!/usr/bin/env node
/**
 * `npm run bundle`: the Claude Desktop bundle (`pagewise-VERSION.mcpb`). Stages exactly what
 * `npm pack` publishes plus the production dependencies from the lockfile, writes manifest.json
 * with the package's version, Node range and the server's own budget defaults, checks that nothing
 * platform-specific is inside (the manifest declares darwin, win32 and linux), and packs it with
 * the official `mcpb` tool. Needs a built dist/.
 *
 * The exact tokenizers (gpt-tokenizer, 30 MB, an optional peer dependency) are left out unless
 * `--exact-tokenizers` is given; without them `--estimator o200k|cl100k` stops the server with a
 * message saying so.
 *
 * Usage: node scripts/bundle.js [--exact-tokenizers] [OUTPUT.mcpb]
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { packExtension, validateManifest } from "@anthropic-ai/mcpb";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
const args = process.argv.slice(2);
const exactTokenizers = args.includes("--exact-tokenizers");
const outputArg = args.find((arg) => !arg.startsWith("--"));
const output = path.resolve(outputArg ?? path.join(repo, `pagewise-${pkg.version}.mcpb`));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = { stdio: ["ignore", "ignore", "inherit"] };
const npmInstallFlags = ["--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit"];

/** Files that only run on the platform they were built for. */
const NATIVE_FILE = /\.(node|so|dylib|dll|exe)$|(^|\/)binding\.gyp$/;

/** Paths (relative to `root`) of native files, and of packages that declare an os, cpu or gyp build. */
function platformSpecific(root) {
  const found = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(root, full).split(path.sep).join("/");
      if (entry.isDirectory()) visit(full);
      else if (NATIVE_FILE.test(rel)) found.push(rel);
      else if (entry.name === "package.json" && rel.includes("node_modules/")) {
        const manifest = JSON.parse(readFileSync(full, "utf8"));
        if (manifest.os || manifest.cpu || manifest.gypfile) found.push(rel);
      }
    }
  };
  visit(root);
  return found;
}

/** manifest.json with what must agree with the package and the server it starts. */
async function manifestFor(stage) {
  const manifest = JSON.parse(readFileSync(path.join(repo, "manifest.json"), "utf8"));
  manifest.version = pkg.version;
  manifest.compatibility.runtimes.node = pkg.engines.node;
  // The budget defaults the server itself applies (core/limits.ts), so a user who leaves the
  // settings alone gets the same server the CLI starts.
  const server = await import(pathToFileURL(path.join(stage, "dist", "index.js")).href);
  manifest.user_config.default_max_tokens.default = server.DEFAULT_MAX_TOKENS;
  manifest.user_config.max_tokens_cap.default = server.DEFAULT_MAX_TOKENS_CAP;
  return manifest;
}

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
  execFileSync(npm, ["ci", ...npmInstallFlags, "--no-fund"], { cwd: stage, ...quiet });
  if (exactTokenizers) {
    // Installed beside the stage and copied in: the lockfile lists gpt-tokenizer as a development
    // dependency, which --omit=dev would leave out even when named.
    const side = path.join(work, "exact-tokenizers");
    const spec = `gpt-tokenizer@${pkg.devDependencies["gpt-tokenizer"]}`;
    execFileSync(npm, ["install", "--prefix", side, ...npmInstallFlags, "--no-fund", spec], quiet);
    const from = path.join(side, "node_modules");
    for (const name of readdirSync(from).filter((n) => !n.startsWith("."))) {
      const target = path.join(stage, "node_modules", name);
      if (!existsSync(target)) cpSync(path.join(from, name), target, { recursive: true });
    }
  }
  const native = platformSpecific(stage);
  if (native.length > 0) {
    process.stderr.write(
      `bundle: platform-specific files would make the bundle fail on other platforms:\n  ${native.join("\n  ")}\n`,
    );
    process.exit(1);
  }
  const manifest = await manifestFor(stage);
  writeFileSync(path.join(stage, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // Not needed to run the server: type declarations, source maps, the lockfile, and the parts of
  // gpt-tokenizer that ESM imports never load (its CommonJS build, TypeScript sources, raw data).
  const unused = ["*.d.ts", "*.d.mts", "*.d.cts", "*.map", "package-lock.json", ".mcpbignore"];
  if (existsSync(path.join(stage, "node_modules", "gpt-tokenizer"))) {
    for (const dir of ["cjs", "src", "data"]) unused.push(`node_modules/gpt-tokenizer/${dir}/`);
  }
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
