/**
 * The official Python MCP SDK client (`mcp` 2.3.0, installed by .ci/run into .venv-interop) against
 * the real server, over stdio and over HTTP with a bearer token, on its default negotiation (probe
 * `server/discover`, which lands on 2026-07-28) and on the 2025 handshake: it lists the tools, pages
 * `read` to the end (bytes compared), calls `list`, `search`, `tail`, `json_read`, and checks the
 * error codes. test/interop/python_client.py does the calling; this file checks what it saw.
 *
 * Without the virtualenv the tests are skipped with a message locally; under CI they fail instead.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO, tempDir } from "./support/server.js";

const PYTHON = path.join(REPO, ".venv-interop/bin/python");
const CLIENT = path.join(REPO, "test/interop/python_client.py");
const TOKEN = "python-interop-token-5b1e9c";
const available = existsSync(PYTHON);
if (!available && process.env.CI)
  throw new Error(
    `${PYTHON} is missing: .ci/run creates it (python3 -m venv .venv-interop && pip install mcp==2.3.0) before npm test`,
  );
if (!available)
  console.warn(
    `python-interop: skipped, no ${PYTHON}. Create it with: python3 -m venv .venv-interop && .venv-interop/bin/pip install mcp==2.3.0`,
  );

const run = promisify(execFile);

/**
 * Runs the Python client once over `scenarios` (one process, importing the SDK once); resolves to
 * what each scenario saw, in order.
 */
async function pythonClient(scenarios: string[][]): Promise<any[]> {
  const args = scenarios.flatMap((scenario, i) => (i === 0 ? scenario : ["+", ...scenario]));
  const { stdout } = await run(PYTHON, [CLIENT, ...args], {
    timeout: 120_000,
    maxBuffer: 16 << 20,
  });
  return stdout
    .trim()
    .split("\n")
    .slice(-scenarios.length)
    .map((line) => JSON.parse(line));
}

let dir: string;
let root: string;
let cleanup: () => void;
let bigSha: string;
let bigBytes: number;
let replica: ChildProcess | undefined;
let url: string;
/** What the Python client saw in each scenario of SCENARIOS, started once the replica listens. */
let seen: Promise<any[]>;

const SCENARIOS = ["stdio auto", "stdio legacy", "http auto", "http legacy"] as const;

/** What the Python client saw in one scenario; a scenario that raised fails its own test only. */
async function seenIn(scenario: (typeof SCENARIOS)[number]): Promise<any> {
  const result = (await seen)[SCENARIOS.indexOf(scenario)];
  expect(result.failed, scenario).toBeUndefined();
  return result;
}

beforeAll(async () => {
  if (!available) return;
  ({ dir, cleanup } = tempDir("pagewise-python-"));
  root = path.join(dir, "root");
  mkdirSync(root);
  const big = Array.from(
    { length: 6000 },
    (_, i) => `line ${i} ünïcode 🙂 "text" \\ ${i % 7}\n`,
  ).join("");
  writeFileSync(path.join(root, "big.txt"), big);
  bigSha = createHash("sha256").update(big).digest("hex");
  bigBytes = Buffer.byteLength(big);
  writeFileSync(path.join(root, "app.log"), "first\nsecond needle\nthird\n");
  writeFileSync(
    path.join(root, "data.json"),
    JSON.stringify({ items: Array.from({ length: 5 }, (_, id) => ({ id })) }),
  );
  const auth = path.join(dir, "auth.json");
  writeFileSync(
    auth,
    JSON.stringify({
      identities: [
        {
          name: "python",
          token_sha256: createHash("sha256").update(TOKEN).digest("hex"),
          roots: [root],
        },
      ],
    }),
  );
  const proc = spawn(
    process.execPath,
    [BIN, "serve", "--http", "127.0.0.1:0", "--auth-file", auth],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  replica = proc;
  url = await new Promise<string>((resolve, reject) => {
    let stderr = "";
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 20_000);
    proc.stderr!.on("data", (chunk) => {
      stderr += chunk.toString();
      const m = /"event":"listening","url":"([^"]+)"/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  seen = pythonClient(
    SCENARIOS.map((scenario) => {
      const [transport, mode] = scenario.split(" ") as [string, string];
      return transport === "stdio"
        ? ["stdio", process.execPath, BIN, root, mode]
        : ["http", url, TOKEN, mode];
    }),
  );
  seen.catch(() => undefined); // reported by each test
});

afterAll(() => {
  replica?.kill("SIGKILL");
  cleanup?.();
});

function expectEverythingWorked(seen: any, protocol: string) {
  expect(seen.protocol_version).toBe(protocol);
  expect(seen.tools).toEqual([
    "read",
    "list",
    "search",
    "tail",
    "json_open",
    "json_read",
    "json_close",
  ]);
  expect(seen.instructions).toContain(root);
  expect(seen.read.pages).toBeGreaterThan(5);
  expect(seen.read.bytes).toBe(bigBytes);
  expect(seen.read.sha256).toBe(bigSha);
  expect(seen.list).toEqual(["app.log", "big.txt", "data.json"]);
  expect(seen.search).toEqual(["app.log:2"]);
  expect(seen.tail).toEqual(["second needle", "third"]);
  expect(seen.json_read).toEqual([0, 1, 2, 3, 4]);
  expect(seen.errors).toEqual({
    missing: { is_error: true, code: "NOT_FOUND" },
    outside: { is_error: true, code: "ACCESS_DENIED" },
    zero_budget: { is_error: true, code: "INVALID_ARGUMENT" },
    huge_limit: { is_error: true, code: "INVALID_ARGUMENT" },
    tail_cursor: { is_error: true, code: "INVALID_CURSOR" },
    bad_cursor: { is_error: true, code: "INVALID_CURSOR" },
  });
}

describe.skipIf(!available)("the official Python SDK client", () => {
  it("over stdio, negotiating by itself, gets 2026-07-28 and every tool works", async () => {
    expectEverythingWorked(await seenIn("stdio auto"), "2026-07-28");
  });

  it("over stdio on the initialize handshake gets 2025-11-25 and every tool works", async () => {
    expectEverythingWorked(await seenIn("stdio legacy"), "2025-11-25");
  });

  it("over HTTP with a bearer token gets 2026-07-28 and every tool works", async () => {
    expectEverythingWorked(await seenIn("http auto"), "2026-07-28");
  });

  it("over HTTP on the initialize handshake gets 2025-11-25 and every tool works", async () => {
    expectEverythingWorked(await seenIn("http legacy"), "2025-11-25");
  });

  it("is the pinned client version", () => {
    const metadata = readFileSync(
      path.join(
        REPO,
        ".venv-interop/lib",
        pythonLibDir(),
        "site-packages/mcp-2.3.0.dist-info/METADATA",
      ),
      "utf8",
    );
    expect(metadata).toMatch(/^Version: 2\.3\.0$/m);
  });
});

function pythonLibDir(): string {
  return readdirSync(path.join(REPO, ".venv-interop/lib")).find((d) => d.startsWith("python"))!;
}
