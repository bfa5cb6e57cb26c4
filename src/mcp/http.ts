/**
 * @module
 * MCP over Streamable HTTP, stateless, for many agents and many replicas.
 *
 * Every POST to `/mcp` gets a fresh MCP server from the SDK's `createMcpHandler`, which speaks
 * 2026-07-28 (sessionless, `server/discover`) to clients that ask for it and serves 2025-era
 * clients (`initialize`) statelessly: nothing outlives the request, so any replica that shares the
 * cursor key answers any request, continuations included. The caller is
 * resolved from the request's bearer token on every request (never cached per connection), so a
 * revoked root or identity takes effect on the next call.
 *
 * Around the SDK transport this layer adds what the SDK leaves to the host: bearer authentication
 * with RFC 9728 metadata, Host/Origin validation on loopback binds (DNS rebinding), a body size
 * limit, a cap on concurrent tool calls, a per-request timeout, one JSON log line per request, and
 * graceful shutdown. JSON-RPC batches are refused (MCP has none since 2025-06-18), so every tool
 * call takes its own slot. Responses are plain JSON unless progress is sent (then SSE).
 */
import {
  createServer,
  type IncomingMessage,
  type Server as NodeHttpServer,
  type ServerResponse,
} from "node:http";
import { type AddressInfo, isIP } from "node:net";
import { toWebRequest } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { bearerToken, type Caller, type TokenVerifier } from "../access/index.js";
import { PagewiseError } from "../core/index.js";
import { PACKAGE_VERSION } from "../version.js";
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_SCANS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCAN_QUEUE_MS,
  MAX_HEADERS_RECEIVE_MS,
  MAX_SCAN_QUEUE,
  MIN_REQUEST_RECEIVE_MS,
  RECEIVE_DEADLINE_CHECK_MS,
  SHUTDOWN_GRACE_EXTRA_MS,
} from "./limits.js";
import { isLoopbackHost } from "./listen.js";
import { type CallRecord, createMcpServer, type Engine } from "./server.js";

const LOOPBACK_HOSTNAMES = ["localhost", "127.0.0.1", "[::1]"];
const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** One structured log record; written as one JSON line. */
export type LogEntry = Record<string, unknown>;

export interface HttpServerOptions {
  engine: Engine;
  /** Address to bind; `DEFAULT_HTTP_HOST` by default. */
  host?: string;
  /** Port to bind; 0 picks a free one (the bound URL is in the handle and the `listening` log). */
  port: number;
  /**
   * Turns bearer tokens into callers. Without one, every request is `anonymous` (below) and the
   * server refuses to bind anything but loopback.
   */
  verifier?: TokenVerifier;
  /** The caller of every request when there is no verifier. */
  anonymous?: Caller;
  /** Host names accepted in `Host`/`Origin` besides the loopback names (e.g. the proxy's name). */
  allowedHosts?: readonly string[];
  /** The server's public base URL (`https://pagewise.example.com`), for the RFC 9728 metadata. */
  publicUrl?: string;
  /** Authorization servers to advertise in the resource metadata (for OAuth verifiers). */
  authorizationServers?: readonly string[];
  maxConcurrentScans?: number;
  scanQueueMs?: number;
  maxBodyBytes?: number;
  requestTimeoutMs?: number;
  /**
   * Time a client gets to send a whole request (headers and body), in ms; then it is answered 408
   * and its connection closed. Default: `requestTimeoutMs`, at least `MIN_REQUEST_RECEIVE_MS`.
   */
  requestReceiveMs?: number;
  /**
   * Time a client gets to send its headers, in ms (at most `requestReceiveMs`). Default:
   * `MAX_HEADERS_RECEIVE_MS`.
   */
  headersReceiveMs?: number;
  /** Receives one entry per request and lifecycle events; default: JSON lines on stderr. */
  log?: (entry: LogEntry) => void;
}

export interface HttpServerHandle {
  /** `http://HOST:PORT/mcp` as bound. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then resolves. */
  shutdown(graceMs?: number): Promise<void>;
  /** Resolves once the server is fully closed. */
  readonly closed: Promise<void>;
}

