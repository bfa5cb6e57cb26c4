/**
 * @module
 * MCP: tool listing and dispatch over the official SDK, and the transports.
 */

export {
  type HttpServerHandle,
  type HttpServerOptions,
  type LogEntry,
  type RunHttpOptions,
  runHttpServer,
  Semaphore,
  startHttpServer,
} from "./http.js";
export * from "./limits.js";
export { isLoopbackHost, parseListenAddress } from "./listen.js";
export {
  type CallerResolver,
  type CallRecord,
  createEngine,
  createMcpServer,
  type Engine,
  instructionsFor,
  type ListedTool,
  MAX_RESULT_SIZE_META_KEY,
  maxResultSizeChars,
  TOOL_LIST,
  textResult,
  toolListFor,
} from "./server.js";
