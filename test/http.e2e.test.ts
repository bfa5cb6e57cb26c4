/**
 * Serving over HTTP end to end: real server processes (`serve --http 127.0.0.1:0`), driven by the
 * SDK's Streamable HTTP client as an agent would, with identities from an auth file, several
 * replicas sharing a cursor key, a replica killed mid-read, and a live revocation.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, type ProtocolChoice, sdkClient, tempDir } from "./support/server.js";

const TOKEN_A = "token-a-7f3c9d2e1b";
const TOKEN_B = "token-b-4a8e6c0f5d";
const sha = (t: string) => createHash("sha256").update(t).digest("hex");

interface Replica {
  proc: ChildProcess;
  url: string;
  base: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Starts `pagewise serve --http 127.0.0.1:0 …` and waits for its `listening` line. */
function startReplica(args: string[]): Promise<Replica> {
  const proc = spawn(process.execPath, [BIN, "serve", "--http", "127.0.0.1:0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exit = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 20_000);
    proc.stderr!.on("data", (chunk) => {
      stderr += chunk.toString();
      const m = /"event":"listening","url":"([^"]+)"/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({
          proc,
          url: m[1]!,
          base: m[1]!.replace(/\/mcp$/, ""),
          stderr: () => stderr,
          exit,
        });
      }
    });
    exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited early: ${stderr}`));
    });
  });
}

interface Agent {
  client: Client;
  call(tool: string, args: Record<string, unknown>): Promise<{ isError: boolean; json: any }>;
  close(): Promise<void>;
}

async function connect(
  url: string,
  token?: string,
  protocol: ProtocolChoice = "2026-07-28",
): Promise<Agent> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  const client = sdkClient(protocol);
  await client.connect(transport);
  return {
    client,
    async call(tool, args) {
      const result = (await client.callTool({ name: tool, arguments: args })) as {
        content: Array<{ text: string }>;
        isError?: boolean;
      };
      return { isError: result.isError === true, json: JSON.parse(result.content[0]!.text) };
    },
    close: () => client.close(),
  };
}

/** A raw HTTP request (fetch cannot set Host). */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? "GET", headers: options.headers },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};
const LIST_TOOLS = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

function fileText(i: number): string {
  const parts: string[] = [];
  for (let line = 0; parts.join("").length < 3000 + i * 200; line++)
    parts.push(
      `file ${i} line ${line}: ${'αβγ 🙂 "q" \\ '.repeat((line + i) % 5)}${"x".repeat((line * 7) % 40)}\r\n`,
    );
  return parts.join("");
}

let dir: string;
let cleanup: () => void;
let authFile: string;
let rootA: string;
let rootA2: string;
let rootB: string;
let r1: Replica;
let r2: Replica;
let r3: Replica;
let anon: Replica;
const replicas: Replica[] = [];

function writeAuth(identities: Array<{ name: string; token: string; roots: string[] }>) {
  const tmp = `${authFile}.tmp`;
  writeFileSync(
    tmp,
    JSON.stringify({
      identities: identities.map((i) => ({
        name: i.name,
        token_sha256: sha(i.token),
        roots: i.roots,
      })),
    }),
  );
  renameSync(tmp, authFile);
}

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("pagewise-http-"));
  rootA = path.join(dir, "a");
  rootA2 = path.join(dir, "a2");
  rootB = path.join(dir, "b");
  const { mkdirSync } = await import("node:fs");
  for (const d of [rootA, rootA2, rootB]) mkdirSync(d);
  for (let i = 0; i < 50; i++) writeFileSync(path.join(rootA, `f${i}.txt`), fileText(i));
  writeFileSync(path.join(rootA2, "shared.txt"), fileText(77));
  writeFileSync(path.join(rootB, "secret.txt"), "B's secret\n");
  writeFileSync(path.join(rootB, "b.txt"), fileText(5));
  const keyFile = path.join(dir, "cursor.key");
  writeFileSync(keyFile, "http-test-key-0123456789abcdef0123456789");
  authFile = path.join(dir, "auth.json");
  writeAuth([
    { name: "alice", token: TOKEN_A, roots: [rootA, rootA2] },
    { name: "bob", token: TOKEN_B, roots: [rootB] },
  ]);
  // A long scan queue: on a loaded 2-core machine a burst of 25 clients per replica may wait.
  const common = [
    "--auth-file",
    authFile,
    "--cursor-key-file",
    keyFile,
    "--scan-queue-ms",
    "25000",
  ];
  [r1, r2, r3, anon] = await Promise.all([
    startReplica(common),
    startReplica(common),
    startReplica(common),
    startReplica(["--root", rootB]),
  ]);
  replicas.push(r1, r2, r3, anon);
});

afterAll(async () => {
  for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill("SIGKILL");
  cleanup?.();
});

describe("authentication", () => {
  it("answers 401 with resource_metadata without a token or with a wrong one", async () => {
    const none = await raw(r1.url, { method: "POST", headers: MCP_HEADERS, body: LIST_TOOLS });
    expect(none.status).toBe(401);
    const challenge = String(none.headers["www-authenticate"]);
    const m = /^Bearer resource_metadata="([^"]+)"/.exec(challenge);
    expect(m).not.toBeNull();
    expect(m![1]).toBe(`${r1.base}/.well-known/oauth-protected-resource`);
    const metadata = await fetch(m![1]!);
    expect(metadata.status).toBe(200);
    const doc = (await metadata.json()) as { resource: string; bearer_methods_supported: string[] };
    expect(doc.resource).toBe(r1.url);
    expect(doc.bearer_methods_supported).toEqual(["header"]);

    const wrong = await raw(r1.url, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: "Bearer not-a-token" },
      body: LIST_TOOLS,
    });
    expect(wrong.status).toBe(401);
    expect(String(wrong.headers["www-authenticate"])).toContain("resource_metadata=");
    expect(wrong.body).not.toContain("not-a-token");
    await expect(connect(r1.url, "not-a-token")).rejects.toThrow();
    // Tokens never reach the logs.
    expect(r1.stderr()).not.toContain("not-a-token");
    expect(r1.stderr()).not.toContain(TOKEN_A);
  });

  it("keeps each identity inside its own roots, and cursors bound to their identity", async () => {
    const alice = await connect(r1.url, TOKEN_A);
    const bob = await connect(r2.url, TOKEN_B);
    try {
      const denied = await alice.call("read", {
        path: path.join(rootB, "secret.txt"),
        max_tokens: 500,
      });
      expect(denied.isError).toBe(true);
      expect(denied.json.error.code).toBe("ACCESS_DENIED");
      // The error names the caller's own roots (so it can correct the path), nobody else's.
      const { message, hint } = denied.json.error;
      for (const own of [rootA, rootA2]) {
        expect(message).toContain(JSON.stringify(own));
        expect(hint).toContain(JSON.stringify(own));
      }
      expect(message.replace(path.join(rootB, "secret.txt"), "")).not.toContain(rootB);
      expect(hint).not.toContain(rootB);
      const escaped = await alice.call("read", { path: "../b/secret.txt", max_tokens: 500 });
      expect(escaped.json.error.code).toBe("ACCESS_DENIED");

      const first = await alice.call("read", { path: "f3.txt", max_tokens: 300 });
      expect(first.isError).toBe(false);
      expect(first.json.has_more).toBe(true);
      const stolen = await bob.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
      expect(stolen.isError).toBe(true);
      expect(stolen.json.error.code).toBe("INVALID_CURSOR");
      const own = await bob.call("read", { path: "secret.txt", max_tokens: 500 });
      expect(own.json.content).toBe("B's secret\n");
    } finally {
      await alice.close();
      await bob.close();
    }
    const logged = r1
      .stderr()
      .split("\n")
      .filter((l) => l.includes('"event":"request"') && l.includes('"tool":"read"'))
      .map((l) => JSON.parse(l));
    expect(logged.length).toBeGreaterThan(0);
    for (const entry of logged) {
      expect(entry.identity).toBe("alice");
      expect(typeof entry.duration_ms).toBe("number");
      expect(typeof entry.time).toBe("string");
      expect(entry.outcome).toMatch(/^(ok|ACCESS_DENIED)$/);
    }
    expect(r1.stderr()).not.toContain("file 3 line");
  });
});

describe("protocol versions over HTTP", () => {
  it("serves a pinned 2026-07-28 client and a 2025-11-25 client the same tools and pages", async () => {
    const modern = await connect(r1.url, TOKEN_A, "2026-07-28");
    const legacy = await connect(r2.url, TOKEN_A, "legacy");
    try {
      expect(modern.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(legacy.client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      const [a, b] = await Promise.all([modern.client.listTools(), legacy.client.listTools()]);
      expect(a.tools).toEqual(b.tools);
      // A cursor from one era continues on the other (and on another replica).
      const first = await modern.call("read", { path: "f7.txt", max_tokens: 300 });
      const next = await legacy.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
      expect(next.isError).toBe(false);
      expect(first.json.content + next.json.content).toBe(
        fileText(7).slice(0, first.json.content.length + next.json.content.length),
      );
    } finally {
      await modern.close();
      await legacy.close();
    }
  });

  it("streams progress to a client that asked for it, on both eras", async () => {
    for (const protocol of ["2026-07-28", "legacy"] as const) {
      const agent = await connect(r1.url, TOKEN_A, protocol);
      try {
        const progress: number[] = [];
        const result = (await agent.client.callTool(
          { name: "search", arguments: { pattern: "line 3", max_tokens: 2000 } },
          { onprogress: (p) => progress.push(p.progress) },
        )) as { content: Array<{ text: string }>; isError?: boolean };
        expect(result.isError ?? false).toBe(false);
        expect(JSON.parse(result.content[0]!.text).items.length).toBeGreaterThan(0);
        expect(progress.length, protocol).toBeGreaterThan(0);
      } finally {
        await agent.close();
      }
    }
  });

  it("names only the caller's own roots in the instructions", async () => {
    const alice = await connect(r1.url, TOKEN_A);
    const bob = await connect(r1.url, TOKEN_B, "legacy");
    try {
      const forAlice = alice.client.getInstructions() ?? "";
      expect(forAlice).toContain(rootA);
      expect(forAlice).toContain(rootA2);
      expect(forAlice).not.toContain(rootB);
      const forBob = bob.client.getInstructions() ?? "";
      expect(forBob).toContain(rootB);
      expect(forBob).not.toContain(rootA);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it("answers a 2025-06-18 initialize and call in plain JSON, and refuses batches", async () => {
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${TOKEN_A}` };
    const init = await raw(r1.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "0" },
        },
      }),
    });
    expect(init.status).toBe(200);
    expect(JSON.parse(init.body).result.protocolVersion).toBe("2025-06-18");
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "read", arguments: { path: "f1.txt", max_tokens: 300 } },
    };
    const versioned = { ...headers, "mcp-protocol-version": "2025-06-18" };
    const page = await raw(r1.url, {
      method: "POST",
      headers: versioned,
      body: JSON.stringify(call),
    });
    expect(page.status).toBe(200);
    expect(String(page.headers["content-type"])).toContain("application/json");
    const text = JSON.parse(page.body).result.content[0].text;
    expect(JSON.parse(text).content).toBe(fileText(1).slice(0, JSON.parse(text).content.length));
    const batch = await raw(r1.url, {
      method: "POST",
      headers: versioned,
      body: JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ ...call, id: 10 + i }))),
    });
    expect(batch.status).toBe(400);
    expect(JSON.parse(batch.body).error.code).toBe(-32600);
  });
});