/** A counting semaphore with a bounded, time-limited wait. */
export class Semaphore {
  readonly max: number;
  #active = 0;
  readonly #waiters: Array<{ grant: () => void }> = [];

  constructor(max: number) {
    this.max = max;
  }

  get active(): number {
    return this.#active;
  }

  /** Takes a slot, waiting up to `waitMs`; false when none freed up in time. */
  acquire(waitMs: number): Promise<boolean> {
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve(true);
    }
    if (waitMs <= 0 || this.#waiters.length >= MAX_SCAN_QUEUE) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(false);
      }, waitMs);
      this.#waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next.grant();
    else this.#active--;
  }
}

interface RpcMessage {
  id?: string | number | null;
  method?: string;
  params?: { name?: unknown; _meta?: Record<string, unknown> };
}

/** What the server factory needs from the request it serves, passed through the SDK's auth info. */
interface Exchange {
  readonly caller: Caller;
  readonly onCall: (record: CallRecord) => void;
  /** Instances built for this request, closed when it ends. */
  readonly servers: Server[];
}

function defaultLog(entry: LogEntry): void {
  process.stderr.write(`${JSON.stringify(entry)}\n`);
}

function rpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/**
 * The answer to a request refused or stopped by a limit: for a tool call the contract's error
 * object as its result, for another request a JSON-RPC error; nothing for a notification.
 */
function limitReply(message: RpcMessage, error: PagewiseError): JSONRPCMessage | undefined {
  if (message.id === undefined || message.id === null || typeof message.method !== "string")
    return undefined;
  if (message.method !== "tools/call")
    return { jsonrpc: "2.0", id: message.id, error: { code: -32000, message: error.message } };
  // 2026-07-28 requests carry their revision in `_meta`; their results must say `resultType`.
  const modern = message.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined;
  return {
    jsonrpc: "2.0",
    id: message.id,
    result: {
      content: [{ type: "text", text: JSON.stringify(error.toJSON()) }],
      isError: true,
      ...(modern ? { resultType: "complete" } : {}),
    },
  } as JSONRPCMessage;
}

/** Writes a web `Response` (JSON or an SSE stream) to the Node response, stopping on `signal`. */
async function pipeResponse(
  response: Response,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  if (res.headersSent || res.writableEnded) return;
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  // nginx would otherwise buffer an SSE stream (progress) until it ends.
  if (headers["content-type"]?.startsWith("text/event-stream")) headers["x-accel-buffering"] = "no";
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  try {
    for await (const chunk of response.body) {
      if (signal.aborted || res.writableEnded) break;
      if (!res.write(chunk))
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off("drain", done);
            signal.removeEventListener("abort", done);
            resolve();
          };
          res.on("drain", done);
          signal.addEventListener("abort", done, { once: true });
        });
    }
  } catch {
    // The stream was cancelled (client gone or timeout); the response ends below.
  }
  if (!res.writableEnded) res.end();
}

/** What every request to one server shares: the options resolved once, the counters, the SDK. */
interface HttpState {
  readonly options: HttpServerOptions;
  readonly log: (entry: LogEntry) => void;
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  readonly scanQueueMs: number;
  readonly scans: Semaphore;
  /** Names accepted in `Host`/`Origin`; undefined when those headers are not checked. */
  readonly allowedHostnames: readonly string[] | undefined;
  readonly publicBase: string | undefined;
  /** Serves 2026-07-28 requests (sessionless, `server/discover`). */
  readonly modernHandler: ReturnType<typeof createMcpHandler>;
  readonly server: NodeHttpServer;
  shuttingDown: boolean;
  inFlight: number;
  /** `HOST:PORT` as bound, once listening. */
  bound: string;
}

/** One request past authentication and parsing, on its way to the SDK. */
interface ParsedRequest {
  readonly caller: Caller;
  readonly parsed: unknown;
  readonly message: RpcMessage;
  readonly holdsSlot: boolean;
}

