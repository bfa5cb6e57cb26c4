/**
 * @module
 * Each terminal command's call of its source, without the tools' schemas. Perf: a tool module
 * builds its zod schema when it is loaded, and zod is ~100 modules; a `pagewise read` that loaded
 * it started 2–3× slower than `node -e 0`. The arguments reaching here were checked against the
 * option table (arguments.ts), whose bounds and choices options.test.ts holds equal to the schemas;
 * each function does what its tool's `run` does after parsing (src/tools/<tool>.ts), and
 * test/cli.e2e.test.ts checks that both give the same page.
 *
 * Imports the tools layer's context module (the pipeline and the lazy source loader) rather than
 * the layer's index, which would load every tool's schema.
 */
import { PagewiseError } from "../core/index.js";
import { DEFAULT_MAX_WALK_ENTRIES } from "../sources/limits.js";
import { budgetParam, loadSource, runTool, type ToolContext } from "../tools/context.js";
import type { TerminalCommand } from "./options.js";

/** Tool arguments as the command line gives them (snake_case, already checked). */
export type CallArgs = Readonly<Record<string, unknown>>;

// biome-ignore lint/suspicious/noExplicitAny: arguments were checked against the option table
type Checked = any;

async function read(a: Checked, ctx: ToolContext): Promise<string> {
  if (a.path === undefined && a.cursor === undefined) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      "Give the path of the file to read (or a cursor from a previous page).",
    );
  }
  const { createReadSource, readLines } = await loadSource.text();
  if (a.max_tokens === undefined && a.cursor === undefined) {
    if (a.encoding === "base64") {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        'encoding "base64" works in page mode only: add max_tokens.',
        { retry: { max_tokens: ctx.settings.defaultMaxTokens } },
      );
    }
    return readLines(ctx, {
      path: a.path,
      offset: a.offset,
      limit: a.limit,
      maxReadTokens: ctx.settings.maxReadTokens,
    });
  }
  return runTool(
    createReadSource(budgetParam(ctx.settings)),
    ctx,
    {
      ...(a.path !== undefined ? { path: a.path } : {}),
      ...(a.offset !== undefined ? { offset: a.offset } : {}),
      ...(a.limit !== undefined ? { limit: a.limit } : {}),
      ...(a.encoding !== undefined ? { encoding: a.encoding } : {}),
    },
    a.cursor,
    { max_tokens: a.max_tokens },
  );
}

async function list(a: Checked, ctx: ToolContext): Promise<string> {
  const { createListSource } = await loadSource.listing();
  const source = createListSource({
    maxTokens: budgetParam(ctx.settings),
    maxWalkEntries: ctx.settings.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
    // A command serves one user, so its walk may hold its own thread. Perf: starting a worker
    // costs more than walking a small tree (60 ms of a `list`'s 95 over `node -e 0`).
    inProcess: true,
    ...(ctx.progress ? { onProgress: (n: number) => ctx.progress?.(n) } : {}),
  });
  return runTool(
    source,
    ctx,
    {
      path: a.path,
      recursive: a.recursive,
      glob: a.glob,
      type: a.type,
      includeHidden: a.include_hidden,
      respectGitignore: a.respect_gitignore,
      offset: a.offset,
    },
    a.cursor,
    { max_tokens: a.max_tokens, limit: a.limit },
  );
}

async function search(a: Checked, ctx: ToolContext): Promise<string> {
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
      pattern: a.pattern,
      path: a.path,
      literal: a.literal,
      caseSensitive: a.case_sensitive,
      glob: a.glob,
      includeHidden: a.include_hidden,
      respectGitignore: a.respect_gitignore,
      context: a.context,
      maxCharsPerMatch: a.max_chars_per_match,
      count: a.count,
      offset: a.offset,
    },
    a.cursor,
    { max_tokens: a.max_tokens, limit: a.limit },
  );
}

async function tail(a: Checked, ctx: ToolContext): Promise<string> {
  const given = [a.cursor, a.before, a.after].filter((c) => c !== undefined);
  if (given.length > 1) {
    throw new PagewiseError("INVALID_ARGUMENT", "Pass one of cursor, before or after.");
  }
  const cursorKind =
    a.before !== undefined ? "before" : a.after !== undefined ? "after" : undefined;
  const { createTailSource } = await loadSource.tail();
  return runTool(
    createTailSource(budgetParam(ctx.settings)),
    ctx,
    {
      ...(a.path !== undefined ? { path: a.path } : {}),
      ...(cursorKind !== undefined ? { cursorKind } : {}),
      ...(a.from_start !== undefined ? { fromStart: a.from_start } : {}),
      ...(a.grep !== undefined ? { grep: a.grep } : {}),
      ...(a.grep_literal !== undefined ? { grepLiteral: a.grep_literal } : {}),
      ...(ctx.settings.searchStallMs !== undefined ? { stallMs: ctx.settings.searchStallMs } : {}),
    },
    given[0],
    { max_tokens: a.max_tokens, limit: a.limit, max_chars_per_item: a.max_chars_per_item },
  );
}

async function json(a: Checked, ctx: ToolContext): Promise<string> {
  const { createJsonReadSource, handlesFor } = await loadSource.json();
  return runTool(
    createJsonReadSource({
      maxTokens: budgetParam(ctx.settings),
      ...(ctx.settings.jsonLimits ? { limits: ctx.settings.jsonLimits } : {}),
      handles: handlesFor(ctx.settings, {}),
    }),
    ctx,
    {
      ...(a.path !== undefined ? { path: a.path } : {}),
      ...(a.language !== undefined ? { language: a.language } : {}),
      ...(a.query !== undefined ? { query: a.query } : {}),
      ...(a.format !== undefined ? { format: a.format } : {}),
    },
    a.cursor,
    { max_tokens: a.max_tokens, max_items: a.max_items },
  );
}

/** The call behind each terminal command. */
export const CALLS: Readonly<
  Record<TerminalCommand, (args: CallArgs, ctx: ToolContext) => Promise<string>>
> = { read, list, search, tail, json };
