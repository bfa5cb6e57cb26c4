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
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOKENS_CAP,
  defaultEstimator,
  type Estimator,
  FileVersions,
  toPagewiseError,
} from "../core/index.js";
import { COMMON_RULES, parseArgs, TOOLS, type ToolSettings } from "../tools/index.js";
import { PACKAGE_VERSION } from "../version.js";
import { MAX_RESULT_SIZE_CHARS } from "./limits.js";

/** The parts shared by every request a server process answers. */
export interface Engine {
  readonly codec: CursorCodec;
  readonly estimator: Estimator;
  readonly settings: ToolSettings;
  readonly versions: FileVersions;
  /** `tools/list`'s tools for these settings and this estimator (built once). */
  readonly toolList: readonly ListedTool[];
}

export function createEngine(parts: Omit<Engine, "versions" | "toolList">): Engine {
  return {
    ...parts,
    versions: new FileVersions(),
    toolList: toolListFor(parts.settings, parts.estimator),
  };
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

/**
 * The `_meta` key of a tool's entry in `tools/list` with which Claude Code lets the tool's results
 * be that many characters long before it saves them to a file (docs/clients.md).
 */
export const MAX_RESULT_SIZE_META_KEY = "anthropic/maxResultSizeChars";

/**
 * The most characters a result within `maxTokens` can hold under `estimator` (one token covers at
 * most `maxUnitsPerToken` UTF-16 units, which is how clients count characters), as a tool declares
 * it under MAX_RESULT_SIZE_META_KEY: at most the 500,000 Claude Code honours.
 */
export function maxResultSizeChars(maxTokens: number, estimator: Estimator): number {
  return Math.min(MAX_RESULT_SIZE_CHARS, maxTokens * estimator.maxUnitsPerToken);
}

/** A tool as `tools/list` publishes it. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object"; [k: string]: unknown };
  annotations: { readOnlyHint: true; openWorldHint: false };
  _meta: { [MAX_RESULT_SIZE_META_KEY]: number };
}

/**
 * One validator for every server instance: the HTTP entry builds a server per request, and the
 * SDK would otherwise build a fresh Ajv for each (it is only used for elicitation, which pagewise
 * never sends).
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/** Each tool's input schema as JSON Schema 2020-12, MCP's default dialect (without `$schema`). */
const INPUT_SCHEMAS = new Map(
  TOOLS.map((tool) => {
    const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(tool.input, {
      io: "input",
      target: "draft-2020-12",
    });
    return [tool.name, inputSchema as ListedTool["inputSchema"]];
  }),
);

/**
 * Every tool as `tools/list` publishes it, in a fixed order (the order of TOOLS). Each declares the
 * largest result it may return (a page at the cap; for `read`, a line-mode answer at its ceiling
 * too), so that Claude Code shows such a result instead of saving it to a file.
 */
export function toolListFor(settings: ToolSettings, estimator: Estimator): ListedTool[] {
  return TOOLS.map((tool) => {
    const largest =
      tool.name === "read"
        ? Math.max(settings.maxTokensCap, settings.maxReadTokens)
        : settings.maxTokensCap;
    return {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: INPUT_SCHEMAS.get(tool.name)!,
      annotations: { readOnlyHint: true, openWorldHint: false },
      _meta: { [MAX_RESULT_SIZE_META_KEY]: maxResultSizeChars(largest, estimator) },
    };
  });
}

/** The tools as a server with the default settings and the `default` estimator lists them. */
export const TOOL_LIST: readonly ListedTool[] = toolListFor(
  {
    defaultMaxTokens: DEFAULT_MAX_TOKENS,
    maxTokensCap: DEFAULT_MAX_TOKENS_CAP,
    maxReadTokens: DEFAULT_MAX_READ_TOKENS,
  },
  defaultEstimator,
);

/**
 * The server's instructions: what every tool shares (budget, paging, errors), said once here
 * rather than in each tool's description; with a known caller they name the directories it may
 * read. Claude Code keeps the first 2,048 characters, so the roots come last.
 */
export function instructionsFor(
  caller: Caller | undefined,
  settings?: Pick<ToolSettings, "defaultMaxTokens" | "maxTokensCap">,
): string {
  const base = COMMON_RULES(
    settings?.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
    settings?.maxTokensCap ?? DEFAULT_MAX_TOKENS_CAP,
  );
  if (!caller) return base;
  const dirs = caller.roots.dirs;
  const where =
    dirs.length === 0 ? " This caller may read no directory." : ` Roots: ${dirs.join(", ")}.`;
  return `${base}${where}`;
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
      instructions: instructionsFor(
        typeof caller === "function" ? undefined : caller,
        engine.settings,
      ),
    },
  );
  server.setRequestHandler("tools/list", async () => ({ tools: [...engine.toolList] }));
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

/**
 * The one text block of a tool result. The size hint Claude Code reads is on the tool's entry in
 * `tools/list` (`toolListFor`), not here: on a result it has no effect.
 */
export function textResult(text: string, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) };
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