/** A dispatched request's lifecycle: its timeout, its scan slot, the instances to close. */
interface InFlightCall {
  readonly request: ParsedRequest;
  readonly exchange: Exchange;
  readonly abort: AbortController;
  timer?: ReturnType<typeof setTimeout>;
  timedOut: boolean;
  done: boolean;
}

/**
 * Starts serving. Resolves once the socket is bound; the handle's `url` has the real port.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const host = options.host ?? DEFAULT_HTTP_HOST;
  const loopback = isLoopbackHost(host);
  if (!options.verifier && !loopback) {
    throw new Error(
      `refusing to serve on ${host} without --auth-file: anyone who can reach that address could read the roots. Bind a loopback address (127.0.0.1, ::1, localhost) or give --auth-file FILE.`,
    );
  }
  if (!options.verifier && !options.anonymous)
    throw new Error("serving without a token verifier needs an anonymous caller (roots)");
  const state = createHttpState(options, loopback);
  const server = state.server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  state.bound =
    address.family === "IPv6"
      ? `[${address.address}]:${address.port}`
      : `${address.address}:${address.port}`;

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  server.on("close", () => resolveClosed());

  return {
    url: `http://${state.bound}/mcp`,
    host: address.address,
    port: address.port,
    closed,
    shutdown(graceMs = state.requestTimeoutMs + SHUTDOWN_GRACE_EXTRA_MS) {
      beginShutdown(state, graceMs);
      return closed;
    },
  };
}

/** Resolves the options and creates the (not yet listening) Node server. */
function createHttpState(options: HttpServerOptions, loopback: boolean): HttpState {
  const log = options.log ?? defaultLog;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const extraHosts = (options.allowedHosts ?? []).map(normalizeHostname);
  const state: HttpState = {
    options,
    log,
    maxBodyBytes,
    requestTimeoutMs,
    scanQueueMs: options.scanQueueMs ?? DEFAULT_SCAN_QUEUE_MS,
    scans: new Semaphore(options.maxConcurrentScans ?? DEFAULT_MAX_CONCURRENT_SCANS),
    // Loopback binds always check Host/Origin; other binds only when names were given.
    allowedHostnames:
      loopback || extraHosts.length > 0 ? [...LOOPBACK_HOSTNAMES, ...extraHosts] : undefined,
    publicBase: options.publicUrl?.replace(/\/+$/, ""),
    modernHandler: createModernHandler(options.engine, maxBodyBytes),
    // Node checks the receive deadlines below only this often (30 s by default).
    server: createServer({ connectionsCheckingInterval: RECEIVE_DEADLINE_CHECK_MS }, (req, res) => {
      handleRequest(state, req, res).catch((err) => {
        log({ time: new Date().toISOString(), event: "error", message: (err as Error).message });
        send(state, res, 500, rpcError(-32603, "Internal server error."));
      });
    }),
    shuttingDown: false,
    inFlight: 0,
    bound: "",
  };
  // Slow clients: the whole request (headers and body) must arrive within the request timeout,
  // its headers within MAX_HEADERS_RECEIVE_MS; a late one is answered 408 and closed.
  const receiveMs = options.requestReceiveMs ?? Math.max(requestTimeoutMs, MIN_REQUEST_RECEIVE_MS);
  state.server.requestTimeout = receiveMs;
  state.server.headersTimeout = Math.min(
    receiveMs,
    options.headersReceiveMs ?? MAX_HEADERS_RECEIVE_MS,
  );
  return state;
}

/** Stops accepting; open connections close once idle, all of them after `graceMs`. */
function beginShutdown(state: HttpState, graceMs: number): void {
  if (state.shuttingDown) return;
  state.shuttingDown = true;
  const server = state.server;
  server.close();
  server.closeIdleConnections();
  if (state.inFlight === 0) server.closeAllConnections();
  setTimeout(() => server.closeAllConnections(), graceMs).unref();
}

/** An MCP server instance for one request, recorded so the request's end closes it. */
function serverFor(engine: Engine, exchange: Exchange): Server {
  const instance = createMcpServer(engine, exchange.caller, { onCall: exchange.onCall });
  exchange.servers.push(instance);
  return instance;
}

