/**
 * @module
 * MCP: tool listing and dispatch over the official SDK, and the transports.
 */

export {
  DEFAULT_HTTP_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_SCANS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCAN_QUEUE_MS,
  type HttpServerHandle,
  type HttpServerOptions,
  isLoopbackHost,
  type LogEntry,
  parseListenAddress,
  type RunHttpOptions,
  runHttpServer,
  Semaphore,
  startHttpServer,
} from "./http.js";
export {
  type CallerResolver,
  type CallRecord,
  createEngine,
  createMcpServer,
  type Engine,
} from "./server.js";
