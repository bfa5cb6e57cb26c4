/**
 * @module
 * The `list` source: one directory, optionally recursive, in pages that fit a token budget.
 *
 * Cost model (collect.ts runs the walks, in a worker thread): a first page or an offset page
 * walks the whole (filtered) tree — readdir of every directory, one fstat per directory — for the
 * exact `total` and the listing's `version`, and lstats only its own items. A cursor is key-set:
 * it carries the last path returned, and with it the total, version and position from the last
 * full walk, so a continuation reads only the directories on the cursor's path and those its page
 * spans (O(page), whatever the tree), starting right after that path in the current tree.
 */
import { resolveDirectoryConfined } from "../../access/index.js";
import {
  type ByteReader,
  type ByteWriter,
  budgetTooSmall,
  fitItemCount,
  itemPageRefusal,
  itemPageText,
  malformedCursor,
  type PageParam,
  type PageRequest,
  resumeItemCheckpoints,
  type Source,
} from "../../core/index.js";
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_WALK_ENTRIES,
  MAX_LIST_LIMIT,
  MIN_COLLECT_TOKENS,
} from "../limits.js";
import { compileGlob } from "../pattern/index.js";
import type { SourceContext } from "../shared/context.js";
import {
  checkCursorDirectoryPath,
  type FileRef,
  readFileRef,
  writeFileRef,
} from "../shared/file-ref.js";
import { ancestorsWithin, type WalkStats, walkReportMembers } from "../walk/index.js";
import {
  LIST_VERSION_BYTES,
  type ListJob,
  type ListQuery,
  type ListResult,
  type ListType,
  type ListWindow,
  workerEstimatorFor,
} from "./collect.js";
import { runListJobInWorker } from "./pool.js";

export const LIST_TOOL = "list";

export type { ListQuery, ListType };

/** The arguments of a `list` call; the budget and limit travel as page parameters. */
export interface ListArgs {
  readonly path?: string;
  readonly recursive?: boolean;
  readonly glob?: string;
  readonly type?: ListType;
  readonly includeHidden?: boolean;
  readonly respectGitignore?: boolean;
  readonly offset?: number;
}

/** What every list call of one server shares. */
export interface ListOptions {
  readonly maxTokens: PageParam;
  readonly maxWalkEntries?: number;
  /** Called during long walks with the number of directory entries read so far. */
  readonly onProgress?: (entriesRead: number) => void;
  /** The clock (ms since the epoch) that dates full walks; injectable for tests. */
  readonly now?: () => number;
  /** Run walks in this thread instead of a worker (tests). */
  readonly inProcess?: boolean;
  /** Called with each job's result (tests count the work a page did). */
  readonly onResult?: (result: ListResult) => void;
}

/**
 * What a cursor carries of the last full walk of its listing, so that a continuation need not
 * walk the whole tree again to report it.
 */
export interface CarriedListing {
  readonly total: number;
  readonly version: string;
  /** Index in that listing of the first entry after the cursor's key. */
  readonly offset: number;
  /** When that walk began, in whole seconds since the epoch (rounded down). */
  readonly since: number;
  /** Entries the rules left out (the page's `filtered`). */
  readonly ignored: number;
  readonly hidden: number;
}

/** A list cursor: the listed directory, the query, the last path returned (key-set), the listing. */
export interface ListState {
  readonly dir: FileRef;
  /** The directory's path under the caller's roots (set when decoded). */
  readonly absolute?: string;
  readonly query: ListQuery;
  readonly after: string;
  readonly listing: CarriedListing;
}

const TYPE_CODES: readonly ListType[] = ["any", "file", "directory"];

function encodeFlags(q: ListQuery): number {
  return (
    (q.recursive ? 1 : 0) |
    (q.includeHidden ? 2 : 0) |
    (q.respectGitignore ? 4 : 0) |
    (TYPE_CODES.indexOf(q.type) << 3)
  );
}

function decodeFlags(flags: number, glob: string): ListQuery {
  const type = TYPE_CODES[(flags >> 3) & 3];
  if (type === undefined || flags >> 5 !== 0) {
    throw malformedCursor();
  }
  return {
    recursive: (flags & 1) !== 0,
    includeHidden: (flags & 2) !== 0,
    respectGitignore: (flags & 4) !== 0,
    type,
    glob: glob === "" ? undefined : glob,
  };
}