/**
 * 2026-07-28 requests (they carry the per-request envelope) go to the SDK's handler, which builds
 * a server per request through `serverFor` and answers `server/discover`.
 */
function createModernHandler(
  engine: Engine,
  maxBodyBytes: number,
): ReturnType<typeof createMcpHandler> {
  return createMcpHandler(
    ({ authInfo }) => {
      const exchange = authInfo?.extra?.exchange as Exchange | undefined;
      if (!exchange) throw new Error("request without a resolved caller");
      return serverFor(engine, exchange);
    },
    {
      legacy: "reject",
      maxRequestBodySize: maxBodyBytes,
      onerror: () => {
        // Protocol-level problems are answered to the client by the SDK; late sends after a
        // timeout land here and are expected.
      },
    },
  );
}

/**
 * 2025-era requests get a server and a stateless transport of their own, as before: plain JSON
 * unless the call asked for progress (the SDK's own fallback always answers with SSE).
 */
async function serveLegacy(
  engine: Engine,
  request: Request,
  parsed: unknown,
  authInfo: AuthInfo,
  exchange: Exchange,
  wantsProgress: boolean,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !wantsProgress,
  });
  transport.onerror = () => {};
  await serverFor(engine, exchange).connect(transport);
  return transport.handleRequest(request, { parsedBody: parsed, authInfo });
}

/** The public base URL: the configured one, else what the request's Host names. */
function baseUrl(state: HttpState, req: IncomingMessage): string {
  if (state.publicBase) return state.publicBase;
  try {
    return `http://${new URL(`http://${req.headers.host ?? state.bound}`).host}`;
  } catch {
    return `http://${state.bound}`;
  }
}

function send(
  state: HttpState,
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
    ...(state.shuttingDown ? { Connection: "close" } : {}),
    ...headers,
  });
  res.end(body);
}

/** Routes one request: shutdown and Host/Origin checks first, then by path. */
async function handleRequest(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let pathname = "/";
  try {
    pathname = new URL(req.url ?? "/", "http://x").pathname;
  } catch {
    // Logged as "/".
  }
  const entry = openLogEntry(state, req, res, pathname);
  if (state.shuttingDown) {
    send(
      state,
      res,
      503,
      rpcError(-32000, "The server is shutting down; retry on another replica."),
      { "Retry-After": "1" },
    );
    return;
  }
  if (state.allowedHostnames && !hostAllowed(req, state.allowedHostnames)) {
    entry.outcome = "forbidden_host";
    send(
      state,
      res,
      403,
      rpcError(
        -32000,
        "Forbidden: the Host or Origin header names a host this server does not serve (DNS rebinding protection).",
      ),
    );
    return;
  }
  if (pathname === "/healthz") return serveHealth(state, req, res);
  if (pathname === METADATA_PATH || pathname === `${METADATA_PATH}/mcp`)
    return serveResourceMetadata(state, req, res);
  if (pathname !== "/mcp") {
    send(state, res, 404, rpcError(-32000, "Not found: MCP is served at /mcp."));
    return;
  }
  await serveMcp(state, req, res, entry);
}

/** Counts the request in flight and writes its log line when the response closes. */
function openLogEntry(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): LogEntry {
  const started = performance.now();
  const entry: LogEntry = {
    time: new Date().toISOString(),
    event: "request",
    http_method: req.method,
    path: pathname,
  };
  state.inFlight++;
  res.on("close", () => {
    state.inFlight--;
    entry.status = res.statusCode;
    entry.duration_ms = Math.round((performance.now() - started) * 10) / 10;
    entry.outcome ??= res.statusCode < 400 ? "ok" : `http_${res.statusCode}`;
    if (!res.writableFinished) entry.aborted = true;
    state.log(entry);
    if (state.shuttingDown) state.server.closeIdleConnections();
  });
  return entry;
}

