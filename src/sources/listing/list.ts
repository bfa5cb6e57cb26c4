/**
 * @module
 * The `list` source: one directory, optionally recursive, in pages that fit a token budget.
 *
 * Cost model: every page walks the (filtered) tree once — readdir of every directory and lstat of
 * every listed entry — because the exact `total` and the listing's `version` need all of it. The
 * walk streams: only the page's items are kept, plus the pending names of the directories on the
 * current path. A cursor is key-set: it carries the last path returned, so the next page starts
 * right after it in the current tree, whatever was added or deleted in between.
 */
import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { resolveDirectoryConfined } from "../../access/index.js";
import {
  type ByteReader,
  type ByteWriter,
  budgetTooSmall,
  fitItemCount,
  malformedCursor,
  type PageParam,
  type PageRequest,
  type Source,
} from "../../core/index.js";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../limits.js";
import { compileGlob } from "../pattern/index.js";
import type { SourceContext } from "../shared/context.js";
import {
  checkCursorDirectoryPath,
  type FileRef,
  readFileRef,
  writeFileRef,
} from "../shared/file-ref.js";
import {
  ancestorsWithin,
  compareCodePoints,
  DEFAULT_MAX_WALK_ENTRIES,
  type WalkStats,
  walk,
  walkReportMembers,
} from "../walk/index.js";

export const LIST_TOOL = "list";

export type ListType = "file" | "directory" | "any";

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
}

/** A list cursor: the listed directory, the query, and the last path returned (key-set). */
export interface ListState {
  readonly dir: FileRef;
  /** The directory's path under the caller's roots (set when decoded). */
  readonly absolute?: string;
  readonly query: ListQuery;
  readonly after: string;
}

/** The parameters that define a listing's result set (bound into its cursors). */
export interface ListQuery {
  readonly recursive: boolean;
  readonly glob: string | undefined;
  readonly type: ListType;
  readonly includeHidden: boolean;
  readonly respectGitignore: boolean;
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
  writeFileRef(w, ctx.caller.roots, s.dir);
  w.u8(encodeFlags(s.query))
    .string(s.query.glob ?? "")
    .string(s.after);
}

