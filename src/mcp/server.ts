/**
 * @module
 * The MCP face of pagewise: lists the tools and dispatches calls. Thin on purpose — parse, call the
 * tool, render one text block.
 *
 * It uses the SDK's low-level `Server` rather than `McpServer.registerTool`: McpServer answers a
 * failed argument validation with its own plain-text message, while the contract requires every
 * error, argument errors included, to be the structured `{"error":{code,message,…}}` object.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import type { Caller } from "../access/index.js";
import { type CursorCodec, type Estimator, FileVersions, toPagewiseError } from "../core/index.js";
import { parseArgs, TOOLS, type ToolSettings } from "../tools/index.js";
import { PACKAGE_VERSION } from "../version.js";

/** The parts shared by every request a server process answers. */
export interface Engine {
  readonly codec: CursorCodec;
  readonly estimator: Estimator;
  readonly settings: ToolSettings;
  readonly versions: FileVersions;
}

export function createEngine(parts: Omit<Engine, "versions">): Engine {
  return { ...parts, versions: new FileVersions() };
}

/** Called once per request to learn who is calling (stdio: one fixed caller; HTTP: from the token). */
export type CallerResolver = (authInfo: unknown) => Caller;

/** What happened on one call, for request logs. */
export interface CallRecord {
  tool: string;
  identity: string;
  durationMs: number;
  outcome: string;
}

export interface ServerHooks {
  onCall?: (record: CallRecord) => void;
}

/**
 * One validator for every server instance: the HTTP transport builds a server per request, and the
 * SDK would otherwise compile a fresh Ajv for each (it is only used for elicitation, which pagewise
 * never sends).
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

const TOOL_LIST = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: z.toJSONSchema(tool.input, { io: "input" }) as {
    type: "object";
    [k: string]: unknown;
  },
  annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
}));

export function createMcpServer(
  engine: Engine,
  resolveCaller: CallerResolver,
  hooks: ServerHooks = {},
): Server {
  const server = new Server(
    { name: "pagewise", version: PACKAGE_VERSION },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: SHARED_VALIDATOR,
      instructions:
        "pagewise reads files, directories and large JSON in pages that fit a token budget. Pass next_cursor back to continue; cursors are bound to the content's version.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const tool = TOOLS.find((t) => t.name === request.params.name);
      if (!tool)
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const started = performance.now();
      let identity = "unknown";
      try {
        const caller = resolveCaller(extra.authInfo);
        identity = caller.identity;
        const args = parseArgs(tool.input, request.params.arguments);
        const progressToken = request.params._meta?.progressToken;
        const text = await tool.run(args, {
          ...engine,
          caller,
          signal: extra.signal,
          ...(progressToken !== undefined
            ? { progress: progressReporter(progressToken, extra.sendNotification) }
            : {}),
        });
        hooks.onCall?.({
          tool: tool.name,
          identity,
          durationMs: performance.now() - started,
          outcome: "ok",
        });
        return { content: [{ type: "text", text }] };
      } catch (err) {
        const error = toPagewiseError(
          extra.signal.aborted ? Object.assign(new Error("aborted"), { name: "AbortError" }) : err,
        );
        hooks.onCall?.({
          tool: tool.name,
          identity,
          durationMs: performance.now() - started,
          outcome: error.code,
        });
        return { content: [{ type: "text", text: JSON.stringify(error.toJSON()) }], isError: true };
      }
    },
  );
  return server;
}

/** Progress notifications for one request, at most one every 200 ms; failures to send are ignored. */
function progressReporter(
  token: string | number,
  send: (notification: ServerNotification) => Promise<void>,
): (progress: number, total?: number) => void {
  let last = 0;
  return (progress, total) => {
    const now = performance.now();
    if (now - last < 200) return;
    last = now;
    send({
      method: "notifications/progress",
      params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}) },
    }).catch(() => {});
  };
}