function serveHealth(state: HttpState, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "GET" && req.method !== "HEAD")
    return void send(state, res, 405, rpcError(-32000, "Method not allowed."), { Allow: "GET" });
  send(
    state,
    res,
    200,
    JSON.stringify({ status: "ok", name: "pagewise", version: PACKAGE_VERSION }),
  );
}

/** The RFC 9728 protected resource metadata; only served when tokens are verified. */
function serveResourceMetadata(state: HttpState, req: IncomingMessage, res: ServerResponse): void {
  const options = state.options;
  if (!options.verifier) return void send(state, res, 404, rpcError(-32000, "Not found."));
  const base = baseUrl(state, req);
  send(
    state,
    res,
    200,
    JSON.stringify({
      resource: `${base}/mcp`,
      bearer_methods_supported: ["header"],
      resource_name: "pagewise",
      ...(options.authorizationServers?.length
        ? { authorization_servers: options.authorizationServers }
        : {}),
    }),
    { "Cache-Control": "max-age=60" },
  );
}

/** `/mcp`: authenticate, read the body, take a scan slot for a tool call, dispatch. */
async function serveMcp(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
  entry: LogEntry,
): Promise<void> {
  if (req.method !== "POST") {
    // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE).
    send(
      state,
      res,
      405,
      rpcError(-32000, "Method not allowed: this server is stateless; POST to /mcp."),
      { Allow: "POST" },
    );
    return;
  }
  const caller = await authenticate(state, req, res, entry);
  if (!caller) return;
  entry.identity = caller.identity;
  const body = await readRpcBody(state, req, res, entry);
  if (!body) return;
  const { parsed, message } = body;
  if (typeof message.method === "string") entry.rpc = message.method;
  const isToolCall = message.method === "tools/call";
  if (isToolCall) entry.tool = String(message.params?.name ?? "?");

  // One slot per tool call.
  let holdsSlot = false;
  if (isToolCall) {
    holdsSlot = await takeScanSlot(state, res, entry, message);
    if (!holdsSlot) return;
    if (res.destroyed) {
      state.scans.release();
      return;
    }
  }
  await dispatch(state, req, res, entry, { caller, parsed, message, holdsSlot });
}

/**
 * Who is calling, resolved on every request; undefined once a refusal (401, or 503 when the
 * verifier failed) has been sent.
 */
async function authenticate(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
  entry: LogEntry,
): Promise<Caller | undefined> {
  const verifier = state.options.verifier;
  if (!verifier) return state.options.anonymous!;
  const token = bearerToken(req.headers.authorization);
  // Fail closed: a verifier with no identities (e.g. its auth file is gone) logged why.
  const unavailable = verifier.unavailable?.() !== undefined;
  let verified: Caller | undefined;
  if (token !== undefined && !unavailable) {
    try {
      verified = await verifier.verify(token);
    } catch (err) {
      entry.outcome = "verifier_error";
      state.log({
        time: new Date().toISOString(),
        event: "verifier_error",
        message: (err as Error).message,
      });
      send(state, res, 503, rpcError(-32000, "Could not verify the token; retry later."), {
        "Retry-After": "1",
      });
      return undefined;
    }
  }
  if (!verified) {
    entry.outcome = "unauthorized";
    const metadata = `${baseUrl(state, req)}${METADATA_PATH}`;
    send(
      state,
      res,
      401,
      rpcError(
        -32001,
        unavailable
          ? "Unauthorized: this server accepts no token right now (its identities are unavailable); ask its operator."
          : token === undefined
            ? "Unauthorized: send Authorization: Bearer TOKEN."
            : "Unauthorized: the bearer token is not valid for this server.",
      ),
      {
        "WWW-Authenticate": `Bearer resource_metadata="${metadata}"${token === undefined && !unavailable ? "" : ', error="invalid_token"'}`,
      },
    );
    return undefined;
  }
  return verified;
}

/**
 * The body: bounded, then parsed here so calls can be counted and logged. Undefined once a
 * refusal has been sent (or the client went away).
 */
