/**
 * @module
 * `json_open`, `json_read`, `json_close`: bounded queries over large JSON, JSONL and JSON-seq files
 * (docs/json.md). Handlers only parse arguments and call sources/json-pages.
 */
import { z } from "zod";
import { loweredFields, resolvePageParams } from "../core/index.js";
import { DEFAULT_JSON_LIMITS } from "../json/limits.js";
import { DEFAULT_JSON_MAX_ITEMS, MAX_JSON_MAX_ITEMS } from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

/** The budget of a call that returns no page (json_open, json_close): the default, or lowered. */
function budgetOf(requested: number | undefined, ctx: ToolContext) {
  const resolved = resolvePageParams([budgetParam(ctx.settings)], { max_tokens: requested });
  return { maxTokens: resolved.values.max_tokens!, loweredFields: loweredFields(resolved.lowered) };
}

async function handlesOf(ctx: ToolContext) {
  const { handlesFor } = await loadSource.json();
  return handlesFor(ctx.settings, {
    ttlMs: ctx.settings.jsonHandleTtlMs,
    maxHandles: ctx.settings.maxJsonHandles,
  });
}

/** What `validation: "probe"` reads, as the descriptions say it ("4 MiB"). */
const PROBE_TEXT = `${DEFAULT_JSON_LIMITS.probeBytes / (1 << 20)} MiB`;

const formatArg = z
  .enum(["auto", "json", "jsonl", "json-seq"])
  .describe('Default "auto": detected from the first bytes and the name.');

export const jsonOpenInput = z
  .object({
    path: z.string().describe("JSON, JSONL or JSON-seq file."),
    format: formatArg.optional(),
    validation: z
      .enum(["probe", "full"])
      .describe(`"probe" (default) validates the first ${PROBE_TEXT}, "full" all.`)
      .optional(),
    max_tokens: maxTokensArg,
  })
  .strict();

export const jsonOpenTool: ToolDefinition<typeof jsonOpenInput> = {
  name: "json_open",
  title: "Open a large JSON / JSONL / JSON-seq file",
  description: `Detect a JSON, JSONL or JSON-seq file's format and validate it strictly: {file_id, uri, requested_format, detected_format, detection?, validation:{mode, complete, bytes_examined, records_examined?}, source:{size, modified_time}, version}. Pass file_id (or the path) to json_read.`,
  input: jsonOpenInput,
  async run(args, ctx: ToolContext) {
    const { jsonOpen } = await loadSource.json();
    return jsonOpen(ctx, {
      path: args.path,
      ...(args.format !== undefined ? { format: args.format } : {}),
      ...(args.validation !== undefined ? { validation: args.validation } : {}),
      ...budgetOf(args.max_tokens, ctx),
      ...(ctx.settings.jsonLimits ? { limits: ctx.settings.jsonLimits } : {}),
      handles: await handlesOf(ctx),
    });
  },
};

export const jsonReadInput = z
  .object({
    cursor: cursorArg,
    file_id: z.string().min(1).describe("A handle from json_open.").optional(),
    path: z.string().describe("The file, when no file_id is given.").optional(),
    language: z
      .enum(["jsonpath", "pointer"])
      .describe("JSONPath (RFC 9535) or JSON Pointer (RFC 6901).")
      .optional(),
    query: z.string().describe('"$.orders[*].id" or "/orders/0".').optional(),
    format: formatArg.optional(),
    max_items: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Matches per page (default ${DEFAULT_JSON_MAX_ITEMS}, at most ${MAX_JSON_MAX_ITEMS}).`,
    ).optional(),
    max_tokens: maxTokensArg,
  })
  .strict();

export const jsonReadTool: ToolDefinition<typeof jsonReadInput> = {
  name: "json_read",
  title: "Query a large JSON / JSONL / JSON-seq file in pages",
  description: `Query a JSON file with JSONPath or JSON Pointer, streaming (JSONL and JSON-seq: one array of records). Takes {cursor}, {file_id, language, query} or {path, language, query, format?}: {file_id?, language, query, items:[{path, value}], complete, next_cursor, stats:{returned, skipped}}; path is the match's pointer, value its JSON as written. A value too large for a page is {path, value_truncated: true, value_cursor}: read it with read.`,
  input: jsonReadInput,
  async run(args, ctx: ToolContext) {
    const { createJsonReadSource } = await loadSource.json();
    return runTool(
      createJsonReadSource({
        maxTokens: budgetParam(ctx.settings),
        ...(ctx.settings.jsonLimits ? { limits: ctx.settings.jsonLimits } : {}),
        handles: await handlesOf(ctx),
      }),
      ctx,
      {
        ...(args.file_id !== undefined ? { fileId: args.file_id } : {}),
        ...(args.path !== undefined ? { path: args.path } : {}),
        ...(args.language !== undefined ? { language: args.language } : {}),
        ...(args.query !== undefined ? { query: args.query } : {}),
        ...(args.format !== undefined ? { format: args.format } : {}),
      },
      args.cursor,
      { max_tokens: args.max_tokens, max_items: args.max_items },
    );
  },
};

export const jsonCloseInput = z
  .object({
    file_id: z.string().min(1),
    max_tokens: maxTokensArg,
  })
  .strict();

export const jsonCloseTool: ToolDefinition<typeof jsonCloseInput> = {
  name: "json_close",
  title: "Close a json_open handle",
  description:
    "Close a json_open handle: {file_id, closed}; closed is false when it was not open. Cursors do not need the handle.",
  input: jsonCloseInput,
  async run(args, ctx: ToolContext) {
    const { jsonClose } = await loadSource.json();
    return jsonClose(ctx, {
      fileId: args.file_id,
      ...budgetOf(args.max_tokens, ctx),
      handles: await handlesOf(ctx),
    });
  },
};
