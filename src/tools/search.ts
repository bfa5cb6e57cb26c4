import { z } from "zod";
import {
  DEFAULT_MAX_CHARS_PER_MATCH,
  DEFAULT_MAX_WALK_ENTRIES,
  DEFAULT_SEARCH_LIMIT,
  MAX_CONTEXT_LINES,
  MAX_SEARCH_LIMIT,
} from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const searchInput = z
  .object({
    pattern: z
      .string()
      .describe("JavaScript regex (text with literal: true), matched per line.")
      .optional(),
    path: z.string().describe("Directory or file (default: the first root).").optional(),
    literal: z.boolean().optional(),
    case_sensitive: z
      .boolean()
      .describe("Default: insensitive unless pattern has an upper-case letter.")
      .optional(),
    glob: z.string().describe('"*.ts" by name at any depth, "src/**" by path.').optional(),
    include_hidden: z.boolean().describe("Search names starting with '.' too.").optional(),
    respect_gitignore: z.boolean().describe("Default true.").optional(),
    context: wholeNumber(0, MAX_CONTEXT_LINES, "Lines before and after each match.").optional(),
    max_chars_per_match: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Longer lines are clamped around the match (default ${DEFAULT_MAX_CHARS_PER_MATCH}).`,
    ).optional(),
    count: z
      .enum(["exact", "at_least", "none"])
      .describe(
        '"exact" (default) reads every file for total; "at_least" answers sooner with a lower bound; "none" leaves total out.',
      )
      .optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Matches per page (default ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT}).`,
    ).optional(),
    offset: wholeNumber(0, MAX_COUNT_ARG, "Index of the first match.").optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
  })
  .strict();

export const searchTool: ToolDefinition<typeof searchInput> = {
  name: "search",
  title: "Search file contents in pages",
  description: `Search a directory's text files (skipping .gitignore'd, hidden and binary ones) or one file for a regex or literal: {uri, items:[{path, line, column, text, before?, after?, truncated?, line_cursor?}], pagination:{total, limit, offset, has_more, next_offset}, next_cursor}, ordered by path and position; path is relative to uri. A clamped line's line_cursor reads it whole with read.`,
  input: searchInput,
  async run(args, ctx: ToolContext) {
    const { createSearchSource } = await loadSource.search();
    const source = createSearchSource({
      maxTokens: budgetParam(ctx.settings),
      maxWalkEntries: ctx.settings.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
      ...(ctx.settings.searchStallMs !== undefined ? { stallMs: ctx.settings.searchStallMs } : {}),
      ...(ctx.progress ? { onProgress: (n: number) => ctx.progress?.(n) } : {}),
    });
    return runTool(
      source,
      ctx,
      {
        pattern: args.pattern,
        path: args.path,
        literal: args.literal,
        caseSensitive: args.case_sensitive,
        glob: args.glob,
        includeHidden: args.include_hidden,
        respectGitignore: args.respect_gitignore,
        context: args.context,
        maxCharsPerMatch: args.max_chars_per_match,
        count: args.count,
        offset: args.offset,
      },
      args.cursor,
      { max_tokens: args.max_tokens, limit: args.limit },
    );
  },
};
