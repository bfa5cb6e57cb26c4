/**
 * @module
 * The MCP face of pagewise: lists the tools and dispatches calls. Thin on purpose — parse, call the
 * tool, render one text block.
 *
 * It uses the SDK's low-level `Server` rather than `McpServer.registerTool`: McpServer answers a
 * failed argument validation with its own plain-text message, while the contract requires every
 * error, argument errors included, to be the structured `{"error":{code,message,…}}` object.
 *
 * One server instance serves one connection (stdio) or one request (HTTP); both entries of the
 * SDK (`serveStdio`, `createMcpHandler`) build instances from a factory and decide the protocol
 * era (2025 `initialize` or 2026-07-28 `server/discover`) themselves, so this module is era-blind.
 */
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerNotification,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import { z } from "zod";
import type { Caller } from "../access/index.js";
import {
  type CursorCodec,
  DEFAULT_MAX_TOKENS,
  type Estimator,
  FileVersions,
  toPagewiseError,
} from "../core/index.js";
import { parseArgs, TOOLS, type ToolSettings } from "../tools/index.js";
import { PACKAGE_VERSION } from "../version.js";
import { CLIENT_RESULT_PREVIEW_CHARS, MAX_RESULT_SIZE_CHARS } from "./limits.js";

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

/** Called once per request to learn who is calling (from the request's auth info). */
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

export const MAX_RESULT_SIZE_META_KEY = "anthropic/maxResultSizeChars";

/**
 * One validator for every server instance: the HTTP entry builds a server per request, and the
 * SDK would otherwise build a fresh Ajv for each (it is only used for elicitation, which pagewise
 * never sends).
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/**
 * Every tool as `tools/list` publishes it; built once, in a fixed order (the order of TOOLS). The
 * schemas are JSON Schema 2020-12, MCP's default dialect, so they leave out `$schema`.
 */
export const TOOL_LIST = TOOLS.map((tool) => {
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(tool.input, {
    io: "input",
    target: "draft-2020-12",
  });
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputSchema as { type: "object"; [k: string]: unknown },
    annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
  };
});

const BASE_INSTRUCTIONS = `pagewise reads files, directories and large JSON in pages that fit a token budget (${DEFAULT_MAX_TOKENS} tokens by default). Pass next_cursor back to continue; cursors are bound to the content's version.`;

/** The server's instructions; with a known caller they name the directories it may read. */
export function instructionsFor(caller: Caller | undefined): string {
  if (!caller) return BASE_INSTRUCTIONS;
  const dirs = caller.roots.dirs;
  const where =
    dirs.length === 0
      ? " This caller may read no directory."
      : ` Paths are relative to the first root, or absolute inside a root. Roots: ${dirs.join(", ")}.`;
  return `${BASE_INSTRUCTIONS}${where}`;
}

/**
 * Builds one server instance. `caller` is either the fixed caller of this instance (its roots are
 * then named in the instructions) or a resolver run on every call with the request's auth info.
 */
export function createMcpServer(
  engine: Engine,
  caller: Caller | CallerResolver,
  hooks: ServerHooks = {},
): Server {
  const resolveCaller: CallerResolver = typeof caller === "function" ? caller : () => caller;
  const server = new Server(
    { name: "pagewise", version: PACKAGE_VERSION },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: SHARED_VALIDATOR,
      instructions: instructionsFor(typeof caller === "function" ? undefined : caller),
    },
  );
  server.setRequestHandler("tools/list", async () => ({ tools: TOOL_LIST }));
  server.setRequestHandler("tools/call", async (request, ctx): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name}. Tools: ${TOOLS.map((t) => t.name).join(", ")}.`,
      );
    const signal = ctx.mcpReq.signal;
    const started = performance.now();
    let identity = "unknown";
    const record = (outcome: string) =>
      hooks.onCall?.({
        tool: tool.name,
        identity,
        durationMs: performance.now() - started,
        outcome,
      });
    try {
      const who = resolveCaller(ctx.http?.authInfo);
      identity = who.identity;
      const args = parseArgs(tool.input, request.params.arguments);
      const progressToken = request.params._meta?.progressToken;
      const text = await tool.run(args, {
        ...engine,
        caller: who,
        signal,
        ...(progressToken !== undefined
          ? { progress: progressReporter(progressToken, (n) => ctx.mcpReq.notify(n)) }
          : {}),
      });
      record("ok");
      return textResult(text, false);
    } catch (err) {
      const error = toPagewiseError(
        signal.aborted ? Object.assign(new Error("aborted"), { name: "AbortError" }) : err,
      );
      record(error.code);
      return textResult(JSON.stringify(error.toJSON()), true);
    }
  });
  return server;
}

/** The one text block; a long one carries the hint that keeps Claude Code from clipping it. */
export function textResult(text: string, isError: boolean): CallToolResult {
  return {
    content: [{ type: "text", text }],
    ...(isError ? { isError: true } : {}),
    ...(text.length > CLIENT_RESULT_PREVIEW_CHARS
      ? { _meta: { [MAX_RESULT_SIZE_META_KEY]: Math.min(MAX_RESULT_SIZE_CHARS, text.length) } }
      : {}),
  };
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
