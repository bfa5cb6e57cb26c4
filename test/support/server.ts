/**
 * Test support: the real pagewise server over stdio, driven by the official SDK v2 client, as an
 * agent would drive it — on protocol 2026-07-28 unless a test asks for the 2025 handshake.
 * Requires `npm run build` (done by `npm test`).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { RACY_WINDOW_NS } from "../../src/core/limits.js";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = path.join(REPO, "bin/pagewise.js");

export interface ToolOutcome {
  /** The one text block. */
  text: string;
  isError: boolean;
  /** `text` parsed as JSON when it is JSON, else undefined. */
  json: any;
  /** Number of content blocks (the contract says exactly one). */
  blocks: number;
  structured: unknown;
}

/** A `tools/call` result as the tests look at it: the one text block, parsed when it is JSON. */
export function outcomeOf(raw: unknown): ToolOutcome {
  const result = raw as {
    content: Array<{ type: string; text: string }>;
    isError?: boolean;
    structuredContent?: unknown;
  };
  const text = result.content[0]?.text ?? "";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    text,
    isError: result.isError === true,
    json,
    blocks: result.content.length,
    structured: result.structuredContent,
  };
}

export interface ServerHandle {
  client: Client;
  /** The server process's id; undefined for a server running in the test's own process. */
  pid?: number;
  call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  close(): Promise<void>;
  stderr(): string;
}

/** How the client opens: pinned to 2026-07-28 (no `initialize`) or the 2025 `initialize` handshake. */
export type ProtocolChoice = "2026-07-28" | "legacy";

/**
 * Where a 2026-07-28 client sends its `server/discover` probe over stdio. The SDK's own transport
 * probes on a disposable sibling process started from the same command (servers of older SDKs exit
 * on a request before `initialize`), so every server would be started twice; any subclass of the
 * transport probes in place, on the process the session then uses. Tests use "in-place" unless the
 * sibling flow is what they check (test/protocol.e2e.test.ts).
 */
export type StdioProbe = "in-place" | "sibling";

/** The SDK's stdio transport, unchanged; being a subclass makes the client probe in place. */
export class InPlaceProbeStdioClientTransport extends StdioClientTransport {}

/** A v2 client that speaks `protocol` (pinned, never falling back). */
export function sdkClient(protocol: ProtocolChoice = "2026-07-28"): Client {
  return new Client(
    { name: "pagewise-test", version: "0.0.0" },
    { versionNegotiation: { mode: protocol === "legacy" ? "legacy" : { pin: protocol } } },
  );
}

export async function startServer(
  args: string[],
  env: Record<string, string> = {},
  protocol: ProtocolChoice = "2026-07-28",
  probe: StdioProbe = "in-place",
): Promise<ServerHandle> {
  const Transport = probe === "sibling" ? StdioClientTransport : InPlaceProbeStdioClientTransport;
  const transport = new Transport({
    command: process.execPath,
    args: [BIN, "serve", ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += chunk.toString();
  });
  const client = sdkClient(protocol);
  await client.connect(transport);
  return {
    client,
    pid: transport.pid ?? undefined,
    async call(tool, callArgs) {
      return outcomeOf(await client.callTool({ name: tool, arguments: callArgs }));
    },
    async close() {
      await client.close();
    },
    stderr: () => stderr,
  };
}

/**
 * A fresh temporary directory (canonical path), removed by the returned cleanup. `inMemory` puts it
 * on /dev/shm where there is one: trees of tens of thousands of files are made and removed there in
 * seconds instead of minutes; such a tree is removed by `rm -rf`, which unlinks 100,000 entries in
 * a third of the time rmSync takes.
 */
export function tempDir(
  prefix = "pagewise-test-",
  options: { inMemory?: boolean } = {},
): { dir: string; cleanup: () => void } {
  const base = options.inMemory && existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dir = realpathSync(mkdtempSync(path.join(base, prefix)));
  const cleanup = () => {
    if (options.inMemory && spawnSync("rm", ["-rf", "--", dir]).status === 0) return;
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, cleanup };
}

/**
 * Follows `next_cursor` from a first page to the end; returns every page. Fails on an error page or
 * when a page does not advance.
 */
export async function readAllPages(
  server: ServerHandle,
  first: Record<string, unknown>,
  maxTokens: number,
  maxPages = 100_000,
): Promise<ToolOutcome[]> {
  const pages: ToolOutcome[] = [];
  let page = await server.call("read", { ...first, max_tokens: maxTokens });
  for (;;) {
    if (page.isError) throw new Error(`error page: ${page.text}`);
    pages.push(page);
    if (!page.json.has_more) break;
    if (pages.length > maxPages) throw new Error("too many pages");
    page = await server.call("read", { cursor: page.json.next_cursor, max_tokens: maxTokens });
  }
  return pages;
}

/**
 * Resolves once every one of `files` has been left alone for longer than the racy window, from
 * when on the server trusts their versions by identity (core/version) instead of re-hashing or
 * snapshotting them on every call. Files written early enough cost no wait. `windowMs` is the
 * window of another check (a listing's directories).
 */
export async function outOfRacyWindow(
  files: string[],
  windowMs = Number(RACY_WINDOW_NS / 1_000_000n),
): Promise<void> {
  let newestMs = 0;
  for (const file of files) {
    const st = statSync(file);
    newestMs = Math.max(newestMs, st.mtimeMs, st.ctimeMs);
  }
  // A few milliseconds more: the server compares whole nanoseconds against its own clock reading.
  const waitMs = newestMs + windowMs + 20 - Date.now();
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
}

/**
 * Bytes the process has read through read(2)-like calls so far (`rchar` in /proc/PID/io: files,
 * pipes and sockets alike, every thread included): the work a call did, counted, not timed.
 */
export function bytesRead(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  return Number(/^rchar:\s+(\d+)/m.exec(io)?.[1]);
}
