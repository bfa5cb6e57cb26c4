/**
 * @module
 * Jobs in worker threads under a stall guard. A JavaScript regex cannot be interrupted, so a
 * pattern that backtracks catastrophically would freeze the thread running it; in a worker, the
 * server stays responsive and stops the job when it reports no progress for `stallMs`
 * (RESOURCE_LIMIT_EXCEEDED), or at once when the request is cancelled. Idle workers are kept so
 * that a call does not pay the thread start-up each time.
 *
 * The protocol: the worker answers a job with any number of `{type: "progress", …}` messages, then
 * one `{type: "done", result}` or `{type: "error", error}`.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type ErrorCode, PagewiseError } from "../../core/index.js";
import {
  DEFAULT_SEARCH_STALL_MS,
  MAX_LIVE_WORKERS,
  SLOTS_KEPT_FOR_OTHER_CALLERS,
  WORKER_HEAP_MB,
  WORKER_YOUNG_GENERATION_MB,
} from "../limits.js";
import { Slots } from "./slots.js";

export interface GuardedRunOptions {
  readonly signal?: AbortSignal;
  readonly stallMs?: number;
  /** Stops the job after this long in all, progress or not (default: no such limit). */
  readonly budgetMs?: number;
  /** Whose job this is (the caller's identity): threads are shared fairly between owners. */
  readonly owner?: string;
  readonly onProgress?: (message: Record<string, unknown>) => void;
}

interface WorkerMessage {
  type: string;
  result?: unknown;
  error?: { code: ErrorCode; message: string; details?: Record<string, unknown> };
  [key: string]: unknown;
}

export function stalled(stallMs: number): PagewiseError {
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The pattern made no progress for ${stallMs} ms and was stopped: it is too expensive on some line (catastrophic backtracking). Simplify the pattern (no lookaround or backreferences runs in linear time), match it as a literal, or narrow the input.`,
    { limit: { name: "search_stall_ms", limit: stallMs, value: stallMs } },
  );
}

export function overBudget(budgetMs: number): PagewiseError {
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The pattern ran for ${budgetMs} ms and was stopped: it runs only on the backtracking engine and is too expensive on this input. Simplify the pattern (no lookaround or backreferences runs in linear time), match it as a literal, or narrow the input.`,
    { limit: { name: "search_guarded_ms", limit: budgetMs, value: budgetMs } },
  );
}

/**
 * Worker threads running at once across every pool of the process (scans, walks, guarded
 * regexes): a flood that mixes tools cannot start more threads than one tool alone. One caller
 * holds MAX_LIVE_WORKERS at most, so a thread is always left for another; a freed thread goes to
 * the waiting caller that holds the fewest.
 */
const liveThreads = new Slots(MAX_LIVE_WORKERS + SLOTS_KEPT_FOR_OTHER_CALLERS, MAX_LIVE_WORKERS);

/** A job's worker ran out of its heap (WORKER_HEAP_MB). */
export function outOfWorkerMemory(heapMb: number): PagewiseError {
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The call needed more than ${heapMb} MiB of memory and was stopped (a directory with millions of entries, or lines of tens of MiB). List or search a smaller part of the tree.`,
    { limit: { name: "worker_heap_mb", limit: heapMb, value: heapMb } },
  );
}

export class GuardedWorkers {
  private readonly idle: Worker[] = [];
  constructor(
    private readonly url: URL,
    private readonly maxIdle: number,
    private readonly slots: Slots = liveThreads,
    private readonly heapMb: number = WORKER_HEAP_MB,
  ) {}

  /** Threads that a job of `owner` would get now, without waiting. */
  freeThreads(owner?: string): number {
    return this.slots.free(owner);
  }

  run<T>(job: unknown, options: GuardedRunOptions = {}): Promise<T> {
    return this.slots.run(options.signal, () => this.runNow<T>(job, options), options.owner);
  }

  /** Whether the compiled worker exists (tests run on the TypeScript sources, where it does not). */
  available(): boolean {
    try {
      return this.url.protocol === "file:" && existsSync(fileURLToPath(this.url));
    } catch {
      return false;
    }
  }

  /**
   * A new thread. An error it raises while idle (a job's code should leave none behind) drops it
   * from the idle ones: an `error` event with no listener would end the whole process.
   */
  private start(): Worker {
    // Perf: a small young generation keeps each thread's resident memory low (scans allocate
    // short-lived strings per chunk); the heap is bounded so that no thread grows the process.
    const worker = new Worker(this.url, {
      resourceLimits: {
        maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
        maxOldGenerationSizeMb: this.heapMb,
      },
    });
    worker.on("error", () => {
      const at = this.idle.indexOf(worker);
      if (at < 0) return; // running a job: that job's own listener answers it
      this.idle.splice(at, 1);
      void worker.terminate();
    });
    return worker;
  }

  private runNow<T>(job: unknown, options: GuardedRunOptions): Promise<T> {
    options.signal?.throwIfAborted();
    const worker = this.idle.pop() ?? this.start();
    worker.ref();
    const stallMs = options.stallMs ?? DEFAULT_SEARCH_STALL_MS;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let budgetTimer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        if (budgetTimer) clearTimeout(budgetTimer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        options.signal?.removeEventListener("abort", onAbort);
      };
      const kill = (error: PagewiseError) => {
        cleanup();
        void worker.terminate();
        reject(error);
      };
      const arm = () => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => kill(stalled(stallMs)), stallMs);
      };
      const onMessage = (msg: WorkerMessage) => {
        if (msg.type === "progress") {
          arm();
          options.onProgress?.(msg);
          return;
        }
        cleanup();
        worker.unref();
        if (this.idle.length < this.maxIdle) this.idle.push(worker);
        else void worker.terminate();
        if (msg.type === "done") resolve(msg.result as T);
        else
          reject(new PagewiseError(msg.error!.code, msg.error!.message, msg.error!.details ?? {}));
      };
      const onError = (err: Error) => {
        cleanup();
        void worker.terminate();
        if ((err as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY") {
          reject(outOfWorkerMemory(this.heapMb));
          return;
        }
        reject(new PagewiseError("INTERNAL_ERROR", `Internal error in a worker: ${err.message}`));
      };
      const onExit = () => {
        cleanup();
        reject(new PagewiseError("INTERNAL_ERROR", "A worker stopped unexpectedly."));
      };
      const onAbort = () =>
        kill(new PagewiseError("CANCELLED", "The request was cancelled before it finished."));
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      arm();
      const { budgetMs } = options;
      if (budgetMs !== undefined) {
        budgetTimer = setTimeout(() => kill(overBudget(budgetMs)), budgetMs);
      }
      worker.postMessage(job);
    });
  }
}
