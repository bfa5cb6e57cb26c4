import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AuthFileVerifier, Roots, tokenSha256 } from "../access/index.js";
import { CursorCodec, createEstimator, ephemeralCursorKey } from "../core/index.js";
import { type HttpServerHandle, type LogEntry, Semaphore, startHttpServer } from "./http.js";
import { isLoopbackHost, parseListenAddress } from "./listen.js";
import { createEngine } from "./server.js";

/** A 2026-07-28 `server/discover` request over plain HTTP, with `headers` added. */
function discoverAt(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
}

describe("parseListenAddress", () => {
  it("reads [HOST:]PORT", () => {
    expect(parseListenAddress("8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListenAddress("0.0.0.0:80")).toEqual({ host: "0.0.0.0", port: 80 });
    expect(parseListenAddress("localhost:0")).toEqual({ host: "localhost", port: 0 });
    expect(parseListenAddress("[::1]:9000")).toEqual({ host: "::1", port: 9000 });
    for (const bad of ["", "host", "1:2:3", "70000", "a:b"])
      expect(() => parseListenAddress(bad)).toThrow(/HOST:]PORT/);
  });
});

describe("isLoopbackHost", () => {
  it("knows loopback from the rest", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "example.com", "128.0.0.1"])
      expect(isLoopbackHost(h)).toBe(false);
  });
});

describe("Semaphore", () => {
  it("hands a released slot to the next waiter and times waiters out", async () => {
    const s = new Semaphore(1);
    expect(await s.acquire(0)).toBe(true);
    expect(await s.acquire(0)).toBe(false);
    const waiting = s.acquire(1000);
    s.release();
    expect(await waiting).toBe(true);
    expect(s.active).toBe(1);
    expect(await s.acquire(20)).toBe(false);
    s.release();
    expect(s.active).toBe(0);
  });
});

describe("startHttpServer limits", () => {
  let dir: string;
  let server: HttpServerHandle;
  const logs: LogEntry[] = [];
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-http-unit-")));
    writeFileSync(path.join(dir, "big.txt"), "0123456789abcdef\n".repeat(200_000));
    const engine = createEngine({
      codec: new CursorCodec({ key: ephemeralCursorKey() }),
      estimator: await createEstimator("default"),
      settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
    });
    server = await startHttpServer({
      engine,
      port: 0,
      anonymous: { identity: "anonymous", roots: new Roots([dir]) },
      maxConcurrentScans: 1,
      scanQueueMs: 0,
      maxBodyBytes: 4096,
      log: (e) => logs.push(e),
    });
  });
  afterAll(async () => {
    await server?.shutdown(100);
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: string) =>
    fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body,
    });
  const readCall = (id: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "read", arguments: { path: "big.txt", max_tokens: 100_000 } },
    });

  it("refuses a non-loopback bind without a verifier", async () => {
    await expect(
      startHttpServer({
        engine: {} as never,
        host: "0.0.0.0",
        port: 0,
        anonymous: { identity: "anonymous", roots: new Roots([dir]) },
      }),
    ).rejects.toThrow(/refusing to serve on 0.0.0.0/);
  });

  it("answers RESOURCE_LIMIT_EXCEEDED with a limit when every scan slot is taken", async () => {
    const bodies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(readCall(i)).then((r) => r.json())),
    );
    const texts = bodies.map((b: any) => JSON.parse(b.result.content[0].text));
    const refused = texts.filter((t) => t.error?.code === "RESOURCE_LIMIT_EXCEEDED");
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].error.limit).toMatchObject({ name: "max_concurrent_scans", limit: 1 });
    expect(texts.some((t) => typeof t.content === "string")).toBe(true);
  });

  it("answers server/discover with 2026-07-28, the tools capability and the caller's roots", async () => {
    const response = await discoverAt(server.url);
    expect(response.status).toBe(200);
    const { result }: any = await response.json();
    expect(result.supportedVersions).toContain("2026-07-28");
    expect(result.capabilities).toEqual({ tools: {} });
    expect(result.instructions).toContain(dir);
    expect(result.resultType).toBe("complete");
  });

  it("refuses a JSON-RPC batch whole, so no call in it runs past max_concurrent_scans", async () => {
    const callsBefore = logs.filter((e) => e.tool !== undefined).length;
    const calls = Array.from({ length: 3 }, (_, i) => JSON.parse(readCall(100 + i)));
    const response = await post(JSON.stringify(calls));
    expect(response.status).toBe(400);
    const body: any = await response.json();
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/batch/);
    // Nothing was dispatched: no request in the log names a tool, and no slot is held.
    await vi.waitFor(() => expect(logs.some((e) => e.outcome === "batch_refused")).toBe(true));
    expect(logs.filter((e) => e.tool !== undefined).length).toBe(callsBefore);
    const after: any = await (await post(readCall(200))).json();
    expect(JSON.parse(after.result.content[0].text).content).toMatch(/^0123456789abcdef/);
    // A batch of one is a batch too.
    expect((await post(JSON.stringify([calls[0]]))).status).toBe(400);
  });

  it("answers 413 for a body over the limit and 400 for one that is not JSON", async () => {
    expect((await post("x".repeat(5000))).status).toBe(413);
    expect((await post("{nope")).status).toBe(400);
  });

  it("stops a call that runs past the request timeout with RESOURCE_LIMIT_EXCEEDED", async () => {
    const engine = createEngine({
      codec: new CursorCodec({ key: ephemeralCursorKey() }),
      estimator: await createEstimator("default"),
      settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
    });
    const slow = await startHttpServer({
      engine,
      port: 0,
      anonymous: { identity: "anonymous", roots: new Roots([dir]) },
      requestTimeoutMs: 1,
      log: () => {},
    });
    try {
      const response = await fetch(slow.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: readCall(1),
      });
      const body: any = await response.json();
      const error = JSON.parse(body.result.content[0].text).error;
      expect(body.result.isError).toBe(true);
      expect(error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
      expect(error.limit).toMatchObject({ name: "request_timeout_ms", limit: 1 });
      // A 2026-07-28 call gets the same answer, marked as a complete result as that revision wants.
      const modern = await fetch(slow.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "read",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: {
            name: "read",
            arguments: { path: "big.txt", max_tokens: 100_000 },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
      });
      const modernBody: any = await modern.json();
      expect(modernBody.id).toBe(7);
      expect(modernBody.result.resultType).toBe("complete");
      expect(JSON.parse(modernBody.result.content[0].text).error.code).toBe(
        "RESOURCE_LIMIT_EXCEEDED",
      );
    } finally {
      await slow.shutdown(100);
    }
  });

  it("finishes in-flight requests on shutdown and refuses new ones", async () => {
    const engine = createEngine({
      codec: new CursorCodec({ key: ephemeralCursorKey() }),
      estimator: await createEstimator("default"),
      settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
    });
    // A verifier that holds the request, so shutdown surely starts while it is in flight.
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const caller = { identity: "slow", roots: new Roots([dir]) };
    const draining = await startHttpServer({
      engine,
      port: 0,
      verifier: {
        async verify() {
          arrived();
          await new Promise((r) => setTimeout(r, 200));
          return caller;
        },
      },
      log: () => {},
    });
    const inFlight = fetch(draining.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: "Bearer t",
      },
      body: readCall(1),
    });
    await arrival;
    const closed = draining.shutdown(5000);
    const response = await inFlight;
    expect(response.status).toBe(200);
    const page = JSON.parse(((await response.json()) as any).result.content[0].text);
    expect(page.content.length).toBeGreaterThan(1000);
    await closed;
    await expect(fetch(draining.url.replace("/mcp", "/healthz"))).rejects.toThrow();
  });

  it("logs one line per request without contents", () => {
    const reads = logs.filter((e) => e.event === "request" && e.tool === "read");
    expect(reads.length).toBeGreaterThanOrEqual(12);
    expect(reads.some((e) => e.outcome === "RESOURCE_LIMIT_EXCEEDED")).toBe(true);
    expect(JSON.stringify(logs)).not.toContain("0123456789abcdef");
  });
});