async function readRpcBody(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
  entry: LogEntry,
): Promise<{ parsed: unknown; message: RpcMessage } | undefined> {
  const body = await readBody(req, state.maxBodyBytes);
  if (body === "too_large") {
    entry.outcome = "body_too_large";
    send(
      state,
      res,
      413,
      rpcError(
        -32000,
        `Payload too large: request bodies are limited to ${state.maxBodyBytes} bytes.`,
      ),
      { Connection: "close" },
    );
    return undefined;
  }
  if (body === "aborted") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    entry.outcome = "parse_error";
    send(state, res, 400, rpcError(-32700, "Parse error: the body is not valid JSON."));
    return undefined;
  }
  if (Array.isArray(parsed)) {
    // MCP removed JSON-RPC batching in 2025-06-18; a batch would also run many calls in one
    // scan slot, past --max-concurrent-scans.
    entry.outcome = "batch_refused";
    send(
      state,
      res,
      400,
      rpcError(
        -32600,
        "Invalid Request: JSON-RPC batches are not accepted (MCP removed batching in 2025-06-18); send one request per POST.",
      ),
    );
    return undefined;
  }
  const message: RpcMessage = typeof parsed === "object" && parsed !== null ? parsed : {};
  return { parsed, message };
}

/** Waits for a scan slot; false once the busy reply has been sent. */
async function takeScanSlot(
  state: HttpState,
  res: ServerResponse,
  entry: LogEntry,
  message: RpcMessage,
): Promise<boolean> {
  const scans = state.scans;
  if (await scans.acquire(state.scanQueueMs)) return true;
  entry.outcome = "RESOURCE_LIMIT_EXCEEDED";
  entry.limit = "max_concurrent_scans";
  const error = new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The server is busy: ${scans.max} tool calls are already running on this replica. Retry in a moment.`,
    {
      limit: { name: "max_concurrent_scans", limit: scans.max, value: scans.active },
      hint: "Retry the same call after a short pause; nothing was read.",
    },
  );
  send(state, res, 200, JSON.stringify(limitReply(message, error)));
  return false;
}

/** Hands the request to the SDK under the request timeout and writes its response. */
async function dispatch(
  state: HttpState,
  req: IncomingMessage,
  res: ServerResponse,
  entry: LogEntry,
  request: ParsedRequest,
): Promise<void> {
  const call: InFlightCall = {
    request,
    exchange: {
      caller: request.caller,
      onCall: (record) => {
        // Arrives before the response is written, so before the log line.
        if (!call.timedOut) entry.outcome = record.outcome;
      },
      servers: [],
    },
    abort: new AbortController(),
    timedOut: false,
    done: false,
  };
  call.timer = setTimeout(() => timeOut(state, res, entry, call), state.requestTimeoutMs);
  res.on("close", () => finishCall(state, call));
  try {
    const response = await sdkResponse(state, req, call);
    if (!call.timedOut) await pipeResponse(response, res, call.abort.signal);
  } catch (err) {
    if (call.timedOut || call.abort.signal.aborted) return;
    entry.outcome = "INTERNAL_ERROR";
    state.log({ time: new Date().toISOString(), event: "error", message: (err as Error).message });
    send(state, res, 500, rpcError(-32603, "Internal server error."));
    finishCall(state, call);
  }
}

/** The SDK's response: the modern handler for 2026-07-28 requests, a legacy transport else. */
async function sdkResponse(
  state: HttpState,
  req: IncomingMessage,
  call: InFlightCall,
): Promise<Response> {
  const { parsed, message, caller } = call.request;
  const request = await toWebRequest(req, parsed, { signal: call.abort.signal });
  const authInfo: AuthInfo = {
    token: "",
    clientId: caller.identity,
    scopes: [],
    extra: { exchange: call.exchange },
  };
  return (await isLegacyRequest(request, parsed))
    ? await serveLegacy(
        state.options.engine,
        request,
        parsed,
        authInfo,
        call.exchange,
        message.params?._meta?.progressToken !== undefined,
      )
    : await state.modernHandler.fetch(request, { authInfo, parsedBody: parsed });
}

/** Releases what the call holds, once: its timer, its slot, its server instances. */
function finishCall(state: HttpState, call: InFlightCall): void {
  if (call.done) return;
  call.done = true;
  clearTimeout(call.timer);
  if (call.request.holdsSlot) state.scans.release();
  // Closing the instance aborts any handler still running (its signal), e.g. after a
  // timeout or when the client went away.
  call.abort.abort();
  for (const instance of call.exchange.servers) void instance.close().catch(() => {});
}

/** The request timeout fired: answer with RESOURCE_LIMIT_EXCEEDED and stop the call. */
function timeOut(state: HttpState, res: ServerResponse, entry: LogEntry, call: InFlightCall): void {
  const requestTimeoutMs = state.requestTimeoutMs;
  call.timedOut = true;
  entry.outcome = "RESOURCE_LIMIT_EXCEEDED";
  entry.limit = "request_timeout_ms";
  const error = new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The call ran longer than this server allows (${requestTimeoutMs} ms) and was stopped.`,
    {
      limit: { name: "request_timeout_ms", limit: requestTimeoutMs, value: requestTimeoutMs },
      hint: "Narrow the call (a smaller max_tokens, a narrower path or glob) and retry.",
    },
  );
  const reply = limitReply(call.request.message, error);
  if (!res.headersSent) {
    if (reply) send(state, res, 200, JSON.stringify(reply));
    else send(state, res, 504, rpcError(-32000, error.message));
  } else if (reply && !res.writableEnded) {
    // The response is already an SSE stream (progress was sent): the reply is its last event.
    res.end(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
  } else {
    res.end();
  }
  finishCall(state, call);
}

