/**
 * @module
 * A small harness for benchmarks that run whole MCP server processes side by side.
 *
 * - `startPagewise`, `startPeer` start a server over stdio behind the SDK's own `Client`;
 *   `startRawPeer` starts one behind a plain JSON-RPC reader (for responses the SDK client cannot
 *   take: it caps a message at 10 MiB and concatenates its buffer per chunk). Each handle knows its
 *   server's pid, so `memoryOf(pid)` reads the server's peak RSS (`VmHWM`) from /proc.
 * - `RssSampler` also polls `VmRSS` while a workload runs (a cross-check on `VmHWM`).
 * - `compare` runs several subjects `reps` times, interleaved (A B A B …: the machine is shared and
 *   noisy, so drift hits every subject alike), and reports medians; `ratio` and `printTable` turn
 *   them into the tables the benchmarks print.
 * - `ensureDataFile` makes a data file of an exact size under `.bench-data/` (git-ignored) from a
 *   repeated 1 MiB block of realistic log and code text, reusing it when present with that size, and
 *   waits until the file is "quiet" (see `QUIET_MS`).
 *
 * Plain ESM JavaScript on purpose: `npm run bench` builds the server, not the benchmarks.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DATA_DIR = path.join(REPO, ".bench-data");
/**
 * The pagewise entry point; `BENCH_PAGEWISE_BIN` points the benchmarks at another build (say, a
 * snapshot of a commit built elsewhere) while the working tree is being changed.
 */
export const PAGEWISE_BIN = process.env.BENCH_PAGEWISE_BIN
  ? path.resolve(process.env.BENCH_PAGEWISE_BIN)
  : path.join(REPO, "bin/pagewise.js");