function writeListState(w: ByteWriter, ctx: SourceContext, s: ListState): void {
  const l = s.listing;
  writeFileRef(w, ctx.caller.roots, s.dir);
  w.u8(encodeFlags(s.query))
    .string(s.query.glob ?? "")
    .string(s.after)
    .uint(l.offset)
    .uint(l.total)
    .raw(Buffer.from(l.version, "base64url"))
    .uint(l.since)
    .uint(l.ignored)
    .uint(l.hidden);
}

function readListState(r: ByteReader, ctx: SourceContext): ListState {
  const { absolute, ref } = readFileRef(r, ctx.caller.roots);
  const flags = r.u8();
  const glob = r.string();
  const after = r.string();
  const offset = r.uint();
  const total = r.uint();
  const version = Buffer.from(r.raw(LIST_VERSION_BYTES)).toString("base64url");
  const since = r.uint();
  const ignored = r.uint();
  const hidden = r.uint();
  if (after === "") throw malformedCursor();
  return {
    dir: ref,
    absolute,
    query: decodeFlags(flags, glob),
    after,
    listing: { total, version, offset, since, ignored, hidden },
  };
}

/** The `list` source: key-set cursors carrying the budget and the limit. */
export function createListSource(options: ListOptions): Source<ListArgs, ListState, SourceContext> {
  return {
    tool: LIST_TOOL,
    params: [
      options.maxTokens,
      { name: "limit", default: DEFAULT_LIST_LIMIT, max: MAX_LIST_LIMIT },
    ],
    readState: readListState,
    writeState: (w, state, ctx) => writeListState(w, ctx, state),
    conflictWith(args, state) {
      if (args.offset !== undefined) return "offset";
      const q = state.query;
      if (args.recursive !== undefined && args.recursive !== q.recursive) return "recursive";
      if (args.glob !== undefined && args.glob !== q.glob) return "glob";
      if (args.type !== undefined && args.type !== q.type) return "type";
      if (args.includeHidden !== undefined && args.includeHidden !== q.includeHidden)
        return "include_hidden";
      if (args.respectGitignore !== undefined && args.respectGitignore !== q.respectGitignore)
        return "respect_gitignore";
      return undefined;
    },
    page: (request) => listPage(request, options),
  };
}

/** The listing a page reports: from its own full walk, or carried by its cursor. */
interface PageListing {
  readonly total: number;
  readonly version: string;
  /** Index of the page's first item in the listing. */
  readonly start: number;
  readonly since: number;
  readonly ignored: number;
  readonly hidden: number;
}

/** A listed directory, resolved through the caller's roots. */
interface ListedDir {
  readonly realPath: string;
  readonly rootIndex: number;
}

