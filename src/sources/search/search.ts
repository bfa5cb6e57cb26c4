/**
 * @module
 * The `search` source: matches of a regex or literal under a directory, in pages that fit a token
 * budget, ordered by path (code-point order), then by position in the file.
 *
 * Cost model. A first page (or an `offset` page) with `count: "exact"` reads every candidate file
 * once: the exact `total` needs all matches. With `count: "at_least"` or `"none"` it stops as soon
 * as its page is collected and one more match is seen. A cursor carries the last match's position
 * (path, line, ordinal, where to resume reading), the identity hash of that file, the total and
 * the page parameters; its page walks only from that file on (O(depth) directory listings plus
 * what it reads) and stops like a non-exact first page. The cursor's file must be unchanged
 * (CONTENT_CHANGED otherwise); later files are read as they are now.
 */
import { openFileConfined, resolveDirectoryConfined } from "../../access/index.js";
import {
  ByteWriter,
  budgetTooSmall,
  conflictingArgument,
  fitItemCount,
  identityKey,
  malformedCursor,
  PagewiseError,
} from "../../core/index.js";
import {
  DEFAULT_MAX_CHARS_PER_MATCH,
  DEFAULT_SEARCH_LIMIT,
  MAX_CONTEXT_LINES,
  MAX_SEARCH_LIMIT,
} from "../limits.js";
import {
  type CaseMode,
  compileGlob,
  compilePattern,
  MAX_LIVE_WORKERS,
  Slots,
} from "../pattern/index.js";
import type { SourceContext } from "../shared/context.js";
import { checkCursorDirectoryPath, readFileRef, writeFileRef } from "../shared/file-ref.js";
import { encodeLineCursor } from "../shared/read-cursor.js";
import { ancestorsWithin, DEFAULT_MAX_WALK_ENTRIES } from "../walk/index.js";
import { runScanJob } from "./pool.js";
import {
  FILE_TAG_BYTES,
  type MatchPosition,
  type RawMatch,
  type ScanResult,
  type ScanWindow,
} from "./scan.js";

export const SEARCH_TOOL = "search";

/**
 * How a page counts matches: `exact` reads every candidate file for the exact `total`; `at_least`
 * stops once the page is full and reports a lower bound (`total_is_lower_bound: true`); `none`
 * stops as early and leaves `total` out.
 */
export type CountMode = "exact" | "at_least" | "none";
const COUNT_MODES: readonly CountMode[] = ["exact", "at_least", "none"];

export interface SearchRequest {
  readonly pattern?: string;
  readonly path?: string;
  readonly literal?: boolean;
  readonly caseSensitive?: boolean;
  readonly glob?: string;
  readonly includeHidden?: boolean;
  readonly respectGitignore?: boolean;
  readonly context?: number;
  readonly maxCharsPerMatch?: number;
  readonly count?: CountMode;
  readonly limit?: number;
  readonly offset?: number;
  readonly cursor?: string;
  /** The budget applied to this call (the default when the caller gave none). */
  readonly maxTokens: number;
  readonly maxTokensLowered?: boolean;
  /**
   * Whether the caller passed `max_tokens`. Without it, a continuation keeps the budget its cursor
   * carries (lowered to `maxTokensCap`).
   */
  readonly maxTokensGiven?: boolean;
  readonly maxTokensCap?: number;
  readonly maxWalkEntries?: number;
  readonly stallMs?: number;
  readonly onProgress?: (filesRead: number) => void;
  /** Scan in this thread instead of a worker (tests). */
  readonly inProcess?: boolean;
}

interface SearchQuery {
  pattern: string;
  literal: boolean;
  caseMode: CaseMode;
  count: CountMode;
  glob: string | undefined;
  includeHidden: boolean;
  respectGitignore: boolean;
  context: number;
  maxChars: number;
}

const CASE_MODES: readonly CaseMode[] = ["smart", "sensitive", "insensitive"];

function flagsOf(q: SearchQuery): number {
  return (
    (q.literal ? 1 : 0) |
    (q.includeHidden ? 2 : 0) |
    (q.respectGitignore ? 4 : 0) |
    (CASE_MODES.indexOf(q.caseMode) << 3) |
    (COUNT_MODES.indexOf(q.count) << 5)
  );
}

