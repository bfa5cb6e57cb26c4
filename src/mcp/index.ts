/**
 * @module
 * MCP: tool listing and dispatch over the official SDK, and the transports.
 */
export {
  type CallerResolver,
  type CallRecord,
  createEngine,
  createMcpServer,
  type Engine,
} from "./server.js";
