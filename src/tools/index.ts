/**
 * @module
 * Tools: argument schemas and handlers shared by the MCP server and the CLI. A handler parses its
 * arguments, calls a source and returns the text block; it holds no paging logic.
 */
import { jsonCloseTool, jsonOpenTool, jsonReadTool } from "./json.js";
import { listTool } from "./list.js";
import { readTool } from "./read.js";
import { searchTool } from "./search.js";
import { tailTool } from "./tail.js";
import type { ToolDefinition } from "./tool.js";

export type { ToolContext, ToolSettings } from "./context.js";
export { COMMON_RULES, ERROR_ACTIONS, parseArgs } from "./schema.js";
export type { ToolDefinition } from "./tool.js";

/** Every tool the server offers, in the order they are listed. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of tool definitions
export const TOOLS: readonly ToolDefinition<any>[] = [
  readTool,
  listTool,
  searchTool,
  tailTool,
  jsonOpenTool,
  jsonReadTool,
  jsonCloseTool,
];
