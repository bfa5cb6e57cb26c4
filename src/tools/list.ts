import { z } from "zod";
import { DEFAULT_LIST_LIMIT, DEFAULT_MAX_WALK_ENTRIES, MAX_LIST_LIMIT } from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "./context.js";
import { BUDGET_NOTE, cursorArg, MAX_COUNT_ARG, maxTokensArg, wholeNumber } from "./schema.js";
import type { ToolDefinition } from "./tool.js";

export const listInput = z
  .object({
    path: z
      .string()
      .describe(
        "Directory to list: relative to the first root, absolute inside a root, or a file:// URI (default: the first root). May be left out with a cursor.",
      )
      .optional(),
    recursive: z.boolean().describe("List the whole tree below path (default false).").optional(),
    glob: z
      .string()
      .describe(
        'Only entries matching this glob (picomatch). Without "/" it matches names at any depth ("*.ts"); with "/" the path relative to path ("src/**/*.ts").',
      )
      .optional(),
    type: z
      .enum(["file", "directory", "any"])
      .describe(
        'Only regular files, only directories, or "any" (default; symlinks and other entries included).',
      )
      .optional(),
    include_hidden: z
      .boolean()
      .describe("Include names starting with '.' (default false). .git is never listed.")
      .optional(),
    respect_gitignore: z
      .boolean()
      .describe("Leave out what .gitignore files ignore, nested ones too (default true).")
      .optional(),
    limit: wholeNumber(
      1,
      MAX_COUNT_ARG,
      `Entries per page (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}; larger is lowered and reported).`,
    ).optional(),
    offset: wholeNumber(
      0,
      MAX_COUNT_ARG,
      "Index of the first entry to return (default 0).",
    ).optional(),
    max_tokens: maxTokensArg,
    cursor: cursorArg,
  })
  .strict();

export const listTool: ToolDefinition<typeof listInput> = {
  name: "list",
  title: "List a directory in pages",
  description: `List a directory (recursive optional) in pages that fit the token budget. Returns JSON {uri, items:[{path,type,size,mtime}], pagination:{total,limit,offset,has_more,next_offset}, next_cursor, version}. Items are ordered by path (code-point order); path is relative to the listed directory. Continue with next_cursor (stays correct while files are added or deleted) or next_offset. Hidden and .gitignore'd entries are left out by default; symlinks are listed (type "symlink"), never followed. ${BUDGET_NOTE}`,
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