/** What a cursor holds besides the query. */
interface CursorState {
  readonly absolute: string;
  readonly query: SearchQuery;
  readonly limit: number;
  readonly maxTokens: number;
  readonly after: MatchPosition;
  readonly resume: { byte: number; line: number };
  /** Index of the first match after the cursor. */
  readonly offset: number;
  /** The first page's exact total (`exact`), the lower bound so far (`at_least`), or 0. */
  readonly total: number;
}

function decodeCursor(ctx: SourceContext, cursor: string): CursorState {
  const { caller, codec } = ctx;
  const r = codec.decode(SEARCH_TOOL, caller.identity, cursor);
  const { absolute } = readFileRef(r, caller.roots);
  const flags = r.u8();
  const mode = CASE_MODES[(flags >> 3) & 3];
  const count = COUNT_MODES[(flags >> 5) & 3];
  if (mode === undefined || count === undefined || flags >> 7 !== 0) throw malformedCursor();
  const query: SearchQuery = {
    literal: (flags & 1) !== 0,
    includeHidden: (flags & 2) !== 0,
    respectGitignore: (flags & 4) !== 0,
    caseMode: mode,
    count,
    context: r.u8(),
    maxChars: r.uint(),
    pattern: r.string(),
    glob: r.string() || undefined,
  };
  const limit = r.uint();
  const maxTokens = r.uint();
  const after: MatchPosition = {
    path: r.string(),
    lineStart: r.uint(),
    ordinal: r.uint(),
    fileTag: Buffer.from(r.raw(FILE_TAG_BYTES)).toString("base64url"),
  };
  const resume = { byte: r.uint(), line: r.uint() };
  const offset = r.uint();
  const total = r.uint();
  r.end();
  return { absolute, query, limit, maxTokens, after, resume, offset, total };
}

/** The query of a first call (no cursor), with its defaults. */
function queryOf(req: SearchRequest, caseMode: CaseMode): SearchQuery {
  if (req.pattern === undefined) {
    throw new PagewiseError("INVALID_ARGUMENT", "Give the pattern to search for.");
  }
  return {
    pattern: req.pattern,
    literal: req.literal ?? false,
    caseMode,
    count: req.count ?? "exact",
    glob: req.glob,
    includeHidden: req.includeHidden ?? false,
    respectGitignore: req.respectGitignore ?? true,
    context: req.context ?? 0,
    maxChars: req.maxCharsPerMatch ?? DEFAULT_MAX_CHARS_PER_MATCH,
  };
}

/**
 * Searches in progress at once; the rest wait before compiling anything. A flood of calls would
 * otherwise hold a compiled pattern, a scan and its results each while they queue for threads.
 */
const searches = new Slots(MAX_LIVE_WORKERS);

export function searchPage(ctx: SourceContext, req: SearchRequest): Promise<string> {
  return searches.run(ctx.signal, () => searchPageNow(ctx, req));
}

