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
 *
 * The source runs on the one pipeline (core/source): the pipeline decodes the cursor, merges its
 * budget and limit with the call's, rejects conflicting arguments and encodes the continuations.
 */
import path from "node:path";
import { openFileConfined, type Roots, resolveDirectoryConfined } from "../../access/index.js";
import {
  type ByteReader,
  type ByteWriter,
  budgetTooSmall,
  fitItemCount,
  identityKey,
  itemPageRefusal,
  itemPageText,
  itemShare,
  malformedCursor,
  type PageParam,
  type PageRequest,
  PagewiseError,
  type Source,
} from "../../core/index.js";
import {
  DEFAULT_MAX_CHARS_PER_MATCH,
  DEFAULT_MAX_WALK_ENTRIES,
  DEFAULT_SEARCH_LIMIT,
  MAX_GUARDED_SEARCH_THREADS,
  MAX_LIVE_WORKERS,
  MAX_SEARCH_LIMIT,
  SLOTS_KEPT_FOR_OTHER_CALLERS,
} from "../limits.js";
import { type CaseMode, compileGlob, compilePattern, Slots } from "../pattern/index.js";
import type { SourceContext } from "../shared/context.js";
import {
  checkCursorDirectoryPath,
  checkCursorFilePath,
  cursorPathMismatch,
  type FileRef,
  readFileRef,
  writeFileRef,
} from "../shared/file-ref.js";
import { encodeLineCursor } from "../shared/read-cursor.js";
import { closeInBackground, settledStateVersion } from "../shared/versioned-file.js";
import { ancestorsWithin } from "../walk/index.js";
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

/** The arguments of a `search` call; the budget and limit travel as page parameters. */
export interface SearchArgs {
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
  readonly offset?: number;
}

/** What every search call of one server shares. */
export interface SearchOptions {
  readonly maxTokens: PageParam;
  readonly maxWalkEntries?: number;
  /** How long a scan may run without progress before it is stopped. */
  readonly stallMs?: number;
  /** Called during long scans with the number of files read so far. */
  readonly onProgress?: (filesRead: number) => void;
  /** Scan in this thread instead of a worker (tests). */
  readonly inProcess?: boolean;
}

/** The parameters that define a search's result set (bound into its cursors). */
interface SearchQuery {
  readonly pattern: string;
  readonly literal: boolean;
  readonly caseMode: CaseMode;
  readonly count: CountMode;
  readonly glob: string | undefined;
  readonly includeHidden: boolean;
  readonly respectGitignore: boolean;
  readonly context: number;
  readonly maxChars: number;
}

const CASE_MODES: readonly CaseMode[] = ["smart", "sensitive", "insensitive"];

/** The cursor's flag bit that says its target is one file. */
const FILE_TARGET_FLAG = 0x80;

function flagsOf(q: SearchQuery): number {
  return (
    (q.literal ? 1 : 0) |
    (q.includeHidden ? 2 : 0) |
    (q.respectGitignore ? 4 : 0) |
    (CASE_MODES.indexOf(q.caseMode) << 3) |
    (COUNT_MODES.indexOf(q.count) << 5)
  );
}

/** A search cursor: the searched directory or file, the query, and where the next page starts. */
export interface SearchState {
  readonly dir: FileRef;
  /** The directory's (or file's) path under the caller's roots (set when decoded). */
  readonly absolute?: string;
  /** `dir` names one file: a search of that file alone. */
  readonly file: boolean;
  readonly query: SearchQuery;
  readonly after: Required<MatchPosition>;
  readonly resume: { readonly byte: number; readonly line: number };
  /** Index of the first match after the cursor. */
  readonly offset: number;
  /** The first page's exact total (`exact`), the lower bound so far (`at_least`), or 0. */
  readonly total: number;
}

function writeSearchState(w: ByteWriter, ctx: SourceContext, s: SearchState): void {
  const q = s.query;
  writeFileRef(w, ctx.caller.roots, s.dir);
  w.u8(flagsOf(q) | (s.file ? FILE_TARGET_FLAG : 0))
    .u8(q.context)
    .uint(q.maxChars)
    .string(q.pattern)
    .string(q.glob ?? "")
    .string(s.after.path)
    .uint(s.after.lineStart)
    .uint(s.after.ordinal)
    .raw(Buffer.from(s.after.fileTag, "base64url"))
    .uint(s.resume.byte)
    .uint(s.resume.line)
    .uint(s.offset)
    .uint(s.total);
}

