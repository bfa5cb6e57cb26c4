/**
 * @module
 * The walk behind one `list` page, protocol-free and synchronous per directory so that it runs
 * unchanged in a worker thread (pool.ts): no directory read or stat blocks the thread that serves
 * requests.
 *
 * Two kinds of job:
 * - **A full walk** (a first page, an offset page): reads every directory of the listing, counts
 *   the entries (`total`) and hashes the listing into its `version`, from what readdir gives alone
 *   — each entry's path and type, and the ctime of each directory read (one fstat of its already
 *   opened descriptor). Only the page's own entries are lstat'ed, for their size and mtime.
 * - **A continuation** (after a cursor's key): seeks to the key (reading only the directories on
 *   its path) and walks on until the page is collected and one more entry is seen (so `more` is
 *   known): O(page), whatever the size of the tree. `total` and `version` stay those of the last
 *   full walk, which the cursor carries, unless a directory the continuation reads changed since
 *   that walk began (its ctime says so): then the job walks the whole listing again, from the
 *   start, and reports the current `total`, `version` and position.
 */
import { createHash } from "node:crypto";
import { lstatSync, type Stats } from "node:fs";
import {
  defaultEstimator,
  type Estimator,
  ItemPageCount,
  openvikingEstimator,
  type RunningSnapshot,
} from "../../core/index.js";
import { compileGlob } from "../pattern/index.js";
import {
  compareCodePoints,
  type EntryType,
  type WalkEntry,
  type WalkOptions,
  type WalkStats,
  walk,
} from "../walk/index.js";

/**
 * A directory whose ctime is this close before the last full walk began counts as changed since
 * (timestamps are coarser than the clock on some file systems, up to 2 s on FAT).
 */
export const RACY_WINDOW_MS = 2_000;
/** Bytes of SHA-256 kept as a listing's `version`. */
export const LIST_VERSION_BYTES = 8;
/** Characters of listing text hashed at once (one hash update per chunk, not per entry). */
const HASH_CHUNK_CHARS = 1 << 16;

export type ListType = "file" | "directory" | "any";

/** The parameters that define a listing's result set (bound into its cursors). */
export interface ListQuery {
  readonly recursive: boolean;
  readonly glob: string | undefined;
  readonly type: ListType;
  readonly includeHidden: boolean;
  readonly respectGitignore: boolean;
}

export type ListWindow =
  | { readonly kind: "offset"; readonly offset: number; readonly limit: number }
  | {
      readonly kind: "after";
      /** The last path returned (relative, `/`-separated): the page starts after it. */
      readonly after: string;
      readonly limit: number;
      /** When the last full walk of the listing began (ms since the epoch, rounded down). */
      readonly since: number;
    };

export interface ListJob {
  /** The listed directory (canonical). */
  readonly dir: string;
  /** The directories above it whose `.gitignore` files apply, outermost first. */
  readonly ancestors: readonly string[];
  readonly query: ListQuery;
  readonly maxWalkEntries: number;
  readonly window: ListWindow;
  /**
   * The page can hold no more than this many characters (the budget times the estimator's bound
   * on characters per token): collecting stops once the items' JSON exceeds it, so a small
   * budget with a large limit lstats only what could be shown.
   */
  readonly maxPageChars: number;
  /**
   * With an estimator the worker can run (the page's own, or the one that picks its cut), the
   * items are counted here and collecting stops once they cannot all fit `maxTokens` — a bound
   * much closer to the page than `maxPageChars`. With a running count they are counted in context,
   * after the page's `head`, and the page is fitted from those counts (`ListResult.checkpoints`).
   */
  readonly itemTokens?: {
    readonly estimator: ItemEstimatorName;
    readonly maxTokens: number;
    /** The page's text before its first item. */
    readonly head: string;
  };
}

/** The estimators a job can count items with (pure functions, cheap to load in a worker). */
export type ItemEstimatorName = "default" | "openviking";
const ITEM_ESTIMATORS: Record<ItemEstimatorName, Estimator> = {
  default: defaultEstimator,
  openviking: openvikingEstimator,
};

/**
 * The name under which a job's worker counts as `estimator` does, if it can: one of its own
 * estimators, by name, whose `count` is the same function (an estimator that only borrows a name
 * does not get its pages counted by another).
 */
export function workerEstimatorFor(estimator: Estimator): ItemEstimatorName | undefined {
  const name = estimator.name as ItemEstimatorName;
  return Object.hasOwn(ITEM_ESTIMATORS, name) && ITEM_ESTIMATORS[name].count === estimator.count
    ? name
    : undefined;
}

/**
 * With an estimator that keeps no running count, items counted together: the count of a run of
 * items as the page shows them (joined by commas) is within a token or two of what they add to the
 * page, where items counted one by one are each rounded up — a prediction that good lets the
 * page's first whole count be its last.
 */