export const PEER_BIN = path.join(
  REPO,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/**
 * pagewise trusts a cached content hash only for files whose mtime/ctime is older than its racy
 * window (2 s); a younger file is re-hashed on every call. Data files are used only once they have
 * been quiet this long, so the benchmark measures the steady state, not a freshly written file.
 */
export const QUIET_MS = 3000;

// ---------------------------------------------------------------------------------------------
// Numbers and formatting

export function median(values) {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return "—";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

export function fmtBytes(bytes) {
  if (!Number.isFinite(bytes)) return "—";
  if (bytes >= GiB) return `${(bytes / GiB).toFixed(2)} GiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(bytes >= 100 * MiB ? 0 : 1)} MiB`;
  if (bytes >= KiB) return `${(bytes / KiB).toFixed(0)} KiB`;
  return `${bytes} B`;
}

/** "a / b" as a ratio string, e.g. `×1.03`; "—" when either side is missing. */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return "—";
  const r = a / b;
  return `×${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(r < 0.1 ? 4 : 2)}`;
}

/** Prints rows (arrays of cells) as a Markdown table, so output pastes into docs as is. */
export function printTable(title, header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c)));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]?.length ?? 0)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  const out = [];
  if (title) out.push("", `### ${title}`, "");
  out.push(line(all[0]));
  out.push(`| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
  for (const r of all.slice(1)) out.push(line(r));
  console.log(out.join("\n"));
}

/** Installs the Debian package `pkg` (as root) unless `command --version` runs. */
export function ensureTool(command, pkg) {
  if (spawnSync(command, ["--version"]).status === 0) return;
  log(`installing ${pkg}…`);
  execFileSync("apt-get", ["install", "-y", pkg], { stdio: "ignore" });
}

/** Wall time of a shell pipeline in `cwd`, in ms, and its stdout. */
export function timeShell(cmd, cwd = REPO) {
  const t0 = performance.now();
  const out = execFileSync("bash", ["-c", cmd], { cwd, encoding: "utf8", maxBuffer: 256 << 20 });
  return { ms: performance.now() - t0, out };
}

export function log(message) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function machine() {
  return {
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memory: os.totalmem(),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Process memory

/** `VmHWM` (peak RSS) and `VmRSS` of a live process, in bytes, from /proc/<pid>/status. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field) => {
      const m = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
      return m ? Number(m[1]) * KiB : Number.NaN;
    };
    return { peakRss: kib("VmHWM"), rss: kib("VmRSS") };
  } catch {
    return { peakRss: Number.NaN, rss: Number.NaN };
  }
}

/**
 * CPU time a live process has used so far, in milliseconds: the sum over its threads of the time
 * on CPU from /proc/<pid>/task/<tid>/schedstat (nanosecond resolution; threads that already
 * exited are not counted). Unlike wall time, it does not count waiting for a CPU on a busy
 * machine, so it is the steadier measure of the server's own cost.
 */
export function cpuMsOf(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread exited meanwhile
      }
    }
  } catch {
    return Number.NaN;
  }
  return ns / 1e6;
}

/** Polls VmRSS of `pid` every `intervalMs` and keeps the largest value seen. */
export class RssSampler {
  #timer;
  #pid;
  max = 0;
  constructor(pid, intervalMs = 20) {
    this.#pid = pid;
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }
  sample() {
    const { rss } = memoryOf(this.#pid);
    if (rss > this.max) this.max = rss;
  }
  stop() {
    clearInterval(this.#timer);
    this.sample();
    return this.max;
  }
}

// ---------------------------------------------------------------------------------------------
// Servers

/**
 * A server behind the SDK client. `call(name, args)` returns `{ text, isError, result, bytes }`,
 * where `bytes` is the size of the result as JSON (what the server sent, less the JSON-RPC envelope).
 */
async function startSdk(label, command, args, options = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, ...(options.env ?? {}) },
    stderr: "pipe",
    ...(options.maxBufferSize ? { maxBufferSize: options.maxBufferSize } : {}),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    if (stderr.length < 64 * KiB) stderr += chunk.toString();
  });
  const client = new Client({ name: "pagewise-bench", version: "0.0.0" });
  const started = performance.now();
  try {
    await client.connect(transport);
  } catch (err) {
    await new Promise((resolve) => setTimeout(resolve, 100)); // let stderr drain
    throw new Error(
      `${label} did not start (${err?.message ?? err}); its stderr:\n${stderr.slice(-2000)}`,
    );
  }
  const startupMs = performance.now() - started;
  const pid = transport.pid;
  if (!pid) throw new Error(`${label}: no pid for the server process`);
  return {
    label,
    pid,
    startupMs,
    client,
    stderr: () => stderr,
    memory: () => memoryOf(pid),
    cpuMs: () => cpuMsOf(pid),
    async call(name, callArgs, timeoutMs = 600_000) {
      const result = await client.callTool({ name, arguments: callArgs }, undefined, {
        timeout: timeoutMs,
      });
      const text = result.content?.[0]?.text ?? "";
      return {
        text,
        isError: result.isError === true,
        result,
        // Lazy, so timed sections do not pay for it: the result as JSON (both copies, if any).
        get bytes() {
          return Buffer.byteLength(JSON.stringify(result));
        },
      };
    },
    async close() {
      await client.close();
    },
  };
}

/** pagewise over stdio behind the SDK client. */
export function startPagewise({ root, estimator = "default", keyFile, extraArgs = [] }) {
  const args = [PAGEWISE_BIN, "serve", "--root", root, "--estimator", estimator];
  if (keyFile) args.push("--cursor-key-file", keyFile);
  return startSdk("pagewise", process.execPath, [...args, ...extraArgs]);
}

/** @modelcontextprotocol/server-filesystem over stdio behind the SDK client. */
export function startPeer({ root, maxBufferSize }) {
  return startSdk("server-filesystem", process.execPath, [PEER_BIN, root], { maxBufferSize });
}

/**
 * A server behind a plain JSON-RPC-over-stdio client: collects chunks in a list (no quadratic
 * concatenation, no size cap) and only parses messages small enough to parse. `call` returns
 * `{ bytes, isError, text? }` (`text` only for responses under `parseLimit`).
 */
export async function startRawServer(label, command, args, { parseLimit = 64 * MiB } = {}) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    if (stderr.length < 64 * KiB) stderr += chunk.toString();
  });
  let chunks = [];
  let pendingBytes = 0;
  const waiting = new Map();
  let nextId = 1;
  let closed = false;
  const deliver = (parts, length) => {
    const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
    let id;
    let message;
    if (buf.length <= parseLimit) {
      message = JSON.parse(buf.toString("utf8"));
      id = message.id;
    } else {
      // Too large to parse as one string: the id is in the envelope at either end.
      const head = buf.subarray(0, 256).toString("latin1");
      const tail = buf.subarray(Math.max(0, buf.length - 256)).toString("latin1");
      const m = tail.match(/"id":(\d+)\}?\s*$/) ?? head.match(/"id":(\d+)/);
      id = m ? Number(m[1]) : undefined;
      message = { id, oversized: true, isError: tail.includes('"isError":true') };
    }
    if (id === undefined) return; // a notification
    const w = waiting.get(id);
    if (w) {
      waiting.delete(id);
      w.resolve({ message, bytes: buf.length });
    }
  };
  child.stdout.on("data", (chunk) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      chunks.push(piece);
      const parts = chunks;
      const length = pendingBytes + piece.length;
      chunks = [];
      pendingBytes = 0;
      deliver(parts, length);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      chunks.push(rest);
      pendingBytes += rest.length;
    }
  });
  child.on("close", () => {
    closed = true;
    for (const w of waiting.values()) w.reject(new Error(`${label} exited: ${stderr.slice(-500)}`));
    waiting.clear();
  });
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  const request = (method, params) => {
    const id = nextId++;
    const promise = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return promise;
  };
  const started = performance.now();
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "pagewise-bench-raw", version: "0.0.0" },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  const startupMs = performance.now() - started;
  const pid = child.pid;
  return {
    label,
    pid,
    startupMs,
    stderr: () => stderr,
    memory: () => memoryOf(pid),
    cpuMs: () => cpuMsOf(pid),
    async call(name, callArgs) {
      const { message, bytes } = await request("tools/call", { name, arguments: callArgs });
      if (message.oversized) return { bytes, isError: message.isError };
      const result = message.result ?? {};
      return {
        bytes,
        isError: result.isError === true || message.error !== undefined,
        text: result.content?.[0]?.text ?? message.error?.message ?? "",
      };
    },
    async close() {
      if (closed) return;
      const done = new Promise((resolve) => child.once("close", resolve));
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGTERM"), 5000);
      await done;
      clearTimeout(timer);
    },
  };
}

/** The peer behind the plain JSON-RPC client. */
export function startRawPeer({ root }) {
  return startRawServer("server-filesystem (raw)", process.execPath, [PEER_BIN, root]);
}

/** pagewise behind the plain JSON-RPC client. */
export function startRawPagewise({ root, estimator = "default" }) {
  return startRawServer("pagewise (raw)", process.execPath, [
    PAGEWISE_BIN,
    "serve",
    "--root",
    root,
    "--estimator",
    estimator,
  ]);
}

/**
 * Runs `workload(server)` against a fresh server from `start()` and returns the workload's own
 * result plus `wallMs` (the workload only: spawn and handshake excluded), `cpuMs` (the server's CPU
 * time over the workload), `peakRss` (VmHWM of the
 * server at the end, before it is closed), `sampledRss` (largest VmRSS seen while polling) and
 * `startupMs`.
 */
export async function runOnce(start, workload) {
  const server = await start();
  const sampler = new RssSampler(server.pid);
  const before = server.memory();
  const cpu0 = server.cpuMs();
  const t0 = performance.now();
  let result;
  let wallMs;
  let sampledRss;
  let after;
  let cpuMs;
  try {
    result = await workload(server);
  } finally {
    wallMs = performance.now() - t0;
    cpuMs = server.cpuMs() - cpu0;
    sampledRss = sampler.stop();
    after = server.memory();
    await server.close();
  }
  return {
    ...result,
    wallMs,
    cpuMs,
    startupMs: server.startupMs,
    idleRss: before.rss,
    peakRss: after.peakRss,
    sampledRss,
  };
}

/**
 * Runs each subject `reps` times, interleaved, and returns `{ [name]: { runs, median(field) } }`.
 * A subject is `{ name, start, workload }`.
 */
export async function compare(subjects, { reps = 3, label = "" } = {}) {
  const out = {};
  for (const s of subjects) out[s.name] = { runs: [] };
  for (let r = 0; r < reps; r++) {
    for (const s of subjects) {
      log(`${label}${label ? ": " : ""}${s.name} run ${r + 1}/${reps}`);
      const res = await runOnce(s.start, s.workload);
      out[s.name].runs.push(res);
    }
  }
  for (const s of subjects) {
    const entry = out[s.name];
    entry.median = (field) => median(entry.runs.map((x) => x[field]).filter(Number.isFinite));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Data files

const LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];
const SERVICES = ["api-gateway", "billing", "auth", "search-indexer", "scheduler", "café-sync"];
const PATHS = ["/v1/users/{id}", "/v1/orders", "/healthz", "/v2/search?q=naïve+café", "/v1/äpfel"];
const MESSAGES = [
  "request completed",
  'upstream timeout after 3 retries; last error: "connection reset by peer"',
  "cache miss for key user:{id}:profile",
  "rebalanced 12 partitions in 0.84s",
  "slow query: SELECT * FROM orders WHERE customer_id = $1 AND status IN ('open','held')",
  "user-facing message: 注文が完了しました (order complete) ✅",
  "retrying with backoff=250ms jitter=0.2 attempt={n}",
  "path C:\\Users\\svc\\AppData\\Local\\Temp\\upload-{id}.tmp not found",
];
const CODE = `export async function handle(req: Request, ctx: Context): Promise<Response> {
  const started = performance.now();
  const user = await ctx.users.find(req.params.id);
  if (!user) {
    return json({ error: { code: "NOT_FOUND", message: \`no user \${req.params.id}\` } }, 404);
  }
  // Normalise the name: NFC, trimmed, at most 200 code points.
  const name = user.name.normalize("NFC").trim().slice(0, 200);
  ctx.metrics.observe("handle_ms", performance.now() - started, { route: "users.get" });
  return json({ id: user.id, name, tags: user.tags.map((t) => t.toLowerCase()) });
}
`;

/** One MiB (exactly) of realistic mixed text: log lines, some JSON, some code; valid UTF-8. */
export function makeBlock(seed = 1) {
  let state = seed >>> 0 || 1;
  const rnd = (n) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state % n;
  };
  const lines = [];
  let bytes = 0;
  let t = Date.UTC(2025, 0, 1, 0, 0, 0);
  while (bytes < MiB) {
    t += rnd(900);
    const id = (rnd(0xffffff) + 0x100000).toString(16);
    let line;
    const kind = rnd(20);
    if (kind === 0) {
      line = CODE;
    } else if (kind < 4) {
      line = `${JSON.stringify({ ts: new Date(t).toISOString(), level: LEVELS[rnd(6)], svc: SERVICES[rnd(6)], trace: id, latency_ms: rnd(5000) / 10, msg: MESSAGES[rnd(8)].replace("{id}", id) })}\n`;
    } else {
      const msg = MESSAGES[rnd(8)].replace("{id}", id).replace("{n}", String(rnd(5)));
      line = `${new Date(t).toISOString()} ${LEVELS[rnd(6)].padEnd(5)} [${SERVICES[rnd(6)]}] ${PATHS[rnd(5)].replace("{id}", id)} trace=${id} ${msg}\n`;
    }
    lines.push(line);
    bytes += Buffer.byteLength(line);
  }
  let block = Buffer.from(lines.join(""), "utf8");
  // Cut to exactly 1 MiB at a line end, then pad the last line with ASCII to the exact size.
  const cut = block.lastIndexOf(0x0a, MiB - 2) + 1;
  block = Buffer.concat([block.subarray(0, cut), Buffer.alloc(MiB - cut, 0x2e)]);
  block[MiB - 1] = 0x0a;
  return block;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A data file of exactly `bytes` bytes under `.bench-data/` (reused when present with that size),
 * made of the 1 MiB block repeated (the last copy cut at the size). Returns `{ path, name, bytes,
 * lines, sha256? }`; `lines` is the number of `\n` in the file. Waits until the file is quiet.
 */
export async function ensureDataFile(name, bytes) {
  mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, name);
  const block = makeBlock();
  if (!existsSync(file) || statSync(file).size !== bytes) {
    log(`writing ${fmtBytes(bytes)} to ${path.relative(REPO, file)}`);
    const tmp = `${file}.tmp-${process.pid}`;
    const fd = openSync(tmp, "w");
    try {
      let left = bytes;
      while (left > 0) {
        const n = Math.min(left, block.length);
        writeSync(fd, block, 0, n);
        left -= n;
      }
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  }
  const newlinesPerBlock = countByte(block, 0x0a);
  const full = Math.floor(bytes / MiB);
  const lines = full * newlinesPerBlock + countByte(block.subarray(0, bytes % MiB), 0x0a);
  const st = statSync(file);
  const age = Date.now() - Math.max(st.mtimeMs, st.ctimeMs);
  if (age < QUIET_MS) {
    log(`waiting ${(QUIET_MS - age) | 0} ms for ${name} to be quiet`);
    await sleep(QUIET_MS - age + 50);
  }
  return { path: file, name, bytes, lines };
}

function countByte(buf, byte) {
  let n = 0;
  let i = buf.indexOf(byte);
  while (i >= 0) {
    n++;
    i = buf.indexOf(byte, i + 1);
  }
  return n;
}

/** SHA-256 (hex) of a file, streamed. */
export function sha256File(file) {
  const hash = createHash("sha256");
  const fd = openSync(file, "r");
  const buf = Buffer.allocUnsafe(4 * MiB);
  try {
    for (;;) {
      const n = readSyncAll(fd, buf);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

function readSyncAll(fd, buf) {
  return readSync(fd, buf, 0, buf.length, null);
}
