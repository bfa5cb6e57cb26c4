/**
 * @module
 * The servers under test, and how each is installed and started.
 *
 * - pagewise at its defaults: `node bin/pagewise.js serve --root ROOT` from this checkout's build
 *   (`BENCH_PAGEWISE_BIN` measures another build).
 * - `@modelcontextprotocol/server-filesystem` 2026.8.31 (a devDependency): `node dist/index.js ROOT`.
 * - `@wonderwhy-er/desktop-commander` 0.2.52, installed by `ensureDesktopCommander` into
 *   `.bench-data/peers/desktop-commander/` (not a dependency of this package) with
 *   `npm install --ignore-scripts`: its install scripts download from outside the registry and
 *   report installs. Its search runs ripgrep from `@vscode/ripgrep`'s `rgPath`, which resolves
 *   `@vscode/ripgrep-<platform>-<arch>/bin/rg`; that file is replaced by a symbolic link to the
 *   system's `rg` (`/usr/bin/rg`) when there is one. It runs with `HOME` in that folder (it keeps its
 *   config and tool-call log under `~/.claude-server-commander`; one home per data root), with
 *   `DESKTOP_COMMANDER_DISABLE_TELEMETRY=1`, its feature-flag URL pointed at a closed local port
 *   and `--no-onboarding`; before each task it is confined to the task's directory with
 *   `set_config_value allowedDirectories` (setup, not measured).
 * - The library example `examples/timeline-server/server.js`, pagewise's entry for the timeline task.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { REPO } from "./data.js";

export const DESKTOP_COMMANDER_VERSION = "0.2.52";
export const PEERS_DIR = path.join(REPO, ".bench-data", "peers");
const DC_DIR = path.join(PEERS_DIR, "desktop-commander");
const DC_PACKAGE = path.join(DC_DIR, "node_modules", "@wonderwhy-er", "desktop-commander");
/**
 * DesktopCommander keeps its config (allowed directories included) in `$HOME`, and reloads it when
 * it changes: one home per data root, so that two runs on different data (the full bench and the
 * smoke test) never confine each other's server.
 */
const dcHomeFor = (root) =>
  path.join(DC_DIR, "home", createHash("sha256").update(root).digest("hex").slice(0, 12));

export const PAGEWISE_BIN = process.env.BENCH_PAGEWISE_BIN
  ? path.resolve(process.env.BENCH_PAGEWISE_BIN)
  : path.join(REPO, "bin", "pagewise.js");
const FILESYSTEM_BIN = path.join(
  REPO,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);
const TIMELINE_BIN = path.join(REPO, "examples", "timeline-server", "server.js");

function versionOf(packageDir) {
  try {
    return JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/** The system's ripgrep, if any (`which rg`). */
function systemRipgrep() {
  const found = spawnSync("which", ["rg"], { encoding: "utf8" });
  const rg = found.status === 0 ? found.stdout.trim() : "";
  return rg && existsSync(rg) ? rg : undefined;
}

/**
 * Installs DesktopCommander into its cache folder when `install` is true and it is missing, and
 * points its ripgrep at the system's. Returns `{ ok: true, ripgrep }` or `{ ok: false, reason }`.
 */
export function ensureDesktopCommander({ install = true } = {}) {
  if (versionOf(DC_PACKAGE) !== DESKTOP_COMMANDER_VERSION) {
    if (!install)
      return {
        ok: false,
        reason: `DesktopCommander ${DESKTOP_COMMANDER_VERSION} is not installed in ${path.relative(REPO, DC_DIR)} (npm run bench:agent installs it)`,
      };
    mkdirSync(DC_DIR, { recursive: true });
    if (!existsSync(path.join(DC_DIR, "package.json")))
      writeFileSync(
        path.join(DC_DIR, "package.json"),
        `${JSON.stringify({ name: "bench-peer-desktop-commander", private: true }, null, 2)}\n`,
      );
    try {
      execFileSync(
        "npm",
        [
          "install",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          `@wonderwhy-er/desktop-commander@${DESKTOP_COMMANDER_VERSION}`,
        ],
        { cwd: DC_DIR, stdio: ["ignore", "ignore", "pipe"], timeout: 600_000 },
      );
    } catch (err) {
      return { ok: false, reason: `npm install failed: ${String(err.stderr ?? err).slice(-500)}` };
    }
  }
  const platformRg = path.join(
    DC_DIR,
    "node_modules",
    "@vscode",
    `ripgrep-${process.platform}-${process.arch}`,
    "bin",
    "rg",
  );
  const system = systemRipgrep();
  if (system) {
    mkdirSync(path.dirname(platformRg), { recursive: true });
    let linked = false;
    try {
      linked = lstatSync(platformRg).isSymbolicLink() && readlinkSync(platformRg) === system;
    } catch {
      // missing: made below
    }
    if (!linked) {
      if (existsSync(platformRg)) renameSync(platformRg, `${platformRg}.registry`);
      symlinkSync(system, platformRg);
    }
    return { ok: true, ripgrep: system };
  }
  if (existsSync(platformRg)) return { ok: true, ripgrep: platformRg };
  return { ok: false, reason: "no ripgrep: install it (apt-get install ripgrep)" };
}

/**
 * The servers. `command(root)` gives `{command, args, env}`; `prepare(client, root)` runs after
 * the connection and before the measured work.
 */
export const SERVERS = {
  pagewise: {
    id: "pagewise",
    label: "pagewise",
    command: (root) => ({
      command: process.execPath,
      args: [PAGEWISE_BIN, "serve", "--root", root],
    }),
  },
  filesystem: {
    id: "filesystem",
    label: "server-filesystem",
    version: () => versionOf(path.dirname(path.dirname(FILESYSTEM_BIN))),
    command: (root) => ({ command: process.execPath, args: [FILESYSTEM_BIN, root] }),
  },
  desktopCommander: {
    id: "desktopCommander",
    label: "DesktopCommander",
    version: () => versionOf(DC_PACKAGE),
    command: (root) => {
      const home = dcHomeFor(root);
      mkdirSync(home, { recursive: true });
      return {
        command: process.execPath,
        args: [path.join(DC_PACKAGE, "dist", "index.js"), "--no-onboarding"],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: home,
          DESKTOP_COMMANDER_DISABLE_TELEMETRY: "1",
          DC_FLAG_URL: "http://127.0.0.1:9/flags.json",
        },
      };
    },
    async prepare(client, root) {
      for (const [key, value] of [
        ["allowedDirectories", [root]],
        ["telemetryEnabled", false],
      ]) {
        const r = await client.callTool({ name: "set_config_value", arguments: { key, value } });
        if (r.isError) throw new Error(`set_config_value ${key}: ${r.content?.[0]?.text}`);
      }
    },
  },
  timelineExample: {
    id: "timelineExample",
    label: "pagewise (library example)",
    command: () => ({ command: process.execPath, args: [TIMELINE_BIN] }),
  },
};
