#!/usr/bin/env node
/**
 * `npm run test:scale`: pagewise as three stateless replicas behind a real nginx.
 *
 * 1. Installs Debian's nginx if it is absent (apt-get, as root).
 * 2. Starts three replicas on loopback sharing one --cursor-key-file and one --auth-file, and nginx
 *    with deploy/nginx.conf (ports rewritten; pid, logs and temp files in a temp directory).
 * 3. Kill test: SDK v2 clients on protocol 2026-07-28 (StreamableHTTPClientTransport) page through
 *    large files via nginx;
 *    one replica is SIGKILLed mid-read; every read must complete and rebuild its file exactly.
 * 4. Load run: 100 concurrent clients page through files for a fixed time with plain 2025-era
 *    JSON-RPC POSTs; reports throughput, p50/p99 latency, errors and each replica's peak RSS (VmHWM).
 *
 * Options: --duration SECONDS (load run, default 20), --clients N (default 100), --json FILE
 * (write the results as JSON). Exit status 1 when any read failed or was not exact.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(repo, "bin/pagewise.js");
const { values: opts } = parseArgs({
  options: {
    duration: { type: "string", default: "20" },
    clients: { type: "string", default: "100" },
    json: { type: "string" },
    "keep-temp": { type: "boolean", default: false },
  },
});
const DURATION_S = Number(opts.duration);
const CLIENTS = Number(opts.clients);
const say = (line = "") => process.stdout.write(`${line}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function findNginx() {
  for (const candidate of ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]) {
    if (spawnSync(candidate, ["-v"]).status === 0) return candidate;
  }
  const which = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

function ensureNginx() {
  let nginx = findNginx();
  if (nginx) return nginx;
  if (process.getuid?.() !== 0) {
    throw new Error("nginx is not installed and this is not root: apt-get install nginx first");
  }
  say("nginx not found: installing Debian's nginx (apt-get) …");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env });
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "nginx"], {
    stdio: ["ignore", "ignore", "inherit"],
    env,
  });
  nginx = findNginx();
  if (!nginx) throw new Error("nginx still not found after apt-get install");
  return nginx;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Text with a bit of everything: CRLF, escapes, CJK, emoji, long and short lines. */
function corpusText(i, bytes) {
  const parts = [];
  let size = 0;
  for (let line = 0; size < bytes; line++) {
    const kind = (line + i) % 7;
    const text =
      kind === 0
        ? `${"中文テキスト🙂 ".repeat(8)}\r\n`
        : kind === 1
          ? `{"id":${line},"msg":"quote \\" backslash \\\\ tab\\t","file":${i}}\n`
          : kind === 2
            ? `${"x".repeat(2000 + ((line * 37) % 3000))}\n`
            : `file ${i} line ${line}: the quick brown fox ${"jumps ".repeat(line % 9)}\n`;
    parts.push(text);
    size += Buffer.byteLength(text);
  }
  return parts.join("");
}

function startReplica(port, args, logFile) {
  const proc = spawn(process.execPath, [BIN, "serve", "--http", `127.0.0.1:${port}`, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let head = "";
  const log = [];
  proc.stderr.on("data", (chunk) => {
    log.push(chunk);
    if (head.length < 4096) head += chunk.toString();
  });
  const exit = new Promise((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal)));
  const ready = new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (head.includes('"event":"listening"')) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    exit.then(() => {
      clearInterval(timer);
      reject(new Error(`replica on ${port} exited: ${head}`));
    });
  });
  return {
    port,
    proc,
    exit,
    ready,
    flushLog: () => writeFileSync(logFile, Buffer.concat(log), { flag: "a" }),
    requests: () =>
      Buffer.concat(log)
        .toString()
        .split("\n")
        .filter((l) => l.includes('"event":"request"')),
  };
}

function peakRssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return undefined;
  }
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function waitHealthy(url, timeoutMs = 15_000) {
  const started = Date.now();
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.status === 200) return;
    } catch {
      // not yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${url} never became healthy`);
    await sleep(100);
  }
}