function normalizeHostname(name: string): string {
  const n = name.trim().toLowerCase();
  return isIP(n) === 6 ? `[${n}]` : n;
}

/** Host (always) and Origin (when sent) must name an allowed host. */
function hostAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const host = req.headers.host;
  if (!host) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  if (!allowed.includes(hostname)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return allowed.includes(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/** Reads a body of at most `max` bytes. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | "too_large" | "aborted"> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve("too_large");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > max) {
        settled = true;
        resolve("too_large");
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!settled) {
        settled = true;
        resolve(Buffer.concat(chunks));
      }
    });
    req.on("error", () => {
      if (!settled) {
        settled = true;
        resolve("aborted");
      }
    });
    req.on("aborted", () => {
      if (!settled) {
        settled = true;
        resolve("aborted");
      }
    });
  });
}

export interface RunHttpOptions extends HttpServerOptions {
  /** Called after a clean shutdown (e.g. to stop an auth-file watcher). */
  onClose?: () => void;
  /** True when cursors are signed with a per-process key (logged as a warning). */
  ephemeralKey?: boolean;
}

/**
 * Serves until SIGTERM or SIGINT, then shuts down gracefully: the listener closes, requests
 * arriving on open connections get 503, in-flight requests finish. Logs a `listening` line with
 * the bound URL first.
 */
export async function runHttpServer(options: RunHttpOptions): Promise<void> {
  const log = options.log ?? defaultLog;
  const handle = await startHttpServer({ ...options, log });
  log({
    time: new Date().toISOString(),
    event: "listening",
    url: handle.url,
    version: PACKAGE_VERSION,
    auth: options.verifier ? "bearer" : "none (loopback, identity anonymous)",
    ...(options.verifier ? {} : { roots: options.anonymous?.roots.dirs }),
    estimator: options.engine.estimator.name,
  });
  if (options.ephemeralKey) {
    log({
      time: new Date().toISOString(),
      event: "warning",
      message:
        "no --cursor-key-file or PAGEWISE_CURSOR_KEY: cursors are signed with a random per-process key, so they die with this process and other replicas reject them",
    });
  }
  const stop = (signal: string) => {
    log({ time: new Date().toISOString(), event: "shutdown", signal });
    void handle.shutdown();
  };
  const onTerm = () => stop("SIGTERM");
  const onInt = () => stop("SIGINT");
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  await handle.closed;
  process.off("SIGTERM", onTerm);
  process.off("SIGINT", onInt);
  options.onClose?.();
  log({ time: new Date().toISOString(), event: "closed" });
}