async function searchPageNow(ctx: SourceContext, req: SearchRequest): Promise<string> {
  const { caller } = ctx;
  const roots = caller.roots;
  const caseMode: CaseMode =
    req.caseSensitive === undefined ? "smart" : req.caseSensitive ? "sensitive" : "insensitive";
  let dirArg = req.path;
  let requestedLimit = req.limit;
  let query: SearchQuery;
  let budget = { maxTokens: req.maxTokens, lowered: req.maxTokensLowered === true };
  let state: CursorState | undefined;
  if (req.cursor !== undefined) {
    if (req.offset !== undefined) {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        "A cursor already fixes the position: pass cursor without offset.",
      );
    }
    state = decodeCursor(ctx, req.cursor);
    query = mergeQuery(state.query, {
      pattern: req.pattern,
      literal: req.literal,
      caseMode: req.caseSensitive === undefined ? undefined : caseMode,
      count: req.count,
      glob: req.glob,
      includeHidden: req.includeHidden,
      respectGitignore: req.respectGitignore,
      context: req.context,
      maxChars: req.maxCharsPerMatch,
    });
    await checkCursorDirectoryPath(roots, dirArg, state.absolute);
    dirArg = state.absolute;
    requestedLimit ??= state.limit;
    if (!req.maxTokensGiven && state.maxTokens > 0) {
      const cap = req.maxTokensCap ?? Number.POSITIVE_INFINITY;
      budget = { maxTokens: Math.min(state.maxTokens, cap), lowered: state.maxTokens > cap };
    }
  } else query = queryOf(req, caseMode);
  if (query.context < 0 || query.context > MAX_CONTEXT_LINES) {
    throw new PagewiseError("INVALID_ARGUMENT", `context must be 0 to ${MAX_CONTEXT_LINES}.`);
  }
  if (query.maxChars < 1) {
    throw new PagewiseError("INVALID_ARGUMENT", "max_chars_per_match must be at least 1.");
  }
  const { limit, note } = effectiveLimit(requestedLimit);
  const window: ScanWindow = state
    ? { kind: "after", after: state.after, limit, resume: state.resume }
    : { kind: "offset", offset: req.offset ?? 0, limit };
  const compiled = compilePattern(query.pattern, query.literal, query.caseMode);
  compileGlob(query.glob);
  const dir = await resolveDirectoryConfined(roots, dirArg);
  const rootDir = roots.dirs[dir.rootIndex]!;
  const relDir = roots.relative(dir.rootIndex, dir.realPath);

  const result = await runScanJob(
    {
      dir: dir.realPath,
      ancestors: ancestorsWithin(rootDir, dir.realPath),
      includeHidden: query.includeHidden,
      respectGitignore: query.respectGitignore,
      ...(query.glob !== undefined ? { glob: query.glob } : {}),
      maxWalkEntries: req.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
      pattern: compiled,
      context: query.context,
      maxChars: query.maxChars,
      window,
      stopEarly: state !== undefined || query.count !== "exact",
      maxPageChars: budget.maxTokens * ctx.estimator.maxUnitsPerToken,
    },
    {
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(req.stallMs !== undefined ? { stallMs: req.stallMs } : {}),
      ...(req.onProgress ? { onProgress: (files: number) => req.onProgress?.(files) } : {}),
      ...(req.inProcess ? { inProcess: true } : {}),
    },
  );

  return renderPage(ctx, {
    dirReal: dir.realPath,
    rootIndex: dir.rootIndex,
    relDir,
    state,
    query,
    limit,
    note,
    budget,
    result,
  });
}

interface PageInput {
  readonly dirReal: string;
  readonly rootIndex: number;
  readonly relDir: string;
  readonly state: CursorState | undefined;
  readonly query: SearchQuery;
  readonly limit: number;
  readonly note: string | undefined;
  readonly budget: { readonly maxTokens: number; readonly lowered: boolean };
  readonly result: ScanResult;
}

/** The page for a scan's result: items, pagination, the next cursor; the largest that fits. */
async function renderPage(ctx: SourceContext, input: PageInput): Promise<string> {
  const { caller, codec, estimator } = ctx;
  const roots = caller.roots;
  const { state, query, limit, note, budget, result, relDir } = input;
  const dir = { realPath: input.dirReal, rootIndex: input.rootIndex };
  const items = await Promise.all(
    result.items.map(async (m) => ({
      match: m,
      json: await itemJson(ctx, budget.maxTokens, dir.realPath, m),
    })),
  );
  const uri = `file://${encodeURI(dir.realPath)}`;
  const start = state ? state.offset : result.offset;
  // Exact: the scan's count, or the first page's total a cursor carries. Otherwise a lower bound:
  // the matches known before the page, the page's and those seen after it.
  const total =
    query.count === "exact"
      ? state
        ? state.total
        : result.counted
      : Math.max(state?.total ?? 0, state ? start + result.counted : result.counted);
  // A first page whose scan read every file knows its count exactly, whatever the mode.
  const lowerBound = query.count === "at_least" && !(state === undefined && result.skipped);
  const flags = flagsOf(query);
  const cursorAfter = (m: RawMatch, nextOffset: number): string => {
    const w = new ByteWriter();
    writeFileRef(w, roots, { rootIndex: dir.rootIndex, relPath: relDir });
    w.u8(flags)
      .u8(query.context)
      .uint(query.maxChars)
      .string(query.pattern)
      .string(query.glob ?? "")
      .uint(limit)
      .uint(budget.maxTokens)
      .string(m.path)
      .uint(m.lineStart)
      .uint(m.ordinal)
      .raw(Buffer.from(m.fileTag, "base64url"))
      .uint(m.resumeByte)
      .uint(m.resumeLine)
      .uint(nextOffset)
      .uint(query.count === "none" ? 0 : total);
    return codec.encode(SEARCH_TOOL, caller.identity, w.finish());
  };
  const extras =
    (note ? `,"note":${JSON.stringify(note)}` : "") +
    (budget.lowered ? `,"max_tokens":${budget.maxTokens}` : "") +
    (result.skipped &&
    (result.skipped.binary ||
      result.skipped.long_lines ||
      result.skipped.unreadable_files ||
      result.skipped.unreadable_directories)
      ? `,"skipped":${JSON.stringify(result.skipped)}`
      : "");
  const totalJson =
    query.count === "exact"
      ? `"total":${total},`
      : query.count === "at_least"
        ? `"total":${total}${lowerBound ? ',"total_is_lower_bound":true' : ""},`
        : "";
  const render = (count: number): string => {
    const next = start + count;
    const hasMore = count > 0 && (count < items.length || result.more);
    const pagination = `{${totalJson}"limit":${limit},"offset":${start},"has_more":${hasMore},"next_offset":${hasMore ? next : null}}`;
    const nextCursor = hasMore
      ? JSON.stringify(cursorAfter(items[count - 1]!.match, next))
      : "null";
    let body = "";
    for (let i = 0; i < count; i++) body += (i > 0 ? "," : "") + items[i]!.json;
    return `{"uri":${JSON.stringify(uri)},"items":[${body}],"pagination":${pagination},"next_cursor":${nextCursor}${extras}}`;
  };
  const fitted = fitItemCount(items.length, budget.maxTokens, estimator, render);
  if (fitted.amount === 0 && items.length > 0) {
    throw budgetTooSmall(budget.maxTokens, estimator.count(render(1)), "one match");
  }
  if (fitted.tokens > budget.maxTokens)
    throw budgetTooSmall(budget.maxTokens, fitted.tokens, "an empty page");
  return fitted.text;
}