function readSearchState(r: ByteReader, ctx: SourceContext): SearchState {
  const { absolute, ref } = readFileRef(r, ctx.caller.roots);
  const flags = r.u8();
  const caseMode = CASE_MODES[(flags >> 3) & 3];
  const count = COUNT_MODES[(flags >> 5) & 3];
  if (caseMode === undefined || count === undefined) throw malformedCursor();
  const query: SearchQuery = {
    literal: (flags & 1) !== 0,
    includeHidden: (flags & 2) !== 0,
    respectGitignore: (flags & 4) !== 0,
    caseMode,
    count,
    context: r.u8(),
    maxChars: r.uint(),
    pattern: r.string(),
    glob: r.string() || undefined,
  };
  const after: Required<MatchPosition> = {
    path: r.string(),
    lineStart: r.uint(),
    ordinal: r.uint(),
    fileTag: Buffer.from(r.raw(FILE_TAG_BYTES)).toString("base64url"),
  };
  const resume = { byte: r.uint(), line: r.uint() };
  const file = (flags & FILE_TARGET_FLAG) !== 0;
  return { dir: ref, absolute, file, query, after, resume, offset: r.uint(), total: r.uint() };
}

function caseModeOf(caseSensitive: boolean | undefined): CaseMode {
  return caseSensitive === undefined ? "smart" : caseSensitive ? "sensitive" : "insensitive";
}

/** The first argument given with a cursor that disagrees with its query (by published name). */
function conflictWith(args: SearchArgs, state: SearchState): string | undefined {
  const q = state.query;
  const differs = <T>(given: T | undefined, fixed: T) => given !== undefined && given !== fixed;
  if (args.offset !== undefined) return "offset";
  if (differs(args.pattern, q.pattern)) return "pattern";
  if (differs(args.literal, q.literal)) return "literal";
  if (args.caseSensitive !== undefined && caseModeOf(args.caseSensitive) !== q.caseMode)
    return "case_sensitive";
  if (differs(args.count, q.count)) return "count";
  if (differs(args.glob, q.glob)) return "glob";
  if (differs(args.includeHidden, q.includeHidden)) return "include_hidden";
  if (differs(args.respectGitignore, q.respectGitignore)) return "respect_gitignore";
  if (differs(args.context, q.context)) return "context";
  if (differs(args.maxCharsPerMatch, q.maxChars)) return "max_chars_per_match";
  return undefined;
}

/** The query of a first call (no cursor), with its defaults. */
function queryOf(args: SearchArgs): SearchQuery {
  if (args.pattern === undefined) {
    throw new PagewiseError("INVALID_ARGUMENT", "Give the pattern to search for.");
  }
  return {
    pattern: args.pattern,
    literal: args.literal ?? false,
    caseMode: caseModeOf(args.caseSensitive),
    count: args.count ?? "exact",
    glob: args.glob,
    includeHidden: args.includeHidden ?? false,
    respectGitignore: args.respectGitignore ?? true,
    context: args.context ?? 0,
    maxChars: args.maxCharsPerMatch ?? DEFAULT_MAX_CHARS_PER_MATCH,
  };
}

/**
 * Searches in progress at once; the rest wait before compiling anything. A flood of calls would
 * otherwise hold a compiled pattern, a scan and its results each while they queue for threads.
 * Keyed by caller: one caller holds MAX_LIVE_WORKERS at most, so a slot is always left for another,
 * and a freed slot goes to the caller holding the fewest.
 */
const searches = new Slots(MAX_LIVE_WORKERS + SLOTS_KEPT_FOR_OTHER_CALLERS, MAX_LIVE_WORKERS);

/**
 * Searches of a `guarded` pattern in progress at once, MAX_GUARDED_SEARCH_THREADS per caller. Such
 * a search leaves `searches` once its pattern is compiled and waits here: however many a caller
 * sends, they hold no slot the others need (their threads are bounded the same way, see pool.ts).
 */
const guardedSearches = new Slots(MAX_LIVE_WORKERS, MAX_GUARDED_SEARCH_THREADS);

/** The `search` source: cursors carrying the budget and the limit. */
export function createSearchSource(
  options: SearchOptions,
): Source<SearchArgs, SearchState, SourceContext> {
  return {
    tool: SEARCH_TOOL,
    params: [
      options.maxTokens,
      { name: "limit", default: DEFAULT_SEARCH_LIMIT, max: MAX_SEARCH_LIMIT },
    ],
    readState: readSearchState,
    writeState: (w, state, ctx) => writeSearchState(w, ctx, state),
    conflictWith,
    page: (request) => searchInSlot(request, options),
  };
}