describe("startHttpServer with an auth file", () => {
  it("refuses every request with 401 once the auth file is deleted, and lets in again once it is back", async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-http-auth-")));
    const auth = path.join(dir, "auth.json");
    const text = JSON.stringify({
      identities: [{ name: "alice", token_sha256: tokenSha256("ta"), roots: ["."] }],
    });
    writeFileSync(auth, text);
    const verifier = new AuthFileVerifier(auth);
    const engine = createEngine({
      codec: new CursorCodec({ key: ephemeralCursorKey() }),
      estimator: await createEstimator("default"),
      settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
    });
    const server = await startHttpServer({ engine, port: 0, verifier, log: () => {} });
    const discover = () => discoverAt(server.url, { authorization: "Bearer ta" });
    try {
      expect((await discover()).status).toBe(200);
      rmSync(auth);
      await verifier.reload();
      const refused = await discover();
      expect(refused.status).toBe(401);
      expect(JSON.stringify(await refused.json())).toMatch(/accepts no token right now/);
      writeFileSync(auth, text);
      await verifier.reload();
      expect((await discover()).status).toBe(200);
    } finally {
      verifier.close();
      await server.shutdown(100);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("startHttpServer receive deadlines", () => {
  let dir: string;
  let server: HttpServerHandle;
  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-http-deadlines-")));
    const engine = createEngine({
      codec: new CursorCodec({ key: ephemeralCursorKey() }),
      estimator: await createEstimator("default"),
      settings: { defaultMaxTokens: 8000, maxTokensCap: 100_000, maxReadTokens: 25_000 },
    });
    server = await startHttpServer({
      engine,
      port: 0,
      anonymous: { identity: "anonymous", roots: new Roots([dir]) },
      headersReceiveMs: 200,
      requestReceiveMs: 400,
      log: () => {},
    });
  });
  afterAll(async () => {
    await server?.shutdown(100);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends `text` and keeps the socket open; resolves with what the server sent once it closes. */
  const sendAndWaitForClose = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1", () => socket.write(text));
      let received = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        received += chunk;
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(received));
    });

  // Node's default check every 30 s would hold these sockets open for up to 30 s.
  it("closes a connection whose headers do not arrive in time (408)", async () => {
    const received = await sendAndWaitForClose("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  }, 10_000);

  it("closes a connection whose body does not arrive in time (408)", async () => {
    const received = await sendAndWaitForClose(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  }, 10_000);
});