async function sdkClient(url, token) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client(
    { name: "pagewise-test-scale", version: "0.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  return client;
}

async function main() {
  const nginx = ensureNginx();
  const nginxVersion = spawnSync(nginx, ["-v"], { encoding: "utf8" }).stderr.trim();
  const tmp = mkdtempSync(path.join(tmpdir(), "pagewise-scale-"));
  chmodSync(tmp, 0o755);
  const corpus = path.join(tmp, "corpus");
  mkdirSync(corpus);
  const texts = [];
  for (let i = 0; i < 40; i++) {
    const text = corpusText(i, 20_000 + ((i * 7919) % 80_000));
    texts.push(text);
    writeFileSync(path.join(corpus, `doc-${i}.txt`), text);
  }
  const keyFile = path.join(tmp, "cursor.key");
  writeFileSync(keyFile, randomBytes(32).toString("base64"), { mode: 0o600 });
  const token = randomBytes(24).toString("base64url");
  const authFile = path.join(tmp, "auth.json");
  writeFileSync(
    authFile,
    JSON.stringify({
      identities: [
        {
          name: "scale-test",
          token_sha256: createHash("sha256").update(token).digest("hex"),
          roots: [corpus],
        },
      ],
    }),
  );

  const ports = [await freePort(), await freePort(), await freePort()];
  const nginxPort = await freePort();
  const replicaArgs = ["--auth-file", authFile, "--cursor-key-file", keyFile];
  const logFile = (i) => path.join(tmp, `replica-${i}.log`);
  const replicas = ports.map((p, i) => startReplica(p, replicaArgs, logFile(i)));
  await Promise.all(replicas.map((r) => r.ready));

  // nginx with the shipped configuration, ports rewritten, everything else in the temp dir.
  const template = readFileSync(path.join(repo, "deploy/nginx.conf"), "utf8");
  let upstream = 0;
  const conf = template
    .replace(/server 127\.0\.0\.1:\d+/g, () => `server 127.0.0.1:${ports[upstream++]}`)
    .replace(/listen 8080;/, `listen 127.0.0.1:${nginxPort};`)
    .replace(
      /http \{/,
      `http {\n  access_log off;\n  client_body_temp_path ${tmp}/nginx-body;\n  proxy_temp_path ${tmp}/nginx-proxy;\n  fastcgi_temp_path ${tmp}/nginx-fastcgi;\n  uwsgi_temp_path ${tmp}/nginx-uwsgi;\n  scgi_temp_path ${tmp}/nginx-scgi;`,
    );
  if (upstream !== 3) throw new Error("deploy/nginx.conf: expected three upstream servers");
  const confFile = path.join(tmp, "nginx.conf");
  writeFileSync(confFile, `pid ${tmp}/nginx.pid;\nerror_log ${tmp}/nginx-error.log warn;\n${conf}`);
  const nginxProc = spawn(nginx, ["-p", tmp, "-c", confFile, "-g", "daemon off;"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${nginxPort}`;
  const url = `${base}/mcp`;
  const results = {
    machine: { cpus: cpus().length, node: process.version, nginx: nginxVersion },
  };
  let failed = false;
  try {
    await waitHealthy(`${base}/healthz`);
    say(
      `nginx ${nginxVersion.replace(/^nginx version: /, "")} on ${base} → replicas on ${ports.join(", ")}`,
    );

    // --- Kill test -------------------------------------------------------------------------
    say("\nkill test: 12 SDK clients paging through nginx; SIGKILL one replica mid-read");
    const readers = 12;
    const clients = await Promise.all(Array.from({ length: readers }, () => sdkClient(url, token)));
    let pagesDone = 0;
    let killed;
    const killAfter = readers * 6;
    const killStarted = performance.now();
    const outcomes = await Promise.all(
      clients.map(async (client, i) => {
        const parts = [];
        let cursor;
        let pages = 0;
        try {
          for (;;) {
            const args = cursor
              ? { cursor, max_tokens: 1500 }
              : { path: `doc-${i}.txt`, max_tokens: 1500 };
            const result = await client.callTool({ name: "read", arguments: args });
            const page = JSON.parse(result.content[0].text);
            if (result.isError) return { ok: false, error: page.error.code, pages };
            parts.push(page.content);
            pages++;
            pagesDone++;
            if (!killed && pagesDone >= killAfter) {
              killed = replicas[1];
              killed.proc.kill("SIGKILL");
              say(`  SIGKILL replica on port ${killed.port} after ${pagesDone} pages`);
            }
            if (!page.has_more) break;
            cursor = page.next_cursor;
            await sleep(5);
          }
          return { ok: parts.join("") === texts[i], pages };
        } catch (err) {
          return { ok: false, error: String(err?.message ?? err), pages };
        }
      }),
    );
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    const exact = outcomes.filter((o) => o.ok).length;
    const totalPages = outcomes.reduce((n, o) => n + o.pages, 0);
    say(
      `  ${exact}/${readers} reads complete and exact, ${totalPages} pages, ${Math.round(performance.now() - killStarted)} ms`,
    );
    for (const o of outcomes) if (!o.ok) say(`  FAILED: ${JSON.stringify(o)}`);
    if (!killed) say("  (no replica was killed: the reads were too short)");
    let nginxErrors = [];
    try {
      nginxErrors = readFileSync(path.join(tmp, "nginx-error.log"), "utf8")
        .split("\n")
        .filter((l) => l.includes("upstream"));
    } catch {
      // no error log yet
    }
    const retried = nginxErrors.filter((l) => !l.includes("connect() failed")).length;
    const refused = nginxErrors.length - retried;
    say(
      `  nginx: ${retried} in-flight request(s) cut by the kill and retried on another replica, ${refused} connection(s) refused then sent elsewhere`,
    );
    results.kill = {
      readers,
      exact,
      pages: totalPages,
      killed: Boolean(killed),
      nginx_retried_in_flight: retried,
      nginx_refused_then_rerouted: refused,
    };
    if (exact !== readers || !killed) failed = true;

    // Bring the killed replica back on the same port for the load run.
    await killed?.exit;
    killed?.flushLog();
    if (killed) {
      const revived = startReplica(killed.port, replicaArgs, logFile(1));
      await revived.ready;
      replicas[1] = revived;
      await sleep(5500); // nginx's fail_timeout for the dead server
    }

    // --- Load run --------------------------------------------------------------------------
    say(`\nload run: ${CLIENTS} concurrent clients paging through nginx for ${DURATION_S} s`);
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    };
    const latencies = [];
    let errors = 0;
    let inexact = 0;
    let reads = 0;
    let contentBytes = 0;
    const errorSamples = [];
    const rpc = async (body, protocolVersion) => {
      const started = performance.now();
      const response = await fetch(url, {
        method: "POST",
        headers: protocolVersion
          ? { ...headers, "mcp-protocol-version": protocolVersion }
          : headers,
        body: JSON.stringify(body),
      });
      const text = await response.text();
      latencies.push(performance.now() - started);
      if (response.status === 202) return undefined;
      if (response.status !== 200)
        throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
      const message = JSON.parse(text);
      if (message.error)
        throw new Error(`JSON-RPC ${message.error.code}: ${message.error.message}`);
      return message.result;
    };
    const deadline = performance.now() + DURATION_S * 1000;
    const cpuBefore = replicas.map((r) => cpuMs(r.proc.pid));
    const requestsBefore = replicas.map((r) => r.requests().length);
    const loadavgBefore = loadavg()[0];
    let abandoned = 0;
    const loadStarted = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        let id = 0;
        const init = await rpc({
          jsonrpc: "2.0",
          id: id++,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "pagewise-load", version: "0.0.0" },
          },
        });
        const version = init.protocolVersion;
        await rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, version);
        for (let n = c; performance.now() < deadline; n++) {
          const file = n % texts.length;
          const parts = [];
          let cursor;
          try {
            for (;;) {
              const args = cursor
                ? { cursor, max_tokens: 2000 }
                : { path: `doc-${file}.txt`, max_tokens: 2000 };
              const result = await rpc(
                {
                  jsonrpc: "2.0",
                  id: id++,
                  method: "tools/call",
                  params: { name: "read", arguments: args },
                },
                version,
              );
              const page = JSON.parse(result.content[0].text);
              if (result.isError) throw new Error(`${page.error.code}: ${page.error.message}`);
              parts.push(page.content);
              contentBytes += Buffer.byteLength(page.content);
              if (!page.has_more) break;
              cursor = page.next_cursor;
              if (performance.now() >= deadline) break;
            }
            if (performance.now() >= deadline && parts.join("") !== texts[file]) {
              abandoned++; // cut off by the end of the run, not a failure
              continue;
            }
            reads++;
            if (parts.join("") !== texts[file]) inexact++;
          } catch (err) {
            errors++;
            if (errorSamples.length < 5) errorSamples.push(String(err.message ?? err));
          }
        }
      }),
    );
    const elapsedS = (performance.now() - loadStarted) / 1000;
    latencies.sort((a, b) => a - b);
    const perReplica = replicas.map((r, i) => {
      const requests = r.requests().length - requestsBefore[i];
      return {
        port: r.port,
        requests,
        cpu_ms_per_request:
          Math.round(((cpuMs(r.proc.pid) - cpuBefore[i]) / Math.max(1, requests)) * 100) / 100,
        peak_rss_mib: peakRssMiB(r.proc.pid),
        restarted: i === 1 && Boolean(killed),
      };
    });
    results.load = {
      clients: CLIENTS,
      duration_s: Math.round(elapsedS * 10) / 10,
      requests: latencies.length,
      requests_per_s: Math.round(latencies.length / elapsedS),
      reads_completed: reads,
      reads_cut_off_at_end: abandoned,
      load_average_1m: { before: loadavgBefore, after: loadavg()[0] },
      content_mib_per_s: Math.round((contentBytes / 2 ** 20 / elapsedS) * 10) / 10,
      p50_ms: Math.round(percentile(latencies, 50) * 10) / 10,
      p99_ms: Math.round(percentile(latencies, 99) * 10) / 10,
      max_ms: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
      errors,
      inexact,
      replicas: perReplica,
    };
    if (errors > 0 || inexact > 0 || reads === 0) failed = true;
    const l = results.load;
    say(
      `  requests      ${l.requests} (${l.requests_per_s}/s), ${l.reads_completed} whole-file reads`,
    );
    say(`  content       ${l.content_mib_per_s} MiB/s of page content`);
    say(`  latency       p50 ${l.p50_ms} ms, p99 ${l.p99_ms} ms, max ${l.max_ms} ms`);
    say(
      `  errors        ${errors}, inexact reads ${inexact} (${abandoned} reads cut off by the end)`,
    );
    say(
      `  machine load  1-min load average ${loadavgBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs`,
    );
    for (const e of errorSamples) say(`    e.g. ${e}`);
    for (const r of perReplica)
      say(
        `  replica :${r.port}  ${r.requests} requests, ${r.cpu_ms_per_request} ms CPU/request, peak RSS ${r.peak_rss_mib} MiB${r.restarted ? " (restarted after the kill test)" : ""}`,
      );

    // --- Graceful shutdown -----------------------------------------------------------------
    const codes = await Promise.all(
      replicas.map((r) => {
        r.proc.kill("SIGTERM");
        return r.exit;
      }),
    );
    results.shutdown_exit_codes = codes;
    say(`\nSIGTERM: replicas exited with ${codes.join(", ")}`);
    if (codes.some((c) => c !== 0)) failed = true;
  } finally {
    for (const r of replicas) {
      if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill("SIGKILL");
      r.flushLog();
    }
    nginxProc.kill("SIGQUIT");
    await new Promise((resolve) => {
      if (nginxProc.exitCode !== null) resolve();
      else nginxProc.on("exit", resolve);
      setTimeout(() => {
        nginxProc.kill("SIGKILL");
        resolve();
      }, 5000).unref();
    });
    if (opts.json) writeFileSync(opts.json, `${JSON.stringify(results, null, 2)}\n`);
    if (opts["keep-temp"]) say(`temp dir kept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  say(failed ? "\ntest:scale FAILED" : "\ntest:scale passed");
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`test:scale: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