/** A page under a slot of `searches`, or of `guardedSearches` once its pattern is known guarded. */
async function searchInSlot(request: SearchPageRequest, options: SearchOptions): Promise<string> {
  const signal = request.context.signal;
  const caller = request.context.caller.identity;
  await searches.acquire(signal, caller);
  let held: Slots | undefined = searches;
  const toGuarded = async () => {
    searches.release(caller);
    held = undefined;
    await guardedSearches.acquire(signal, caller);
    held = guardedSearches;
  };
  try {
    return await searchPage(request, options, toGuarded);
  } finally {
    held?.release(caller);
  }
}

type SearchPageRequest = PageRequest<SearchArgs, SearchState, SourceContext>;

/** One page of matches as the contract's JSON text. */
async function searchPage(
  request: SearchPageRequest,
  options: SearchOptions,
  toGuarded: () => Promise<void>,
): Promise<string> {
  const { context: ctx, args, state } = request;
  const roots = ctx.caller.roots;
  const query = state?.query ?? queryOf(args);
  const limit = request.params.limit!;
  if (state) await checkCursorTarget(roots, args.path, state);
  const window: ScanWindow = state
    ? { kind: "after", after: state.after, limit, resume: state.resume }
    : { kind: "offset", offset: args.offset ?? 0, limit };
  const compiled = compilePattern(query.pattern, query.literal, query.caseMode);
  compileGlob(query.glob);
  if (compiled.engine === "guarded") await toGuarded();
  const target = await resolveTarget(roots, state ? state.absolute : args.path, state?.file);
  const dir = target.dir;
  const rootDir = roots.dirs[dir.rootIndex]!;
  const result = await runScanJob(
    {
      dir: dir.realPath,
      ...(target.file !== undefined ? { file: target.file } : {}),
      ancestors: ancestorsWithin(rootDir, dir.realPath),
      includeHidden: query.includeHidden,
      respectGitignore: query.respectGitignore,
      ...(query.glob !== undefined ? { glob: query.glob } : {}),
      maxWalkEntries: options.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
      pattern: compiled,
      context: query.context,
      maxChars: query.maxChars,
      window,
      stopEarly: state !== undefined || query.count !== "exact",
      maxPageChars: request.params.max_tokens! * ctx.estimator.maxUnitsPerToken,
    },
    {
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      owner: ctx.caller.identity,
      ...(options.stallMs !== undefined ? { stallMs: options.stallMs } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.inProcess ? { inProcess: true } : {}),
    },
  );
  const targetReal =
    target.file !== undefined ? path.join(dir.realPath, target.file) : dir.realPath;
  const dirRef = { rootIndex: dir.rootIndex, relPath: roots.relative(dir.rootIndex, targetReal) };
  return renderPage(request, {
    dirReal: dir.realPath,
    dirRef,
    file: target.file !== undefined,
    query,
    result,
  });
}

/** A path given with a cursor names the cursor's file or directory, else INVALID_CURSOR. */
async function checkCursorTarget(roots: Roots, pathArg: string | undefined, state: SearchState) {
  try {
    if (state.file) await checkCursorFilePath(roots, pathArg, state.absolute!);
    else await checkCursorDirectoryPath(roots, pathArg, state.absolute!);
  } catch (err) {
    // The other kind of target than the cursor's: another search than the cursor's.
    const code = err instanceof PagewiseError ? err.code : undefined;
    if (code === "NOT_A_FILE" || code === "NOT_A_DIRECTORY") throw cursorPathMismatch();
    throw err;
  }
}

/**
 * What a search reads: a directory, walked; or one file, searched as the one file of its
 * directory (its `path` in items is its name, relative to the page's `uri`, the directory), with
 * no hidden or .gitignore rule applied, since the caller named it. `file` is the cursor's word
 * on which it is (a path that became a directory since is INVALID_CURSOR, and the other way).
 */
async function resolveTarget(
  roots: Roots,
  pathArg: string | undefined,
  file?: boolean,
): Promise<{ dir: { realPath: string; rootIndex: number }; file?: string }> {
  if (file === false) return { dir: await resolveDirectoryConfined(roots, pathArg) };
  if (file === undefined) {
    try {
      return { dir: await resolveDirectoryConfined(roots, pathArg) };
    } catch (err) {
      if (!(err instanceof PagewiseError) || err.code !== "NOT_A_DIRECTORY") throw err;
    }
  }
  const opened = await openFileConfined(roots, pathArg);
  closeInBackground(() => opened.handle.close());
  return {
    dir: { realPath: path.dirname(opened.realPath), rootIndex: opened.rootIndex },
    file: path.basename(opened.realPath),
  };
}

