/**
 * Test support for the reliability suite: the server process seen from outside (its pid, peak
 * memory, whether it still runs), a second process that rewrites or swaps files while the server
 * reads them, and the real server over HTTP driven with raw JSON-RPC (batches included).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { BIN } from "./server.js";

const pendingReleases: Array<() => unknown> = [];

/**
 * Registers `release` (idempotent) to run when the current test ends however it ends, a timeout
 * included: a test stuck on a stalled server never reaches its own `finally`.
 */
export function releaseAtTestEnd(release: () => unknown): void {
  pendingReleases.push(release);
}

/** Runs every registered release, newest first; for `afterEach`. */
export async function releaseAll(): Promise<void> {
  while (pendingReleases.length > 0) {
    try {
      await pendingReleases.pop()!();
    } catch {
      // Already released.
    }
  }
}

/** The pid of the server started with `serve` whose command line holds `marker` (its root). */
export function serverPid(marker: string): number {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const args = cmdline.split("\0");
    if (args.includes(BIN) && args.includes("serve") && args.includes(marker))
      found.push(Number(entry));
  }
  if (found.length !== 1) throw new Error(`expected one server for ${marker}, found ${found}`);
  return found[0]!;
}

export interface ProcessMemory {
  /** Resident set size now, KiB. */
  rssKiB: number;
  /** Peak resident set size since the process started (VmHWM), KiB. */
  peakKiB: number;
  threads: number;
}

export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1]);
  return { rssKiB: field("VmRSS"), peakKiB: field("VmHWM"), threads: field("Threads") };
}

/** True while the process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return !/\) Z /.test(stat);
}

export function killHard(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * A second process that loops over fs operations for as long as it lives, so they really run
 * concurrently with the server's reads. `script` is the loop body; `file`, `a`, `b`, `fs` are in
 * scope. Stop it with `stop()`, which waits for it to exit.
 */
export function startChurner(
  body: string,
  vars: Record<string, string>,
): { stop: () => Promise<void> } {
  const script = `const fs = require("node:fs"); const v = JSON.parse(process.argv[1]); for (;;) { ${body} }`;
  const child: ChildProcess = spawn(process.execPath, ["-e", script, JSON.stringify(vars)], {
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    child.kill("SIGKILL");
    await exited;
  };
  releaseAtTestEnd(stop);
  return { stop };
}

export interface HttpServer {
  url: string;
  base: string;
  pid: number;
  exited: () => boolean;
  stop: () => Promise<void>;
  /** What the server wrote to stderr so far (its request log). */
  stderr: () => string;
}

/** `pagewise serve --http 127.0.0.1:0 …`, ready once its `listening` line is written. */
export function startHttpServer(args: string[]): Promise<HttpServer> {
  const proc = spawn(process.execPath, [BIN, "serve", "--http", "127.0.0.1:0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let gone = false;
  const exit = new Promise<void>((resolve) =>
    proc.on("exit", () => {
      gone = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (!gone) proc.kill("SIGKILL");
    await exit;
  };
  releaseAtTestEnd(stop);
  return new Promise((resolve, reject) => {
    proc.stderr!.on("data", (chunk) => {
      stderr += chunk.toString();
      const m = /"event":"listening","url":"([^"]+)"/.exec(stderr);
      if (m && proc.pid !== undefined) {
        resolve({
          url: m[1]!,
          base: m[1]!.replace(/\/mcp$/, ""),
          pid: proc.pid,
          exited: () => gone,
          stop,
          stderr: () => stderr,
        });
      }
    });
    exit.then(() => reject(new Error(`exited early: ${stderr}`)));
  });
}

/** One POST of a JSON-RPC message or batch; the body parsed (JSON or a text/event-stream). */
export async function postRpc(
  url: string,
  token: string | undefined,
  body: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const data = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)));
    json = data.length === 1 ? data[0] : data.length > 0 ? data : undefined;
  }
  return { status: res.status, json };
}

/** A `tools/call` message. */
export function toolCall(id: number, name: string, args: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/** The tool's outcome from one JSON-RPC response: `{isError, json}` of its one text block. */
export function toolOutcome(response: any): { isError: boolean; json: any; rpcError?: unknown } {
  if (response?.error) return { isError: true, json: undefined, rpcError: response.error };
  const text = response?.result?.content?.[0]?.text ?? "";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { isError: response?.result?.isError === true, json };
}
