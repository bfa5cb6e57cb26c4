import { z } from "zod";
import { DEFAULT_LIST_LIMIT, DEFAULT_MAX_WALK_ENTRIES, MAX_LIST_LIMIT } from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const listInput = z
  .object({
    path: z.string().describe("Directory (default: the first root).").optional(),
    recursive: z.boolean().describe("The whole tree below path.").optional(),
    glob: z
      .string()
      .describe('Only matching entries: "*.ts" by name at any depth, "src/**/*.ts" by path.')
      .optional(),
    type: z.enum(["file", "directory", "any"]).describe('Default "any".').optional(),
    include_hidden: z
      .boolean()
      .describe("Include names starting with '.' (.git never).")
      .optional(),
    respect_gitignore: z.boolean().describe("Default true.").optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Entries per page (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}).`,
    ).optional(),
    offset: wholeNumber(0, MAX_COUNT_ARG, "Index of the first entry.").optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
  })
  .strict();

export const listTool: ToolDefinition<typeof listInput> = {
  name: "list",
  title: "List a directory in pages",
  description: `List a directory, optionally recursive: {uri, items:[{path, type, size, mtime}], pagination:{total, limit, offset, has_more, next_offset}, next_cursor, version}, ordered by path; path is relative to uri. Cursors stay correct while files come and go. Hidden and .gitignore'd entries are left out by default; symlinks are listed, never followed.`,
  input: listInput,
  async run(args, ctx: ToolContext) {
    const { createListSource } = await loadSource.listing();
    const source = createListSource({
      maxTokens: budgetParam(ctx.settings),
      maxWalkEntries: ctx.settings.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
      ...(ctx.progress ? { onProgress: (n: number) => ctx.progress?.(n) } : {}),
    });
    return runTool(
      source,
      ctx,
      {
        path: args.path,
        recursive: args.recursive,
        glob: args.glob,
        type: args.type,
        includeHidden: args.include_hidden,
        respectGitignore: args.respect_gitignore,
        offset: args.offset,
      },
      args.cursor,
      { max_tokens: args.max_tokens, limit: args.limit },
    );
  },
};
