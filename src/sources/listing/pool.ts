/**
 * @module
 * Runs `list` jobs in worker threads, so that the walk's directory reads and stats never block the
 * thread that serves requests; a cancelled request terminates its worker at once. Threads are
 * kept idle between calls (a continuation costs a few milliseconds; starting a thread would cost
 * more) and count against the process-wide budget of live worker threads.
 *
 * Where the compiled worker is missing (tests run on the TypeScript sources), jobs run in-process.
 */
import { isPagewiseError, PagewiseError } from "../../core/index.js";
import { LIST_STALL_MS } from "../limits.js";
import { walkWorkers } from "../walk-pool.js";
import type { WalkJob } from "../walk-worker.js";
import { type ListJob, type ListResult, runListJob } from "./collect.js";

const workers = walkWorkers;

export interface ListRunOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (entriesRead: number) => void;
  /** The caller's identity: worker threads are shared fairly between callers. */
  readonly owner?: string;
  /** Run in this thread (tests). */
  readonly inProcess?: boolean;
}

export async function runListJobInWorker(
  job: ListJob,
  options: ListRunOptions = {},
): Promise<ListResult> {
  const { signal, onProgress, owner } = options;
  if (options.inProcess || !workers.available()) {
    return runListJob(job, {
      ...(signal ? { signal } : {}),
      ...(onProgress ? { tick: onProgress } : {}),
    });
  }
  try {
    return await workers.run<ListResult>({ kind: "list", job } satisfies WalkJob, {
      ...(signal ? { signal } : {}),
      ...(owner !== undefined ? { owner } : {}),
      stallMs: LIST_STALL_MS,
      ...(onProgress ? { onProgress: (msg) => onProgress(Number(msg.entries ?? 0)) } : {}),
    });
  } catch (err) {
    // The guard's own message speaks of patterns; a walk stalls on a file system.
    if (isPagewiseError(err) && err.details.limit?.name === "search_stall_ms") {
      throw new PagewiseError(
        "RESOURCE_LIMIT_EXCEEDED",
        `Reading the directory tree made no progress for ${LIST_STALL_MS} ms and was stopped: a file system under it does not answer. List another directory, or try again later.`,
        { limit: { name: "list_stall_ms", limit: LIST_STALL_MS, value: LIST_STALL_MS } },
      );
    }
    throw err;
  }
}
