import { z } from "zod";
import {
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOKENS_CAP,
  PagewiseError,
} from "../core/index.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const readInput = z
  .object({
    path: z
      .string()
      .describe(
        "File to read: relative to the first root, absolute inside a root, or a file:// URI. May be left out with a cursor.",
      )
      .optional(),
    offset: wholeNumber(0, MAX_COUNT_ARG, "First line to return, 0-based.").optional(),
    limit: wholeNumber(
      0,
      MAX_COUNT_ARG,
      "Number of lines to return (default: to the end).",
    ).optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
    encoding: z
      .enum(["utf-8", "base64"])
      .describe(
        '"utf-8" (default) or "base64" for files that are not valid UTF-8 (page mode only).',
      )
      .optional(),
  })
  .strict();

export const readTool: ToolDefinition<typeof readInput> = {
  name: "read",
  title: "Read a text file in pages",
  description: `Read one text file. With max_tokens or cursor (page mode) returns JSON {uri, content, version, has_more, next_cursor}: content fits the budget, pages split anywhere (even inside one huge line) and concatenate to the file exactly; pass next_cursor to continue. If the file changes between pages you get CONTENT_CHANGED, never mixed text. Without max_tokens (line mode) returns the selected lines as plain text, refused with RESPONSE_TOO_LARGE when over the server's ceiling. Page-mode budget: ${DEFAULT_MAX_TOKENS} tokens when a cursor comes without max_tokens; max_tokens at most ${DEFAULT_MAX_TOKENS_CAP} unless the server was started with a higher cap; use less when your client's limit is lower. Line mode is refused over ${DEFAULT_MAX_READ_TOKENS} tokens by default.`,
  input: readInput,
  async run(args, ctx: ToolContext) {
    if (args.path === undefined && args.cursor === undefined) {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        "Give the path of the file to read (or a cursor from a previous page).",
      );
    }
    if (args.max_tokens === undefined && args.cursor === undefined) {
      if (args.encoding === "base64") {
        throw new PagewiseError(
          "INVALID_ARGUMENT",
          'encoding "base64" works in page mode only: add max_tokens.',
          {
            retry: { max_tokens: ctx.settings.defaultMaxTokens },
          },
        );
      }
      const { readLines } = await loadSource.text();
      return readLines(ctx, {
        path: args.path,
        offset: args.offset,
        limit: args.limit,
        maxReadTokens: ctx.settings.maxReadTokens,
      });
    }
    const { createReadSource } = await loadSource.text();
    return runTool(
      createReadSource(budgetParam(ctx.settings)),
      ctx,
      {
        ...(args.path !== undefined ? { path: args.path } : {}),
        ...(args.offset !== undefined ? { offset: args.offset } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.encoding !== undefined ? { encoding: args.encoding } : {}),
      },
      args.cursor,
      { max_tokens: args.max_tokens },
    );
  },
};
