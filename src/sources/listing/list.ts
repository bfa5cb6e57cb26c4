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
  ByteWriter,
  budgetTooSmall,
  fitItemCount,
  malformedCursor,
  PagewiseError,
} from "../../core/index.js";
import type { SourceContext } from "../context.js";
import { checkCursorDirectoryPath, readFileRef, writeFileRef } from "../file-ref.js";
import { compileGlob } from "./glob.js";
import { compareCodePoints } from "./order.js";
import { walkReportMembers } from "./report.js";
import { ancestorsWithin, type WalkStats, walk } from "./walk.js";

export const LIST_TOOL = "list";
/** Items per page when `limit` is not given. */
export const DEFAULT_LIST_LIMIT = 100;
/** Largest `limit`; larger requests are lowered to it and the page says so. */
export const MAX_LIST_LIMIT = 1000;
/** Directory entries one walk may read (`--max-walk-entries`). */
export const DEFAULT_MAX_WALK_ENTRIES = 2_000_000;

export type ListType = "file" | "directory" | "any";

export interface ListRequest {
  readonly path?: string;
  readonly recursive?: boolean;
  readonly glob?: string;
  readonly type?: ListType;
  readonly includeHidden?: boolean;
  readonly respectGitignore?: boolean;
  readonly limit?: number;
  readonly offset?: number;
  readonly cursor?: string;
  readonly maxTokens: number;
  readonly maxTokensLowered?: boolean;
  readonly maxWalkEntries?: number;
  /** Called during long walks with the number of directory entries read so far. */
  readonly onProgress?: (entriesRead: number) => void;
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

/** Arguments given together with a cursor must agree with the cursor's; returns the merged query. */
export function mergeQuery<Q extends object>(fromCursor: Q, given: Partial<Q>): Q {
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined) continue;
    if ((fromCursor as Record<string, unknown>)[key] !== value) {
      throw new PagewiseError(
        "INVALID_CURSOR",
        `This cursor was made for different arguments (${key} differs).`,
        {
          hint: "Pass the cursor alone, or start again without a cursor to use new arguments.",
        },
      );
    }
  }
  return fromCursor;
}

export function effectiveLimit(requested: number | undefined): {
  limit: number;
  note?: string;
} {
  if (requested === undefined) return { limit: DEFAULT_LIST_LIMIT };
  if (requested > MAX_LIST_LIMIT) {
    return {
      limit: MAX_LIST_LIMIT,
      note: `limit ${requested} was lowered to the maximum of ${MAX_LIST_LIMIT}.`,
    };
  }
  if (requested < 1) throw new PagewiseError("INVALID_ARGUMENT", "limit must be at least 1.");
  return { limit: requested };
}

interface Item {
  readonly path: string;
  readonly json: string;
}