describe("network safety", () => {
  it("refuses to bind a non-loopback address without --auth-file (exit 2)", async () => {
    const proc = spawn(process.execPath, [BIN, "serve", "--http", "0.0.0.0:0", "--root", rootB], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (c) => {
      stderr += c;
    });
    const code = await new Promise((resolve) => proc.on("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("refusing to serve on 0.0.0.0 without --auth-file");
  });

  it("refuses a foreign Host or Origin on a loopback bind (DNS rebinding)", async () => {
    for (const r of [anon, r1]) {
      const foreign = await raw(r.url, {
        method: "POST",
        headers: { ...MCP_HEADERS, host: "evil.example:80" },
        body: LIST_TOOLS,
      });
      expect(foreign.status).toBe(403);
    }
    const origin = await raw(anon.url, {
      method: "POST",
      headers: { ...MCP_HEADERS, origin: "http://evil.example" },
      body: LIST_TOOLS,
    });
    expect(origin.status).toBe(403);
    // The loopback server itself works for a local client, as identity "anonymous".
    const local = await connect(anon.url);
    try {
      const page = await local.call("read", { path: "secret.txt", max_tokens: 500 });
      expect(page.json.content).toBe("B's secret\n");
    } finally {
      await local.close();
    }
    const health = await fetch(`${anon.base}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { version: string }).version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("replicas", () => {
  it("continues a read on another replica, and after the first one is killed", async () => {
    const expected = fileText(42);
    const agents = [await connect(r3.url, TOKEN_A), await connect(r2.url, TOKEN_A)];
    const contents: string[] = [];
    try {
      let page = await agents[0]!.call("read", { path: "f42.txt", max_tokens: 250 });
      let n = 0;
      for (;;) {
        expect(page.isError).toBe(false);
        contents.push(page.json.content);
        if (!page.json.has_more) break;
        n++;
        if (n === 4) {
          r3.proc.kill("SIGKILL");
          await r3.exit;
        }
        const agent = n < 4 ? agents[n % 2]! : agents[1]!;
        page = await agent.call("read", { cursor: page.json.next_cursor, max_tokens: 250 });
      }
      expect(n).toBeGreaterThan(6);
    } finally {
      await agents[1]!.close();
    }
    expect(contents.join("")).toBe(expected);
  });

  it("serves 50 concurrent clients paging different files through two replicas exactly", async () => {
    let errors = 0;
    let firstError: unknown;
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const pair = [await connect(r1.url, TOKEN_A), await connect(r2.url, TOKEN_A)];
        try {
          const parts: string[] = [];
          let page = await pair[i % 2]!.call("read", { path: `f${i}.txt`, max_tokens: 600 });
          for (let n = 1; ; n++) {
            if (page.isError) {
              errors++;
              firstError ??= page.json;
              return false;
            }
            parts.push(page.json.content);
            if (!page.json.has_more) break;
            page = await pair[(i + n) % 2]!.call("read", {
              cursor: page.json.next_cursor,
              max_tokens: 600,
            });
          }
          return parts.join("") === fileText(i);
        } finally {
          await Promise.all(pair.map((a) => a.close()));
        }
      }),
    );
    expect(errors, JSON.stringify(firstError)).toBe(0);
    expect(results.every(Boolean)).toBe(true);
  });
});

describe("live changes to the auth file", () => {
  it("denies a revoked root on the next continuation within 2 s, and 401s a removed identity", async () => {
    const alice = await connect(r1.url, TOKEN_A);
    const bob = await connect(r2.url, TOKEN_B);
    try {
      const first = await alice.call("read", {
        path: path.join(rootA2, "shared.txt"),
        max_tokens: 300,
      });
      expect(first.json.has_more).toBe(true);
      writeAuth([
        { name: "alice", token: TOKEN_A, roots: [rootA] },
        { name: "bob", token: TOKEN_B, roots: [rootB] },
      ]);
      const revokedAt = Date.now();
      let denied: any;
      while (Date.now() - revokedAt < 3000) {
        const next = await alice.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
        if (next.isError) {
          denied = next.json;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(Date.now() - revokedAt).toBeLessThan(2000);
      expect(denied?.error.code).toBe("ACCESS_DENIED");
      // Alice's other root still works, on either replica.
      const still = await alice.call("read", { path: "f1.txt", max_tokens: 300 });
      expect(still.isError).toBe(false);

      writeAuth([{ name: "alice", token: TOKEN_A, roots: [rootA] }]);
      const removedAt = Date.now();
      let status = 0;
      while (Date.now() - removedAt < 3000) {
        status = (
          await raw(r2.url, {
            method: "POST",
            headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN_B}` },
            body: LIST_TOOLS,
          })
        ).status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
      expect(Date.now() - removedAt).toBeLessThan(2000);
      await expect(bob.call("read", { path: "b.txt", max_tokens: 300 })).rejects.toThrow();
    } finally {
      await alice.close();
      await bob.close().catch(() => {});
    }
  });

  it("shuts down gracefully on SIGTERM", async () => {
    r2.proc.kill("SIGTERM");
    expect(await r2.exit).toBe(0);
    expect(r2.stderr()).toContain('"event":"closed"');
  });
});