function readListState(r: ByteReader, ctx: SourceContext): ListState {
  const { absolute, ref } = readFileRef(r, ctx.caller.roots);
  const flags = r.u8();
  const glob = r.string();
  const after = r.string();
  return { dir: ref, absolute, query: decodeFlags(flags, glob), after };
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

interface Item {
  readonly path: string;
  readonly json: string;
}

/** The entries one page may show, and what the page says about the whole listing. */
interface Collected {
  /** The page's candidate entries (at most `limit`), in order. */
  readonly items: Item[];
  /** Entries in the whole listing. */
  readonly total: number;
  /** Index of the first candidate in the listing. */
  readonly start: number;
  readonly version: string;
  readonly stats: WalkStats;
}

/** Where a page starts: after a cursor's key, or at an offset. */
interface PageWindow {
  readonly after: string | undefined;
  readonly offset: number;
  readonly limit: number;
}

/** A listed directory, resolved through the caller's roots. */
interface ListedDir {
  readonly realPath: string;
  readonly rootIndex: number;
  readonly rootDir: string;
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
  const window: PageWindow = {
    after: state?.after,
    offset: req.offset ?? 0,
    limit: request.params.limit!,
  };
  compileGlob(query.glob);
  const resolved = await resolveDirectoryConfined(roots, dirArg);
  const dir = { ...resolved, rootDir: roots.dirs[resolved.rootIndex]! };
  const collected = await collectListing(ctx, options, dir, query, window);
  const cursorAfter = (lastPath: string): string =>
    request.cursorAt({
      dir: { rootIndex: dir.rootIndex, relPath: roots.relative(dir.rootIndex, dir.realPath) },
      query,
      after: lastPath,
    });
  return renderListPage(request, dir, collected, window, cursorAfter);
}

/** The page's entries from the listing cache when it is still valid, else from a walk. */
async function collectListing(
  ctx: SourceContext,
  options: ListOptions,
  dir: ListedDir,
  query: ListQuery,
  window: PageWindow,
): Promise<Collected> {
  const cacheKey = `${dir.realPath}\0${encodeFlags(query)}\0${query.glob ?? ""}`;
  const cached = validCache(cacheKey);
  const fromCache = cached
    ? pageFromCache(cached, window.after, window.offset, window.limit)
    : undefined;
  if (cached && fromCache) {
    return {
      items: fromCache.items,
      total: cached.paths.length,
      start: window.after !== undefined ? fromCache.before : window.offset,
      version: cached.version,
      stats: cached.stats,
    };
  }
  if (cached) cache.delete(cacheKey);
  return walkListing(ctx, options, dir, query, window, cacheKey);
}

/**
 * Walks the listing (streaming: only the page's entries are kept, plus the cache's compact columns
 * while the listing is small enough to cache) and hashes it into its version.
 */
async function walkListing(
  ctx: SourceContext,
  options: ListOptions,
  dir: ListedDir,
  query: ListQuery,
  window: PageWindow,
  cacheKey: string,
): Promise<Collected> {
  const { after, offset, limit } = window;
  const glob = compileGlob(query.glob);
  const items: Item[] = [];
  let total = 0;
  let before = 0; // entries at or before the cursor's key
  const hash = createHash("sha256");
  const started = Date.now();
  const dirs: string[] = [];
  const keep: CachedListing = {
    dir: dir.realPath,
    paths: [],
    types: [],
    sizes: [],
    mtimes: [],
    signatures: [],
    version: "",
    stats: { entriesRead: 0, unreadable: 0, ignored: 0, hidden: 0, gitignoreSkipped: 0 },
    at: started,
  };
  let keeping = true;
  const ancestors = ancestorsWithin(dir.rootDir, dir.realPath);
  const stats = await walk(
    dir.realPath,
    {
      recursive: query.recursive,
      includeHidden: query.includeHidden,
      respectGitignore: query.respectGitignore,
      maxEntries: options.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
      ancestors,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onDirectory: (abs) => {
        if (keeping) dirs.push(abs);
      },
    },
    (entry) => {
      if (query.type !== "any" && entry.type !== query.type) return;
      if (glob && !glob(entry.path)) return;
      let size: number;
      let mtimeMs: number;
      try {
        const st = lstatSync(entry.statPath);
        size = st.size;
        mtimeMs = st.mtimeMs;
      } catch {
        return; // vanished during the walk
      }
      const index = total++;
      hash.update(`${entry.path}\0${entry.type}\0${size}\0${mtimeMs}\n`);
      if (keeping && total > CACHE_MAX_ENTRIES) {
        keeping = false;
        keep.paths = [];
      } else if (keeping) {
        keep.paths.push(entry.path);
        keep.types.push(entry.type);
        keep.sizes.push(size);
        keep.mtimes.push(mtimeMs);
      }
      let take: boolean;
      if (after !== undefined) {
        if (compareCodePoints(entry.path, after) <= 0) {
          before++;
          take = false;
        } else take = items.length < limit;
      } else take = index >= offset && index < offset + limit;
      if (take)
        items.push({ path: entry.path, json: entryJson(entry.path, entry.type, size, mtimeMs) });
    },
  );
  const version = hash.digest().subarray(0, 8).toString("base64url");
  if (keeping) rememberIfQuiet(cacheKey, keep, [...ancestors, ...dirs], started, version, stats);
  return { items, total, start: after !== undefined ? before : offset, version, stats };
}

function entryJson(path: string, type: string, size: number, mtimeMs: number): string {
  return JSON.stringify({ path, type, size, mtime: new Date(Math.trunc(mtimeMs)).toISOString() });
}

/** Caches a walked listing unless one of its directories changed too recently to be trusted. */
function rememberIfQuiet(
  cacheKey: string,
  keep: CachedListing,
  dirs: readonly string[],
  started: number,
  version: string,
  stats: WalkStats,
): void {
  for (const d of dirs) {
    const sig = signature(d, started);
    if (sig === undefined) return;
    keep.signatures.push([d, sig]);
  }
  keep.version = version;
  keep.stats = stats;
  remember(cacheKey, keep);
}

/** The page: as many of the collected entries as the budget holds, and the cursor after them. */
function renderListPage(
  request: PageRequest<ListArgs, ListState, SourceContext>,
  dir: ListedDir,
  collected: Collected,
  window: PageWindow,
  cursorAfter: (lastPath: string) => string,
): string {
  const { estimator } = request.context;
  const maxTokens = request.params.max_tokens!;
  const { items, total, start, version, stats } = collected;
  const head = `{"uri":${JSON.stringify(`file://${encodeURI(dir.realPath)}`)},"items":[`;
  const tailExtras =
    `,"version":${JSON.stringify(version)}` + request.loweredFields + walkReportMembers(stats);
  const render = (count: number): string => {
    const next = start + count;
    const hasMore = next < total;
    const pagination = `{"total":${total},"limit":${window.limit},"offset":${start},"has_more":${hasMore},"next_offset":${hasMore ? next : null}}`;
    let nextCursor = "null";
    if (hasMore) {
      // With no item on the page (an offset past a cursor's key), continue after the same key.
      const last = count > 0 ? items[count - 1]!.path : window.after;
      nextCursor = last === undefined ? "null" : JSON.stringify(cursorAfter(last));
    }
    let body = "";
    for (let i = 0; i < count; i++) body += (i > 0 ? "," : "") + items[i]!.json;
    return `${head}${body}],"pagination":${pagination},"next_cursor":${nextCursor}${tailExtras}}`;
  };
  // Perf: each entry is counted once; the running sum predicts how many fit.
  const fitted = fitItemCount(
    items.length,
    maxTokens,
    estimator,
    render,
    (i) => estimator.count(items[i]!.json) + 1,
  );
  if (fitted.amount === 0 && items.length > 0) {
    throw budgetTooSmall(maxTokens, estimator.count(render(1)), "one entry");
  }
  if (fitted.tokens > maxTokens) {
    throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
  }
  return fitted.text;
}

/**
 * A small per-process cache of recent listings (sorted paths with type, size and mtime), so that
 * paging through a large tree does not lstat every entry on every page. An entry is used only while
 * the identity and ctime of every directory it read (and of each `.gitignore` on the way, and each
 * ancestor directory) are unchanged — any entry added, deleted or renamed changes its directory's
 * ctime — and for at most CACHE_TTL_MS; the page's own items are re-checked with lstat, and a
 * difference drops the entry. A listing whose directories changed within the last RACY_WINDOW_MS
 * before the walk is not cached (a change in the same timestamp tick would go unseen).
 */
interface CachedListing {
  dir: string;
  paths: string[];
  types: string[];
  sizes: number[];
  mtimes: number[];
  signatures: [string, string][];
  version: string;
  stats: WalkStats;
  at: number;
}

/** Entries (paths) held by the listing cache, across listings. */
export const CACHE_MAX_ENTRIES = 400_000;
const CACHE_MAX_LISTINGS = 8;
/** How long a cached listing is trusted at most (in-place size/mtime changes show up within it). */
export const CACHE_TTL_MS = 10_000;
const RACY_WINDOW_MS = 2_000;
const cache = new Map<string, CachedListing>();

function signature(dirAbs: string, started: number, previous?: string): string | undefined {
  try {
    const st = lstatSync(dirAbs, { throwIfNoEntry: false });
    if (!st) return "missing";
    if (st.ctimeMs + RACY_WINDOW_MS >= started || st.mtimeMs + RACY_WINDOW_MS >= started) {
      return undefined;
    }
    const head = `${st.ino}:${st.ctimeMs}:`;
    // Perf: creating or removing a .gitignore changes its directory's ctime, so a directory that
    // is unchanged and had none still has none; only existing .gitignore files need a stat.
    if (previous === `${head}-`) return previous;
    const g = lstatSync(`${dirAbs}/.gitignore`, { throwIfNoEntry: false });
    return head + (g ? `${g.ino}:${g.ctimeMs}:${g.size}` : "-");
  } catch {
    return "missing";
  }
}

function remember(key: string, listing: CachedListing): void {
  cache.delete(key);
  cache.set(key, listing);
  let held = 0;
  for (const l of cache.values()) held += l.paths.length;
  while (cache.size > CACHE_MAX_LISTINGS || held > CACHE_MAX_ENTRIES) {
    const oldest = cache.keys().next().value as string;
    held -= cache.get(oldest)!.paths.length;
    cache.delete(oldest);
  }
}

function validCache(key: string): CachedListing | undefined {
  const hit = cache.get(key);
  if (!hit) return undefined;
  const now = Date.now();
  if (now - hit.at > CACHE_TTL_MS) {
    cache.delete(key);
    return undefined;
  }
  for (const [d, sig] of hit.signatures) {
    if (signature(d, now + RACY_WINDOW_MS + 1, sig) !== sig) {
      cache.delete(key);
      return undefined;
    }
  }
  return hit;
}

/** The page's items from a cached listing, or undefined (and the entry dropped) if one changed. */
function pageFromCache(
  c: CachedListing,
  after: string | undefined,
  offset: number,
  limit: number,
): { items: Item[]; before: number } | undefined {
  let from = offset;
  if (after !== undefined) {
    let lo = 0;
    let hi = c.paths.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareCodePoints(c.paths[mid]!, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
  }
  const items: Item[] = [];
  const to = Math.min(c.paths.length, from + limit);
  for (let i = from; i < to; i++) {
    const p = c.paths[i]!;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(c.dir === "/" ? `/${p}` : `${c.dir}/${p}`);
    } catch {
      return undefined;
    }
    if (st.size !== c.sizes[i] || st.mtimeMs !== c.mtimes[i]) return undefined;
    items.push({ path: p, json: entryJson(p, c.types[i]!, c.sizes[i]!, c.mtimes[i]!) });
  }
  return { items, before: from };
}