interface PageInput {
  readonly dirReal: string;
  /** The searched directory or file, as its cursors name it. */
  readonly dirRef: FileRef;
  readonly file: boolean;
  readonly query: SearchQuery;
  readonly result: ScanResult;
}

/** What the page says about the count of all matches: the `total` fields, and the total a cursor carries. */
function totalOf(
  query: SearchQuery,
  state: SearchState | undefined,
  result: ScanResult,
): { json: string; carried: number } {
  const start = state ? state.offset : result.offset;
  if (query.count === "exact") {
    const total = state ? state.total : result.counted;
    return { json: `"total":${total},`, carried: total };
  }
  // A lower bound: the matches known before the page, the page's and those seen after it.
  const total = Math.max(state?.total ?? 0, state ? start + result.counted : result.counted);
  if (query.count === "none") return { json: "", carried: 0 };
  // A first page whose scan read every file knows its count exactly, whatever the mode.
  const lowerBound = !(state === undefined && result.skipped);
  return {
    json: `"total":${total}${lowerBound ? ',"total_is_lower_bound":true' : ""},`,
    carried: total,
  };
}

/**
 * `,"skipped":{…}` when the scan skipped binary, long-line or unreadable files, or `.gitignore`
 * files whose rules it did not apply (`gitignore_files`, `first_gitignore`: as `list` says), else "".
 */
function skippedField(result: ScanResult): string {
  const s = result.skipped;
  const files =
    s && (s.binary || s.long_lines || s.unreadable_files || s.unreadable_directories) ? s : {};
  const skipped = { ...files, ...result.gitignoreSkipped };
  return Object.keys(skipped).length > 0 ? `,"skipped":${JSON.stringify(skipped)}` : "";
}

/** The page for a scan's result: items, pagination, the next cursor; the largest that fits. */
async function renderPage(request: SearchPageRequest, input: PageInput): Promise<string> {
  const { context: ctx, state } = request;
  const { query, result } = input;
  const maxTokens = request.params.max_tokens!;
  const limit = request.params.limit!;
  const items = await Promise.all(
    result.items.map(async (m) => ({
      match: m,
      json: await itemJson(ctx, maxTokens, input.dirReal, m),
    })),
  );
  const uri = `file://${encodeURI(input.dirReal)}`;
  const start = state ? state.offset : result.offset;
  const total = totalOf(query, state, result);
  const cursorAfter = (m: RawMatch, nextOffset: number): string =>
    request.cursorAt({
      dir: input.dirRef,
      file: input.file,
      query,
      after: { path: m.path, lineStart: m.lineStart, ordinal: m.ordinal, fileTag: m.fileTag },
      resume: { byte: m.resumeByte, line: m.resumeLine },
      offset: nextOffset,
      total: total.carried,
    });
  const extras = request.loweredFields + skippedField(result);
  const head = `{"uri":${JSON.stringify(uri)},"items":[`;
  const tail = (count: number): string => {
    const next = start + count;
    const hasMore = count > 0 && (count < items.length || result.more);
    const pagination = `{${total.json}"limit":${limit},"offset":${start},"has_more":${hasMore},"next_offset":${hasMore ? next : null}}`;
    const nextCursor = hasMore
      ? JSON.stringify(cursorAfter(items[count - 1]!.match, next))
      : "null";
    return `],"pagination":${pagination},"next_cursor":${nextCursor}${extras}}`;
  };
  const layout = { head, item: (i: number) => items[i]!.json, separator: ",", tail };
  const render = (count: number) => itemPageText(layout, count);
  // Perf: each match is counted once (a running count, or a running sum that predicts the cut).
  const fitted = fitItemCount(
    items.length,
    maxTokens,
    ctx.estimator,
    render,
    (i) => itemShare(ctx.estimator.count(items[i]!.json)),
    layout,
  );
  if (fitted.amount === 0 && items.length > 0) {
    throw itemPageRefusal(maxTokens, ctx.estimator, render, items.length, "one match");
  }
  if (fitted.tokens > maxTokens) throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
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
    // The state version of the state the scan read (O(1)); a file written since is refused.
    const { version, stat } = await settledStateVersion(ctx, opened.handle, opened.stat);
    if (identityKey(stat) !== m.ident) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        `${m.path} changed while it was searched. Run the search again.`,
        { hint: "Call again with the same arguments." },
      );
    }
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
    closeInBackground(() => opened.handle.close());
  }
}
