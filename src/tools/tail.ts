import { z } from "zod";
import { PagewiseError } from "../core/index.js";
import {
  TAIL_DEFAULT_LIMIT,
  TAIL_DEFAULT_MAX_CHARS_PER_ITEM,
  TAIL_MAX_LIMIT,
} from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { BUDGET_NOTE, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

const tailCursor = (description: string) => z.string().min(1).describe(description).optional();

export const tailInput = z
  .object({
    path: z
      .string()
      .describe(
        "Log, JSONL or other line file: relative to the first root, absolute inside a root, or a file:// URI. May be left out with a cursor.",
      )
      .optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Most records per page (default ${TAIL_DEFAULT_LIMIT}, at most ${TAIL_MAX_LIMIT}; larger is lowered and reported).`,
    ).optional(),
    max_tokens: maxTokensArg,
    max_chars_per_item: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Longest text shown for one record, in characters (default ${TAIL_DEFAULT_MAX_CHARS_PER_ITEM}); a longer record is truncated and carries a line_cursor for read.`,
    ).optional(),
    before: tailCursor(
      "earlier_cursor from a previous page: returns the records just before that page.",
    ),
    after: tailCursor(
      "later_cursor from a previous page: returns the records after that page, including ones appended since.",
    ),
    from_start: z
      .boolean()
      .describe("Start at the first record of the file instead of the newest (default false).")
      .optional(),
    grep: z
      .string()
      .describe(
        "Keep only records matching this JavaScript regular expression (smart case: case-insensitive unless it has an upper-case letter). A cursor keeps its filter.",
      )
      .optional(),
    grep_literal: z
      .boolean()
      .describe("Match grep as plain text instead of a regular expression (default false).")
      .optional(),
  })
  .strict();

export const tailTool: ToolDefinition<typeof tailInput> = {
  name: "tail",
  title: "Newest records of a log or JSONL file",
  description: `Read a log, JSONL or any line file from the end: returns JSON {uri, items:[{position, text, truncated?, partial?, line_cursor?}], has_earlier, earlier_cursor, has_later, later_cursor, version} with the newest records that fit the budget, oldest first. Pass earlier_cursor as before to page back, later_cursor as after to get records appended since. A record longer than max_chars_per_item is truncated; read its line_cursor to get all of it. partial: true marks a last record still being written. Cursors survive appends; truncation, rotation or rewrites give CONTENT_CHANGED. ${BUDGET_NOTE}`,
  input: tailInput,
  async run(args, ctx: ToolContext) {
    if (args.before !== undefined && args.after !== undefined) {
      throw new PagewiseError("INVALID_ARGUMENT", "Pass either before or after, not both.");
    }
    const cursor = args.before ?? args.after;
    const { createTailSource } = await loadSource.tail();
    return runTool(
      createTailSource(budgetParam(ctx.settings)),
      ctx,
      {
        ...(args.path !== undefined ? { path: args.path } : {}),
        ...(cursor !== undefined
          ? { cursorKind: args.before !== undefined ? "before" : "after" }
          : {}),
        ...(args.from_start !== undefined ? { fromStart: args.from_start } : {}),
        ...(args.grep !== undefined ? { grep: args.grep } : {}),
        ...(args.grep_literal !== undefined ? { grepLiteral: args.grep_literal } : {}),
        ...(ctx.settings.searchStallMs !== undefined
          ? { stallMs: ctx.settings.searchStallMs }
          : {}),
      },
      cursor,
      {
        max_tokens: args.max_tokens,
        limit: args.limit,
        max_chars_per_item: args.max_chars_per_item,
      },
    );
  },
};
