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
  MAX_RESULT_SIZE_META_KEY,
  TOOL_LIST,
  textResult,
} from "./server.js";