/** One item's JSON; a truncated match gets a `line_cursor` (a read cursor over its whole line). */
async function itemJson(
  ctx: SourceContext,
  maxTokens: number,
  dir: string,
  m: RawMatch,
): Promise<string> {
  const item: Record<string, unknown> = {
    path: m.path,
    line: m.line,
    column: m.column,
    text: m.text,
  };
  if (m.before !== undefined) item.before = m.before;
  if (m.after !== undefined) item.after = m.after;
  if (m.contextTruncated) item.context_truncated = true;
  if (m.truncated) {
    item.truncated = true;
    item.text_column = m.textColumn;
    item.line_cursor = await lineCursor(ctx, maxTokens, `${dir}/${m.path}`, m);
  }
  return JSON.stringify(item);
}

async function lineCursor(
  ctx: SourceContext,
  maxTokens: number,
  absolute: string,
  m: RawMatch,
): Promise<string> {
  const { caller } = ctx;
  const opened = await openFileConfined(caller.roots, absolute);
  try {
    const st = await opened.handle.stat({ bigint: true });
    if (identityKey(st) !== m.ident) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        `${m.path} changed while it was searched. Run the search again.`,
        { hint: "Call again with the same arguments." },
      );
    }
    const version = await ctx.versions.versionOf(opened.handle, st, undefined, ctx.signal);
    return encodeLineCursor(ctx, maxTokens, {
      file: {
        rootIndex: opened.rootIndex,
        relPath: caller.roots.relative(opened.rootIndex, opened.realPath),
      },
      digest: version.digest,
      fingerprint: version.fingerprint,
      position: m.lineStart,
      line: m.line,
      encoding: "utf-8",
      end: { kind: "byte", offset: m.lineEnd },
    });
  } finally {
    await opened.handle.close();
  }
}

/** Arguments given with a cursor must agree with what it fixes; returns the cursor's query. */
function mergeQuery<Q extends object>(fromCursor: Q, given: Partial<Q>): Q {
  for (const [key, value] of Object.entries(given)) {
    if (value !== undefined && (fromCursor as Record<string, unknown>)[key] !== value)
      throw conflictingArgument(key);
  }
  return fromCursor;
}

/** The applied limit: the default, or the requested one lowered to the maximum (with a note). */
function effectiveLimit(requested: number | undefined): { limit: number; note?: string } {
  if (requested === undefined) return { limit: DEFAULT_SEARCH_LIMIT };
  if (requested > MAX_SEARCH_LIMIT)
    return {
      limit: MAX_SEARCH_LIMIT,
      note: `limit ${requested} was lowered to the maximum of ${MAX_SEARCH_LIMIT}.`,
    };
  return { limit: requested };
}
