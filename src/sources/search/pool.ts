/**
 * @module
 * Runs search scans in worker threads under the stall guard (see pattern/guarded-worker.ts): a
 * pattern only V8 can run that backtracks catastrophically is stopped, not waited for.
 *
 * A full scan (an exact total) uses every core: it is split into shards that walk the same tree
 * and each read every n-th candidate file; each shard keeps its own first `offset + limit`
 * matches, which holds every match of the page whatever the other shards found, and the merge
 * orders them by file ordinal (see mergeShards). Pages that stop early run in one worker.
 *
 * Fairness. Shards take only threads free when the scan starts (at least one): a scan never waits
 * for threads another call holds in order to split itself. Threads are shared between callers (see
 * Slots: a freed one goes to the caller holding the fewest). Scans of a `guarded` pattern (only
 * V8's backtracking engine runs it, which can spend seconds on one line) hold threads under a
 * second bound, MAX_GUARDED_SEARCH_THREADS per caller, below all threads: whatever such patterns
 * one caller runs, the caller's other searches and every other caller's get a thread at once.
 *
 * Where the compiled worker is missing (tests run on the TypeScript sources), scans run
 * in-process instead (shards one after the other), without the stall guard.
 */
import os from "node:os";
import {
  DEFAULT_SEARCH_STALL_MS,
  GUARDED_SCAN_STALL_WINDOWS,
  MAX_GUARDED_SEARCH_THREADS,
  MAX_LIVE_WORKERS,
  MAX_SCAN_SHARDS,
  MAX_SHARDED_WINDOW,
} from "../limits.js";
import { Slots } from "../pattern/index.js";
import { walkWorkers } from "../walk-pool.js";
import type { WalkJob } from "../walk-worker.js";
import { type RawMatch, runScan, type ScanJob, type ScanResult, type ScanSkipped } from "./scan.js";

const SHARDS = Math.max(1, Math.min(os.availableParallelism(), MAX_SCAN_SHARDS));

const workers = walkWorkers;

/** Threads held by scans of `guarded` patterns, per caller (taken before a thread). */
const guardedThreads = new Slots(MAX_LIVE_WORKERS, MAX_GUARDED_SEARCH_THREADS);

export interface RunOptions {
  readonly signal?: AbortSignal;
  readonly stallMs?: number;
  readonly onProgress?: (filesRead: number, bytesRead: number) => void;
  /** The caller's identity: threads are shared fairly between callers. */
  readonly owner?: string;
  /** Force in-process scanning (tests). */
  readonly inProcess?: boolean;
  /** Shards of a full scan (default: the cores, at most MAX_SCAN_SHARDS). */
  readonly shards?: number;
}

export async function runScanJob(job: ScanJob, options: RunOptions = {}): Promise<ScanResult> {
  const w = job.window;
  const shards = Math.min(options.shards ?? SHARDS, threadsFree(job, options));
  if (
    shards > 1 &&
    w.kind === "offset" &&
    !job.stopEarly &&
    w.offset + w.limit <= MAX_SHARDED_WINDOW
  ) {
    return runSharded(job, shards, w.offset, w.limit, options);
  }
  return runOne(job, options);
}

/** Threads a scan may split over without waiting (at least one; unbounded in-process). */
function threadsFree(job: ScanJob, options: RunOptions): number {
  if (options.inProcess || !workers.available()) return Number.POSITIVE_INFINITY;
  const free = workers.freeThreads(options.owner);
  const share = job.pattern.engine === "guarded" ? guardedThreads.free(options.owner) : free;
  return Math.max(1, Math.min(free, share));
}

function runOne(job: ScanJob, options: RunOptions): Promise<ScanResult> {
  if (options.inProcess || !workers.available()) {
    return runScan(job, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { tick: options.onProgress } : {}),
    });
  }
  const { onProgress, owner } = options;
  const stallMs = options.stallMs ?? DEFAULT_SEARCH_STALL_MS;
  const guarded = job.pattern.engine === "guarded";
  const run = () =>
    workers.run<ScanResult>({ kind: "scan", job } satisfies WalkJob, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(owner !== undefined ? { owner } : {}),
      stallMs,
      ...(guarded ? { budgetMs: stallMs * GUARDED_SCAN_STALL_WINDOWS } : {}),
      ...(onProgress
        ? { onProgress: (msg) => onProgress(Number(msg.files ?? 0), Number(msg.bytes ?? 0)) }
        : {}),
    });
  return guarded ? guardedThreads.run(options.signal, run, owner) : run();
}

async function runSharded(
  job: ScanJob,
  count: number,
  offset: number,
  limit: number,
  options: RunOptions,
): Promise<ScanResult> {
  // One failure (a stall, a cancel) stops the other shards too.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const progress = new Array<[number, number]>(count).fill([0, 0]);
  const report = (i: number) => (files: number, bytes: number) => {
    progress[i] = [files, bytes];
    let f = 0;
    let b = 0;
    for (const [pf, pb] of progress) {
      f += pf;
      b += pb;
    }
    options.onProgress?.(f, b);
  };
  try {
    const jobs = Array.from({ length: count }, (_, index) =>
      runOne(
        {
          ...job,
          window: { kind: "offset", offset: 0, limit: offset + limit },
          shard: { index, count },
        },
        { ...options, signal: stop.signal, onProgress: report(index) },
      ),
    );
    const results = await Promise.all(
      jobs.map((p) =>
        p.catch((err) => {
          stop.abort();
          throw err;
        }),
      ),
    );
    return mergeShards(results, offset, limit);
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Merges shard results into the result one scan would give. Each shard holds its own first
 * `offset + limit` matches; every match among the first `offset + limit` overall is then held (the
 * matches before it in its shard are fewer), so sorting by file ordinal (a file belongs to one
 * shard, whose matches are in file order) and slicing gives the window exactly.
 */
export function mergeShards(
  results: readonly ScanResult[],
  offset: number,
  limit: number,
): ScanResult {
  const all: RawMatch[] = [];
  let counted = 0;
  let filesRead = 0;
  let bytesRead = 0;
  let dirsOpened = 0;
  let gitignoreSkipped: ScanResult["gitignoreSkipped"];
  let skipped: ScanSkipped | undefined = {
    binary: 0,
    long_lines: 0,
    unreadable_files: 0,
    unreadable_directories: 0,
  };
  for (const r of results) {
    for (const m of r.items) all.push(m);
    counted += r.counted;
    filesRead += r.filesRead;
    bytesRead += r.bytesRead;
    dirsOpened += r.dirsOpened;
    // Every shard walks every directory: a skipped `.gitignore` is met by each that got that far.
    if (
      r.gitignoreSkipped &&
      r.gitignoreSkipped.gitignore_files > (gitignoreSkipped?.gitignore_files ?? 0)
    )
      gitignoreSkipped = r.gitignoreSkipped;
    if (r.skipped && skipped) {
      skipped.binary += r.skipped.binary;
      skipped.long_lines += r.skipped.long_lines;
      skipped.unreadable_files += r.skipped.unreadable_files;
      // Every shard walks every directory: an unreadable one is seen by each.
      skipped.unreadable_directories = r.skipped.unreadable_directories;
    } else skipped = undefined;
  }
  all.sort((a, b) => a.fileOrdinal - b.fileOrdinal);
  const items = all.slice(offset, offset + limit);
  return {
    counted,
    offset,
    items,
    more: counted > offset + items.length,
    ...(skipped ? { skipped } : {}),
    ...(gitignoreSkipped ? { gitignoreSkipped } : {}),
    filesRead,
    bytesRead,
    dirsOpened,
  };
}