const ITEMS_PER_COUNT = 16;
/**
 * Tokens a counted run of items may add to a page below its count: the count is rounded up, and
 * the characters before the run can change how its first characters are charged.
 */
const RUN_TOKENS_SLACK = 2;
/** What rounding a count up adds on average: taken off each run's share, to centre predictions. */
const ROUNDING_TOKENS = 0.5;

/** An entry of the page: its JSON as the page shows it. */
export interface ListedItem {
  readonly path: string;
  readonly json: string;
  /**
   * With `itemTokens` and an estimator without a running count: the tokens the item adds to a
   * page (with the comma before it), its share by length of its run's count — fractional, for
   * the fitter's prediction.
   */
  tokens?: number;
}

/** What a full walk knows about the whole listing. */
export interface ListingSummary {
  readonly total: number;
  readonly version: string;
  /** Index of the first item in the listing. */
  readonly start: number;
}

export interface ListResult {
  /** The page's candidate entries, in order (at most `limit`). */
  readonly items: ListedItem[];
  /** An entry of the listing follows the items. */
  readonly more: boolean;
  /** Present when the job walked the whole listing (a full walk, or a continuation that saw a change). */
  readonly listing?: ListingSummary;
  /** The walk's counts (of the whole listing when `listing` is present, else of this page's walk). */
  readonly stats: WalkStats;
  /**
   * With `itemTokens` and a running count: the count of the page's head and items as they were
   * collected, every 16 items (`ItemPageCount#snapshots`), for the page's fit to start from.
   */
  readonly checkpoints?: RunningSnapshot[];
  /** Work done, for tests: directories read and entries lstat'ed. */
  readonly work: { readonly directoriesRead: number; readonly entriesStatted: number };
}

export interface ListHooks {
  readonly signal?: AbortSignal;
  /** Called now and then with the number of directory entries read so far. */
  readonly tick?: (entriesRead: number) => void;
}

/** Thrown when a continuation reads a directory that changed since the last full walk. */
class ListingChanged extends Error {}

/** Runs one job: a continuation when the window is after a key, else a full walk. */
export async function runListJob(job: ListJob, hooks: ListHooks = {}): Promise<ListResult> {
  const counter = new Collector(job);
  if (job.window.kind === "after") {
    try {
      return await continuePage(job, job.window, counter, hooks);
    } catch (err) {
      if (!(err instanceof ListingChanged)) throw err;
    }
    // A directory on the way changed: its listing's total and version are no longer known.
    return fullWalk(job, new Collector(job, counter.work), hooks);
  }
  return fullWalk(job, counter, hooks);
}

/** The page's items as collected, with what collecting cost. */
class Collector {
  readonly items: ListedItem[] = [];
  private chars = 0;
  /** Tokens the counted runs of items add to a page at least (when the job counts items in runs). */
  private tokens = 0;
  /** Items not yet counted (the current run). */
  private counted = 0;
  private readonly glob;
  private readonly limit: number;
  private readonly estimator: Estimator | undefined;
  /** The count of the page's head and items, in context, when the estimator keeps one. */
  private readonly pageCount: ItemPageCount | undefined;
  private readonly maxTokens: number;

  constructor(
    private readonly job: ListJob,
    readonly work = { directoriesRead: 0, entriesStatted: 0 },
  ) {
    this.glob = compileGlob(job.query.glob);
    this.limit = job.window.limit;
    const { itemTokens } = job;
    this.estimator = itemTokens && ITEM_ESTIMATORS[itemTokens.estimator];
    this.pageCount =
      itemTokens && this.estimator?.running
        ? new ItemPageCount(this.estimator.running, itemTokens.head, ",")
        : undefined;
    this.maxTokens = itemTokens?.maxTokens ?? Number.POSITIVE_INFINITY;
  }

  /** Whether the entry belongs to the listing (its `type` and `glob`). */
  listed(entry: WalkEntry): boolean {
    const { type } = this.job.query;
    return (type === "any" || entry.type === type) && (!this.glob || this.glob(entry.path));
  }

  /** Whether the page takes more items (fewer than `limit`, and their text could still fit). */
  open(): boolean {
    return (
      this.items.length < this.limit &&
      this.chars <= this.job.maxPageChars &&
      (this.pageCount ? this.pageCount.tokens() : this.tokens) <= this.maxTokens
    );
  }

  /** Adds the entry with its lstat; false when it vanished since its directory was read. */
  take(entry: WalkEntry): boolean {
    this.work.entriesStatted++;
    let st: Stats | undefined;
    try {
      st = lstatSync(entry.statPath);
    } catch (err) {
      // A name that is not valid UTF-8 reaches us with U+FFFD in it and cannot be stat'ed by that
      // name: it is still listed (as the walk counted it), without size and mtime.
      const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
      if (!(missing && entry.path.includes("\uFFFD"))) return false;
    }
    const json = entryJson(entry.path, entry.type, st);
    this.chars += json.length;
    this.items.push({ path: entry.path, json });
    if (this.pageCount) this.pageCount.add(json);
    else if (this.items.length - this.counted >= ITEMS_PER_COUNT) this.countRun();
    return true;
  }

