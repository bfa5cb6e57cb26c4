import { z } from "zod";
import { PagewiseError } from "../core/index.js";
import {
  TAIL_DEFAULT_LIMIT,
  TAIL_DEFAULT_MAX_CHARS_PER_ITEM,
  TAIL_MAX_LIMIT,
} from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

const tailCursor = (description: string) => z.string().min(1).describe(description).optional();

export const tailInput = z
  .object({
    path: z
      .string()
      .describe("Log, JSONL or other line file (not needed with a cursor).")
      .optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Records per page (default ${TAIL_DEFAULT_LIMIT}, at most ${TAIL_MAX_LIMIT}).`,
    ).optional(),
    max_tokens: maxTokensArg,
    max_chars_per_item: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Longer records are clamped (default ${TAIL_DEFAULT_MAX_CHARS_PER_ITEM} characters).`,
    ).optional(),
    cursor: tailCursor("next_cursor, earlier_cursor or later_cursor of a previous page."),
    before: tailCursor("earlier_cursor: the records before that page."),
    after: tailCursor("later_cursor: the records after that page, appended ones included."),
    from_start: z.boolean().describe("Start at the first record instead of the newest.").optional(),
    grep: z
      .string()
      .describe("Only records matching this JavaScript regex (case as in search).")
      .optional(),
    grep_literal: z.boolean().describe("grep is plain text.").optional(),
  })
  .strict();

export const tailTool: ToolDefinition<typeof tailInput> = {
  name: "tail",
  title: "Newest records of a log or JSONL file",
  description: `The newest records of a log, JSONL or line file: {uri, items:[{position, text, truncated?, partial?, line_cursor?}], has_earlier, earlier_cursor, has_later, later_cursor, next_cursor, version}, oldest first. next_cursor pages back (forward after from_start or a later_cursor); later_cursor fetches records appended since. A clamped record's line_cursor reads it whole with read. Truncation, rotation or rewrites are CONTENT_CHANGED; appends are not.`,
  input: tailInput,
  async run(args, ctx: ToolContext) {
    const given = [args.cursor, args.before, args.after].filter((c) => c !== undefined);
    if (given.length > 1) {
      throw new PagewiseError("INVALID_ARGUMENT", "Pass one of cursor, before or after.");
    }
    const cursor = given[0];
    // `cursor` takes any of tail's cursors; `before` and `after` also check which one it is.
    const cursorKind =
      args.before !== undefined ? "before" : args.after !== undefined ? "after" : undefined;
    const { createTailSource } = await loadSource.tail();
    return runTool(
      createTailSource(budgetParam(ctx.settings)),
      ctx,
      {
        ...(args.path !== undefined ? { path: args.path } : {}),
        ...(cursorKind !== undefined ? { cursorKind } : {}),
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
