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
  CLIENT_RESULT_PREVIEW_CHARS,
  createEngine,
  createMcpServer,
  type Engine,
  instructionsFor,
  MAX_RESULT_SIZE_CHARS,
  MAX_RESULT_SIZE_META_KEY,
  TOOL_LIST,
  textResult,
} from "./server.js";
