import { z } from "zod";
import {
  DEFAULT_MAX_CHARS_PER_MATCH,
  DEFAULT_MAX_WALK_ENTRIES,
  DEFAULT_SEARCH_LIMIT,
  MAX_CONTEXT_LINES,
  MAX_SEARCH_LIMIT,
} from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { BUDGET_NOTE, cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const searchInput = z
  .object({
    pattern: z
      .string()
      .describe(
        "JavaScript regular expression (or text with literal: true), matched line by line. May be left out with a cursor.",
      )
      .optional(),
    path: z
      .string()
      .describe(
        "Directory to search: relative to the first root, absolute inside a root, or a file:// URI (default: the first root).",
      )
      .optional(),
    literal: z.boolean().describe("Search for pattern as plain text (default false).").optional(),
    case_sensitive: z
      .boolean()
      .describe(
        "Default: smart case (case-insensitive unless the pattern has an upper-case letter).",
      )
      .optional(),
    glob: z
      .string()
      .describe('Only files matching this glob ("*.ts" by name at any depth, "src/**" by path).')
      .optional(),
    include_hidden: z
      .boolean()
      .describe("Search names starting with '.' too (default false).")
      .optional(),
    respect_gitignore: z
      .boolean()
      .describe("Skip what .gitignore files ignore (default true).")
      .optional(),
    context: wholeNumber(
      0,
      MAX_CONTEXT_LINES,
      `Lines of context before and after each match, 0-${MAX_CONTEXT_LINES} (default 0).`,
    ).optional(),
    max_chars_per_match: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Longer match lines are clamped around the match (truncated: true, with a line_cursor for read). Default ${DEFAULT_MAX_CHARS_PER_MATCH}.`,
    ).optional(),
    count: z
      .enum(["exact", "at_least", "none"])
      .describe(
        'How to count matches: "exact" (default) reads every file for the exact total; "at_least" returns the page as soon as its matches are found, with total a lower bound (total_is_lower_bound: true); "none" leaves total out.',
      )
      .optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Matches per page (default ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT}).`,
    ).optional(),
    offset: wholeNumber(
      0,
      MAX_COUNT_ARG,
      "Index of the first match to return (default 0).",
    ).optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
  })
  .strict();

export const searchTool: ToolDefinition<typeof searchInput> = {
  name: "search",
  title: "Search file contents in pages",
  description: `Search the text files under a directory for a regex or literal (smart case; .gitignore'd, hidden and binary files skipped). Returns JSON {uri, items:[{path,line,column,text,before?,after?,truncated?,line_cursor?}], pagination:{total,limit,offset,has_more,next_offset}, next_cursor}: total is the exact number of matches (every match on a line counts; count: at_least or none answers sooner with a lower bound or no total); items are ordered by path, then position. A long line is clamped around the match; pass its line_cursor to read to get the whole line. ${BUDGET_NOTE}`,
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