/** One page of a directory listing as the contract's JSON text. */
export async function listPage(ctx: SourceContext, req: ListRequest): Promise<string> {
  const { caller, codec, estimator } = ctx;
  const roots = caller.roots;
  let query: ListQuery = {
    recursive: req.recursive ?? false,
    glob: req.glob,
    type: req.type ?? "any",
    includeHidden: req.includeHidden ?? false,
    respectGitignore: req.respectGitignore ?? true,
  };
  let after: string | undefined;
  let dirArg = req.path;
  let requestedLimit = req.limit;
  if (req.cursor !== undefined) {
    if (req.offset !== undefined) {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        "A cursor already fixes the position: pass cursor without offset.",
      );
    }
    const r = codec.decode(LIST_TOOL, caller.identity, req.cursor);
    const { absolute } = readFileRef(r, roots);
    const flags = r.u8();
    const glob = r.string();
    const cursorLimit = r.uint();
    after = r.string();
    requestedLimit ??= cursorLimit;
    r.end();
    query = mergeQuery(decodeFlags(flags, glob), {
      recursive: req.recursive,
      glob: req.glob,
      type: req.type,
      includeHidden: req.includeHidden,
      respectGitignore: req.respectGitignore,
    });
    await checkCursorDirectoryPath(roots, dirArg, absolute);
    dirArg = absolute;
  }
  const { limit, note } = effectiveLimit(requestedLimit);
  const offset = req.offset ?? 0;
  const glob = compileGlob(query.glob);
  const dir = await resolveDirectoryConfined(roots, dirArg);
  const rootDir = roots.dirs[dir.rootIndex]!;
  const relDir = roots.relative(dir.rootIndex, dir.realPath);

  const flags = encodeFlags(query);
  const cacheKey = `${dir.realPath}\0${flags}\0${query.glob ?? ""}`;
  const items: Item[] = [];
  let total = 0;
  let before = 0; // entries at or before the cursor's key
  let version: string;
  let stats: WalkStats;
  const cached = validCache(cacheKey);
  const fromCache = cached ? pageFromCache(cached, after, offset, limit) : undefined;
  if (cached && !fromCache) cache.delete(cacheKey);
  if (cached && fromCache) {
    items.push(...fromCache.items);
    total = cached.paths.length;
    before = fromCache.before;
    version = cached.version;
    stats = cached.stats;
  } else {
    const hash = createHash("sha256");
    const wantType = query.type;
    const started = Date.now();
    const dirs: string[] = [];
    let racy = false;
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
    const ancestors = ancestorsWithin(rootDir, dir.realPath);
    const walkStats = await walk(
      dir.realPath,
      {
        recursive: query.recursive,
        includeHidden: query.includeHidden,
        respectGitignore: query.respectGitignore,
        maxEntries: req.maxWalkEntries ?? DEFAULT_MAX_WALK_ENTRIES,
        ancestors,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        ...(req.onProgress ? { onProgress: req.onProgress } : {}),
        onDirectory: (abs) => {
          if (keeping) dirs.push(abs);
        },
      },
      (entry) => {
        if (wantType !== "any" && entry.type !== wantType) return;
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
        if (keeping) {
          if (total > CACHE_MAX_ENTRIES) {
            keeping = false;
            keep.paths = [];
          } else {
            keep.paths.push(entry.path);
            keep.types.push(entry.type);
            keep.sizes.push(size);
            keep.mtimes.push(mtimeMs);
          }
        }
        let take: boolean;
        if (after !== undefined) {
          if (compareCodePoints(entry.path, after) <= 0) {
            before++;
            take = false;
          } else take = items.length < limit;
        } else take = index >= offset && index < offset + limit;
        if (take) {
          items.push({
            path: entry.path,
            json: JSON.stringify({
              path: entry.path,
              type: entry.type,
              size,
              mtime: new Date(Math.trunc(mtimeMs)).toISOString(),
            }),
          });
        }
      },
    );
    version = hash.digest().subarray(0, 8).toString("base64url");
    stats = walkStats;
    if (keeping) {
      for (const d of [...ancestors, ...dirs]) {
        const sig = signature(d, started);
        if (sig === undefined) racy = true;
        else keep.signatures.push([d, sig]);
      }
      if (!racy) {
        keep.version = version;
        keep.stats = walkStats;
        remember(cacheKey, keep);
      }
    }
  }
  const start = after !== undefined ? before : offset;
  const uri = `file://${encodeURI(dir.realPath)}`;

  const cursorAfter = (lastPath: string): string => {
    const w = new ByteWriter();
    writeFileRef(w, roots, { rootIndex: dir.rootIndex, relPath: relDir });
    w.u8(flags)
      .string(query.glob ?? "")
      .uint(limit)
      .string(lastPath);
    return codec.encode(LIST_TOOL, caller.identity, w.finish());
  };
  const head = `{"uri":${JSON.stringify(uri)},"items":[`;
  const tailExtras =
    `,"version":${JSON.stringify(version)}` +
    (note ? `,"note":${JSON.stringify(note)}` : "") +
    (req.maxTokensLowered ? `,"max_tokens":${req.maxTokens}` : "") +
    walkReportMembers(stats);
  const render = (count: number): string => {
    const next = start + count;
    const hasMore = next < total;
    const pagination = `{"total":${total},"limit":${limit},"offset":${start},"has_more":${hasMore},"next_offset":${hasMore ? next : null}}`;
    let nextCursor = "null";
    if (hasMore) {
      // With no item on the page (an offset past a cursor's key), continue after the same key.
      const last = count > 0 ? items[count - 1]!.path : after;
      nextCursor = last === undefined ? "null" : JSON.stringify(cursorAfter(last));
    }
    let body = "";
    for (let i = 0; i < count; i++) body += (i > 0 ? "," : "") + items[i]!.json;
    return `${head}${body}],"pagination":${pagination},"next_cursor":${nextCursor}${tailExtras}}`;
  };
  const fitted = fitItemCount(items.length, req.maxTokens, estimator, render);
  if (fitted.amount === 0 && items.length > 0) {
    throw budgetTooSmall(req.maxTokens, estimator.count(render(1)), "one entry");
  }
  if (fitted.tokens > req.maxTokens) {
    throw budgetTooSmall(req.maxTokens, fitted.tokens, "an empty page");
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
    items.push({
      path: p,
      json: JSON.stringify({
        path: p,
        type: c.types[i],
        size: c.sizes[i],
        mtime: new Date(Math.trunc(c.mtimes[i]!)).toISOString(),
      }),
    });
  }
  return { items, before: from };
}
