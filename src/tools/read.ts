import { z } from "zod";
import { DEFAULT_MAX_READ_TOKENS, PagewiseError } from "../core/index.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const readInput = z
  .object({
    path: z.string().describe("File to read (not needed with cursor).").optional(),
    offset: wholeNumber(0, MAX_COUNT_ARG, "First line to return, 0-based.").optional(),
    limit: wholeNumber(0, MAX_COUNT_ARG, "Lines to return (default: to the end).").optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
    encoding: z
      .enum(["utf-8", "base64"])
      .describe('"base64" for files that are not UTF-8 (page mode).')
      .optional(),
  })
  .strict();

export const readTool: ToolDefinition<typeof readInput> = {
  name: "read",
  title: "Read a text file in pages",
  description: `Read a text file. Page mode (max_tokens or cursor): {uri, content, position:{line, byte, size}, version, has_more, next_cursor}; pages split anywhere, even inside a line, and concatenate to the file exactly. Line mode (no max_tokens): the lines as plain text, RESPONSE_TOO_LARGE over ${DEFAULT_MAX_READ_TOKENS} tokens by default.`,
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