/** One page of a directory listing as the contract's JSON text. */
async function listPage(
  request: PageRequest<ListArgs, ListState, SourceContext>,
  options: ListOptions,
): Promise<string> {
  const { context: ctx, args: req, state } = request;
  const roots = ctx.caller.roots;
  const query: ListQuery = state?.query ?? {
    recursive: req.recursive ?? false,
    glob: req.glob,
    type: req.type ?? "any",
    includeHidden: req.includeHidden ?? false,
    respectGitignore: req.respectGitignore ?? true,
  };
  let dirArg = req.path;
  if (state) {
    await checkCursorDirectoryPath(roots, dirArg, state.absolute!);
    dirArg = state.absolute;
  }
  const limit = request.params.limit!;
  const window: ListWindow = state
    ? { kind: "after", after: state.after, limit, since: state.listing.since * 1000 }
    : { kind: "offset", offset: req.offset ?? 0, limit };
  compileGlob(query.glob);
  const dir = await resolveDirectoryConfined(roots, dirArg);
  // Taken before the job is queued: no later than the walk's start, whatever the wait.
  const walkStarted = (options.now ?? Date.now)();
  // A small budget still collects a page's worth of entries: whether a refused budget's cheapest
  // page is the last one (no cursor) depends on knowing that nothing follows it.
  const collectTokens = Math.max(request.params.max_tokens!, MIN_COLLECT_TOKENS);
  const head = pageHead(dir);
  const workerEstimator = workerEstimatorFor(ctx.estimator);
  const job: ListJob = {
    dir: dir.realPath,
    ancestors: ancestorsWithin(roots.dirs[dir.rootIndex]!, dir.realPath),
    query,
    maxWalkEntries: options.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
    window,
    maxPageChars: collectTokens * ctx.estimator.maxUnitsPerToken,
    ...(workerEstimator
      ? { itemTokens: { estimator: workerEstimator, maxTokens: collectTokens, head } }
      : {}),
  };
  const result = await runListJobInWorker(job, {
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    owner: ctx.caller.identity,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.inProcess ? { inProcess: true } : {}),
  });
  options.onResult?.(result);
  const listing: PageListing = result.listing
    ? {
        ...result.listing,
        since: Math.floor(walkStarted / 1000),
        ignored: result.stats.ignored,
        hidden: result.stats.hidden,
      }
    : { ...state!.listing, start: state!.listing.offset };
  const cursorAfter = (lastPath: string, nextOffset: number): string =>
    request.cursorAt({
      dir: { rootIndex: dir.rootIndex, relPath: roots.relative(dir.rootIndex, dir.realPath) },
      query,
      after: lastPath,
      listing: { ...listing, offset: nextOffset },
    });
  return renderListPage(request, head, result, listing, window, cursorAfter);
}

/** A page's text before its first item. */
function pageHead(dir: ListedDir): string {
  return `{"uri":${JSON.stringify(`file://${encodeURI(dir.realPath)}`)},"items":[`;
}

/** The page: as many of the collected entries as the budget holds, and the cursor after them. */
function renderListPage(
  request: PageRequest<ListArgs, ListState, SourceContext>,
  head: string,
  result: ListResult,
  listing: PageListing,
  window: ListWindow,
  cursorAfter: (lastPath: string, nextOffset: number) => string,
): string {
  const { estimator } = request.context;
  const maxTokens = request.params.max_tokens!;
  const { total, start, version } = listing;
  const { items } = result;
  // The listing's `filtered` counts (carried by a cursor), this page's walk's `skipped`.
  const stats: WalkStats = { ...result.stats, ignored: listing.ignored, hidden: listing.hidden };
  const tailExtras =
    `,"version":${JSON.stringify(version)}` + request.loweredFields + walkReportMembers(stats);
  const tail = (count: number): string => {
    const next = start + count;
    const hasMore = count < items.length || result.more;
    const pagination = `{"total":${total},"limit":${window.limit},"offset":${start},"has_more":${hasMore},"next_offset":${hasMore ? next : null}}`;
    let nextCursor = "null";
    if (hasMore) {
      // With no item on the page (an offset past a cursor's key), continue after the same key.
      const last =
        count > 0 ? items[count - 1]!.path : window.kind === "after" ? window.after : undefined;
      nextCursor = last === undefined ? "null" : JSON.stringify(cursorAfter(last, next));
    }
    return `],"pagination":${pagination},"next_cursor":${nextCursor}${tailExtras}}`;
  };
  const layout = { head, item: (i: number) => items[i]!.json, separator: ",", tail };
  const render = (count: number) => itemPageText(layout, count);
  // Perf: each entry is counted once: in the worker, in context, when its checkpoints came back
  // (the same estimator counted them after the same head); else here, or a running sum of the
  // worker's counts predicts the cut.
  const counted =
    result.checkpoints && estimator.resume
      ? resumeItemCheckpoints(estimator.resume, result.checkpoints)
      : undefined;
  const fitted = fitItemCount(
    items.length,
    maxTokens,
    estimator,
    render,
    (i) => items[i]!.tokens ?? estimator.count(items[i]!.json) + 1,
    layout,
    counted,
  );
  if (fitted.amount === 0 && items.length > 0) {
    throw itemPageRefusal(maxTokens, estimator, render, items.length, "one entry");
  }
  if (fitted.tokens > maxTokens) {
    throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
  }
  return fitted.text;
}