  /** The collected items, and the counts of them the page's fit starts from. */
  finish(): Pick<ListResult, "items" | "checkpoints"> {
    this.countRun();
    const checkpoints = this.pageCount?.snapshots();
    return checkpoints ? { items: this.items, checkpoints } : { items: this.items };
  }

  /** Counts the items not yet counted as one run, as the page shows them (joined by commas). */
  private countRun(): void {
    const { items, estimator } = this;
    if (!estimator || this.pageCount || this.counted === items.length) return;
    let text = "";
    for (let i = this.counted; i < items.length; i++) text += (i > 0 ? "," : "") + items[i]!.json;
    const tokens = estimator.count(text);
    this.tokens += Math.max(0, tokens - RUN_TOKENS_SLACK);
    for (let i = this.counted; i < items.length; i++) {
      const item = items[i]!;
      item.tokens =
        ((tokens - ROUNDING_TOKENS) * (item.json.length + (i > 0 ? 1 : 0))) / text.length;
    }
    this.counted = items.length;
  }
}

/** An item as the page shows it: `{"path","type","size","mtime"}` (mtime ISO-8601 UTC, ms). */
function entryJson(path: string, type: EntryType, st: Stats | undefined): string {
  if (!st) return `{"path":${JSON.stringify(path)},"type":"${type}","size":null,"mtime":null}`;
  const mtime = new Date(Math.trunc(st.mtimeMs)).toISOString();
  return `{"path":${JSON.stringify(path)},"type":"${type}","size":${st.size},"mtime":"${mtime}"}`;
}

function walkOptions(job: ListJob, hooks: ListHooks): WalkOptions {
  const { query } = job;
  return {
    recursive: query.recursive,
    includeHidden: query.includeHidden,
    respectGitignore: query.respectGitignore,
    maxEntries: job.maxWalkEntries,
    ancestors: job.ancestors,
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    ...(hooks.tick ? { onProgress: hooks.tick } : {}),
  };
}

/**
 * A continuation: the entries after the cursor's key, read from the directories on its path and
 * those after it until the page is collected and one more entry is seen.
 */
async function continuePage(
  job: ListJob,
  window: Extract<ListWindow, { kind: "after" }>,
  collector: Collector,
  hooks: ListHooks,
): Promise<ListResult> {
  const changedAfter = window.since - RACY_WINDOW_MS;
  let more = false;
  const stats = await walk(
    job.dir,
    {
      ...walkOptions(job, hooks),
      after: window.after,
      onDirectoryRead: (_rel, st) => {
        collector.work.directoriesRead++;
        if (st.ctimeMs >= changedAfter) throw new ListingChanged();
      },
    },
    (entry) => {
      if (!collector.listed(entry)) return true;
      if (!collector.open()) {
        more = true;
        return false;
      }
      collector.take(entry);
      return true;
    },
  );
  return { ...collector.finish(), more, stats, work: collector.work };
}

/** A full walk: every entry counted and hashed, the window's entries collected and lstat'ed. */
async function fullWalk(job: ListJob, collector: Collector, hooks: ListHooks): Promise<ListResult> {
  const { window } = job;
  const after = window.kind === "after" ? window.after : undefined;
  const offset = window.kind === "offset" ? window.offset : 0;
  const hash = createHash("sha256");
  let text = "";
  let total = 0;
  let before = 0; // entries at or before the cursor's key
  const stats = await walk(
    job.dir,
    {
      ...walkOptions(job, hooks),
      onDirectoryRead: (rel, st) => {
        collector.work.directoriesRead++;
        // A NUL first: no entry's path starts with one.
        text += `\0${rel}\0${st.ctimeMs}\n`;
      },
    },
    // Perf: runs for every entry of the tree; only the page's entries are lstat'ed.
    (entry) => {
      if (!collector.listed(entry)) return;
      let take: boolean;
      if (after !== undefined) {
        if (compareCodePoints(entry.path, after) <= 0) {
          before++;
          take = false;
        } else take = collector.open();
      } else take = total >= offset && collector.open();
      if (take && !collector.take(entry)) return; // vanished: not in the listing
      total++;
      text += `${entry.path}\0${entry.type}\n`;
      if (text.length >= HASH_CHUNK_CHARS) {
        hash.update(text);
        text = "";
      }
    },
  );
  hash.update(text);
  const version = hash.digest().subarray(0, LIST_VERSION_BYTES).toString("base64url");
  const start = after !== undefined ? before : offset;
  const page = collector.finish();
  return {
    ...page,
    more: start + page.items.length < total,
    listing: { total, version, start },
    stats,
    work: collector.work,
  };
}
