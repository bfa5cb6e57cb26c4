#!/usr/bin/env node
/**
 * `node bench/http-memory.js`: the HTTP server's peak memory under ordinary load.
 *
 * One `pagewise serve --http` process over a generated directory (a 60 MB log, a JSONL of 40 MB,
 * a tree of 20,000 files), and N clients (default 60) for D seconds (default 60), half speaking
 * MCP 2025-06-18 as plain JSON-RPC POSTs and half 2026-07-28 through the official SDK client, each
 * calling every tool in turn (read, list, search, tail, json_read, two pages each at the default
 * budget). Reports tool calls (`requests`), errors, their latency and the server's peak RSS
 * (VmHWM), sampled and at the end; `--tool NAME` (or `--tool a,b`) runs those tools only.
 * `--json FILE` writes the results.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(repo, "bin/pagewise.js");
const { values: opts } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    clients: { type: "string", default: "60" },
    tool: { type: "string" },
    json: { type: "string" },
    args: { type: "string", default: "" },
  },
});
const DURATION_S = Number(opts.duration);
const CLIENTS = Number(opts.clients);
const say = (line = "") => process.stdout.write(`${line}\n`);

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}
function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

function writeFixture(dir) {
  const lines = [];
  for (let i = 0; i < 600_000; i++) {
    lines.push(
      `2026-12-05T08:${String(i % 60).padStart(2, "0")}:00Z ${i % 17 === 0 ? "ERROR" : "INFO"} request=${i % 977} took ${i % 313} ms path=/api/v1/items/${i}`,
    );
  }
  writeFileSync(path.join(dir, "app.log"), `${lines.join("\n")}\n`);
  writeFileSync(path.join(dir, "small.txt"), "hello\n");
  const rows = [];
  for (let i = 0; i < 300_000; i++) {
    rows.push(
      JSON.stringify({
        id: i,
        user: `u${i % 1000}`,
        tags: ["a", "b", String(i % 7)],
        note: "x".repeat(i % 60),
      }),
    );
  }
  writeFileSync(path.join(dir, "rows.jsonl"), `${rows.join("\n")}\n`);
  for (let d = 0; d < 100; d++) {
    const sub = path.join(dir, "tree", `pkg-${d}`, "src");
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < 200; f++) {
      writeFileSync(
        path.join(sub, `mod-${f}.ts`),
        `export function f${f}() {\n  return ${f} + ${d}; // needle ${f % 5 === 0 ? "TODO" : ""}\n}\n`,
      );
    }
  }
}

const CALLS = {
  small: { name: "read", arguments: { path: "small.txt", max_tokens: 200 } },
  read: { name: "read", arguments: { path: "app.log", max_tokens: 6000 } },
  list: { name: "list", arguments: { path: "tree", recursive: true } },
  search: { name: "search", arguments: { pattern: "TODO", path: "tree" } },
  tail: { name: "tail", arguments: { path: "app.log", grep: "ERROR" } },
  json_read: {
    name: "json_read",
    arguments: { path: "rows.jsonl", language: "jsonpath", query: "$[?@.tags[2] == '3'].user" },
  },
};

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), "pagewise-http-memory-"));
  say(`fixture in ${dir} …`);
  writeFixture(dir);
  const port = await freePort();
  const extra = opts.args ? opts.args.split(" ") : [];
  const server = spawn(
    process.execPath,
    [
      ...(process.env.SERVER_NODE_FLAGS ? process.env.SERVER_NODE_FLAGS.split(" ") : []),
      BIN,
      "serve",
      "--http",
      `127.0.0.1:${port}`,
      "--root",
      dir,
      ...extra,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  server.stderr.on("data", (c) => {
    if (log.length < 100_000) log += c;
  });
  for (let i = 0; !log.includes('"event":"listening"'); i++) {
    if (i > 300) throw new Error(`server did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = `http://127.0.0.1:${port}/mcp`;
  const tools = opts.tool ? opts.tool.split(",") : Object.keys(CALLS).filter((t) => t !== "small");
  const latencies = [];
  const errors = new Map();
  let requests = 0;
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rssMiB(server.pid));
  }, 100);
  const deadline = performance.now() + DURATION_S * 1000;
  const loadBefore = loadavg()[0];

  const record = (tool, result) => {
    const text = result.content?.[0]?.text ?? "";
    if (result.isError) {
      const code = /"code":"([A-Z_]+)"/.exec(text)?.[1] ?? "?";
      errors.set(`${tool}:${code}`, (errors.get(`${tool}:${code}`) ?? 0) + 1);
      return undefined;
    }
    return JSON.parse(text).next_cursor ?? null;
  };

  /** Client `c`'s calls until the deadline: every tool in turn, two pages each. */
  async function callTools(c, callTool) {
    for (let n = c; performance.now() < deadline; n++) {
      const tool = tools[n % tools.length];
      let args = CALLS[tool].arguments;
      for (let page = 0; page < 2 && performance.now() < deadline; page++) {
        const started = performance.now();
        try {
          const result = await callTool(CALLS[tool].name, args);
          latencies.push(performance.now() - started);
          requests++;
          const next = record(tool, result);
          if (!next) break;
          args = { cursor: next };
        } catch (err) {
          const key = `${tool}:${String(err.message).slice(0, 40)}`;
          errors.set(key, (errors.get(key) ?? 0) + 1);
          break;
        }
      }
    }
  }

  /** A 2025-06-18 client: plain JSON-RPC POSTs. */
  async function rawClient(c) {
    let id = 0;
    let session;
    const rpc = async (body, version) => {
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      if (version) headers["mcp-protocol-version"] = version;
      if (session) headers["mcp-session-id"] = session;
      const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
      session ??= response.headers.get("mcp-session-id") ?? undefined;
      const text = await response.text();
      if (response.status === 202) return undefined;
      if (response.status !== 200)
        throw new Error(`HTTP ${response.status}: ${text.slice(0, 120)}`);
      const json = text.startsWith("{") ? JSON.parse(text) : JSON.parse(/data: (.*)/.exec(text)[1]);
      if (json.error) throw new Error(`JSON-RPC ${json.error.code}: ${json.error.message}`);
      return json.result;
    };
    const init = await rpc({
      jsonrpc: "2.0",
      id: id++,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "load", version: "0" },
      },
    });
    const version = init.protocolVersion;
    await rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, version);
    await callTools(c, (name, args) =>
      rpc(
        { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } },
        version,
      ),
    );
  }

  /** A 2026-07-28 client: the SDK's. */
  async function sdkClient(c) {
    const client = new Client(
      { name: "load", version: "0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      await callTools(c, (name, args) => client.callTool({ name, arguments: args }));
    } finally {
      await client.close();
    }
  }

  await Promise.all(
    Array.from({ length: CLIENTS }, (_, c) => (c % 2 === 0 ? rawClient(c) : sdkClient(c))),
  );
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  const result = {
    date: new Date().toISOString(),
    clients: CLIENTS,
    duration_s: DURATION_S,
    tools,
    server_args: extra,
    requests,
    errors: Object.fromEntries(errors),
    p50_ms: Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0),
    p99_ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    peak_rss_mib: Math.round(peakRssMiB(server.pid)),
    sampled_peak_rss_mib: Math.round(sampledPeak),
    load_average_1m: { before: loadBefore, after: loadavg()[0] },
  };
  server.kill();
  rmSync(dir, { recursive: true, force: true });
  say(JSON.stringify(result, null, 2));
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
